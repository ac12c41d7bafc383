import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { signInByForm } from './web-session'

/**
 * Refusals the edge makes before a page's pipeline has taken its session (a body that cannot be
 * parsed, a NUL in a named path segment) are pages, as every other answer of the pages' app, not
 * the API's JSON (a web fuzzer found both).
 */

let s: TestServer
let alice: TestUser
let cookie: string

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  expect((await s.post('/user/repos', { name: 'pub', auto_init: true }, { token: alice.token })).status).toBe(201)
  cookie = await signInByForm(s.url, alice)
})
afterAll(() => s.stop())

const isPage = async (res: Response) => (res.headers.get('content-type') ?? '').startsWith('text/html') && (await res.text()).startsWith('<!doctype html>')

test('a form body that cannot be parsed, and a NUL in a named segment, are answered with error pages', async () => {
  for (const [type, body] of [
    ['text/plain', 'name=x'],
    ['application/json', '{"name": "x"'],
    ['multipart/form-data; boundary=zzz', '--zzz\r\nbroken'],
  ] as const) {
    for (const who of [undefined, cookie]) {
      const res = await fetch(`${s.url}/alice/pub/labels/new`, { method: 'POST', headers: { 'content-type': type, ...(who ? { cookie: who } : {}) }, body, redirect: 'manual' })
      expect([type, !!who, res.status >= 400 && res.status < 500, await isPage(res)]).toEqual([type, !!who, true, true])
    }
  }
  for (const path of ['/alice/p%00ub', '/alice/pub/issues/%00', '/%00/-/feed/rss']) {
    for (const who of [undefined, cookie]) {
      const res = await fetch(s.url + path, { headers: { accept: 'text/html', ...(who ? { cookie: who } : {}) }, redirect: 'manual' })
      expect([path, res.status, await isPage(res)]).toEqual([path, 404, true])
    }
  }
  // The API's own paths keep the API's shape.
  const api = await fetch(`${s.url}/api/v1/repos/alice/p%00ub`)
  expect([api.status, (await api.json()).message]).toEqual([404, expect.any(String)])
})

test('a request is routed by its own path whatever the length of its Host (Elysia read a Host of three characters or fewer as part of the path)', async () => {
  const { connect } = await import('node:net')
  const statusOf = (host: string, path: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(s.url).port), '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json\r\nConnection: close\r\n\r\n`))
      let answer = ''
      socket.on('data', (chunk) => (answer += chunk))
      socket.on('end', () => resolve(answer.split('\r\n')[0]!.split(' ')[1]!))
      socket.on('error', reject)
    })
  for (const host of ['x', 'x:1', 'abc', 'localhost']) {
    expect([host, await statusOf(host, '/api/v1/version')]).toEqual([host, '200'])
    expect([host, await statusOf(host, '/ab/api/v1/version')]).toEqual([host, '404'])
  }
})
