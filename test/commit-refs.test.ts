import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, oneCommitRepo, remoteUrl } from './git-fixture'
import { commitRefsRound } from '../src/modules/issues/commit-refs'
import { findIssueReferences } from '../src/modules/issues/references'
import { eq, max, sql } from 'drizzle-orm'
import { eventConsumers, events } from '../src/db/schema'
import { DIALECT } from '../src/db/dialect'

/**
 * Issues referenced by pushed commits (Gitea's UpdateIssuesCommit, modules/issues/commit-refs.ts):
 * "Fixes #N" in a commit pushed to the default branch closes issue N (by the pusher, naming the
 * commit), "reopens #N" reopens it; every reference leaves a "referenced from a commit" entry on
 * the issue's timeline, once per commit; other branches reference without closing; a pull request
 * is never closed so; one who may not read the issue leaves nothing; another repository's issue by
 * owner/name#N.
 */

let s: TestServer
let alice: TestUser, bob: TestUser
let work: string
const as = (u: TestUser) => ({ token: u.token })
const drain = async () => {
  while ((await commitRefsRound(s.deps)) > 0);
}
async function commit(message: string, file = 'a.txt') {
  writeFileSync(join(work, file), `${message}\n${Math.random()}\n`)
  await gitOk(work, 'add', file)
  await gitOk(work, 'commit', '-q', '-m', message)
  return await gitOk(work, 'rev-parse', 'HEAD')
}
const timeline = async (repo: string, index: number) => (await s.get<any[]>(`/repos/${repo}/issues/${index}/timeline`, as(alice))).body
const stateOf = async (repo: string, index: number) => (await s.get(`/repos/${repo}/issues/${index}`, as(alice))).body.state

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  expect((await s.post('/user/repos', { name: 'proj' }, as(alice))).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'other' }, as(alice))).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'hidden', private: true }, as(bob))).status).toBe(201)
  for (const title of ['one', 'two', 'three']) expect((await s.post('/repos/alice/proj/issues', { title }, as(alice))).status).toBe(201)
  expect((await s.post('/repos/alice/other/issues', { title: 'elsewhere' }, as(alice))).status).toBe(201)
  expect((await s.post('/repos/bob/hidden/issues', { title: 'secret' }, as(bob))).status).toBe(201)
  work = await oneCommitRepo()
  await gitOk(work, 'remote', 'add', 'origin', remoteUrl(s.url, 'alice/proj.git', 'alice', alice.password))
  await gitOk(work, 'push', '-q', 'origin', 'main')
  await drain()
})
afterAll(async () => {
  await s.stop()
  rmSync(work, { recursive: true, force: true })
})

describe('references found in a message', () => {
  test("Gitea's forms: #N, !N, owner/name#N, a keyword right before, set apart by spaces or brackets", () => {
    expect(findIssueReferences('Fixes #1, closes: #2 and see (#3); reopens alice/other#4\nresolved #5. Not a#6 nor #7x')).toEqual([
      { owner: null, name: null, index: 1, action: 'closes' },
      { owner: null, name: null, index: 2, action: 'closes' },
      { owner: null, name: null, index: 3, action: 'none' },
      { owner: 'alice', name: 'other', index: 4, action: 'reopens' },
      { owner: null, name: null, index: 5, action: 'closes' },
    ])
    expect(findIssueReferences('prefixes #1 unfixes #2 FIX #3')).toEqual([
      { owner: null, name: null, index: 1, action: 'none' },
      { owner: null, name: null, index: 2, action: 'none' },
      { owner: null, name: null, index: 3, action: 'closes' },
    ])
  })
})

