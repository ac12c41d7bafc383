/**
 * Text no database or URL can hold, refused at the edge with a 4xx in the API's shape and nothing
 * changed: JSON bodies' lone UTF-16 surrogates (`"\ud800"`, in a value or a key: no UTF-8 has them,
 * so URL escaping threw on them and PostgreSQL's json refused them, after a commit was made),
 * percent-escapes of no UTF-8 in queries and paths, and the NUL a pull request's `{base}/{head}`
 * path holds still escaped when the edge's check sees it (it reached PostgreSQL).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { titleToWebPath } from '../src/modules/wiki/paths'
import { startTestServer, type ApiResponse, type TestServer, type TestUser } from './helpers'

let s: TestServer
let alice: TestUser

/** A request with `json` as the body's text as it is (lone surrogates' escapes kept). */
const rawJson = (method: string, path: string, json: string, headers: Record<string, string> = {}) =>
  s.request(method, path, { token: alice.token, raw: json, headers: { 'content-type': 'application/json', ...headers } })

/** A refusal in the API's error shape. */
function refused(res: ApiResponse, ...statuses: number[]) {
  expect(statuses.length ? statuses : [400, 404, 422]).toContain(res.status)
  expect(typeof res.body?.message).toBe('string')
  expect(typeof res.body?.url).toBe('string')
  // The answer itself is well-formed: no surrogate of the request echoed back.
  expect(res.text.isWellFormed()).toBe(true)
  expect(res.text).not.toMatch(/\\ud[89a-f][0-9a-f]{2}/i)
}

const headOf = async (branch: string): Promise<string> => {
  const res = await s.get(`/repos/alice/proj/branches/${branch}`, { token: alice.token })
  expect(res.status).toBe(200)
  return res.body.commit.id
}

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  const auth = { token: alice.token }
  expect((await s.post('/user/repos', { name: 'proj', auto_init: true, default_branch: 'main' }, auth)).status).toBe(201)
  expect((await s.post('/repos/alice/proj/branches', { new_branch_name: 'feature' }, auth)).status).toBe(201)
  const b64 = Buffer.from('x').toString('base64')
  expect((await s.post('/repos/alice/proj/contents', { branch: 'feature', files: [{ operation: 'create', path: 'f.txt', content: b64 }] }, auth)).status).toBe(201)
  expect((await s.post('/repos/alice/proj/pulls', { head: 'feature', base: 'main', title: 'Feature' }, auth)).status).toBe(201)
})
afterAll(() => s.stop())

