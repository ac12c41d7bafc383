import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'

let s: TestServer
let alice: TestUser
beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
})
afterAll(() => s.stop())

describe('foundation', () => {
  test('GET /version', async () => {
    const r = await s.get('/version')
    expect(r.status).toBe(200)
    expect(r.body.version).toMatch(/^1\.\d+\.\d+/)
  })

  test('unknown API route answers 404 in the error shape', async () => {
    const r = await s.get('/no/such/route')
    expect(r.status).toBe(404)
    expect(r.body).toEqual({ message: expect.any(String), url: `${s.config.baseUrl}api/swagger` })
  })

  test('GET /user needs credentials; token, Basic and query tokens work', async () => {
    expect((await s.get('/user')).status).toBe(401)
    expect((await s.get('/user', { token: alice.token })).body.login).toBe('alice')
    expect((await s.get('/user', { headers: { authorization: `Bearer ${alice.token}` } })).body.login).toBe('alice')
    expect((await s.get('/user', { basic: ['alice', alice.password] })).body.login).toBe('alice')
    expect((await s.get('/user', { basic: ['alice@example.com', alice.password] })).body.login).toBe('alice')
    expect((await s.get(`/user?token=${alice.token}`)).body.login).toBe('alice')
    expect((await s.get(`/user?access_token=${alice.token}`)).body.login).toBe('alice')
    expect((await s.get('/user', { basic: [alice.token, ''] })).body.login).toBe('alice')
    expect((await s.get('/user', { basic: ['alice', alice.token] })).body.login).toBe('alice')
  })

  test('wrong credentials answer 401', async () => {
    expect((await s.get('/user', { basic: ['alice', 'wrong'] })).status).toBe(401)
    expect((await s.get('/user', { token: 'f'.repeat(40) })).status).toBe(401)
    expect((await s.get('/users/alice', { basic: ['nobody', 'x'] })).status).toBe(401)
  })

  test('e-mail hidden from anonymous callers', async () => {
    const anon = await s.get('/users/ALICE')
    expect(anon.status).toBe(200)
    expect(anon.body.login).toBe('alice')
    expect(anon.body.email).not.toBe('alice@example.com')
    const signed = await s.get('/users/alice', { token: alice.token })
    expect(signed.body.email).toBe('alice@example.com')
  })

  test('OpenAPI document and docs page are served without a CDN', async () => {
    const res = await fetch(`${s.url}/swagger.v1.json`)
    expect(res.status).toBe(200)
    const spec: any = await res.json()
    expect(spec.paths['/api/v1/version'].get.operationId).toBe('getVersion')
    const page = await s.get('/api/swagger')
    expect(page.status).toBe(200)
    expect(page.text).toContain('/api/swagger/assets/swagger-ui-bundle.js')
    expect(page.text).not.toContain('unpkg.com')
    const asset = await fetch(`${s.url}/api/swagger/assets/swagger-ui-bundle.js`)
    expect(asset.status).toBe(200)
  })
})

describe('repositories (base)', () => {
  test('create and read a repository; private ones are hidden', async () => {
    const bob = await s.user('bob')
    const r = await s.post('/user/repos', { name: 'Proj', private: true }, { token: bob.token })
    expect(r.status).toBe(201)
    expect(r.body.full_name).toBe('bob/Proj')
    expect(r.body.permissions).toEqual({ admin: true, push: true, pull: true })
    expect((await s.get('/repos/bob/proj', { token: bob.token })).status).toBe(200)
    expect((await s.get('/repos/bob/proj')).status).toBe(404)
    expect((await s.get('/repos/bob/proj', { token: alice.token })).status).toBe(404)
    expect((await s.post('/user/repos', { name: 'proj' }, { token: bob.token })).status).toBe(409)
    expect((await s.post('/user/repos', { name: 'bad name' }, { token: bob.token })).status).toBe(422)
  })
})
