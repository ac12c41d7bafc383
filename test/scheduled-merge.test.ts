import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { giteaApi, type Api } from 'gitea-js'
import { and, desc, eq } from 'drizzle-orm'
import { comments, events, pullAutoMerges, pullRequests } from '../src/db/schema'
import { markDone } from '../src/events/outbox'
import { startPullChecker } from '../src/jobs/pull-checker'
import { startAutoMerger } from '../src/jobs/auto-merger'
import { AUTO_MERGE_CONSUMER, TIMELINE } from '../src/modules/pulls/auto-merge'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { git, gitOk } from './git-fixture'
import { commitOn, pushedRepo } from './pull-fixtures'
import { fails, ok } from './gitea-calls'
import { until } from './webhook-receiver'

/*
 * Scheduled merges (merge_when_checks_succeed) through gitea-js: a merge that waits for its status
 * checks and happens when the last one arrives (not before), in the auto-merge job, never in the
 * request; cancelled by its scheduler or an admin; ready pull requests merged at once; a schedule
 * whose checks passed while no job ran merged at the job's start; delete_branch_after_merge for
 * immediate and scheduled merges, through the one push path (a protected head branch stays).
 */

let s: TestServer
let checker: ReturnType<typeof startPullChecker>
let merger: Awaited<ReturnType<typeof startAutoMerger>> | null = null
let alice: TestUser, bob: TestUser
let asAlice: Api<unknown>, asBob: Api<unknown>
let dir = ''
const dirs: string[] = []
const O = 'alice'
const R = 'sm'

const pullOf = async (index: number) => (await s.deps.db.select().from(pullRequests).where(eq(pullRequests.index, index)))[0]!
const branchExists = async (name: string) => (await git(dir, 'ls-remote', '--exit-code', 'origin', `refs/heads/${name}`)).code === 0
const timeline = async (index: number, type: number) =>
  (await s.deps.db.select().from(comments).where(and(eq(comments.issueId, (await pullOf(index)).issueId), eq(comments.type, type)))).length
const isMerged = async (index: number) => (await asAlice.repos.repoPullRequestIsMerged(O, R, index).catch((e) => e)).status === 204

/** A pull request from a new branch `name` (one commit), checked by the pull-checker; answers its index and head. */
async function openPull(name: string): Promise<{ index: number; head: string }> {
  await gitOk(dir, 'fetch', '-q', 'origin', 'main')
  const head = await commitOn(dir, name, { [`${name}.txt`]: `${name}\n` }, name, 'FETCH_HEAD')
  await gitOk(dir, 'push', '-q', 'origin', name)
  const pull = await ok(asAlice.repos.repoCreatePullRequest(O, R, { head: name, base: 'main', title: name }), 201)
  await checker.drain()
  expect((await pullOf(pull.number!)).headSha).toBe(head)
  return { index: pull.number!, head }
}

const schedule = (as: Api<unknown>, index: number, extra: Record<string, unknown> = {}) =>
  as.repos.repoMergePullRequest(O, R, index, { Do: 'merge', merge_when_checks_succeed: true, ...extra })

