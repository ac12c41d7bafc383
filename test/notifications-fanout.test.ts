/**
 * A large fan-out: a repository with more watchers than one statement of the notification
 * consumer writes (src/notify/consumer.ts writes threads many rows a statement). Every watcher
 * gets exactly one thread, a later event updates each of them (a read thread unread again,
 * pointing at the new comment; an unread one keeps its first comment), and handling the same
 * events again changes nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { asc, eq } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { notifyRound, NOTIFICATION_CONSUMER } from '../src/notify/consumer'
import { eventConsumers, notifications, repositories, users, watches } from '../src/db/schema'
import { writeTransaction } from '../src/db/client'

const WATCHERS = 1234

let s: TestServer
let alice: TestUser
let repoId: number
const drain = async () => {
  while ((await notifyRound(s.deps)) > 0) {}
}
const threads = async (issueId: number) =>
  await s.deps.db.select().from(notifications).where(eq(notifications.issueId, issueId)).orderBy(asc(notifications.userId))

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  const r = await s.post('/user/repos', { name: 'popular' }, { token: alice.token })
  expect(r.status).toBe(201)
  repoId = r.body.id
  const now = Math.floor(Date.now() / 1000)
  await writeTransaction(s.deps.db, async () => {
    for (let start = 0; start < WATCHERS; start += 300) {
      const rows = Array.from({ length: Math.min(300, WATCHERS - start) }, (_, k) => ({ name: `fan${start + k}`, lowerName: `fan${start + k}`, email: `fan${start + k}@example.com`, createdUnix: now, updatedUnix: now }))
      const ids = await s.deps.db.insert(users).values(rows).returning({ id: users.id })
      await s.deps.db.insert(watches).values(ids.map((u) => ({ userId: u.id, repoId, createdUnix: now })))
    }
    await s.deps.db.update(repositories).set({ numWatches: WATCHERS + 1 }).where(eq(repositories.id, repoId))
  })
})
afterAll(() => s.stop())

describe('fan-out to many watchers', () => {
  test('one thread per watcher, updated by a later event, unchanged when the events are handled again', async () => {
    const issue = await s.post('/repos/alice/popular/issues', { title: 'for everyone' }, { token: alice.token })
    expect(issue.status).toBe(201)
    await drain()
    const first = await threads(issue.body.id)
    expect(first.length).toBe(WATCHERS)
    expect(new Set(first.map((t) => t.userId)).size).toBe(WATCHERS)
    expect(first.every((t) => t.status === 1 && t.commentId === 0 && t.repoId === repoId)).toBe(true)

    // Half of them read theirs; then a comment: the read ones are unread again and point at it.
    const readers = first.filter((_, i) => i % 2 === 0).map((t) => t.id)
    await writeTransaction(s.deps.db, async () => {
      for (const id of readers) await s.deps.db.update(notifications).set({ status: 2 }).where(eq(notifications.id, id))
    })
    const comment = await s.post(`/repos/alice/popular/issues/${issue.body.number}/comments`, { body: 'news' }, { token: alice.token })
    expect(comment.status).toBe(201)
    await drain()
    const second = await threads(issue.body.id)
    expect(second.map((t) => t.id)).toEqual(first.map((t) => t.id))
    expect(second.every((t) => t.status === 1 && t.lastEventId > first[0]!.lastEventId)).toBe(true)
    const read = new Set(readers)
    expect(second.filter((t) => read.has(t.id)).every((t) => t.commentId === comment.body.id)).toBe(true)
    expect(second.filter((t) => !read.has(t.id)).every((t) => t.commentId === 0)).toBe(true)

    // The consumer's position set back: every event handled again, nothing changes.
    await s.deps.db.update(eventConsumers).set({ doneId: 0, claimedId: 0 }).where(eq(eventConsumers.name, NOTIFICATION_CONSUMER))
    await drain()
    expect(await threads(issue.body.id)).toEqual(second)
  })
})
