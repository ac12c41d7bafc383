import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { giteaApi, type Api } from 'gitea-js'
import { comments, events, issueAssignees, issueLabels, issueWatches, reactions, trackedTimes } from '../src/db/schema'
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
