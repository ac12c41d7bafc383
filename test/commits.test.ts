/**
 * The commits API through gitea-js: a repository's history (paging headers, sha, path, not,
 * since/until, stat/files switches), one commit, its diff and patch, the pull request that merged
 * it, and comparisons; each answer checked against git's own view of a clone.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import { commitOn, pushedRepo } from './pull-fixtures'
import { missingGiteaFields } from './gitea-types'
import { keptHistoryAnswers } from '../src/git/commit-page'

let s: TestServer
let alice: TestUser
let asAlice: Api<unknown>
let anon: Api<unknown>
const dirs: string[] = []
/** main: c1 (a.txt) → c2 (b.txt, lib/x.ts) → c3 (a.txt again, big.txt); feature: c2 → f1 (f.txt). */
let c1: string, c2: string, c3: string, f1: string
let work: string

interface Res<T> {
  status: number
  data: T
  headers: Headers
}
const call = <T>(p: Promise<Res<T>>) => p.catch((e: Res<T>) => e)

beforeAll(async () => {
  // A small diff bound, so that one commit's diff passes it.
  s = await startTestServer({ maxDiffSize: 2048 })
  alice = await s.user('alice')
  asAlice = giteaApi(s.url, { token: alice.token })
  anon = giteaApi(s.url, {})
  const repo = await pushedRepo(s, alice, 'hist', dirs)
  work = repo.dir
  c1 = await gitOk(work, 'rev-parse', 'HEAD')
  await gitOk(work, 'checkout', '-q', '-b', 'tmp')
  c2 = await commitOn(work, 'main', { 'b.txt': 'bee\n' }, 'second')
  await gitOk(work, 'checkout', '-q', 'main')
  await gitOk(work, 'reset', '-q', '--hard', c1)
  require('node:fs').mkdirSync(join(work, 'lib'))
  writeFileSync(join(work, 'lib/x.ts'), 'export const x = 1\n')
  c2 = await commitOn(work, 'main', { 'b.txt': 'bee\n' }, 'second')
  c3 = await commitOn(work, 'main', { 'a.txt': 'one\ntwo\n', 'big.txt': 'x'.repeat(4000) + '\n' }, 'third')
  f1 = await commitOn(work, 'feature', { 'f.txt': 'feature\n' }, 'f1', c2)
  await gitOk(work, 'checkout', '-q', 'main')
  await gitOk(work, 'push', '-q', 'origin', 'main', 'feature')
  expect((await s.post('/user/repos', { name: 'empty' }, { token: alice.token })).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

describe('GET /repos/{o}/{r}/commits', () => {
  test('the default branch, newest first, as Gitea pages it: X-Total-Count, X-HasMore, Link', async () => {
    const all = await call(anon.repos.repoGetAllCommits('alice', 'hist'))
    expect(all.status).toBe(200)
    expect(all.data.map((c) => c.sha)).toEqual([c3, c2, c1])
    expect(all.headers.get('X-Total-Count')).toBe('3')
    expect(all.headers.get('X-HasMore')).toBe('false')
    const first = all.data[0]!
    expect(missingGiteaFields('Commit', first)).toEqual([])
    expect(missingGiteaFields('RepoCommit', first.commit!)).toEqual(['verification'].filter((f) => !(f in first.commit!)))
    expect(first.commit!.message).toBe('third\n')
    expect(first.parents!.map((p) => p.sha)).toEqual([c2])
    expect(first.stats).toEqual({ total: 2, additions: 2, deletions: 0 })
    expect(first.files!.map((f) => [f.filename, f.status]).sort()).toEqual([
      ['a.txt', 'changed'],
      ['big.txt', 'added'],
    ])
    expect(first.author!.login).toBe('alice')

    const p1 = await call(anon.repos.repoGetAllCommits('alice', 'hist', { limit: 2 }))
    expect(p1.data.map((c) => c.sha)).toEqual([c3, c2])
    expect(p1.headers.get('X-HasMore')).toBe('true')
    expect(p1.headers.get('X-PageCount')).toBe('2')
    expect(p1.headers.get('Link')).toContain('rel="next"')
    const p2 = await call(anon.repos.repoGetAllCommits('alice', 'hist', { limit: 2, page: 2 }))
    expect(p2.data.map((c) => c.sha)).toEqual([c1])
    expect(p2.headers.get('X-HasMore')).toBe('false')
    expect(p2.headers.get('Link')).toContain('rel="prev"')
  })

  test('sha, path, not, since/until, and the stat / files switches', async () => {
    const feature = await call(anon.repos.repoGetAllCommits('alice', 'hist', { sha: 'feature' }))
    expect(feature.data.map((c) => c.sha)).toEqual([f1, c2, c1])
    const bySha = await call(anon.repos.repoGetAllCommits('alice', 'hist', { sha: c2.slice(0, 10) }))
    expect(bySha.data.map((c) => c.sha)).toEqual([c2, c1])
    const path = await call(anon.repos.repoGetAllCommits('alice', 'hist', { path: 'a.txt' }))
    expect(path.data.map((c) => c.sha)).toEqual([c3, c1])
    expect(path.headers.get('X-Total-Count')).toBe('2')
    expect((await call(anon.repos.repoGetAllCommits('alice', 'hist', { path: 'lib' }))).data.map((c) => c.sha)).toEqual([c2])
    expect((await call(anon.repos.repoGetAllCommits('alice', 'hist', { path: 'nowhere.txt' }))).status).toBe(404)
    // A path is read literally: pathspec magic matches nothing.
    expect((await call(anon.repos.repoGetAllCommits('alice', 'hist', { path: ':(glob)*.txt' }))).status).toBe(404)
    const not = await call(anon.repos.repoGetAllCommits('alice', 'hist', { sha: 'feature', not: 'main' }))
    expect(not.data.map((c) => c.sha)).toEqual([f1])
    expect(not.headers.get('X-Total-Count')).toBe('1')
    const lean = await call(anon.repos.repoGetAllCommits('alice', 'hist', { stat: false, files: false, limit: 1 }))
    expect(lean.data[0]!.stats).toBeNull()
    expect(lean.data[0]!.files).toBeNull()
    const future = await s.get('/repos/alice/hist/commits?since=2999-01-01T00:00:00Z')
    expect(future.status).toBe(200)
    expect(future.body).toEqual([])
    expect(future.headers.get('X-Total-Count')).toBe('0')
    expect((await s.get('/repos/alice/hist/commits?until=2999-01-01T00:00:00Z')).body).toHaveLength(3)
    expect((await s.get('/repos/alice/hist/commits?until=1999-01-01T00:00:00%2B02:00')).body).toEqual([])
    expect((await s.get('/repos/alice/hist/commits?since=yesterday')).status).toBe(422)
  })

  test('the same history asked again is answered kept, without git; a branch that moves is listed anew', async () => {
    const list = (query: string) => s.get(`/repos/alice/hist/commits?${query}`, { token: alice.token })
    const ids = (r: { body: { sha: string }[] }) => r.body.map((c) => c.sha)
    for (const query of ['sha=main&limit=2', `sha=${c3}&limit=2&stat=false&files=false`, `sha=${c3}&path=a.txt`, 'sha=main&page=2&limit=1']) {
      const first = await list(query)
      const before = keptHistoryAnswers()
      const again = await list(query)
      // The count and the page, both kept.
      expect(`${query}: ${keptHistoryAnswers() - before}`).toBe(`${query}: 2`)
      expect(again.status).toBe(200)
      expect(again.body).toEqual(first.body)
      expect(again.headers.get('x-total-count')).toBe(first.headers.get('x-total-count'))
    }
    // The switches are kept apart: with stats, without, with files.
    const plain = (await list(`sha=${c3}&limit=1&stat=false&files=false`)).body[0]
    const full = (await list(`sha=${c3}&limit=1`)).body[0]
    expect(plain.stats).toBeNull()
    expect(plain.files).toBeNull()
    expect(full.stats.total).toBeGreaterThan(0)
    expect(full.files.map((f: { filename: string }) => f.filename).sort()).toEqual(['a.txt', 'big.txt'])
    // A new commit on main: the branch's list and count show it (a name is resolved each time).
    const listed = await list('sha=main&limit=2')
    const c4 = await commitOn(work, 'main', { 'd.txt': 'dee\n' }, 'fourth')
    await gitOk(work, 'push', '-q', 'origin', 'main')
    const moved = await list('sha=main&limit=2')
    expect(ids(moved)).toEqual([c4, ids(listed)[0]!])
    expect(Number(moved.headers.get('x-total-count'))).toBe(Number(listed.headers.get('x-total-count')) + 1)
    await gitOk(work, 'push', '-q', '-f', 'origin', `${c3}:main`)
    const back = await list('sha=main&limit=2')
    expect(back.body).toEqual(listed.body)
    expect(back.headers.get('x-total-count')).toBe(listed.headers.get('x-total-count'))
  })

  test('refusals: an unknown ref 404, an empty repository 409 (Gitea\'s message)', async () => {
    expect((await call(anon.repos.repoGetAllCommits('alice', 'hist', { sha: 'nope' }))).status).toBe(404)
    expect((await call(anon.repos.repoGetAllCommits('alice', 'hist', { sha: '--all' }))).status).toBe(404)
    expect((await call(anon.repos.repoGetAllCommits('alice', 'hist', { not: 'nope' }))).status).toBe(404)
    const empty = await s.get('/repos/alice/empty/commits')
    expect(empty.status).toBe(409)
    expect(empty.body.message).toBe('Git Repository is empty.')
  })
})

describe('GET /repos/{o}/{r}/git/commits/{sha}', () => {
  test('one commit by id, short id, branch or tag, with its files and line counts', async () => {
    const one = await call(anon.repos.repoGetSingleCommit('alice', 'hist', c2))
    expect(one.status).toBe(200)
    expect(one.data.sha).toBe(c2)
    expect(missingGiteaFields('Commit', one.data)).toEqual([])
    expect(one.data.files!.map((f) => f.filename).sort()).toEqual(['b.txt', 'lib/x.ts'])
    expect(one.data.stats).toEqual({ total: 2, additions: 2, deletions: 0 })
    expect(one.data.commit!.tree!.sha).toBe(await gitOk(work, 'rev-parse', `${c2}^{tree}`))
    expect((await call(anon.repos.repoGetSingleCommit('alice', 'hist', c2.slice(0, 7)))).data.sha).toBe(c2)
    expect((await call(anon.repos.repoGetSingleCommit('alice', 'hist', 'feature'))).data.sha).toBe(f1)
    expect((await call(anon.repos.repoGetSingleCommit('alice', 'hist', 'main', { files: false }))).data.files).toBeNull()
  })

  test('refusals: unknown 404, a name no ref can have 422', async () => {
    expect((await call(anon.repos.repoGetSingleCommit('alice', 'hist', 'f'.repeat(40)))).status).toBe(404)
    expect((await call(anon.repos.repoGetSingleCommit('alice', 'hist', 'nope'))).status).toBe(404)
    expect((await s.get('/repos/alice/hist/git/commits/a%20b')).status).toBe(422)
    expect((await s.get('/repos/alice/hist/git/commits/main~1')).status).toBe(422)
  })

  test('.diff and .patch: git\'s own text; a root commit against nothing; past WARREN_MAX_DIFF_SIZE a 406 before anything is sent', async () => {
    const diff = await s.get(`/repos/alice/hist/git/commits/${c2}.diff`)
    expect(diff.status).toBe(200)
    expect(diff.headers.get('content-type')).toContain('text/plain')
    expect(diff.text).toBe((await gitOk(work, 'diff', '--binary', '-M', c1, c2)) + '\n')
    const patch = await s.get(`/repos/alice/hist/git/commits/${c2}.patch`)
    expect(patch.text).toContain('Subject: [PATCH] second')
    expect(patch.text).toContain('+bee')
    const root = await s.get(`/repos/alice/hist/git/commits/${c1}.diff`)
    expect(root.text).toContain('+one')
    expect((await s.get(`/repos/alice/hist/git/commits/${'f'.repeat(40)}.diff`)).status).toBe(404)
    const big = await s.get(`/repos/alice/hist/git/commits/${c3}.diff`)
    expect([big.status, big.body.message]).toEqual([406, expect.stringContaining('WARREN_MAX_DIFF_SIZE')])
  })
})

describe('GET /repos/{o}/{r}/compare/{basehead}', () => {
  test('base...head: the commits on head, the files from the merge base; base..head; a lone head against the default branch', async () => {
    const cmp = await call(anon.repos.repoCompareDiff('alice', 'hist', 'main...feature'))
    expect(cmp.status).toBe(200)
    expect(missingGiteaFields('Compare', cmp.data)).toEqual([])
    expect(cmp.data.total_commits).toBe(1)
    expect(cmp.data.commits!.map((c) => c.sha)).toEqual([f1])
    expect(missingGiteaFields('Commit', cmp.data.commits![0]!)).toEqual([])
    expect((cmp.data as any).files.map((f: any) => f.filename)).toEqual(['f.txt'])
    const direct = await s.get('/repos/alice/hist/compare/main..feature')
    expect(direct.body.total_commits).toBe(1)
    // From main itself: a.txt and big.txt differ too.
    expect(direct.body.files.map((f: any) => f.filename).sort()).toEqual(['a.txt', 'big.txt', 'f.txt'])
    const back = await s.get(`/repos/alice/hist/compare/feature...${c3}`)
    expect(back.body.commits.map((c: any) => c.sha)).toEqual([c3])
    expect((await s.get('/repos/alice/hist/compare/feature')).body.total_commits).toBe(1)
    expect((await s.get('/repos/alice/hist/compare/main...nope')).status).toBe(404)
    expect((await s.get('/repos/alice/hist/compare/main...--all')).status).toBe(404)
  })
})

describe('GET /repos/{o}/{r}/commits/{ref}/pull', () => {
  test('the pull request that merged a commit; 404 for a commit no pull request has', async () => {
    const pr = await call(asAlice.repos.repoCreatePullRequest('alice', 'hist', { head: 'feature', base: 'main', title: 'Feature' }))
    expect(pr.status).toBe(201)
    expect((await call(anon.repos.repoGetCommitPullRequest('alice', 'hist', f1))).data.number).toBe(pr.data.number)
    expect((await s.post(`/repos/alice/hist/pulls/${pr.data.number}/merge`, { Do: 'merge' }, { token: alice.token })).status).toBe(200)
    const merged = (await s.get(`/repos/alice/hist/pulls/${pr.data.number}`)).body.merge_commit_sha
    const found = await call(anon.repos.repoGetCommitPullRequest('alice', 'hist', merged))
    expect(found.status).toBe(200)
    expect(found.data.number).toBe(pr.data.number)
    expect(found.data.merged).toBe(true)
    expect((await call(anon.repos.repoGetCommitPullRequest('alice', 'hist', c1))).status).toBe(404)
    expect((await call(anon.repos.repoGetCommitPullRequest('alice', 'hist', 'nope'))).status).toBe(404)
    // The merge is in a clone as the API shows it.
    const clone = tempDir()
    dirs.push(clone)
    await gitOk(clone, 'clone', '-q', remoteUrl(s.url, 'alice/hist.git'), 'c')
    expect(await gitOk(join(clone, 'c'), 'rev-parse', 'HEAD')).toBe(merged)
  })
})
