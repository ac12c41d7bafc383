import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { asc, max } from 'drizzle-orm'
import { loadConfig } from '../src/config'
import { closeDatabase } from '../src/db/client'
import { openConfiguredDatabase } from '../src/deps'
import { events } from '../src/db/schema'
import { claimEvents, eventsOfRepo, hasEventsAfterDone, markDone, recordEvent, type EventRecord } from '../src/events/outbox'
import { startTrackerWorld, type TrackerWorld } from './issue-fixtures'
import { freshTestDatabase } from './test-database'
import { dropInBackground } from './process-helpers'

let w: TrackerWorld
let repo: { id: number; path: string }
beforeAll(async () => {
  w = await startTrackerWorld()
  repo = await w.repo('evented')
})
afterAll(() => w.s.stop())

const lastId = async () => (await w.s.deps.db.select({ n: max(events.id) }).from(events))[0]!.n ?? 0
/** The events written by `action` (every event with a larger id than before it ran). */
async function eventsOf(action: () => Promise<unknown>): Promise<EventRecord[]> {
  const before = await lastId()
  await action()
  return (await w.s.deps.db
    .select()
    .from(events)
    .orderBy(asc(events.id)))
    .filter((e) => e.id > before)
    .map((e) => ({ ...e, payload: JSON.parse(e.payload) }) as EventRecord)
}
const ok = async (p: Promise<{ status: number; text: string }>, status: number) => {
  const r = await p
  expect(r.status, r.text).toBe(status)
  return r as any
}

