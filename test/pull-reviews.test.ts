import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { giteaApi, type Api } from 'gitea-js'
import { count, eq } from 'drizzle-orm'
import { pullRequests, reviewComments, reviews } from '../src/db/schema'
import { startPullChecker } from '../src/jobs/pull-checker'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { approvalsOf, hasRejection } from '../src/modules/reviews/gate'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk } from './git-fixture'
import { commitOn, pushedRepo } from './pull-fixtures'
import { missingGiteaFields } from './gitea-types'
import { startReceiver, until, type Receiver } from './webhook-receiver'

/*
 * Pull request reviews through gitea-js: approve, request changes, comment with line comments,
 * a pending review submitted later, dismissals, review requests on the record, a push that makes
 * reviews stale and line comments outdated, refusals that change nothing, and one webhook
 * delivery per review event type.
 */

let s: TestServer
let worker: ReturnType<typeof startWebhookWorker>
let checker: ReturnType<typeof startPullChecker>
let rx: Receiver
let alice: TestUser, bob: TestUser, reader: TestUser, carol: TestUser
let asAlice: Api<unknown>, asBob: Api<unknown>, asReader: Api<unknown>, asCarol: Api<unknown>
let dir = ''
const dirs: string[] = []
const O = 'alice'
const R = 'rv'

const statusOf = async (call: Promise<{ status: number }>) => (await call.catch((e: { status: number }) => e)).status
const reviewCount = async () => (await s.deps.db.select({ n: count() }).from(reviews))[0]!.n
const commentCount = async () => (await s.deps.db.select({ n: count() }).from(reviewComments))[0]!.n
const pullRow = async () => (await s.deps.db.select().from(pullRequests))[0]!
const kinds = () => rx.received.filter((r) => r.path === '/rv').map((r) => `${r.headers['x-gitea-event-type']}/${r.payload.action}`)

