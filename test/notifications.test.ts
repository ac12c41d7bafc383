/**
 * Notification threads, written from the outbox by the notification consumer and read through
 * gitea-js as tea and the Go SDK read them: who is notified (watchers, participants, mentions,
 * assignees, never the actor), one thread per (user, issue) however often an event is handled,
 * marking read / pinned, paging, filters, and a private repository's threads vanishing with the
 * reader's access.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { giteaApi, type Api, type NotificationThread } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { fails, ok } from './gitea-calls'
import { missingGiteaFields } from './gitea-types'
import { notifyRound, NOTIFICATION_CONSUMER } from '../src/notify/consumer'
import { eventConsumers, notifications } from '../src/db/schema'
import { startNotifier } from '../src/jobs/notifier'
import { recordStatements } from './query-counter'

type Client = Api<unknown>

let s: TestServer
let alice: TestUser, bob: TestUser, carol: TestUser, dave: TestUser, eve: TestUser
const as: Record<string, Client> = {}

/** Handles every event the outbox holds (what the background job does as events arrive). */
async function drain() {
  while ((await notifyRound(s.deps)) > 0) {}
}

/** The caller's threads (every status), newest first. */
const threadsOf = async (who: string, query: Parameters<Client['notifications']['notifyGetList']>[0] = {}) =>
  await ok(as[who]!.notifications.notifyGetList({ all: true, ...query }))

/** A user's thread rows as the consumer left them (which event last touched each). */
const rowsOf = async (u: TestUser) =>
  (await s.deps.db.select().from(notifications).where(eq(notifications.userId, u.user.id))).map((r) => [r.id, r.issueId, r.status, r.lastEventId])

const titles = (threads: NotificationThread[]) => threads.map((t) => t.subject!.title).sort()

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  dave = await s.user('dave')
  eve = await s.user('eve')
  for (const u of [alice, bob, carol, dave, eve]) as[u.name] = giteaApi(s.url, { token: u.token })
  await ok(as.alice!.user.createCurrentUserRepo({ name: 'proj', auto_init: true }), 201)
  await ok(as.alice!.user.createCurrentUserRepo({ name: 'secret', private: true, auto_init: true }), 201)
  await as.alice!.repos.repoAddCollaborator('alice', 'proj', 'eve', { permission: 'write' })
  await as.alice!.repos.repoAddCollaborator('alice', 'secret', 'carol', { permission: 'read' })
  await ok(as.dave!.repos.userCurrentPutSubscription('alice', 'proj'))
  await ok(as.carol!.repos.userCurrentPutSubscription('alice', 'secret'))
})
afterAll(() => s.stop())