describe('issue events', () => {
  test('an issue filed closed announces its opening and its close', async () => {
    const filed = await eventsOf(() => ok(w.s.post(`${repo.path}/issues`, { title: 'Done already', closed: true }, { token: w.writer.token }), 201))
    expect(filed.map((e) => [e.kind, e.actorId])).toEqual([
      ['issue.opened', w.writer.user.id],
      ['issue.closed', w.writer.user.id],
    ])
  })

  test('opened, edited with the previous values, closed and reopened; a refused edit writes nothing', async () => {
    let number = 0
    let id = 0
    const opened = await eventsOf(async () => {
      ;({ number, id } = (await ok(w.s.post(`${repo.path}/issues`, { title: 'Old title', body: 'old body' }, { token: w.writer.token }), 201)).body)
    })
    expect(opened).toHaveLength(1)
    // The insert reads the new issue's id and index itself (events/issue-events.ts recordNewIssueEvent): they are this issue's.
    expect(opened[0]).toMatchObject({ kind: 'issue.opened', repoId: repo.id, actorId: w.writer.user.id, issueId: id, payload: { index: number, isPull: false } })
    const issueId = opened[0]!.issueId
    expect(issueId).toBeGreaterThan(0)

    const refused = await eventsOf(() => ok(w.s.patch(`${repo.path}/issues/${number}`, { title: 'Hijack' }, { token: w.reader.token }), 403))
    expect(refused).toEqual([])

    const edited = await eventsOf(() => ok(w.s.patch(`${repo.path}/issues/${number}`, { title: 'New title', body: 'new body' }, { token: w.owner.token }), 201))
    expect(edited).toHaveLength(1)
    expect(edited[0]).toMatchObject({
      kind: 'issue.edited',
      issueId,
      actorId: w.owner.user.id,
      payload: { changes: { title: { from: 'Old title' }, body: { from: 'old body' } } },
    })
    // Same values again: nothing changed, nothing announced.
    expect(await eventsOf(() => ok(w.s.patch(`${repo.path}/issues/${number}`, { title: 'New title' }, { token: w.owner.token }), 201))).toEqual([])

    const closed = await eventsOf(() => ok(w.s.patch(`${repo.path}/issues/${number}`, { state: 'closed' }, { token: w.writer.token }), 201))
    expect(closed.map((e) => e.kind)).toEqual(['issue.closed'])
    const reopened = await eventsOf(() => ok(w.s.patch(`${repo.path}/issues/${number}`, { state: 'open' }, { token: w.writer.token }), 201))
    expect(reopened.map((e) => e.kind)).toEqual(['issue.reopened'])
  })

  test('assigned and unassigned, one event per person', async () => {
    const number = (await ok(w.s.post(`${repo.path}/issues`, { title: 'Assign me' }, { token: w.owner.token }), 201)).body.number
    const first = await eventsOf(() => ok(w.s.patch(`${repo.path}/issues/${number}`, { assignees: ['writer', 'maintainer'] }, { token: w.owner.token }), 201))
    expect(first.map((e) => [e.kind, (e.payload.assignee as any).login])).toEqual([
      ['issue.assigned', 'writer'],
      ['issue.assigned', 'maintainer'],
    ])
    const second = await eventsOf(() => ok(w.s.patch(`${repo.path}/issues/${number}`, { assignees: ['maintainer'] }, { token: w.owner.token }), 201))
    expect(second.map((e) => [e.kind, e.payload.assignee])).toEqual([['issue.unassigned', { id: w.writer.user.id, login: 'writer' }]])
    // An unknown assignee is refused (422) and announces nothing.
    expect(await eventsOf(() => ok(w.s.patch(`${repo.path}/issues/${number}`, { assignees: ['nobody-here'] }, { token: w.owner.token }), 422))).toEqual([])
  })

  test('milestoned and demilestoned', async () => {
    const m1 = (await ok(w.s.post(`${repo.path}/milestones`, { title: 'v1' }, { token: w.owner.token }), 201)).body
    const m2 = (await ok(w.s.post(`${repo.path}/milestones`, { title: 'v2' }, { token: w.owner.token }), 201)).body
    const number = (await ok(w.s.post(`${repo.path}/issues`, { title: 'Plan me' }, { token: w.owner.token }), 201)).body.number
    const set = await eventsOf(() => ok(w.s.patch(`${repo.path}/issues/${number}`, { milestone: m1.id }, { token: w.owner.token }), 201))
    expect(set.map((e) => [e.kind, e.payload.milestone])).toEqual([['issue.milestoned', { id: m1.id, title: 'v1' }]])
    const moved = await eventsOf(() => ok(w.s.patch(`${repo.path}/issues/${number}`, { milestone: m2.id }, { token: w.owner.token }), 201))
    expect(moved.map((e) => [e.kind, e.payload.milestone])).toEqual([
      ['issue.demilestoned', { id: m1.id, title: 'v1' }],
      ['issue.milestoned', { id: m2.id, title: 'v2' }],
    ])
    const cleared = await eventsOf(() => ok(w.s.patch(`${repo.path}/issues/${number}`, { milestone: 0 }, { token: w.owner.token }), 201))
    expect(cleared.map((e) => e.kind)).toEqual(['issue.demilestoned'])
    expect(await eventsOf(() => ok(w.s.patch(`${repo.path}/issues/${number}`, { milestone: 99999 }, { token: w.owner.token }), 422))).toEqual([])
  })

  test('label changes: added, removed, cleared; a reader is refused and nothing is written', async () => {
    const bug = (await ok(w.s.post(`${repo.path}/labels`, { name: 'bug', color: 'ee0701' }, { token: w.owner.token }), 201)).body
    const ui = (await ok(w.s.post(`${repo.path}/labels`, { name: 'ui', color: '00aa00' }, { token: w.owner.token }), 201)).body
    const number = (await ok(w.s.post(`${repo.path}/issues`, { title: 'Label me' }, { token: w.owner.token }), 201)).body.number
    const path = `${repo.path}/issues/${number}/labels`
    const added = await eventsOf(() => ok(w.s.post(path, { labels: [bug.id, ui.id] }, { token: w.writer.token }), 200))
    expect(added).toHaveLength(1)
    expect(added[0]).toMatchObject({ kind: 'issue.label_updated', actorId: w.writer.user.id, payload: { removed: [] } })
    expect((added[0]!.payload.added as any[]).map((l) => l.name).sort()).toEqual(['bug', 'ui'])
    const replaced = await eventsOf(() => ok(w.s.put(path, { labels: [ui.id] }, { token: w.writer.token }), 200))
    expect(replaced.map((e) => [e.kind, e.payload.added, e.payload.removed])).toEqual([['issue.label_updated', [], [{ id: bug.id, name: 'bug' }]]])
    expect(await eventsOf(() => ok(w.s.post(path, { labels: [bug.id] }, { token: w.reader.token }), 403))).toEqual([])
    const cleared = await eventsOf(() => ok(w.s.del(path, undefined, { token: w.writer.token }), 204))
    expect(cleared.map((e) => [e.kind, e.payload.removed])).toEqual([['issue.label_cleared', [{ id: ui.id, name: 'ui' }]]])
    expect(await eventsOf(() => ok(w.s.del(path, undefined, { token: w.writer.token }), 204))).toEqual([])
  })
})

