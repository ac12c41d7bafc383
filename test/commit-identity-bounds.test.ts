/**
 * The identities and dates a contents write gives git, at git's bounds: a name of git's "crud"
 * alone (ident.c: `. , : ; < > " \ '`, spaces and control characters) is refused with 422 by every
 * writing route, the branch left where it was, where git would die ("name consists only of
 * disallowed characters") and the route answer 500; names with crud inside still work; the
 * earliest and latest accepted dates are given to git in its `@` form and read back as sent; a
 * user whose full name is crud alone still commits, under their login name.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk } from './git-fixture'
import { repoPath } from '../src/git/run'
import { gitTakesName } from '../src/git/ident'

let s: TestServer
let alice: TestUser
let dot: TestUser

const b64 = (text: string) => Buffer.from(text).toString('base64')
const head = async () => (await s.get('/repos/alice/proj/branches/feature', { token: alice.token })).body.commit.id as string
const blobSha = async (path: string) => (await s.get(`/repos/alice/proj/contents/${path}?ref=feature`, { token: alice.token })).body.sha as string
/** A commit as the API reads it back from git. */
const commitOf = async (sha: string) => (await s.get(`/repos/alice/proj/git/commits/${sha}`, { token: alice.token })).body.commit
/** A commit's raw author line, as git stored it. */
const rawAuthor = async (sha: string) =>
  (await gitOk(repoPath(s.config.dataDir, 'alice', 'proj'), 'cat-file', 'commit', sha)).split('\n').find((l) => l.startsWith('author '))

let files = 0
/** A new file holding "a" on the feature branch, for a route to change. */
async function freshFile(): Promise<string> {
  const path = `f-${++files}.txt`
  expect((await s.post(`/repos/alice/proj/contents/${path}`, { branch: 'feature', content: b64('a\n') }, { token: alice.token })).status).toBe(201)
  return path
}

