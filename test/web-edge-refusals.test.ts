import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { signInByForm } from './web-session'
import { connect } from 'node:net'

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

test("a refusal after a page's pipeline found its visitor is drawn for them (signed in), as every page", async () => {
  const bob = await s.user('bob')
  const bobCookie = await signInByForm(s.url, bob)
  expect((await s.post('/repos/alice/pub/issues', { title: 'Alice opened it' }, { token: alice.token })).status).toBe(201)
  const form = await (await fetch(`${s.url}/alice/pub/issues/1`, { headers: { cookie: bobCookie, accept: 'text/html' } })).text()
  const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(form)![1]!
  // Bob may comment but not close alice's issue: the form is refused by the service (a 403 through the error handler).
  const res = await fetch(`${s.url}/alice/pub/issues/1/comments`, {
    method: 'POST',
    headers: { cookie: bobCookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, content: 'closing', status: 'close' }),
    redirect: 'manual',
  })
  const html = await res.text()
  expect([res.status, html.includes('Sign out'), html.includes('>Sign in</a>')]).toEqual([403, true, false])
  // A query failing validation, and refusals before the pipeline (a NUL in the path, a body that
  // cannot be parsed): drawn for the visitor the session cookie names too.
  for (const [what, init, path, status] of [
    ['a query failing validation', {}, '/alice/pub/commits/branch/main?page=abc', 422],
    ['a NUL in the path', {}, '/alice/p%00ub', 404],
    ['an unparseable body', { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } }, '/alice/pub/labels/new', 400],
  ] as const) {
    const refused = await fetch(s.url + path, { ...init, headers: { ...('headers' in init ? init.headers : {}), cookie: bobCookie, accept: 'text/html' }, redirect: 'manual' })
    const text = await refused.text()
    expect([what, refused.status, text.includes('Sign out'), text.includes('>Sign in</a>')]).toEqual([what, status, true, false])
  }
  // A repository the pipeline does not find, its issue, a settings page refused: the same.
  for (const [path, status] of [['/alice/nothing', 404], ['/alice/nothing/issues/1', 404], ['/alice/pub/settings', 403]] as const) {
    const page = await fetch(s.url + path, { headers: { cookie: bobCookie, accept: 'text/html' }, redirect: 'manual' })
    const text = await page.text()
    expect([path, page.status, text.includes('Sign out'), text.includes('>Sign in</a>')]).toEqual([path, status, true, false])
  }
})

test('a request is routed by its own path whatever the length of its Host (Elysia read a Host of three characters or fewer as part of the path)', async () => {
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
  // No Host (HTTP/1.0), an empty one, one a URL cannot hold: Bun gives a relative URL, read as this server's.
  const bare = (request: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(s.url).port), '127.0.0.1', () => socket.write(request))
      let answer = ''
      socket.on('data', (chunk) => (answer += chunk))
      socket.on('end', () => resolve(answer.split('\r\n')[0]!.split(' ')[1]!))
      socket.on('error', reject)
    })
  for (const [what, headers] of [['no Host', ''], ['an empty Host', 'Host: \r\n'], ['a Host with a slash', 'Host: a/b\r\n']] as const) {
    expect([what, await bare(`GET /api/v1/version HTTP/1.0\r\n${headers}Accept: application/json\r\n\r\n`)]).toEqual([what, '200'])
    expect([what, await bare(`GET /zzzzzz/api/v1/version HTTP/1.0\r\n${headers}Accept: application/json\r\n\r\n`)]).toEqual([what, '404'])
  }
})
