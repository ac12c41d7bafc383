import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { giteaApi, type Api } from 'gitea-js'
import { comments, events, issueAssignees, issues, issueLabels, issueWatches, pendingPushes, pullRequests, reactions, repositories, trackedTimes } from '../src/db/schema'
import { gitOfRow } from '../src/auth/repo-context'
import { readRef } from '../src/git/merge'
import { ZERO_ID } from '../src/events/push-events'
import { reconcilePendingPushes } from '../src/push'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { startTrackerWorld, type TrackerWorld } from './issue-fixtures'
import { empty, fails, ok } from './gitea-calls'
import { startReceiver, until } from './webhook-receiver'

let w: TrackerWorld
let asOwner: Api<unknown>
let asAdmin: Api<unknown>
let asWriter: Api<unknown>
let issueId = 0
let labelId = 0
let milestoneId = 0
let worker: ReturnType<typeof startWebhookWorker>
let rx: Awaited<ReturnType<typeof startReceiver>>
beforeAll(async () => {
  w = await startTrackerWorld({ webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05, webhookDeliverTimeout: 2 })
  worker = startWebhookWorker(w.s.deps, { pollMs: 10 })
  rx = await startReceiver()
  const repo = await w.repo('doomed')
  expect((await w.s.post(`${repo.path}/hooks`, { type: 'gitea', config: { url: rx.url('/doomed'), content_type: 'json' }, events: ['issues'], active: true }, { token: w.owner.token })).status).toBe(201)
  asOwner = giteaApi(w.s.url, { token: w.owner.token })
  asAdmin = giteaApi(w.s.url, { token: w.admin.token })
  asWriter = giteaApi(w.s.url, { token: w.writer.token })
  labelId = (await ok(asOwner.repos.issueCreateLabel('owner', 'doomed', { name: 'bug', color: '#00ff00' }), 201)).id!
  milestoneId = (await ok(asOwner.repos.issueCreateMilestone('owner', 'doomed', { title: 'v1' }), 201)).id!
  const issue = await ok(
    asWriter.repos.issueCreateIssue('owner', 'doomed', { title: 'to go', labels: [labelId], milestone: milestoneId, assignees: ['writer'] }),
    201,
  )
  issueId = issue.id!
  await ok(asWriter.repos.issueCreateIssue('owner', 'doomed', { title: 'to stay', labels: [labelId] }), 201)
  await ok(asWriter.repos.issueCreateComment('owner', 'doomed', 1, { body: 'a word' }), 201)
  await ok(asWriter.repos.issuePostIssueReaction('owner', 'doomed', 1, { content: 'heart' }), 201)
  await ok(asWriter.repos.issueAddTime('owner', 'doomed', 1, { time: 60 }))
  expect((await w.s.put('/repos/owner/doomed/issues/1/subscriptions/writer', undefined, { token: w.writer.token })).status).toBeLessThan(300)
})
afterAll(async () => {
  await worker.stop()
  rx.stop()
  await w.s.stop()
})

const rowsOf = async (table: typeof comments | typeof reactions | typeof trackedTimes | typeof issueLabels | typeof issueAssignees | typeof issueWatches) =>
  (await w.s.deps.db.select().from(table).where(eq(table.issueId, issueId))).length

describe('DELETE /repos/{o}/{r}/issues/{index}', () => {
  test('writers, readers and the anonymous may not delete; nothing changes', async () => {
    await fails(asWriter.repos.issueDelete('owner', 'doomed', 1), 403)
    expect((await w.s.del('/repos/owner/doomed/issues/1', undefined, { token: w.reader.token })).status).toBe(403)
    expect((await w.s.del('/repos/owner/doomed/issues/1')).status).toBe(401)
    expect((await ok(asWriter.repos.issueGetIssue('owner', 'doomed', 1))).title).toBe('to go')
  })

  test('a repository admin deletes it with what it holds; counters follow; an unknown index is 404', async () => {
    expect(await rowsOf(comments)).toBeGreaterThan(0)
    expect(await rowsOf(reactions)).toBe(1)
    expect(await rowsOf(trackedTimes)).toBe(1)
    await empty(asAdmin.repos.issueDelete('owner', 'doomed', 1))
    await fails(asOwner.repos.issueGetIssue('owner', 'doomed', 1), 404)
    for (const table of [comments, reactions, trackedTimes, issueLabels, issueAssignees, issueWatches]) expect(await rowsOf(table)).toBe(0)
    expect((await ok(asOwner.repos.repoGet('owner', 'doomed'))).open_issues_count).toBe(1)
    expect(await ok(asOwner.repos.issueGetMilestone('owner', 'doomed', String(milestoneId)))).toMatchObject({ open_issues: 0, closed_issues: 0 })
    const issues = await ok(asOwner.repos.issueListIssues('owner', 'doomed', { state: 'all' }))
    expect(issues.map((i) => i.number)).toEqual([2])
    await fails(asAdmin.repos.issueDelete('owner', 'doomed', 1), 404)
    await fails(asAdmin.repos.issueDelete('owner', 'doomed', 99), 404)
  })

  test('the outbox keeps the record as it was: an issues hook with action "deleted"', async () => {
    expect(await w.s.deps.db.select().from(events).where(eq(events.kind, 'issue.deleted'))).toHaveLength(1)
    const deleted = await until(() => rx.received.find((r) => r.payload?.action === 'deleted'), 'the deleted hook')
    expect(deleted.headers['x-gitea-event']).toBe('issues')
    expect(deleted.payload).toMatchObject({ action: 'deleted', number: 1, issue: { number: 1, title: 'to go', labels: [{ name: 'bug' }] }, sender: { login: 'maintainer' } })
  })

  test('a new issue takes a new number', async () => {
    expect((await ok(asWriter.repos.issueCreateIssue('owner', 'doomed', { title: 'after' }), 201)).number).toBe(3)
  })
})