/** Each writing route, changing or adding beside `file` (freshFile), its body carrying `extra` (an author, committer or dates). */
const ROUTES: [string, (file: string, extra: object) => Promise<{ status: number; body: any }>][] = [
  ['POST contents/{path}', (file, extra) => s.post(`/repos/alice/proj/contents/new-${file}`, { branch: 'feature', content: 'eA==', ...extra }, { token: alice.token })],
  ['POST contents', (file, extra) => s.post('/repos/alice/proj/contents', { branch: 'feature', files: [{ operation: 'create', path: `new-${file}`, content: 'eA==' }], ...extra }, { token: alice.token })],
  ['PUT contents/{path}', async (file, extra) => s.put(`/repos/alice/proj/contents/${file}`, { branch: 'feature', content: b64('changed\n'), sha: await blobSha(file), ...extra }, { token: alice.token })],
  ['DELETE contents/{path}', async (file, extra) => s.del(`/repos/alice/proj/contents/${file}`, { branch: 'feature', sha: await blobSha(file), ...extra }, { token: alice.token })],
  [
    'POST diffpatch',
    (file, extra) =>
      s.post('/repos/alice/proj/diffpatch', { branch: 'feature', content: [`diff --git a/${file} b/${file}`, `--- a/${file}`, `+++ b/${file}`, '@@ -1 +1 @@', '-a', '+b', ''].join('\n'), ...extra }, { token: alice.token }),
  ],
]

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  dot = await s.user('dotty')
  expect((await s.post('/user/repos', { name: 'proj', default_branch: 'main', auto_init: true }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/repos/alice/proj/branches', { new_branch_name: 'feature' }, { token: alice.token })).status).toBe(201)
  expect((await s.put('/repos/alice/proj/collaborators/dotty', { permission: 'write' }, { token: alice.token })).status).toBe(204)
})
afterAll(async () => {
  await s.stop()
})

describe('names git refuses', () => {
  const CRUD_NAMES = ['.', ' .; ', ',:', '"\'', '\\', '<>', '\u0001', '.\t.']

  test("gitTakesName is git's rule", () => {
    for (const name of CRUD_NAMES) expect(gitTakesName(name)).toBe(false)
    for (const name of ['A. B', 'Jo', '.A', '_', '-', 'é', '\u007f', ' x ']) expect(gitTakesName(name)).toBe(true)
  })

  for (const [route, call] of ROUTES) {
    test(`${route}: 422 naming the field, the branch unchanged`, async () => {
      const file = await freshFile()
      const before = await head()
      for (const name of CRUD_NAMES) {
        for (const field of ['author', 'committer'] as const) {
          const r = await call(file, { [field]: { name, email: 'a@x.com' } })
          expect({ name, field, status: r.status }).toEqual({ name, field, status: 422 })
          expect(r.body).toMatchObject({ message: expect.stringMatching(new RegExp(`^\\[${field}\\.name\\]: must (hold a character other than|not hold <)`)), url: expect.any(String) })
        }
      }
      expect(await head()).toBe(before)
    })
  }

  test('names with crud inside or at one end are taken, as git records them', async () => {
    const names = [['A. B', 'A. B'], ['Jo', 'Jo'], ["O'Neil, Jr.", "O'Neil, Jr"], ['. Ann .', 'Ann']]
    for (const [i, [name, recorded]] of names.entries()) {
      const r = await s.post(`/repos/alice/proj/contents/name-${i}.txt`, { branch: 'feature', content: 'eA==', author: { name, email: 'jo@x.com' } }, { token: alice.token })
      expect(r.status).toBe(201)
      const commit = await commitOf(r.body.commit.sha)
      expect(commit.author.name).toBe(recorded!)
      expect(commit.author.email).toBe('jo@x.com')
    }
  })
})

describe('dates', () => {
  test('the earliest and latest accepted dates are written and read back as sent, on every route', async () => {
    for (const [route, call] of ROUTES) {
      for (const when of ['1970-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '1973-03-03T09:46:39Z', '2100-01-01T00:00:00Z']) {
        const r = await call(await freshFile(), { dates: { author: when, committer: when } })
        expect({ route, when, status: r.status }).toEqual({ route, when, status: route.startsWith('POST contents') ? 201 : 200 })
        const sha = r.body.commit.sha
        expect({ route, author: r.body.commit.author.date, committer: r.body.commit.committer.date }).toEqual({ route, author: when, committer: when })
        const commit = await commitOf(sha)
        expect({ route, author: Date.parse(commit.author.date), committer: Date.parse(commit.committer.date) }).toEqual({ route, author: Date.parse(when), committer: Date.parse(when) })
        expect(await rawAuthor(sha)).toEndWith(` ${Date.parse(when) / 1000} +0000`)
      }
    }
  })

  test('dates past the accepted range are refused with 422, the branch unchanged', async () => {
    const file = await freshFile()
    const before = await head()
    for (const when of ['1969-12-31T23:59:59Z', '10000-01-01T00:00:00Z'])
      for (const [route, call] of ROUTES) {
        const r = await call(file, { dates: { author: when } })
        expect({ route, when, status: r.status }).toEqual({ route, when, status: 422 })
        expect(r.body.message).toContain('dates.author')
      }
    expect(await head()).toBe(before)
  })
})

describe('a full name git would refuse', () => {
  test("is kept, and the user's commits are recorded under their login name", async () => {
    const r = await s.patch('/user/settings', { full_name: '.' }, { token: dot.token })
    expect(r.status).toBe(200)
    expect(r.body.full_name).toBe('.')
    const before = await head()
    const w = await s.post('/repos/alice/proj/contents/by-dotty.txt', { branch: 'feature', content: 'eA==' }, { token: dot.token })
    expect(w.status).toBe(201)
    expect(w.body.commit.author.name).toBe('dotty')
    expect(w.body.commit.committer.name).toBe('dotty')
    const commit = await commitOf(w.body.commit.sha)
    expect(commit.author.name).toBe('dotty')
    expect(commit.committer.name).toBe('dotty')
    expect(await head()).toBe(w.body.commit.sha)
    expect((await s.get(`/repos/alice/proj/git/commits/${w.body.commit.sha}`, { token: alice.token })).body.parents.map((p: { sha: string }) => p.sha)).toEqual([before])
    // A repository of theirs made with its first commit: that commit under their login name too.
    expect((await s.post('/user/repos', { name: 'dotted', auto_init: true }, { token: dot.token })).status).toBe(201)
    const first = (await s.get('/repos/dotty/dotted/commits?limit=1', { token: dot.token })).body[0]
    expect([first.commit.author.name, first.commit.committer.name]).toEqual(['dotty', 'dotty'])
  })
})