describe('lone surrogates in JSON bodies', () => {
  test('a wiki page titled by one is refused, no page made', async () => {
    for (const json of [
      '{"title":"\\ud800","content_base64":"eA=="}',
      '{"title":"a\\udfffb","content_base64":"eA=="}',
      '{"title":"x","content_base64":"eA==","message":"m \\ud83d"}',
    ]) {
      const res = await rawJson('POST', '/api/v1/repos/alice/proj/wiki/new', json)
      refused(res, 422)
    }
    // The field is named as the NUL check names it.
    const titled = await rawJson('POST', '/api/v1/repos/alice/proj/wiki/new', '{"title":"\\ud800","content_base64":"eA=="}')
    expect(titled.body.message).toBe('[title]: title must not contain lone UTF-16 surrogates')
    expect(titled.body.errors).toEqual([{ fieldNames: ['title'], message: 'title must not contain lone UTF-16 surrogates' }])
    const pages = await s.get('/repos/alice/proj/wiki/pages', { token: alice.token })
    expect(pages.status === 404 || (pages.status === 200 && pages.body.length === 0)).toBe(true)
  })

  test('a file path or message of one is refused before the commit: the branch does not move', async () => {
    const before = await headOf('feature')
    for (const json of [
      '{"branch":"feature","files":[{"operation":"create","path":"\\ud800/a","content":"eA=="}]}',
      '{"branch":"feature","message":"\\udbff","files":[{"operation":"create","path":"b","content":"eA=="}]}',
    ]) refused(await rawJson('POST', '/api/v1/repos/alice/proj/contents', json), 422)
    refused(await rawJson('POST', '/api/v1/repos/alice/proj/contents/new.txt', '{"branch":"feature","content":"eA==","message":"\\ud800"}'), 422)
    expect(await headOf('feature')).toBe(before)
  })

  test('an issue naming one (as an assignee, in its title or body) is refused, no issue made', async () => {
    for (const json of [
      '{"title":"t","assignees":["\\ud800"]}',
      '{"title":"\\udc00"}',
      '{"title":"t","body":"ok \\ud800\\ud800"}',
    ]) refused(await rawJson('POST', '/api/v1/repos/alice/proj/issues', json), 422)
    const listed = await s.get('/repos/alice/proj/issues?type=issues&state=all', { token: alice.token })
    expect(listed.status).toBe(200)
    expect(listed.body).toEqual([])
  })

  test("a key of one, in an object whose keys are kept (a hook's config), is refused, no hook made", async () => {
    const json = '{"type":"gitea","config":{"url":"http://127.0.0.1:9/","content_type":"json","\\ud800":"x"},"events":["push"],"active":false}'
    const res = await rawJson('POST', '/api/v1/repos/alice/proj/hooks', json)
    refused(res, 422)
    expect(res.body.message).toBe('[config]: config must not contain lone UTF-16 surrogates')
    const hooks = await s.get('/repos/alice/proj/hooks', { token: alice.token })
    expect(hooks.status).toBe(200)
    expect(hooks.body).toEqual([])
  })

  test('a well-formed pair (an emoji) is stored as it is', async () => {
    const res = await rawJson('POST', '/api/v1/repos/alice/proj/issues', '{"title":"smile \\ud83d\\ude00"}')
    expect(res.status).toBe(201)
    expect(res.body.title).toBe('smile \u{1F600}')
    expect((await s.del(`/repos/alice/proj/issues/${res.body.number}`, undefined, { token: alice.token })).status).toBe(204)
  })

  test("a web page's form posted as JSON with one is refused too (its error page)", async () => {
    for (const [path, json] of [
      ['/user/login', '{"user_name":"\\ud800","password":"x"}'],
      ['/alice/proj/issues/new', '{"title":"\\ud800"}'],
    ] as const) {
      const res = await fetch(s.url + path, { method: 'POST', body: json, headers: { 'content-type': 'application/json', authorization: alice.basic }, redirect: 'manual' })
      expect(res.status).toBe(422)
      expect(await res.text()).toContain('must not contain lone UTF-16 surrogates')
    }
    expect((await s.get('/repos/alice/proj/issues?type=issues&state=all', { token: alice.token })).body).toEqual([])
  })
})

describe('percent-escapes of no UTF-8', () => {
  test('in a query: read as the text sent, never a surrogate', async () => {
    for (const q of ['%ED%A0%80', '%ff', '%', '%E0%A4%A'])
      expect((await s.get(`/repos/search?q=${q}`, { token: alice.token })).status).toBe(200)
    // A JSON escape in a query is text, not read as JSON.
    const listed = await s.get(`/repos/alice/proj/issues?labels=${encodeURIComponent('["\\ud800"]')}`, { token: alice.token })
    expect(listed.status).toBe(200)
  })

  test('in a path: a 4xx in the API shape', async () => {
    for (const path of [
      '/repos/alice/%ED%A0%80',
      '/repos/alice/proj/branches/%ED%A0%80',
      '/repos/alice/proj/contents/%ED%A0%80',
      '/repos/alice/proj/raw/%ED%A0%80',
      '/repos/alice/proj/git/refs/heads/%ED%A0%80',
      '/repos/alice/proj/compare/main...%ED%A0%80',
      '/repos/alice/proj/pulls/main/%ED%A0%80',
      '/repos/alice/proj/wiki/page/%ED%A0%80',
      '/users/%ED%A0%80',
      '/repos/alice/proj/media/a%ff',
    ])
      refused(await s.get(path, { token: alice.token }))
  })
})

describe('a pull request by {base}/{head} with a NUL', () => {
  test('answers 404 as one that does not exist', async () => {
    expect((await s.get('/repos/alice/proj/pulls/main/feature', { token: alice.token })).status).toBe(200)
    for (const path of ['pulls/3/%00', 'pulls/main/root%3A%00', 'pulls/main/%00%3Amain', 'pulls/main/root%2F%00%3Amain', 'pulls/main/feature%01', 'pulls/main/alice%2Fproj%3Afeature%7F'])
      refused(await s.get(`/repos/alice/proj/${path}`, { token: alice.token }), 404)
  })
})

test("a wiki title's lone surrogate escapes as U+FFFD, never throws (behind the edge's check)", () => {
  expect(titleToWebPath('a\ud800b')).toBe('a%EF%BF%BDb')
})
