/**
 * Issue subscriptions through gitea-js (`/issues/{index}/subscriptions`): subscribing and
 * unsubscribing (201, then 200 when nothing changes), the check, the list, who may change whose;
 * and what they do to notifications: a subscriber is told, an unsubscribed participant is not;
 * a person asked to review gets one thread, the actor none.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk } from './git-fixture'
import { commitOn, pushedRepo } from './pull-fixtures'
import { fails, ok } from './gitea-calls'
import { startNotifier } from '../src/jobs/notifier'

let s: TestServer
let notifier: Awaited<ReturnType<typeof startNotifier>>
let alice: TestUser, bob: TestUser, carol: TestUser
const as: Record<string, Api<unknown>> = {}
const dirs: string[] = []
const O = 'alice'
const R = 'subs'

const status = async (call: Promise<{ status: number }>) => (await call.catch((e: { status: number }) => e)).status
const threadTitles = async (who: string) => {
  await notifier.drained()
  return (await ok(as[who]!.notifications.notifyGetList({ all: true }))).map((t) => t.subject!.title).sort()
}

beforeAll(async () => {
  s = await startTestServer()
  notifier = await startNotifier(s.deps, { pollMs: 10 })
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  for (const u of [alice, bob, carol]) as[u.name] = giteaApi(s.url, { token: u.token })
  const { dir } = await pushedRepo(s, alice, R, dirs)
  expect((await s.put(`/repos/${O}/${R}/collaborators/bob`, { permission: 'write' }, { token: alice.token })).status).toBe(204)
  await commitOn(dir, 'feature', { 'f.txt': 'f\n' }, 'feature', 'main')
  await gitOk(dir, 'push', '-q', 'origin', 'feature')
})
afterAll(async () => {
  await notifier.stop()
  await s.stop()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

describe('issue subscriptions', () => {
  test('subscribe, check, list, unsubscribe: 201 on a change, 200 when it already was so; only oneself (or a site admin)', async () => {
    const issue = await ok(as.alice!.repos.issueCreateIssue(O, R, { title: 'Subscribe me' }), 201)
    const n = issue.number!
    expect((await ok(as.bob!.repos.issueCheckSubscription(O, R, n))).subscribed).toBe(false)
    expect(await status(as.bob!.repos.issueAddSubscription(O, R, n, 'bob'))).toBe(201)
    expect(await status(as.bob!.repos.issueAddSubscription(O, R, n, 'bob'))).toBe(200)
    const check = await ok(as.bob!.repos.issueCheckSubscription(O, R, n))
    expect(check).toMatchObject({ subscribed: true, ignored: false, reason: null })
    expect(check.url).toEndWith(`/api/v1/repos/${O}/${R}/issues/${n}/subscriptions`)
    expect((await ok(as.alice!.repos.issueSubscriptions(O, R, n))).map((u) => u.login)).toEqual(['bob'])
    // The poster follows their issue without subscribing.
    expect((await ok(as.alice!.repos.issueCheckSubscription(O, R, n))).subscribed).toBe(true)
    await fails(as.bob!.repos.issueAddSubscription(O, R, n, 'carol'), 403)
    await fails(as.bob!.repos.issueAddSubscription(O, R, n, 'nobody'), 404)
    await fails(as.bob!.repos.issueAddSubscription(O, R, 999, 'bob'), 404)
    expect(await status(as.bob!.repos.issueDeleteSubscription(O, R, n, 'bob'))).toBe(201)
    expect(await status(as.bob!.repos.issueDeleteSubscription(O, R, n, 'bob'))).toBe(200)
    expect(await ok(as.alice!.repos.issueSubscriptions(O, R, n))).toEqual([])
  })

  test('a subscriber is notified of a comment; a participant who unsubscribed is not', async () => {
    const issue = await ok(as.alice!.repos.issueCreateIssue(O, R, { title: 'Followed' }), 201)
    const n = issue.number!
    await ok(as.bob!.repos.issueCreateComment(O, R, n, { body: 'I take part' }), 201)
    expect(await status(as.carol!.repos.issueAddSubscription(O, R, n, 'carol'))).toBe(201)
    expect(await status(as.bob!.repos.issueDeleteSubscription(O, R, n, 'bob'))).toBe(201)
    // bob's thread from before (the issue opened in a repository he watches) is read; it stays so.
    await notifier.drained()
    await as.bob!.notifications.notifyReadList({})
    await ok(as.alice!.repos.issueCreateComment(O, R, n, { body: 'news' }), 201)
    expect(await threadTitles('carol')).toContain('Followed')
    const unread = (await ok(as.bob!.notifications.notifyGetList({}))).map((t) => t.subject!.title)
    expect(unread).not.toContain('Followed')
  })

  test('a person asked to review gets one thread; the one asking none', async () => {
    const pull = await ok(as.alice!.repos.repoCreatePullRequest(O, R, { head: 'feature', base: 'main', title: 'Review me' }), 201)
    await notifier.drained()
    const before = (await threadTitles('bob')).filter((t) => t === 'Review me').length
    await ok(as.alice!.repos.repoCreatePullReviewRequests(O, R, pull.number!, { reviewers: ['bob'] }), 201)
    const threads = (await threadTitles('bob')).filter((t) => t === 'Review me')
    expect(threads).toHaveLength(1)
    expect(before).toBe(0)
    const bobs = await ok(as.bob!.notifications.notifyGetList({ all: true }))
    expect(bobs.find((t) => t.subject!.title === 'Review me')).toMatchObject({ unread: true, subject: { type: 'Pull' } })
    expect(await threadTitles('alice')).not.toContain('Review me')
  })
})