describe('comment events', () => {
  test('created, edited with the previous body, deleted with a snapshot; refused changes write nothing', async () => {
    const number = (await ok(w.s.post(`${repo.path}/issues`, { title: 'Talk' }, { token: w.owner.token }), 201)).body.number
    let commentId = 0
    const created = await eventsOf(async () => {
      commentId = (await ok(w.s.post(`${repo.path}/issues/${number}/comments`, { body: 'first words' }, { token: w.reader.token }), 201)).body.id
    })
    expect(created).toHaveLength(1)
    expect(created[0]).toMatchObject({ kind: 'comment.created', commentId, actorId: w.reader.user.id, payload: { index: number } })

    const url = `${repo.path}/issues/comments/${commentId}`
    expect(await eventsOf(() => ok(w.s.patch(url, { body: 'not yours' }, { token: w.writer.token }), 403))).toEqual([])
    const edited = await eventsOf(() => ok(w.s.patch(url, { body: 'second words' }, { token: w.reader.token }), 200))
    expect(edited.map((e) => [e.kind, e.commentId, e.payload.changes])).toEqual([['comment.edited', commentId, { body: { from: 'first words' } }]])

    expect(await eventsOf(() => ok(w.s.del(url, undefined, { token: w.writer.token }), 403))).toEqual([])
    const deleted = await eventsOf(() => ok(w.s.del(url, undefined, { token: w.owner.token }), 204))
    expect(deleted).toHaveLength(1)
    expect(deleted[0]).toMatchObject({ kind: 'comment.deleted', commentId, actorId: w.owner.user.id })
    expect(deleted[0]!.payload.comment).toMatchObject({ id: commentId, content: 'second words', posterId: w.reader.user.id })
  })
})

describe('repository events', () => {
  test('created, renamed and deleted (with a snapshot); refused changes write nothing', async () => {
    let id = 0
    const created = await eventsOf(async () => {
      id = (await ok(w.s.post('/user/repos', { name: 'born', description: 'd' }, { token: w.writer.token }), 201)).body.id
    })
    expect(created).toHaveLength(1)
    expect(created[0]).toMatchObject({ kind: 'repo.created', repoId: id, actorId: w.writer.user.id, payload: { repository: { name: 'born' } } })
    expect(await eventsOf(() => ok(w.s.post('/user/repos', { name: 'born' }, { token: w.writer.token }), 409))).toEqual([])

    expect(await eventsOf(() => ok(w.s.patch('/repos/writer/born', { name: 'grown' }, { token: w.reader.token }), 403))).toEqual([])
    const renamed = await eventsOf(() => ok(w.s.patch('/repos/writer/born', { name: 'grown' }, { token: w.writer.token }), 200))
    expect(renamed.map((e) => [e.kind, e.repoId, e.payload])).toEqual([['repo.renamed', id, { owner: 'writer', from: 'born', to: 'grown' }]])

    const deleted = await eventsOf(() => ok(w.s.del('/repos/writer/grown', undefined, { token: w.writer.token }), 204))
    expect(deleted).toHaveLength(1)
    expect(deleted[0]).toMatchObject({
      kind: 'repo.deleted',
      repoId: id,
      actorId: w.writer.user.id,
      payload: { repository: { id, name: 'grown', ownerName: 'writer', description: 'd' } },
    })
  })
})

