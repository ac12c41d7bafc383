import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { count } from 'drizzle-orm'
import { MAX_API_BODY } from '../src/config'
import { users } from '../src/db/schema'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/** What any request to the API meets before an area's rules: the entry points, unknown routes and methods, bodies. */

let s: TestServer
let admin: TestUser
let bob: TestUser
beforeAll(async () => {
  s = await startTestServer()
  admin = await s.user('root', { admin: true })
  bob = await s.user('bob')
})
afterAll(() => s.stop())

const userCount = async () => (await s.deps.db.select({ n: count() }).from(users))[0]!.n

describe('GET /', () => {
  test("names the service, its version and where the docs and the OpenAPI document are; HTML for a browser", async () => {
    const res = await fetch(`${s.url}/`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    const json = { body: (await res.json()) as any }
    expect(json.body).toEqual({
      name: 'Warren',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      gitea_version: (await s.get('/version')).body.version,
      api_url: `${s.config.baseUrl}api/v1`,
      docs_url: `${s.config.baseUrl}api/swagger`,
      openapi_url: `${s.config.baseUrl}swagger.v1.json`,
    })
    for (const link of [json.body.docs_url, json.body.openapi_url]) expect((await fetch(link)).status).toBe(200)
    const html = await fetch(`${s.url}/`, { headers: { accept: 'text/html,application/xhtml+xml;q=0.9' } })
    expect(html.status).toBe(200)
    expect(html.headers.get('content-type')).toContain('text/html')
    expect(await html.text()).toContain(`href="${s.config.baseUrl}api/swagger"`)
  })
})

describe('version', () => {
  test('GET /version', async () => {
    const r = await s.get('/version')
    expect(r.status).toBe(200)
    expect(r.body.version).toMatch(/^1\.\d+\.\d+/)
  })
})

describe('unknown routes and methods', () => {
  test('unknown API route answers 404 in the error shape', async () => {
    const r = await s.get('/no/such/route')
    expect(r.status).toBe(404)
    expect(r.body).toEqual({ message: expect.any(String), url: `${s.config.baseUrl}api/swagger` })
  })

  test('a wrong method on a known path is a JSON 404, never HTML or an empty body', async () => {
    for (const [method, path] of [['PUT', '/version'], ['DELETE', '/user'], ['PATCH', '/markdown']]) {
      const r = await s.request(method, path, { token: admin.token })
      expect(r.status).toBe(404)
      expect(r.headers.get('content-type')).toContain('application/json')
      expect(r.body.message).toEqual(expect.any(String))
    }
  })
})

describe('request bodies', () => {
  test('a body over the limit answers 413 in the error shape and changes nothing', async () => {
    const before = await userCount()
    const big = JSON.stringify({ username: 'huge', email: 'huge@example.com', password: 'x'.repeat(MAX_API_BODY) })
    for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded']) {
      const r = await s.request('POST', '/admin/users', { token: admin.token, raw: big, headers: { 'content-type': type } })
      expect(r.status).toBe(413)
      expect(r.body).toEqual({ message: expect.stringContaining('larger than'), url: `${s.config.baseUrl}api/swagger` })
    }
    const raw = await s.request('POST', '/markdown/raw', { raw: 'x'.repeat(MAX_API_BODY + 1), headers: { 'content-type': 'text/plain' } })
    expect(raw.status).toBe(413)
    expect(await userCount()).toBe(before)
  })

  test('a JSON body is read whatever its Content-Type (text/plain too, or none); garbage is 400', async () => {
    expect((await s.post('/user/repos', { name: 'bodies' }, { token: bob.token })).status).toBe(201)
    for (const type of ['text/plain', 'application/octet-stream', undefined]) {
      const description = `sent as ${type ?? 'no type'}`
      const headers: Record<string, string> = type ? { 'content-type': type } : {}
      const r = await s.request('PATCH', '/repos/bob/bodies', { raw: JSON.stringify({ description }), token: bob.token, headers })
      expect(r.status).toBe(200)
      expect(r.body.description).toBe(description)
    }
    const bad = await s.request('PATCH', '/repos/bob/bodies', { raw: 'not json', token: bob.token, headers: { 'content-type': 'text/plain' } })
    expect(bad.status).toBe(400)
    expect(bad.body.message).toBeString()
    expect((await s.get('/repos/bob/bodies', { token: bob.token })).body.description).toBe('sent as no type')
  })
})