beforeAll(async () => {
  s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05, webhookDeliverTimeout: 2 })
  worker = startWebhookWorker(s.deps, { pollMs: 10 })
  checker = startPullChecker(s.deps)
  rx = await startReceiver()
  alice = await s.user('alice')
  bob = await s.user('bob')
  reader = await s.user('reader')
  carol = await s.user('carol')
  ;[asAlice, asBob, asReader, asCarol] = [alice, bob, reader, carol].map((u) => giteaApi(s.url, { token: u.token }))
  dir = (await pushedRepo(s, alice, R, dirs)).dir
  expect((await s.patch(`/repos/${O}/${R}`, { private: true }, { token: alice.token })).status).toBe(200)
  expect((await s.put(`/repos/${O}/${R}/collaborators/bob`, { permission: 'write' }, { token: alice.token })).status).toBe(204)
  expect((await s.put(`/repos/${O}/${R}/collaborators/reader`, { permission: 'read' }, { token: alice.token })).status).toBe(204)
  const hook = { type: 'gitea', config: { url: rx.url('/rv'), content_type: 'json' }, events: ['pull_request_review', 'pull_request_review_request'], active: true }
  expect((await s.post(`/repos/${O}/${R}/hooks`, hook, { token: alice.token })).status).toBe(201)
  await commitOn(dir, 'feature', { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'b1\nb2\n' }, 'feature', 'main')
  await gitOk(dir, 'push', '-q', 'origin', 'feature')
  expect((await asAlice.repos.repoCreatePullRequest(O, R, { head: 'feature', base: 'main', title: 'Feature' })).status).toBe(201)
})
afterAll(async () => {
  await checker.stop()
  await worker.stop()
  rx.stop()
  await s.stop()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

describe('pull request reviews', () => {
  let approval = 0
  test('an approval with a line comment: official, not stale, its comment placed on the diff; the poster cannot approve their own', async () => {
    const head = (await pullRow()).headSha
    const r = await asBob.repos.repoCreatePullReview(O, R, 1, { event: 'APPROVED', body: 'fine', comments: [{ path: 'a.txt', new_position: 2, body: 'why two?' }] })
    expect(r.status).toBe(200)
    approval = r.data.id!
    expect(r.data).toMatchObject({ state: 'APPROVED', official: true, stale: false, dismissed: false, comments_count: 1, commit_id: head, body: 'fine', user: { login: 'bob' }, team: null })
    expect(missingGiteaFields('PullReview', r.data)).toEqual([])
    const comments = await asBob.repos.repoGetPullReviewComments(O, R, 1, approval)
    expect(comments.data).toHaveLength(1)
    expect(comments.data[0]).toMatchObject({ path: 'a.txt', position: 2, original_position: 0, commit_id: head, pull_request_review_id: approval, body: 'why two?', user: { login: 'bob' } })
    expect(comments.data[0]!.diff_hunk).toBe('@@ -1,1 +1,2 @@\n one\n+two')
    expect(missingGiteaFields('PullReviewComment', comments.data[0]!)).toEqual([])
    expect(await approvalsOf(s.deps, await pullRow())).toBe(1)

    const before = [await reviewCount(), await commentCount()]
    expect(await statusOf(asAlice.repos.repoCreatePullReview(O, R, 1, { event: 'APPROVED' }))).toBe(422)
    expect(await statusOf(asReader.repos.repoCreatePullReview(O, R, 1, { event: 'REQUEST_CHANGES' }))).toBe(422)
    expect(await statusOf(asReader.repos.repoCreatePullReview(O, R, 1, { event: 'COMMENT', body: 'x', comments: [{ path: 'a.txt', new_position: 9, body: 'no such line' }] }))).toBe(422)
    expect(await statusOf(asCarol.repos.repoCreatePullReview(O, R, 1, { event: 'COMMENT', body: 'x' }))).toBe(404)
    expect([await reviewCount(), await commentCount()]).toEqual(before)
  })

  test('a reader comments (not official); a rejection makes the same reviewer\'s approval unofficial and blocks', async () => {
    const c = await asReader.repos.repoCreatePullReview(O, R, 1, { event: 'COMMENT', body: 'a thought' })
    expect(c.data).toMatchObject({ state: 'COMMENT', official: false })
    const rej = await asBob.repos.repoCreatePullReview(O, R, 1, { event: 'REQUEST_CHANGES', body: 'on second thought, no' })
    expect(rej.data).toMatchObject({ state: 'REQUEST_CHANGES', official: true })
    expect((await asBob.repos.repoGetPullReview(O, R, 1, approval)).data.official).toBe(false)
    expect(await approvalsOf(s.deps, await pullRow())).toBe(0)
    expect(await hasRejection(s.deps, await pullRow())).toBe(true)

    // Dismissal: repository administrators only; then the rejection no longer blocks.
    const before = await reviewCount()
    expect(await statusOf(asBob.repos.repoDismissPullReview(O, R, 1, rej.data.id!, { message: 'mine' }))).toBe(403)
    expect(await statusOf(asAlice.repos.repoDismissPullReview(O, R, 1, c.data.id!, { message: 'a comment' }))).toBe(403)
    expect(await hasRejection(s.deps, await pullRow())).toBe(true)
    const d = await asAlice.repos.repoDismissPullReview(O, R, 1, rej.data.id!, { message: 'outdated concern' })
    expect(d.data).toMatchObject({ dismissed: true, state: 'REQUEST_CHANGES' })
    expect(await hasRejection(s.deps, await pullRow())).toBe(false)
    expect((await asAlice.repos.repoUnDismissPullReview(O, R, 1, rej.data.id!)).data.dismissed).toBe(false)
    expect(await hasRejection(s.deps, await pullRow())).toBe(true)
    expect(await reviewCount()).toBe(before)
  })

  test('a pending review is its reviewer\'s alone until submitted', async () => {
    const p = await asReader.repos.repoCreatePullReview(O, R, 1, { comments: [{ path: 'a.txt', old_position: 1, body: 'old line' }] })
    expect(p.data).toMatchObject({ state: 'PENDING', comments_count: 1 })
    const id = p.data.id!
    expect((await asAlice.repos.repoListPullReviews(O, R, 1)).data.map((r) => r.id)).not.toContain(id)
    expect((await asReader.repos.repoListPullReviews(O, R, 1)).data.map((r) => r.id)).toContain(id)
    expect(await statusOf(asBob.repos.repoGetPullReview(O, R, 1, id))).toBe(404)
    expect(await statusOf(asBob.repos.repoSubmitPullReview(O, R, 1, id, { event: 'COMMENT', body: 'not mine' }))).toBe(404)
    expect(await statusOf(asReader.repos.repoSubmitPullReview(O, R, 1, id, { event: 'PENDING' }))).toBe(422)
    const done = await asReader.repos.repoSubmitPullReview(O, R, 1, id, { event: 'COMMENT', body: 'submitted' })
    expect(done.data).toMatchObject({ id, state: 'COMMENT', body: 'submitted', comments_count: 1 })
    const [comment] = (await asBob.repos.repoGetPullReviewComments(O, R, 1, id)).data
    expect(comment).toMatchObject({ path: 'a.txt', position: 0, original_position: 1, diff_hunk: '@@ -1,1 +1,1 @@\n one' })

    // Paging: X-Total-Count and Link.
    const page = await s.get(`/repos/${O}/${R}/pulls/1/reviews?limit=1&page=2`, { token: alice.token })
    expect(page.headers.get('x-total-count')).toBe('4')
    expect(page.headers.get('link')).toContain('rel="next"')
    expect(page.body).toHaveLength(1)
  })

  test('requested reviewers appear on the record; who may ask and who may be asked', async () => {
    const pr = () => asAlice.repos.repoGetPullRequest(O, R, 1)
    const before = await reviewCount()
    expect(await statusOf(asAlice.repos.repoCreatePullReviewRequests(O, R, 1, { reviewers: ['carol'] }))).toBe(422)
    expect(await statusOf(asAlice.repos.repoCreatePullReviewRequests(O, R, 1, { reviewers: ['alice'] }))).toBe(422)
    expect(await statusOf(asReader.repos.repoCreatePullReviewRequests(O, R, 1, { reviewers: ['bob'] }))).toBe(422)
    expect(await statusOf(asAlice.repos.repoCreatePullReviewRequests(O, R, 1, { reviewers: ['nobody-here'] }))).toBe(404)
    expect(await reviewCount()).toBe(before)

    const asked = await asAlice.repos.repoCreatePullReviewRequests(O, R, 1, { reviewers: ['bob', 'reader'] })
    expect(asked.status).toBe(201)
    expect(asked.data.map((r) => [r.user?.login, r.state])).toEqual([['bob', 'REQUEST_REVIEW'], ['reader', 'REQUEST_REVIEW']])
    expect((await pr()).data.requested_reviewers!.map((u) => u.login)).toEqual(['bob', 'reader'])
    expect((await pr()).data.review_comments).toBe(2)
    // Asked again: nothing new.
    expect((await asAlice.repos.repoCreatePullReviewRequests(O, R, 1, { reviewers: ['bob'] })).data).toEqual([])
    expect((await asAlice.repos.repoDeletePullReviewRequests(O, R, 1, { reviewers: ['bob'] })).status).toBe(204)
    expect((await pr()).data.requested_reviewers!.map((u) => u.login)).toEqual(['reader'])
    // Reviewing answers the request.
    await asReader.repos.repoCreatePullReview(O, R, 1, { event: 'APPROVED' })
    expect((await pr()).data.requested_reviewers).toEqual([])

    const who = await asAlice.repos.repoGetReviewers(O, R)
    expect(who.data.map((u) => u.login)).toEqual(['bob', 'reader'])
  })

  test('a push to the head makes the reviews stale and the line comments on changed lines outdated', async () => {
    const old = (await pullRow()).headSha
    await commitOn(dir, 'feature', { 'a.txt': 'one\nTWO\nthree\n' }, 'change two')
    await gitOk(dir, 'push', '-q', 'origin', 'feature')
    await until(async () => (await pullRow()).headSha !== old, 'the new head checked')
    expect((await asBob.repos.repoGetPullReview(O, R, 1, approval)).data.stale).toBe(true)
    const [c] = (await asBob.repos.repoGetPullReviewComments(O, R, 1, approval)).data
    expect(c).toMatchObject({ position: 0, original_position: 2, commit_id: old })
    expect(await approvalsOf(s.deps, await pullRow())).toBe(0)
    expect(await approvalsOf(s.deps, await pullRow(), { countStale: true })).toBe(0) // reader's approval is not official
    const fresh = await asBob.repos.repoCreatePullReview(O, R, 1, { event: 'APPROVED' })
    expect(fresh.data).toMatchObject({ stale: false, official: true })
    expect(await approvalsOf(s.deps, await pullRow())).toBe(1)
    expect(await approvalsOf(s.deps, await pullRow(), { userIds: [reader.user.id] })).toBe(0)
  })

  test('deleting a review: its reviewer or a site administrator', async () => {
    const mine = await asReader.repos.repoCreatePullReview(O, R, 1, { event: 'COMMENT', body: 'to be deleted' })
    const before = await reviewCount()
    expect(await statusOf(asBob.repos.repoDeletePullReview(O, R, 1, mine.data.id!))).toBe(403)
    expect(await reviewCount()).toBe(before)
    expect((await asReader.repos.repoDeletePullReview(O, R, 1, mine.data.id!)).status).toBe(204)
    expect(await statusOf(asReader.repos.repoGetPullReview(O, R, 1, mine.data.id!))).toBe(404)
  })

  test('webhooks: one delivery per review event, with Gitea\'s payloads', async () => {
    await until(() => kinds().length >= 10, 'the review deliveries')
    const got = rx.received.filter((r) => r.path === '/rv')
    expect(kinds()).toEqual([
      'pull_request_review_approved/reviewed',
      'pull_request_review_comment/reviewed',
      'pull_request_review_rejected/reviewed',
      'pull_request_review_comment/reviewed',
      'pull_request_review_request/review_requested',
      'pull_request_review_request/review_requested',
      'pull_request_review_request/review_request_removed',
      'pull_request_review_approved/reviewed',
      'pull_request_review_approved/reviewed',
      'pull_request_review_comment/reviewed',
    ])
    const approved = got[0]!
    expect(approved.headers['x-gitea-event']).toBe('pull_request_approved')
    expect(Object.keys(approved.payload)).toEqual(['action', 'number', 'pull_request', 'requested_reviewer', 'repository', 'sender', 'commit_id', 'review'])
    expect(approved.payload).toMatchObject({ number: 1, sender: { login: 'bob' }, review: { type: 'pull_request_review_approved', content: 'fine' }, requested_reviewer: null })
    expect(got[2]!.headers['x-gitea-event']).toBe('pull_request_rejected')
    const requested = got[4]!
    expect(requested.headers['x-gitea-event']).toBe('pull_request')
    expect(requested.payload).toMatchObject({ requested_reviewer: { login: 'bob' }, sender: { login: 'alice' }, review: null })
  })
})
