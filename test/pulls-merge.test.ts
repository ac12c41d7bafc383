import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { and, asc, eq } from 'drizzle-orm'
import { pullRequests, users } from '../src/db/schema'
import { eventsOfRepo } from '../src/events/outbox'
import { repoPath } from '../src/git/run'
import { repairPullMerges } from '../src/modules/pulls/merge'
import { contentMark } from './db-snapshot'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { git, gitOk, remoteUrl, tempDir } from './git-fixture'
import { commitOn, forkWithBranch, pushedRepo } from './pull-fixtures'
import { sqlitePlanOf, statementRecorder } from './query-counter'

let s: TestServer
let alice: TestUser
let bob: TestUser
let reader: TestUser
const dirs: string[] = []
const tok = (u: TestUser) => ({ token: u.token })

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  reader = await s.user('reader')
  // Bob merges in alice's repositories (write), with a full name git records.
  await s.deps.db.update(users).set({ fullName: 'Bob Builder' }).where(eq(users.id, bob.user.id))
})
afterAll(async () => {
  await s.stop()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

/**
 * alice/<name>: main = one → m1 (m.txt); feature = one → f1 (f.txt) → f2 (f.txt again); pull
 * request #1 feature → main, opened by alice; bob writes.
 */
async function scenario(name: string) {
  const repo = await pushedRepo(s, alice, name, dirs)
  expect((await s.put(`/repos/alice/${name}/collaborators/bob`, { permission: 'write' }, tok(alice))).status).toBe(204)
  expect((await s.put(`/repos/alice/${name}/collaborators/reader`, { permission: 'read' }, tok(alice))).status).toBe(204)
  const f1 = await commitOn(repo.dir, 'feature', { 'f.txt': 'f1\n' }, 'f1', 'main')
  const f2 = await commitOn(repo.dir, 'feature', { 'f.txt': 'f2\n' }, 'f2')
  const m1 = await commitOn(repo.dir, 'main', { 'm.txt': 'm1\n' }, 'm1')
  await gitOk(repo.dir, 'push', '-q', 'origin', 'main', 'feature')
  const pr = await s.post(`/repos/alice/${name}/pulls`, { head: 'feature', base: 'main', title: 'Feature' }, tok(alice))
  expect(pr.status).toBe(201)
  expect(pr.body.mergeable).toBe(true)
  return { ...repo, f1, f2, m1, gitDir: repoPath(s.dataDir, 'alice', name) }
}

/** `git log --graph` of main in a fresh clone, trailing spaces dropped. */
async function graphOf(name: string, format = '%s'): Promise<string[]> {
  const dir = tempDir()
  dirs.push(dir)
  await gitOk(dir, 'clone', '-q', remoteUrl(s.url, `alice/${name}.git`), 'c')
  const out = await gitOk(join(dir, 'c'), 'log', '--graph', `--format=${format}`, 'origin/main')
  return out.split('\n').map((l) => l.trimEnd())
}
const show = (gitDir: string, format: string, rev = 'refs/heads/main') => gitOk(gitDir, 'show', '-s', `--format=${format}`, rev)

describe('merge styles give the commit graphs Gitea gives', () => {
  test('merge (an empty body): a merge commit of main and the head, by the merger; the pull request is merged and closed', async () => {
    const sc = await scenario('m-merge')
    const last = (await eventsOfRepo(s.deps.db, sc.id, 0, 500)).at(-1)!.id
    const r = await s.request('POST', '/repos/alice/m-merge/pulls/1/merge', tok(bob))
    expect([r.status, r.text]).toEqual([200, ''])
    expect(await graphOf('m-merge')).toEqual([
      "*   Merge pull request 'Feature' (#1) from feature into main",
      '|\\',
      '| * f2',
      '| * f1',
      '* | m1',
      '|/',
      '* one',
    ])
    const tip = await gitOk(sc.gitDir, 'rev-parse', 'main')
    expect(await show(sc.gitDir, '%P')).toBe(`${sc.m1} ${sc.f2}`)
    expect(await show(sc.gitDir, '%an <%ae>|%cn <%ce>')).toBe('Bob Builder <bob@example.com>|Bob Builder <bob@example.com>')
    const pr = (await s.get('/repos/alice/m-merge/pulls/1')).body
    expect(pr).toMatchObject({ state: 'closed', merged: true, merge_commit_sha: tip, merged_by: { login: 'bob' }, mergeable: false })
    expect(pr.merged_at).toBe(pr.closed_at)
    expect((await s.get('/repos/alice/m-merge/pulls/1/merge')).status).toBe(204)
    expect((await s.get('/repos/alice/m-merge/issues/1')).body.pull_request).toEqual({ merged: true, merged_at: pr.merged_at, draft: false, html_url: pr.html_url })
    expect((await s.get('/repos/alice/m-merge')).body.open_pr_counter).toBe(0)
    // pull.merged, then the base branch's push by the merger (the push machinery recorded it).
    const events = (await eventsOfRepo(s.deps.db, sc.id, last, 500)).map((e) => [e.kind, e.actorId, e.payload])
    expect(events).toEqual([
      ['pull.merged', bob.user.id, { index: 1, mergeCommitSha: tip }],
      ['push', bob.user.id, { ref: 'refs/heads/main', before: sc.m1, after: tip }],
    ])
    // Merged: a second merge is a 405.
    expect((await s.post('/repos/alice/m-merge/pulls/1/merge', { Do: 'merge' }, tok(bob))).status).toBe(405)
  })

  test('squash: one commit on main, authored by the poster, committed by the merger, titled "<title> (#n)"', async () => {
    const sc = await scenario('m-squash')
    const r = await s.post('/repos/alice/m-squash/pulls/1/merge', { Do: 'squash', MergeMessageField: 'Squashed body' }, tok(bob))
    expect(r.status).toBe(200)
    expect(await graphOf('m-squash')).toEqual(['* Feature (#1)', '* m1', '* one'])
    expect(await show(sc.gitDir, '%P')).toBe(sc.m1)
    expect(await show(sc.gitDir, '%B')).toBe('Feature (#1)\n\nSquashed body')
    expect(await show(sc.gitDir, '%an|%cn')).toBe('alice|Bob Builder')
    expect(await gitOk(sc.gitDir, 'show', 'main:f.txt')).toBe('f2')
  })

  test('rebase: the head commits replayed on main, authors kept, no merge commit', async () => {
    const sc = await scenario('m-rebase')
    const r = await s.post('/repos/alice/m-rebase/pulls/1/merge', { do: 'rebase' }, tok(bob))
    expect([r.status, r.text]).toEqual([200, ''])
    expect(await graphOf('m-rebase')).toEqual(['* f2', '* f1', '* m1', '* one'])
    const tip = await gitOk(sc.gitDir, 'rev-parse', 'main')
    expect(tip).not.toBe(sc.f2)
    expect(await show(sc.gitDir, '%an|%cn')).toBe('Alice A|Bob Builder')
    expect(await gitOk(sc.gitDir, 'show', 'main:m.txt')).toBe('m1')
    expect((await s.get('/repos/alice/m-rebase/pulls/1')).body.merge_commit_sha).toBe(tip)
  })

  test('rebase-merge: replayed on main, then a merge commit', async () => {
    const sc = await scenario('m-rebmerge')
    expect((await s.post('/repos/alice/m-rebmerge/pulls/1/merge', { Do: 'rebase-merge', MergeTitleField: 'Custom title' }, tok(bob))).status).toBe(200)
    expect(await graphOf('m-rebmerge')).toEqual(['*   Custom title', '|\\', '| * f2', '| * f1', '|/', '* m1', '* one'])
    const parents = (await show(sc.gitDir, '%P')).split(' ')
    expect(parents[0]).toBe(sc.m1)
    expect(parents[1]).not.toBe(sc.f2)
  })

  test('rebase when main has not moved: a fast-forward to the head commits themselves', async () => {
    const repo = await pushedRepo(s, alice, 'm-ff', dirs)
    const f1 = await commitOn(repo.dir, 'feature', { 'f.txt': 'f1\n' }, 'f1', 'main')
    await gitOk(repo.dir, 'push', '-q', 'origin', 'feature')
    expect((await s.post('/repos/alice/m-ff/pulls', { head: 'feature', base: 'main', title: 'FF' }, tok(alice))).status).toBe(201)
    expect((await s.post('/repos/alice/m-ff/pulls/1/merge', { Do: 'rebase' }, tok(alice))).status).toBe(200)
    expect(await gitOk(repoPath(s.dataDir, 'alice', 'm-ff'), 'rev-parse', 'main')).toBe(f1)
  })

  test("a fork's pull request merges into the parent", async () => {
    await pushedRepo(s, alice, 'm-up', dirs)
    const { head: fix } = await forkWithBranch(s, alice, 'm-up', bob, 'fix', dirs)
    expect((await s.post('/repos/alice/m-up/pulls', { head: 'bob:fix', base: 'main', title: 'Fix' }, tok(bob))).status).toBe(201)
    // bob only reads alice/m-up: he may not merge; alice may.
    expect((await s.post('/repos/alice/m-up/pulls/1/merge', {}, tok(bob))).status).toBe(403)
    expect((await s.post('/repos/alice/m-up/pulls/1/merge', {}, tok(alice))).status).toBe(200)
    expect(await graphOf('m-up')).toEqual([
      "*   Merge pull request 'Fix' (#1) from bob/m-up:fix into main",
      '|\\',
      '| * bob fixes',
      '|/',
      '* one',
    ])
    expect(await gitOk(repoPath(s.dataDir, 'alice', 'm-up'), 'rev-parse', 'main^2')).toBe(fix)
  })
})

describe('refusals and races', () => {
  test('a style the repository disallows, a reader, a conflict, a closed pull request: 405/403, nothing changed', async () => {
    const sc = await scenario('m-refuse')
    expect((await s.patch('/repos/alice/m-refuse', { allow_squash_merge: false, allow_rebase: false }, tok(alice))).status).toBe(200)
    const main = await gitOk(sc.gitDir, 'rev-parse', 'main')
    const mark = contentMark(s.deps.db)
    const before = await mark()
    const tries: [unknown, number, TestUser | null][] = [
      [{ Do: 'squash' }, 405, bob],
      [{ Do: 'rebase' }, 405, bob],
      [{ Do: 'octopus' }, 422, bob],
      [{}, 403, reader],
      [{}, 401, null],
    ]
    for (const [body, status, who] of tries) {
      const r = await s.post('/repos/alice/m-refuse/pulls/1/merge', body, who ? tok(who) : {})
      expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), status])
      expect(typeof r.body.message).toBe('string')
    }
    expect(await mark()).toBe(before)
    expect(await gitOk(sc.gitDir, 'rev-parse', 'main')).toBe(main)
    expect((await s.get('/repos/alice/m-refuse/pulls/1')).body).toMatchObject({ merged: false, state: 'open' })
    expect((await s.post('/repos/alice/m-refuse/pulls/9/merge', {}, tok(bob))).status).toBe(404)
    // Closed: 405.
    expect((await s.patch('/repos/alice/m-refuse/pulls/1', { state: 'closed' }, tok(alice))).status).toBe(201)
    expect((await s.post('/repos/alice/m-refuse/pulls/1/merge', {}, tok(bob))).status).toBe(405)
    // Conflicting: 405 with the files named.
    await commitOn(sc.dir, 'clash', { 'm.txt': 'other\n' }, 'clash', sc.f2)
    await gitOk(sc.dir, 'push', '-q', 'origin', 'clash')
    const pr = await s.post('/repos/alice/m-refuse/pulls', { head: 'clash', base: 'main', title: 'Clash' }, tok(alice))
    expect(pr.body).toMatchObject({ mergeable: false, conflicted_files: ['m.txt'] })
    const refused = await s.post('/repos/alice/m-refuse/pulls/2/merge', {}, tok(bob))
    expect(refused.status).toBe(405)
    expect(await gitOk(sc.gitDir, 'rev-parse', 'main')).toBe(main)
  })

  test('a push landing between the merge reading main and moving it: 409, the push kept; a retry merges on top of it', async () => {
    const sc = await scenario('m-race')
    // The head moves without the checker running (none in this file): the merge brings
    // refs/pull/1/head up to date, and this reference-transaction hook moves main right then,
    // as a push landing at that instant would.
    const f3 = await commitOn(sc.dir, 'feature', { 'f.txt': 'f3\n' }, 'f3')
    await gitOk(sc.dir, 'push', '-q', 'origin', 'feature')
    const pushed = await commitOn(sc.dir, 'main', { 'p.txt': 'pushed\n' }, 'pushed meanwhile')
    await gitOk(sc.dir, 'push', '-q', 'origin', `${pushed}:refs/heads/elsewhere`)
    writeFileSync(join(sc.gitDir, 'race-commit'), pushed)
    const hook = join(sc.gitDir, 'hooks', 'reference-transaction')
    writeFileSync(
      hook,
      `#!/bin/sh
[ "$1" = committed ] || exit 0
while read old new ref; do
  case "$ref" in
    refs/pull/*/head) if [ -f race-commit ]; then c=$(cat race-commit); rm race-commit; git update-ref refs/heads/main "$c"; fi ;;
  esac
done
exit 0
`,
    )
    chmodSync(hook, 0o755)
    const r = await s.post('/repos/alice/m-race/pulls/1/merge', {}, tok(bob))
    expect(r.status).toBe(409)
    expect(r.body.message).toContain('try again')
    expect(await gitOk(sc.gitDir, 'rev-parse', 'main')).toBe(pushed)
    expect((await s.get('/repos/alice/m-race/pulls/1')).body).toMatchObject({ merged: false, state: 'open' })
    expect((await s.deps.db.select().from(pullRequests).where(eq(pullRequests.baseRepoId, sc.id)))[0]!.mergeIntent).toBeNull()
    // The retry merges on top of the push.
    expect((await s.post('/repos/alice/m-race/pulls/1/merge', {}, tok(bob))).status).toBe(200)
    expect(await show(sc.gitDir, '%P')).toBe(`${pushed} ${f3}`)
  })

  test('merges racing real pushes to the base: every answer is honest and nothing is lost', async () => {
    const repo = await pushedRepo(s, alice, 'm-rush', dirs)
    const gitDir = repoPath(s.dataDir, 'alice', 'm-rush')
    for (let i = 1; i <= 3; i++) {
      const head = await commitOn(repo.dir, `f${i}`, { [`f${i}.txt`]: `${i}\n` }, `f${i}`, 'origin/main')
      await gitOk(repo.dir, 'push', '-q', 'origin', `f${i}`)
      expect((await s.post('/repos/alice/m-rush/pulls', { head: `f${i}`, base: 'main', title: `F${i}` }, tok(alice))).status).toBe(201)
      const ours = await commitOn(repo.dir, `p${i}`, { [`p${i}.txt`]: `${i}\n` }, `p${i}`, 'origin/main')
      const [merge, push] = await Promise.all([
        s.post(`/repos/alice/m-rush/pulls/${i}/merge`, {}, tok(alice)),
        git(repo.dir, 'push', '-q', 'origin', `p${i}:main`),
      ])
      expect([200, 409]).toContain(merge.status)
      const tip = await gitOk(gitDir, 'rev-parse', 'main')
      const on = async (sha: string) => (await git(gitDir, 'merge-base', '--is-ancestor', sha, tip)).code === 0
      if (push.code === 0) expect(await on(ours)).toBe(true)
      const pr = (await s.get(`/repos/alice/m-rush/pulls/${i}`)).body
      if (merge.status === 200) {
        expect(pr.merged).toBe(true)
        expect(await on(pr.merge_commit_sha)).toBe(true)
        expect(await on(head)).toBe(true)
      } else expect(pr).toMatchObject({ merged: false, state: 'open' })
      await gitOk(repo.dir, 'fetch', '-q', 'origin')
    }
  })

  test('a crash between moving the base and recording the merge is repaired at start', async () => {
    const sc = await scenario('m-crash')
    // The merge moved main (a fast-forward to the head, as a rebase would) and the process died.
    const pull = (await s.deps.db.select().from(pullRequests).where(eq(pullRequests.baseRepoId, sc.id)))[0]!
    const merge = await gitOk(sc.gitDir, 'commit-tree', '-p', sc.m1, '-p', sc.f2, '-m', 'merged', `${sc.f2}^{tree}`)
    await gitOk(sc.gitDir, 'update-ref', 'refs/heads/main', merge)
    await s.deps.db.update(pullRequests).set({ mergeIntent: JSON.stringify({ sha: merge, old: sc.m1, by: bob.user.id, style: 'merge' }) }).where(eq(pullRequests.id, pull.id))
    // Another one whose intent never reached git: the intent is dropped.
    const other = await commitOn(sc.dir, 'other', { 'o.txt': 'o\n' }, 'other', 'main')
    await gitOk(sc.dir, 'push', '-q', 'origin', 'other')
    expect((await s.post('/repos/alice/m-crash/pulls', { head: 'other', base: 'main', title: 'Other' }, tok(alice))).status).toBe(201)
    await s.deps.db.update(pullRequests).set({ mergeIntent: JSON.stringify({ sha: other, old: sc.m1, by: bob.user.id, style: 'merge' }) }).where(and(eq(pullRequests.baseRepoId, sc.id), eq(pullRequests.index, 2)))
    expect((await s.post('/repos/alice/m-crash/pulls/2/merge', {}, tok(bob))).status).toBe(409)
    // One that cannot be repaired (an unreadable intent) stops the repair of none of the others.
    const intent = JSON.stringify({ sha: merge, old: sc.m1, by: bob.user.id, style: 'merge' })
    await s.deps.db.update(pullRequests).set({ mergeIntent: '{unreadable' }).where(eq(pullRequests.id, pull.id))
    expect(await repairPullMerges(s.deps)).toBe(0)
    expect((await s.deps.db.select().from(pullRequests).where(eq(pullRequests.baseRepoId, sc.id)).orderBy(asc(pullRequests.index))).map((p) => p.mergeIntent)).toEqual(['{unreadable', null])
    await s.deps.db.update(pullRequests).set({ mergeIntent: intent }).where(eq(pullRequests.id, pull.id))
    expect(await repairPullMerges(s.deps)).toBe(1)
    expect((await s.get('/repos/alice/m-crash/pulls/1')).body).toMatchObject({ merged: true, state: 'closed', merge_commit_sha: merge, merged_by: { login: 'bob' } })
    expect((await s.get('/repos/alice/m-crash/pulls/2')).body).toMatchObject({ merged: false, state: 'open' })
    expect((await s.deps.db.select().from(pullRequests).where(eq(pullRequests.baseRepoId, sc.id))).map((p) => p.mergeIntent)).toEqual([null, null])
    // SQLite (which has no statistics, so its plan does not hang on the table's size): the read of
    // the merges under way searches their partial index, never every pull request; PostgreSQL's
    // plan is checked over 5,000 pull requests in test/pg-perf-plans.test.ts.
    if (s.deps.db.$runtime.dialect === 'sqlite') {
      const sent = statementRecorder(s.deps.db)
      const read = (await sent.during(() => repairPullMerges(s.deps))).find((text) => /from "pull_requests" where .*"merge_intent" is not null/.test(text))
      expect(read).toBeDefined()
      const plan = sqlitePlanOf(s.deps.db, read!).join('\n')
      expect(plan).toContain('pull_requests_merge_intent_idx')
      expect(plan).not.toMatch(/SCAN pull_requests(?! USING)/)
    }
  })
})