describe('a push to the default branch', () => {
  test('closes the issue a keyword names, naming the commit; the others referenced only', async () => {
    const sha = await commit('Fix the thing\n\nFixes #1, see #2 and alice/other#1')
    await gitOk(work, 'push', '-q', 'origin', 'main')
    await drain()
    expect(await stateOf('alice/proj', 1)).toBe('closed')
    expect(await stateOf('alice/proj', 2)).toBe('open')
    const one = await timeline('alice/proj', 1)
    expect(one.find((e) => e.type === 'commit_ref')).toMatchObject({ ref_commit_sha: sha, user: { login: 'alice' }, body: `<a href="${s.config.baseUrl}alice/proj/commit/${sha}">Fix the thing</a>` })
    expect(one.find((e) => e.type === 'close')).toMatchObject({ ref_commit_sha: sha, user: { login: 'alice' } })
    expect((await timeline('alice/proj', 2)).filter((e) => e.type === 'commit_ref').map((e) => e.ref_commit_sha)).toEqual([sha])
    expect((await timeline('alice/other', 1)).filter((e) => e.type === 'commit_ref').map((e) => e.ref_commit_sha)).toEqual([sha])
    // The issue's page says it.
    const page = await (await fetch(`${s.url}/alice/proj/issues/1`, { headers: { accept: 'text/html' } })).text()
    expect(page).toContain(`closed this in <a href="/alice/proj/commit/${sha}"><code>${sha.slice(0, 10)}</code></a>`)
    expect(page).toContain(`referenced this from a commit <a href="/alice/proj/commit/${sha}">`)
  })

  test('the same commit read again (a crash before the batch was marked, another push of it) adds nothing; reopens #N reopens', async () => {
    await drain()
    const before = (await timeline('alice/proj', 1)).length
    const sha = await commit('Reopens #1 after all')
    await gitOk(work, 'push', '-q', 'origin', 'main')
    await drain()
    expect(await stateOf('alice/proj', 1)).toBe('open')
    const after = await timeline('alice/proj', 1)
    expect(after.length).toBe(before + 2)
    expect(after.filter((e) => e.type === 'commit_ref' && e.ref_commit_sha === sha)).toHaveLength(1)
    // The same commit on a new branch: no second entry.
    await gitOk(work, 'push', '-q', 'origin', 'main:copy')
    await drain()
    expect((await timeline('alice/proj', 1)).length).toBe(before + 2)
  })

  test('another branch references without closing; an issue the pusher may not read is left alone', async () => {
    const sha = await commit('Fixes #3 and bob/hidden#1', 'b.txt')
    await gitOk(work, 'push', '-q', 'origin', 'HEAD:refs/heads/feature')
    await drain()
    expect(await stateOf('alice/proj', 3)).toBe('open')
    expect((await timeline('alice/proj', 3)).filter((e) => e.type === 'commit_ref').map((e) => e.ref_commit_sha)).toEqual([sha])
    const secret = (await s.get<any[]>('/repos/bob/hidden/issues/1/timeline', as(bob))).body
    expect(secret.filter((e) => e.type === 'commit_ref')).toEqual([])
    expect((await s.get('/repos/bob/hidden/issues/1', as(bob))).body.state).toBe('open')
  })
})

describe('on a site that had pushes before', () => {
  test('the consumer starts at the outbox’s end (drizzle/0056, drizzle-pg/0047): past pushes are not read again', async () => {
    const file = DIALECT === 'postgres' ? 'drizzle-pg/0047_commit_refs_consumer_start.sql' : 'drizzle/0056_commit_refs_consumer_start.sql'
    const statement = (await Bun.file(join(import.meta.dir, '..', file)).text()).replace(/^--.*$/gm, '').trim()
    await s.deps.db.delete(eventConsumers).where(eq(eventConsumers.name, 'commit-refs'))
    const db = s.deps.db as any
    await (DIALECT === 'postgres' ? db.execute(sql.raw(statement)) : db.run(sql.raw(statement)))
    const [last] = await s.deps.db.select({ id: max(events.id) }).from(events)
    const [row] = await s.deps.db.select().from(eventConsumers).where(eq(eventConsumers.name, 'commit-refs'))
    expect(Number(row!.doneId)).toBe(Number(last!.id))
    expect(await commitRefsRound(s.deps)).toBe(0)
  })
})

describe('a merged pull request', () => {
  test('closes the issues its description names after a keyword, by the merger, naming the merge commit; not before it is merged', async () => {
    const file = await s.post('/repos/alice/proj/contents/pr.txt', { content: btoa('pr\n'), new_branch: 'pr-branch', message: 'a change without keywords' }, as(alice))
    expect(file.status).toBe(201)
    const pr = await s.post('/repos/alice/proj/pulls', { head: 'pr-branch', base: 'main', title: 'Finish two', body: 'This closes #2 for good.' }, as(alice))
    expect(pr.status).toBe(201)
    await drain()
    expect(await stateOf('alice/proj', 2)).toBe('open')
    expect((await s.post(`/repos/alice/proj/pulls/${pr.body.number}/merge`, { Do: 'merge' }, as(alice))).status).toBe(200)
    await drain()
    expect(await stateOf('alice/proj', 2)).toBe('closed')
    const merged = (await s.get(`/repos/alice/proj/pulls/${pr.body.number}`, as(alice))).body.merge_commit_sha
    expect((await timeline('alice/proj', 2)).find((e) => e.type === 'close')).toMatchObject({ ref_commit_sha: merged, user: { login: 'alice' } })
  })
})