describe('consumers', () => {
  test('claim in order, mark done, two consumers apart, leases come back, state survives reopening; the idle poll sees what is past the done position', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-outbox-'))
    // A database of its own (a new SQLite file in `dir`, or a new PostgreSQL database), opened twice.
    const database = await freshTestDatabase()
    const config = loadConfig({}, { dataDir: dir, databaseUrl: database.url })
    try {
      let db = await openConfiguredDatabase(config)
      // The idle poll: nothing recorded, nothing to do; a consumer never seen has every event to do.
      expect(await hasEventsAfterDone(db, 'webhooks')).toBe(false)
      for (const n of [1, 2, 3, 4, 5]) await recordEvent(db, { kind: 'issue.opened', repoId: 7, actorId: 1, issueId: n, payload: { n } })
      // Recorded one after the other: ids in the order recorded.
      const recorded = await eventsOfRepo(db, 7)
      expect(recorded.map((e) => e.payload.n)).toEqual([1, 2, 3, 4, 5])
      const ids = recorded.map((e) => e.id)
      const a1 = await claimEvents(db, 'webhooks', 2)
      expect(a1.map((e) => e.payload.n)).toEqual([1, 2])
      // A second worker of the same consumer gets what is not claimed yet.
      expect((await claimEvents(db, 'webhooks', 2)).map((e) => e.payload.n)).toEqual([3, 4])
      // Another consumer is independent (this one claims with a lease that ends at once).
      expect((await claimEvents(db, 'feeds', 10, 0)).map((e) => e.payload.n)).toEqual([1, 2, 3, 4, 5])
      await markDone(db, 'webhooks', a1[1]!.id)
      await markDone(db, 'webhooks', a1[0]!.id) // an older acknowledgement moves nothing back
      await closeDatabase(db)

      db = await openConfiguredDatabase(config)
      // After a restart: the claims of the webhooks worker (3, 4) are under lease still.
      expect((await claimEvents(db, 'webhooks', 10)).map((e) => e.payload.n)).toEqual([5])
      // The feeds lease has ended: what was claimed and never done comes back, in order.
      expect((await claimEvents(db, 'feeds', 2, 0)).map((e) => e.payload.n)).toEqual([1, 2])
      expect((await claimEvents(db, 'feeds', 2, 0)).map((e) => e.payload.n)).toEqual([1, 2])
      expect(await hasEventsAfterDone(db, 'feeds')).toBe(true)
      expect(await hasEventsAfterDone(db, 'never-seen')).toBe(true)
      await markDone(db, 'feeds', ids[4]!)
      expect(await claimEvents(db, 'feeds', 10)).toEqual([])
      // Done with every event: nothing past it (claims do not count, the webhooks' are not done).
      expect(await hasEventsAfterDone(db, 'feeds')).toBe(false)
      expect(await hasEventsAfterDone(db, 'webhooks')).toBe(true)
      await recordEvent(db, { kind: 'comment.created', repoId: 7, actorId: 2, commentId: 9 })
      expect(await hasEventsAfterDone(db, 'feeds')).toBe(true)
      expect((await claimEvents(db, 'feeds', 10)).map((e) => [e.kind, e.commentId])).toEqual([['comment.created', 9]])
      expect(async () => await claimEvents(db, 'Bad Name', 1)).toThrow()
      await closeDatabase(db)
    } finally {
      dropInBackground(database)
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