describe('deleting a pull request', () => {
  const gitOf = async (name: string) => gitOfRow(w.s.deps, (await w.s.deps.db.select().from(repositories).where(eq(repositories.name, name)))[0]!)
  /** A repository of the owner's with `count` pull requests from branches f1, f2 ... (each adding a file). */
  async function withPulls(name: string, count: number) {
    expect((await w.s.post('/user/repos', { name, auto_init: true, default_branch: 'main' }, { token: w.owner.token })).status).toBe(201)
    for (let n = 1; n <= count; n++) {
      await ok(asOwner.repos.repoCreateBranch('owner', name, { new_branch_name: `f${n}`, old_branch_name: 'main' }), 201)
      await ok(asOwner.repos.repoCreateFile('owner', name, `f${n}.txt`, { content: btoa(`${n}\n`), branch: `f${n}` }), 201)
      await ok(asOwner.repos.repoCreatePullRequest('owner', name, { head: `f${n}`, base: 'main', title: `pull ${n}` }), 201)
    }
    const git = await gitOf(name)
    for (let n = 1; n <= count; n++) await until(() => readRef(git, `refs/pull/${n}/head`), `refs/pull/${n}/head`)
    return git
  }

  test('its refs/pull/N/head goes, and the pull_request hook says "deleted" with its PullRequest record', async () => {
    const git = await withPulls('pulled', 1)
    expect((await w.s.post('/repos/owner/pulled/hooks', { type: 'gitea', config: { url: rx.url('/pulled'), content_type: 'json' }, events: ['pull_request'], active: true }, { token: w.owner.token })).status).toBe(201)
    await empty(asOwner.repos.issueDelete('owner', 'pulled', 1))
    await fails(asOwner.repos.repoGetPullRequest('owner', 'pulled', 1), 404)
    expect(await readRef(git, 'refs/pull/1/head')).toBeNull()
    expect(await w.s.deps.db.select().from(pendingPushes)).toHaveLength(0)
    const deleted = await until(() => rx.received.find((r) => r.path === '/pulled' && r.payload?.action === 'deleted'), 'the deleted pull_request hook')
    expect(deleted.headers['x-gitea-event']).toBe('pull_request')
    expect(deleted.payload).toMatchObject({ action: 'deleted', number: 1, pull_request: { number: 1, title: 'pull 1', head: { ref: 'f1' }, base: { ref: 'main' } }, sender: { login: 'owner' } })
    expect((await ok(asOwner.repos.repoGet('owner', 'pulled'))).open_pr_counter).toBe(0)
  })

  test('a crash between the ref and the rows: the start-up repair makes the ref agree with the rows', async () => {
    const git = await withPulls('crashy', 2)
    const repoId = (await w.s.deps.db.select().from(repositories).where(eq(repositories.name, 'crashy')))[0]!.id
    const head1 = (await readRef(git, 'refs/pull/1/head'))!
    const head2 = (await readRef(git, 'refs/pull/2/head'))!
    // Pull 1: the ref was deleted, the rows' transaction never committed: the ref comes back.
    // Pull 2: the rows were deleted, the ref was not: it goes.
    const commands = [{ ref: 'refs/pull/1/head', old: head1, new: ZERO_ID }, { ref: 'refs/pull/2/head', old: head2, new: ZERO_ID }]
    await w.s.deps.db.insert(pendingPushes).values({ repoId, pusherId: 1, commands: JSON.stringify(commands), createdUnix: 1 })
    expect(Bun.spawnSync(['git', '--git-dir', git.gitDir, 'update-ref', '-d', 'refs/pull/1/head']).exitCode).toBe(0)
    const pull2 = (await w.s.deps.db.select().from(pullRequests).where(eq(pullRequests.baseRepoId, repoId))).find((p) => p.index === 2)!
    await w.s.deps.db.delete(issues).where(eq(issues.id, pull2.issueId))
    await reconcilePendingPushes(w.s.deps)
    expect(await readRef(git, 'refs/pull/1/head')).toBe(head1)
    expect(await readRef(git, 'refs/pull/2/head')).toBeNull()
    expect(await w.s.deps.db.select().from(pendingPushes)).toHaveLength(0)
    expect((await ok(asOwner.repos.repoGetPullRequest('owner', 'crashy', 1))).head?.sha).toBe(head1)
  })

})