beforeAll(async () => {
  s = await startTestServer()
  checker = startPullChecker(s.deps)
  merger = await startAutoMerger(s.deps, { pollMs: 10 })
  alice = await s.user('alice')
  bob = await s.user('bob')
  ;[asAlice, asBob] = [alice, bob].map((u) => giteaApi(s.url, { token: u.token }))
  dir = (await pushedRepo(s, alice, R, dirs)).dir
  expect((await s.put(`/repos/${O}/${R}/collaborators/bob`, { permission: 'write' }, { token: alice.token })).status).toBe(204)
})
afterAll(async () => {
  await merger?.stop()
  await checker.stop()
  await s.stop()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

describe('scheduled merges', () => {
  test('a merge waiting for its checks is scheduled (201), happens when the last status succeeds and not before, and deletes its head branch', async () => {
    const { index, head } = await openPull('wait')
    await ok(asAlice.repos.repoCreateStatus(O, R, head, { state: 'pending', context: 'ci/build' }), 201)
    const r = await schedule(asBob, index, { delete_branch_after_merge: true })
    expect(r.status).toBe(201)
    expect(await timeline(index, TIMELINE.scheduledMerge)).toBe(1)
    // A second schedule is Gitea's 409; nothing merged yet.
    await fails(schedule(asAlice, index), 409)
    await merger!.drained()
    expect(await isMerged(index)).toBe(false)
    // Another context succeeding leaves the pending one: still waiting.
    await ok(asAlice.repos.repoCreateStatus(O, R, head, { state: 'success', context: 'ci/lint' }), 201)
    await merger!.drained()
    expect(await isMerged(index)).toBe(false)
    await ok(asAlice.repos.repoCreateStatus(O, R, head, { state: 'success', context: 'ci/build' }), 201)
    await until(() => isMerged(index), 'the scheduled merge')
    const pull = await ok(asAlice.repos.repoGetPullRequest(O, R, index))
    expect(pull).toMatchObject({ merged: true, state: 'closed', merged_by: { login: 'bob' } })
    expect(await s.deps.db.select().from(pullAutoMerges)).toEqual([])
    // The branch goes, then its timeline event is written.
    await until(async () => (await timeline(index, TIMELINE.deleteBranch)) === 1, 'the head branch deleted')
    expect(await branchExists('wait')).toBe(false)
  })

  test('a failing status keeps the merge scheduled; a later success merges it', async () => {
    const { index, head } = await openPull('flaky')
    await ok(asAlice.repos.repoCreateStatus(O, R, head, { state: 'failure', context: 'ci/build' }), 201)
    expect((await schedule(asAlice, index)).status).toBe(201)
    await merger!.drained()
    expect(await isMerged(index)).toBe(false)
    await ok(asAlice.repos.repoCreateStatus(O, R, head, { state: 'success', context: 'ci/build' }), 201)
    await until(() => isMerged(index), 'the scheduled merge')
    expect(await branchExists('flaky')).toBe(true)
  })

  test('a pull request ready now is merged at once (200), deleting its head branch when asked', async () => {
    const { index } = await openPull('ready')
    const r = await schedule(asAlice, index, { delete_branch_after_merge: true })
    expect(r.status).toBe(200)
    expect(await isMerged(index)).toBe(true)
    expect(await branchExists('ready')).toBe(false)
    expect(await timeline(index, TIMELINE.scheduledMerge)).toBe(0)
    // A plain merge deletes its head branch too.
    const plain = await openPull('plain')
    expect((await asAlice.repos.repoMergePullRequest(O, R, plain.index, { Do: 'squash', delete_branch_after_merge: true })).status).toBe(200)
    expect(await branchExists('plain')).toBe(false)
  })

  test('cancelling: 403 for another writer, 204 for an admin (timeline event), 404 once gone; a cancelled merge never happens', async () => {
    const { index, head } = await openPull('cancel')
    await ok(asAlice.repos.repoCreateStatus(O, R, head, { state: 'pending', context: 'ci/build' }), 201)
    expect((await schedule(asAlice, index)).status).toBe(201)
    // bob writes but neither scheduled it nor administers the repository.
    await fails(asBob.repos.repoCancelScheduledAutoMerge(O, R, index), 403)
    expect((await asAlice.repos.repoCancelScheduledAutoMerge(O, R, index)).status).toBe(204)
    expect(await timeline(index, TIMELINE.cancelledScheduledMerge)).toBe(1)
    await fails(asAlice.repos.repoCancelScheduledAutoMerge(O, R, index), 404)
    await ok(asAlice.repos.repoCreateStatus(O, R, head, { state: 'success', context: 'ci/build' }), 201)
    await merger!.drained()
    expect(await isMerged(index)).toBe(false)
    // The scheduler may cancel their own.
    await ok(asAlice.repos.repoCreateStatus(O, R, head, { state: 'pending', context: 'ci/other' }), 201)
    expect((await schedule(asBob, index)).status).toBe(201)
    expect((await asBob.repos.repoCancelScheduledAutoMerge(O, R, index)).status).toBe(204)
    await fails(asAlice.repos.repoCancelScheduledAutoMerge(O, R, 999), 404)
  })

  test('under branch protection, the scheduled merge waits for the required approvals too, and an approval merges it', async () => {
    await ok(asAlice.repos.repoCreateBranchProtection(O, R, { rule_name: 'main', enable_status_check: true, status_check_contexts: ['ci/*'], required_approvals: 1 }), 201)
    const { index, head } = await openPull('reviewed')
    expect((await schedule(asAlice, index)).status).toBe(201)
    await ok(asAlice.repos.repoCreateStatus(O, R, head, { state: 'success', context: 'ci/build' }), 201)
    await merger!.drained()
    expect(await isMerged(index)).toBe(false)
    await ok(asBob.repos.repoCreatePullReview(O, R, index, { event: 'APPROVED', body: 'fine' }))
    await until(() => isMerged(index), 'the scheduled merge after the approval')
  })

  test('a protected head branch is not deleted after the merge (403), the merge stands', async () => {
    const { index, head } = await openPull('kept')
    await ok(asAlice.repos.repoCreateBranchProtection(O, R, { rule_name: 'kept' }), 201)
    await ok(asAlice.repos.repoCreateStatus(O, R, head, { state: 'success', context: 'ci/build' }), 201)
    await ok(asBob.repos.repoCreatePullReview(O, R, index, { event: 'APPROVED', body: 'fine' }))
    await fails(asAlice.repos.repoMergePullRequest(O, R, index, { Do: 'merge', delete_branch_after_merge: true }), 403)
    expect(await isMerged(index)).toBe(true)
    expect(await branchExists('kept')).toBe(true)
  })

  test('a schedule whose checks succeeded while no job ran (or whose event was done before a crash) merges when the job starts', async () => {
    const { index, head } = await openPull('restart')
    await ok(asAlice.repos.repoCreateStatus(O, R, head, { state: 'pending', context: 'ci/build' }), 201)
    await ok(asBob.repos.repoCreatePullReview(O, R, index, { event: 'APPROVED', body: 'fine' }))
    expect((await schedule(asAlice, index)).status).toBe(201)
    await merger!.drained()
    await merger!.stop()
    merger = null
    await ok(asAlice.repos.repoCreateStatus(O, R, head, { state: 'success', context: 'ci/build' }), 201)
    // As if the consumer had marked the status done and died before merging.
    const last = (await s.deps.db.select({ id: events.id }).from(events).orderBy(desc(events.id)).limit(1))[0]!.id
    await markDone(s.deps.db, AUTO_MERGE_CONSUMER, last)
    expect(await isMerged(index)).toBe(false)
    merger = await startAutoMerger(s.deps, { pollMs: 10 })
    expect(await isMerged(index)).toBe(true)
  })
})
