import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'
import { fileMatchRank } from '../src/lib/file-match'

/**
 * Gitea's "Go to file" (`/{o}/{r}/find/{kind}/{ref}?q=`): the files of a ref whose path matches
 * what was typed, best first, linked to their pages; offered beside every folder listing; the
 * repository's readers only.
 */

let s: TestServer
let alice: TestUser, bob: TestUser
const { page, signIn } = webVisitors(() => s.url, async () => '')
const b64 = (text: string) => Buffer.from(text).toString('base64')
const FILES = ['README.md', 'src/main.ts', 'src/lib/parser.ts', 'src/lib/printer.ts', 'docs/guide/getting-started.md', 'test/main.test.ts']
const found = (html: string) => [...html.matchAll(/<li><a href="[^"]*\/src\/(?:branch|tag|commit)\/[^"]*">([^<]*)<\/a>/g)].map((m) => m[1]!)

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  expect((await s.post('/user/repos', { name: 'app', auto_init: false }, { token: alice.token })).status).toBe(201)
  const files = FILES.map((path) => ({ operation: 'create', path, content: b64(`${path}\n`) }))
  expect((await s.post('/repos/alice/app/contents', { files, branch: 'main', new_branch: 'main', message: 'files' }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/repos/alice/app/branches', { new_branch_name: 'feature/x', old_branch_name: 'main' }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'hidden', private: true, auto_init: true }, { token: alice.token })).status).toBe(201)
})
afterAll(() => s.stop())

test('ranking: the typed text in the file name first, then anywhere in the path, then its letters in order; else no match', () => {
  expect(fileMatchRank('src/lib/parser.ts', 'parser')).toBe(0)
  expect(fileMatchRank('src/lib/parser.ts', 'PARS')).toBe(0)
  expect(fileMatchRank('src/lib/parser.ts', 'lib')!).toBeGreaterThan(fileMatchRank('lib/x/libs.ts', 'lib')!)
  expect(fileMatchRank('src/lib/parser.ts', 'slp')).not.toBeNull()
  expect(fileMatchRank('src/lib/parser.ts', 'slp')!).toBeGreaterThan(fileMatchRank('src/lib/parser.ts', 'lib/')!)
  expect(fileMatchRank('src/lib/parser.ts', 'xyz')).toBeNull()
  expect(fileMatchRank('a.ts', '')).toBe(0)
})

test('every file without a query; the matches best first, each linked to its page', async () => {
  const all = await (await page('/alice/app/find/branch/main')).text()
  expect(found(all).sort()).toEqual([...FILES].sort())
  expect(all).toContain('6 files')

  const main = await (await page('/alice/app/find/branch/main?q=main')).text()
  expect(found(main)).toEqual(['src/main.ts', 'test/main.test.ts'])
  expect(main).toContain('href="/alice/app/src/branch/main/src/main.ts"')
  // Letters in order: "gtst" finds getting-started.md.
  expect(found(await (await page('/alice/app/find/branch/main?q=gtst')).text())).toEqual(['docs/guide/getting-started.md'])
  const none = await (await page('/alice/app/find/branch/main?q=nothing-like-it')).text()
  expect(found(none)).toEqual([])
  expect(none).toContain('0 files match')
  // What was typed comes back in the box, escaped.
  const hostile = await (await page(`/alice/app/find/branch/main?q=${encodeURIComponent('<script>x')}`)).text()
  expect(hostile).not.toContain('<script>x')
  expect(hostile).toContain('value="&lt;script&gt;x"')
})

test('a branch with a slash, a tag, a commit; offered beside the folder listings', async () => {
  expect(found(await (await page('/alice/app/find/branch/feature/x?q=printer')).text())).toEqual(['src/lib/printer.ts'])
  const sha = (await s.get('/repos/alice/app/branches/main')).body.commit.id
  expect(found(await (await page(`/alice/app/find/commit/${sha}?q=readme`)).text())).toEqual(['README.md'])
  expect((await s.post('/repos/alice/app/tags', { tag_name: 'v1.0' }, { token: alice.token })).status).toBe(201)
  const tagged = await (await page('/alice/app/find/tag/v1.0?q=guide')).text()
  expect(found(tagged)).toEqual(['docs/guide/getting-started.md'])
  expect(tagged).toContain('href="/alice/app/src/tag/v1.0/docs/guide/getting-started.md"')
  expect(await (await page('/alice/app')).text()).toContain('href="/alice/app/find/branch/main"')
  expect(await (await page('/alice/app/src/branch/feature/x/src')).text()).toContain('href="/alice/app/find/branch/feature/x"')
})

test('unknown refs, a path after the ref, and hidden repositories are 404', async () => {
  expect((await page('/alice/app/find/branch/nope')).status).toBe(404)
  expect((await page('/alice/app/find/branch/main/src')).status).toBe(404)
  expect((await page('/alice/app/find/nonsense/main')).status).toBe(404)
  // What may be typed is bounded (the walk's work with it).
  expect((await page(`/alice/app/find/branch/main?q=${'a'.repeat(101)}`)).status).toBe(422)
  expect((await page('/alice/hidden/find/branch/main')).status).toBe(404)
  expect((await page('/alice/hidden/find/branch/main', await signIn(bob))).status).toBe(404)
  expect((await page('/alice/hidden/find/branch/main', await signIn(alice))).status).toBe(200)
})