describe('notifications', () => {
  test("a watched repository's new issue notifies its watchers and the people it mentions, not its poster", async () => {
    await ok(as.bob!.repos.issueCreateIssue('alice', 'proj', { title: 'first', body: 'ping @carol.' }), 201)
    await drain()
    // alice watches her new repository (Gitea's AutoWatchNewRepos), dave chose to, carol is mentioned.
    for (const who of ['alice', 'dave', 'carol']) expect(titles(await threadsOf(who))).toEqual(['first'])
    expect(await threadsOf('bob')).toEqual([])
    expect(await threadsOf('eve')).toEqual([])

    const [thread] = await threadsOf('dave')
    expect(missingGiteaFields('NotificationThread', thread!)).toEqual([])
    expect(missingGiteaFields('NotificationSubject', thread!.subject!)).toEqual([])
    expect(thread!.unread).toBe(true)
    expect(thread!.pinned).toBe(false)
    expect(thread!.subject!.type).toBe('Issue')
    expect(thread!.subject!.state).toBe('open')
    expect(thread!.subject!.url).toBe(`${s.url}/api/v1/repos/alice/proj/issues/1`)
    expect(thread!.subject!.html_url).toBe(`${s.url}/alice/proj/issues/1`)
    expect(thread!.repository!.full_name).toBe('alice/proj')
    expect(thread!.url).toBe(`${s.url}/api/v1/notifications/threads/${thread!.id}`)
    expect(await ok(as.dave!.notifications.notifyNewAvailable())).toEqual({ new: 1 })
    expect(await ok(as.dave!.notifications.notifyGetThread(String(thread!.id)))).toEqual(thread!)
  })

  test('an assignment notifies the assignee only; a comment notifies the people it mentions, not its author', async () => {
    const before = await rowsOf(alice)
    await ok(as.alice!.repos.issueEditIssue('alice', 'proj', 1, { assignees: ['eve'] }), 201)
    await drain()
    expect(titles(await threadsOf('eve'))).toEqual(['first'])
    expect(await rowsOf(alice)).toEqual(before)
    expect(await threadsOf('bob')).toEqual([])

    // bob is the poster (a participant) and mentioned; eve is an assignee; dave watches. dave and
    // carol (mentioned once, neither watching nor taking part: Gitea does not tell her more) read theirs.
    const carolThread = (await threadsOf('carol'))[0]!
    const daveThread = (await threadsOf('dave'))[0]!
    for (const [who, thread] of [['carol', carolThread], ['dave', daveThread]] as const) await ok(as[who]!.notifications.notifyReadThread(String(thread.id)))
    const comment = await ok(as.alice!.repos.issueCreateComment('alice', 'proj', 1, { body: '@bob, see this' }), 201)
    await drain()
    const bobs = await threadsOf('bob')
    expect(titles(bobs)).toEqual(['first'])
    expect(bobs[0]!.subject!.latest_comment_url).toBe(`${s.url}/api/v1/repos/alice/proj/issues/comments/${comment.id}`)
    expect(bobs[0]!.subject!.latest_comment_html_url).toBe(`${s.url}/alice/proj/issues/1#issuecomment-${comment.id}`)
    // The author's own thread is not touched by her comment; dave's read thread is unread again, still one.
    expect(await rowsOf(alice)).toEqual(before)
    expect((await threadsOf('dave')).map((t) => [t.id, t.unread])).toEqual([[daveThread.id, true]])
    expect((await threadsOf('carol')).map((t) => [t.id, t.unread])).toEqual([[carolThread.id, false]])
  })

  test('the same events handled twice leave one thread per person, in the state they were left in', async () => {
    const rows = async () => (await s.deps.db.select().from(notifications)).map((r) => [r.id, r.userId, r.issueId, r.status, r.updatedUnix]).sort()
    const daveThread = (await threadsOf('dave'))[0]!
    await ok(as.dave!.notifications.notifyReadThread(String(daveThread.id), { 'to-status': 'pinned' }))
    const before = await rows()
    // As after a crash between writing threads and acknowledging the events: every event again.
    await s.deps.db.update(eventConsumers).set({ doneId: 0, claimedId: 0, leaseUntilMs: 0 }).where(eq(eventConsumers.name, NOTIFICATION_CONSUMER))
    await drain()
    expect(await rows()).toEqual(before)
    expect((await threadsOf('dave')).map((t) => t.pinned)).toEqual([true])
  })

  test('marking read: one thread, everything up to a time, the status filters, and refusals', async () => {
    const [thread] = await threadsOf('bob')
    const read = await ok(as.bob!.notifications.notifyReadThread(String(thread!.id)))
    expect(read.unread).toBe(false)
    expect(await ok(as.bob!.notifications.notifyNewAvailable())).toEqual({ new: 0 })
    // Unread and pinned by default: a read thread is listed only when asked for.
    expect(await ok(as.bob!.notifications.notifyGetList())).toEqual([])
    expect((await ok(as.bob!.notifications.notifyGetList({ 'status-types': ['read'] }))).map((t) => t.id)).toEqual([thread!.id])
    const unread = await ok(as.bob!.notifications.notifyReadThread(String(thread!.id), { 'to-status': 'unread' }))
    expect(unread.unread).toBe(true)

    // Someone else's thread: 403, unchanged; an unknown one: 404.
    await fails(as.carol!.notifications.notifyGetThread(String(thread!.id)), 403)
    await fails(as.carol!.notifications.notifyReadThread(String(thread!.id)), 403)
    await fails(as.bob!.notifications.notifyGetThread('999999'), 404)
    expect((await threadsOf('bob'))[0]!.unread).toBe(true)

    // A malformed time changes nothing (400); a time before the thread's update marks nothing.
    await fails(as.bob!.notifications.notifyReadList({ last_read_at: 'yesterday' }), 400)
    expect(await ok(as.bob!.notifications.notifyReadList({ last_read_at: '2001-01-01T00:00:00Z' }))).toEqual([])
    expect(await ok(as.bob!.notifications.notifyNewAvailable())).toEqual({ new: 1 })
    const marked = await ok(as.bob!.notifications.notifyReadList({ last_read_at: new Date(Date.now() + 3600_000).toISOString() }))
    expect(marked.map((t) => [t.id, t.unread])).toEqual([[thread!.id, false]])
    expect(await ok(as.bob!.notifications.notifyNewAvailable())).toEqual({ new: 0 })

    // The repository's pair.
    await ok(as.bob!.notifications.notifyReadThread(String(thread!.id), { 'to-status': 'unread' }))
    expect((await ok(as.bob!.repos.notifyGetRepoList('alice', 'proj'))).map((t) => t.id)).toEqual([thread!.id])
    await fails(as.bob!.repos.notifyGetRepoList('alice', 'secret'), 404)
    expect((await ok(as.bob!.repos.notifyReadRepoList('alice', 'proj'))).map((t) => t.unread)).toEqual([false])
    expect(await ok(as.bob!.notifications.notifyNewAvailable())).toEqual({ new: 0 })
  })

  test('lists are paged, newest first, and filtered by subject type', async () => {
    for (const title of ['second', 'third']) await ok(as.bob!.repos.issueCreateIssue('alice', 'proj', { title }), 201)
    await drain()
    const page1 = await as.dave!.notifications.notifyGetList({ all: true, limit: 2 })
    expect(page1.headers.get('x-total-count')).toBe('3')
    expect(page1.headers.get('link')).toContain('rel="next"')
    const page2 = await ok(as.dave!.notifications.notifyGetList({ all: true, limit: 2, page: 2 }))
    expect(titles([...page1.data, ...page2])).toEqual(['first', 'second', 'third'])
    expect(page2.length).toBe(1)
    expect((await threadsOf('dave', { 'subject-type': ['issue'] })).length).toBe(3)
    expect(await threadsOf('dave', { 'subject-type': ['pull'] })).toEqual([])
    await fails(as.dave!.notifications.notifyGetList({ since: 'not a time' }), 422)
  })

  test('a list of the same shape answers each caller their own threads, filtered by time and repository', async () => {
    // The lists are prepared once per shape, the caller and the filter's values bound each time.
    const ownIds = async (u: TestUser) => (await rowsOf(u)).map((r) => r[0] as number).sort()
    for (const u of [dave, alice]) {
      const name = u.name
      const ids = (await threadsOf(name)).map((t) => t.id!).sort()
      expect(ids).toEqual(await ownIds(u))
      expect((await threadsOf(name, { 'subject-type': ['issue'] })).map((t) => t.id).sort()).toEqual(ids)
      expect((await threadsOf(name, { since: '2000-01-01T00:00:00Z', before: '2100-01-01T00:00:00Z' })).map((t) => t.id).sort()).toEqual(ids)
      expect(await threadsOf(name, { since: '2100-01-01T00:00:00Z' })).toEqual([])
      expect(await threadsOf(name, { before: '2000-01-01T00:00:00Z' })).toEqual([])
    }
    const daves = (await threadsOf('dave')).map((t) => t.id)
    expect((await ok(as.dave!.repos.notifyGetRepoList('alice', 'proj', { all: true }))).map((t) => t.id)).toEqual(daves)
    // Unread and pinned by default; the unread count is each caller's own.
    const unread = (await ok(as.dave!.notifications.notifyGetList({ 'status-types': ['unread'] }))).length
    expect(await ok(as.dave!.notifications.notifyNewAvailable())).toEqual({ new: unread })
    expect(await ok(as.bob!.notifications.notifyNewAvailable())).toEqual({ new: (await ok(as.bob!.notifications.notifyGetList({ 'status-types': ['unread'] }))).length })
  })

  test('a pull request notifies as a Pull thread, merged when merged', async () => {
    await ok(as.alice!.repos.repoCreateFile('alice', 'proj', 'feature.txt', { content: Buffer.from('x\n').toString('base64'), new_branch: 'feature' }), 201)
    const pull = await ok(as.alice!.repos.repoCreatePullRequest('alice', 'proj', { head: 'feature', base: 'main', title: 'a change' }), 201)
    await drain()
    const [thread] = await threadsOf('dave', { 'subject-type': ['pull'] })
    expect(thread!.subject!.type).toBe('Pull')
    expect(thread!.subject!.state).toBe('open')
    expect(thread!.subject!.html_url).toBe(`${s.url}/alice/proj/pulls/${pull.number}`)
    expect(await threadsOf('alice', { 'subject-type': ['pull'] })).toEqual([])
    await ok(as.alice!.repos.repoMergePullRequest('alice', 'proj', pull.number!, { Do: 'merge' }))
    await drain()
    expect((await threadsOf('dave', { 'subject-type': ['pull'] })).map((t) => [t.id, t.subject!.state])).toEqual([[thread!.id, 'merged']])
  })

  test("a private repository's threads vanish for a reader who loses access", async () => {
    await ok(as.alice!.repos.issueCreateIssue('alice', 'secret', { title: 'hidden' }), 201)
    await drain()
    const hidden = (await threadsOf('carol')).find((t) => t.subject!.title === 'hidden')!
    expect(hidden.repository!.full_name).toBe('alice/secret')
    // dave watches nothing there and cannot read it: nothing for him.
    expect(titles(await threadsOf('dave'))).not.toContain('hidden')
    const unreadBefore = (await ok(as.carol!.notifications.notifyNewAvailable())).new!

    await as.alice!.repos.repoDeleteCollaborator('alice', 'secret', 'carol')
    expect(titles(await threadsOf('carol'))).toEqual(['first'])
    expect((await ok(as.carol!.notifications.notifyNewAvailable())).new).toBe(unreadBefore - 1)
    await fails(as.carol!.notifications.notifyGetThread(String(hidden.id)), 404)
    await fails(as.carol!.notifications.notifyReadThread(String(hidden.id)), 404)
    // Marking everything read does not touch it either.
    expect((await ok(as.carol!.notifications.notifyReadList({ all: 'true' }))).map((t) => t.subject!.title)).toEqual(['first'])
    const [row] = await s.deps.db.select().from(notifications).where(eq(notifications.id, hidden.id!))
    expect(row!.status).toBe(1)
  })

  test('the background job handles events as they come', async () => {
    const job = await startNotifier(s.deps)
    try {
      await ok(as.bob!.repos.issueCreateIssue('alice', 'proj', { title: 'fourth' }), 201)
      await job.drained()
      expect(titles(await threadsOf('dave'))).toContain('fourth')
    } finally {
      await job.stop()
    }
  })

  test("one round's events of several issues in two repositories each notify their own people", async () => {
    // The round reads the issues, repositories, watchers and people of all its events at once (roundReads).
    await as.alice!.repos.repoAddCollaborator('alice', 'secret', 'carol', { permission: 'read' })
    const roundA = await ok(as.bob!.repos.issueCreateIssue('alice', 'proj', { title: 'round a' }), 201)
    const roundB = await ok(as.bob!.repos.issueCreateIssue('alice', 'proj', { title: 'round b' }), 201)
    await ok(as.alice!.repos.issueCreateIssue('alice', 'secret', { title: 'round c' }), 201)
    await ok(as.alice!.repos.issueCreateIssue('alice', 'proj', { title: 'round d', assignees: ['eve'] }), 201)
    expect([200, 201]).toContain((await s.del(`/repos/alice/proj/issues/${roundB.number}/subscriptions/dave`, undefined, { token: dave.token })).status)
    expect(await notifyRound(s.deps)).toBeGreaterThanOrEqual(4)
    const rounds = async (who: string) => titles(await threadsOf(who)).filter((t) => t?.startsWith('round '))
    expect(await rounds('alice')).toEqual(['round a', 'round b'])
    expect(await rounds('dave')).toEqual(['round a', 'round d'])
    expect(await rounds('carol')).toEqual(['round c'])
    expect(await rounds('eve')).toEqual(['round d'])
    expect(await rounds('bob')).toEqual([])
    expect(roundA.number).toBe(roundB.number! - 1)
  })

  test("one round's comments each notify the people their own text mentions", async () => {
    // The round reads the texts of all its new comments at once (roundReads); a comment deleted
    // before its round mentions nobody. Neither carol nor eve watches proj or takes part.
    const issue = await ok(as.bob!.repos.issueCreateIssue('alice', 'proj', { title: 'mention round' }), 201)
    await drain()
    await ok(as.bob!.repos.issueCreateComment('alice', 'proj', issue.number!, { body: 'cc @carol' }), 201)
    const gone = await ok(as.bob!.repos.issueCreateComment('alice', 'proj', issue.number!, { body: 'cc @eve' }), 201)
    expect((await s.del(`/repos/alice/proj/issues/comments/${gone.id}`, undefined, { token: bob.token })).status).toBe(204)
    const other = await ok(as.alice!.repos.issueCreateIssue('alice', 'proj', { title: 'mention round two' }), 201)
    await drain()
    await ok(as.alice!.repos.issueCreateComment('alice', 'proj', other.number!, { body: 'and @eve here' }), 201)
    await ok(as.dave!.repos.issueCreateComment('alice', 'proj', issue.number!, { body: 'nobody named' }), 201)
    expect(await notifyRound(s.deps)).toBe(2)
    const mentionRounds = async (who: string) => titles(await threadsOf(who)).filter((t) => t?.startsWith('mention round'))
    expect(await mentionRounds('carol')).toEqual(['mention round'])
    expect(await mentionRounds('eve')).toEqual(['mention round two'])
  })
  test("a round's reads do not grow with its events: the people mentioned, their blocks and the readers are read for the round", async () => {
    // Each event of a round used to read its mentioned people, their blocks of the actor and its
    // candidates' rights by itself (3-5 statements an event); now the round reads them for all its
    // events at once (plansOf). What it writes still goes an event at a time (its threads).
    let reads: string[] | null = null
    recordStatements(s.deps.db, (text) => reads !== null && /^\s*select/i.test(text) && reads.push(text))
    const issue = await ok(as.bob!.repos.issueCreateIssue('alice', 'proj', { title: 'busy round' }), 201)
    await drain()
    const roundOf = async (comments: number) => {
      for (let i = 0; i < comments; i++)
        await ok(as.bob!.repos.issueCreateComment('alice', 'proj', issue.number!, { body: `note ${i} for @${i % 2 ? 'carol' : 'eve'}` }), 201)
      reads = []
      expect(await notifyRound(s.deps)).toBe(comments)
      const count = reads.length
      reads = null
      return count
    }
    const few = await roundOf(2)
    const many = await roundOf(12)
    expect(many).toBe(few)
    // And each event still told its own people: the watchers (alice, dave) and the one it mentions.
    const [thread] = (await threadsOf('carol')).filter((t) => t.subject!.title === 'busy round')
    expect(thread!.unread).toBe(true)
    expect((await threadsOf('eve')).some((t) => t.subject!.title === 'busy round')).toBe(true)
    expect((await threadsOf('dave')).some((t) => t.subject!.title === 'busy round')).toBe(true)
    expect((await threadsOf('bob')).some((t) => t.subject!.title === 'busy round')).toBe(false)
  })
  test("a round's events on one issue leave each thread as handling them one at a time does", async () => {
    // writeThreads writes a round's threads together, one row a (user, issue): made or turned
    // unread by the first event (its comment), last updated by the last.
    const first = await ok(as.bob!.repos.issueCreateIssue('alice', 'proj', { title: 'one by one' }), 201)
    const second = await ok(as.bob!.repos.issueCreateIssue('alice', 'proj', { title: 'all at once' }), 201)
    await drain()
    const thread = async (issueId: number) =>
      (await s.deps.db.select().from(notifications).where(eq(notifications.userId, dave.user.id))).find((r) => r.issueId === issueId)!
    const issueIds = [first.id!, second.id!]
    for (const id of issueIds) await s.deps.db.update(notifications).set({ status: 2 }).where(eq(notifications.id, (await thread(id)).id))
    const comment = async (number: number, body: string) => (await ok(as.bob!.repos.issueCreateComment('alice', 'proj', number, { body }), 201)).id!
    const a1 = await comment(first.number!, 'a1')
    expect(await notifyRound(s.deps, 1)).toBe(1)
    const afterOne = await thread(first.id!)
    await comment(first.number!, 'a2')
    expect(await notifyRound(s.deps, 1)).toBe(1)
    const b1 = await comment(second.number!, 'b1')
    await comment(second.number!, 'b2')
    expect(await notifyRound(s.deps)).toBe(2)
    const [one, together] = [await thread(first.id!), await thread(second.id!)]
    // Read, then a comment: unread, at that comment; the next comment leaves it at the first.
    expect([one.status, one.commentId]).toEqual([1, a1])
    expect([together.status, together.commentId]).toEqual([1, b1])
    // Both last touched by their issue's latest event, by bob; made when their issue was filed.
    expect(one.lastEventId).toBeGreaterThan(afterOne.lastEventId)
    expect(together.lastEventId).toBeGreaterThan(one.lastEventId)
    expect([one.updatedBy, together.updatedBy]).toEqual([bob.user.id, bob.user.id])
    expect(one.createdUnix).toBe(afterOne.createdUnix)
    // Handled again (claimed anew after a crash), the round changes nothing.
    const before = await rowsOf(dave)
    const again = together.lastEventId - 2
    await s.deps.db.update(eventConsumers).set({ doneId: again, claimedId: again, leaseUntilMs: 0 }).where(eq(eventConsumers.name, NOTIFICATION_CONSUMER))
    expect(await notifyRound(s.deps)).toBe(2)
    expect(await rowsOf(dave)).toEqual(before)
    expect([(await thread(second.id!)).status, (await thread(second.id!)).commentId]).toEqual([1, b1])
  })
})
