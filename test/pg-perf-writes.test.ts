// runs in one half: postgresql
/**
 * What a write holds PostgreSQL's write lock for, counted, never timed: every write transaction
 * takes one cluster-wide lock (src/db/postgres.ts), so the round trips between taking it and
 * COMMIT are what serialises writers, within a process and across processes. BEGIN and the lock go
 * in one message with the transaction's first statements pipelined behind it; filing an issue
 * sends its index, row and counters together, then its event with COMMIT (the outbox writes
 * behind: src/db/client.ts writeBehind). The statements a request sends are recorded as it runs
 * (test/query-counter.ts). A write behind that fails rolls back all of its transaction, which
 * PostgreSQL does itself (an aborted transaction's COMMIT is a ROLLBACK). PostgreSQL only.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { afterCommit, writeBehind, writeTransaction } from '../src/db/client'
import { DIALECT } from '../src/db/dialect'
import { events, repositories } from '../src/db/schema'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { recordStatements, writeRoundTrips } from './query-counter'

let s: TestServer
let owner: TestUser
let countRoundTrips: ReturnType<typeof writeRoundTrips>
let recorded: string[] | null = null

describe.skipIf(DIALECT !== 'postgres')('round trips of a write under the write lock', () => {
  beforeAll(async () => {
    s = await startTestServer()
    owner = await s.user('filer')
    countRoundTrips = writeRoundTrips(s.deps.db)
    recordStatements(s.deps.db, (sql) => recorded?.push(sql))
    expect((await s.post('/user/repos', { name: 'queue' }, { token: owner.token })).status).toBe(201)
  }, 240_000)
  afterAll(() => s?.stop())

  /** The round trips of the write transactions a request runs, and the statements it sends. */
  async function measure(request: () => Promise<{ status: number }>, status: number) {
    recorded = []
    let answered = 0
    const trips = await countRoundTrips(async () => {
      answered = (await request()).status
    })
    const statements = recorded
    recorded = null
    expect(answered).toBe(status)
    return { ...trips, statements }
  }

  test('POST issue: one round trip of reads, then one write transaction of 2 (index, row and counters; event and COMMIT)', async () => {
    // The first issue of the repository makes its index row; the figures are those of any later one.
    expect((await s.post('/repos/filer/queue/issues', { title: 'first' }, { token: owner.token })).status).toBe(201)
    const m = await measure(() => s.post('/repos/filer/queue/issues', { title: 'counted', body: 'text' }, { token: owner.token }), 201)
    expect(m.transactions).toBe(1)
    expect(m.roundTrips).toBeLessThanOrEqual(2)
    const writes = m.statements.filter((t) => /^(insert|update|delete)\b/i.test(t))
    expect(writes.map((t) => /^(?:insert into|update) "(\w+)"/i.exec(t)?.[1])).toEqual(['issue_indexes', 'issues', 'repositories', 'events'])
    // Before the transaction: who asks and the repository (its owner and its row), read side by
    // side in one round trip (the last write emptied the caches); after it, nothing (the record is
    // made from what it has). The change's notification to other processes goes with COMMIT, in
    // the transaction's last round trip (sent only when it changed what a cache may read).
    expect(m.statements.at(-1)).toMatch(/^select pg_notify\('warren_changes'/)
    expect(m.statements.length - 1).toBeLessThanOrEqual(7)
    expect(m.poolRoundTrips).toBeLessThanOrEqual(1)
  }, 240_000)

  test('filed closed with a milestone, a label and an assignee: the index, row and counters in one round trip, the links, counts and events with COMMIT; events in order', async () => {
    const ms = await s.post('/repos/filer/queue/milestones', { title: 'v1' }, { token: owner.token })
    const label = await s.post('/repos/filer/queue/labels', { name: 'bug', color: '#ff0000' }, { token: owner.token })
    expect([ms.status, label.status]).toEqual([201, 201])
    let issue: any
    const m = await measure(async () => {
      const r = await s.post('/repos/filer/queue/issues', { title: 'done', closed: true, milestone: ms.body.id, labels: [label.body.id], assignees: ['filer'] }, { token: owner.token })
      issue = r.body
      return r
    }, 201)
    expect(issue).toMatchObject({ state: 'closed', milestone: { id: ms.body.id, open_issues: 0, closed_issues: 1 }, labels: [{ id: label.body.id }], assignees: [{ login: 'filer' }] })
    expect(m.transactions).toBe(1)
    // Milestone and label read together; index, row and counters; the label's link and count and the events with COMMIT.
    expect(m.roundTrips).toBeLessThanOrEqual(3)
    const events = (await (s.deps.db.$client as any).unsafe(`select kind from events where issue_id = $1 order by id`, [issue.id])) as { kind: string }[]
    expect(events.map((e) => e.kind)).toEqual(['issue.opened', 'issue.closed'])
    // What was written behind is there: the label's link and counts, the assignee.
    const client = s.deps.db.$client as any
    expect(await client.unsafe(`select num_issues::int as n, num_closed_issues::int as closed from labels where id = $1`, [label.body.id])).toEqual([{ n: 1, closed: 1 }])
    expect((await s.get(`/repos/filer/queue/issues/${issue.number}`, { token: owner.token })).body).toMatchObject({ labels: [{ id: label.body.id }], assignees: [{ login: 'filer' }] })
    const repo = await s.get('/repos/filer/queue', { token: owner.token })
    expect(repo.body.open_issues_count).toBe(2)
  }, 240_000)

  test('a refused write inside the transaction rolls everything back, and the next one is numbered next', async () => {
    const before = (await s.get('/repos/filer/queue/issues?state=all&limit=1', { token: owner.token })).body[0].number as number
    const refused = await s.post('/repos/filer/queue/issues', { title: 'no such milestone', milestone: 424242 }, { token: owner.token })
    expect(refused.status).toBe(422)
    const next = await s.post('/repos/filer/queue/issues', { title: 'after' }, { token: owner.token })
    expect(next.status).toBe(201)
    expect(next.body.number).toBe(before + 1)
  }, 240_000)

  /** The rows of a table, counted through the pool (outside any transaction). */
  const countOf = async (query: string, params: unknown[] = []) => Number(((await (s.deps.db.$client as any).unsafe(query, params)) as { n: string }[])[0]!.n)

  test('a write behind that fails rolls back the whole transaction, and its error is what is thrown', async () => {
    const db = s.deps.db
    const repo = (await db.select().from(repositories).where(eq(repositories.name, 'queue')))[0]!
    const taken = (await db.select({ id: events.id }).from(events).limit(1))[0]!.id
    const eventsBefore = await countOf('select count(*) as n from events')
    const duplicate = () => db.insert(events).values({ id: taken, kind: 'push', repoId: repo.id, actorId: owner.user.id, payload: '{}', createdUnix: 1 })
    let hooked = 0
    // In the tail: the change, then a good event and a failing one behind, sent with COMMIT.
    let m = await countRoundTrips(async () => {
      const failure = await writeTransaction(db, async () => {
        await db.update(repositories).set({ description: 'half written' }).where(eq(repositories.id, repo.id))
        await writeBehind(db, db.insert(events).values({ kind: 'push', repoId: repo.id, actorId: owner.user.id, payload: '{}', createdUnix: 1 }))
        await writeBehind(db, duplicate())
        afterCommit(db, () => hooked++)
      }).catch((e) => e)
      expect((failure as { errno?: string }).errno).toBe('23505') // the duplicate key, not "transaction aborted"
    })
    expect(m).toMatchObject({ transactions: 1, roundTrips: 2 })
    // Behind a statement that follows it: that statement fails as the transaction is aborted; the write behind's failure is thrown.
    const failure = await writeTransaction(db, async () => {
      await writeBehind(db, duplicate())
      await db.update(repositories).set({ description: 'half written' }).where(eq(repositories.id, repo.id))
    }).catch((e) => e)
    expect((failure as { errno?: string }).errno).toBe('23505')
    await Bun.sleep(0)
    expect(hooked).toBe(0)
    expect((await db.select().from(repositories).where(eq(repositories.id, repo.id)))[0]!.description).toBe(repo.description)
    expect(await countOf('select count(*) as n from events')).toBe(eventsBefore)
    // The connection is fine after it: the next transaction commits.
    m = await countRoundTrips(() => writeTransaction(db, () => writeBehind(db, db.update(repositories).set({ description: 'written' }).where(eq(repositories.id, repo.id)))))
    expect(m).toMatchObject({ transactions: 1, roundTrips: 1 }) // BEGIN, the lock, the write and COMMIT in one
    expect((await db.select().from(repositories).where(eq(repositories.id, repo.id)))[0]!.description).toBe('written')
  }, 240_000)

  test('an issue whose event fails to be written is not filed: no row, no event, no counter moved, the next one numbered next', async () => {
    const refused = await s.user('refused')
    expect((await s.post('/user/repos', { name: 'tail' }, { token: refused.token })).status).toBe(201)
    expect((await s.post('/repos/refused/tail/issues', { title: 'one' }, { token: refused.token })).status).toBe(201)
    const theirEvents = () => countOf(`select count(*) as n from events where actor_id = $1`, [refused.user.id])
    const before = await theirEvents() // the repository's and the first issue's
    // The database refuses this person's events from now on: the event, written behind, fails in the round trip of COMMIT.
    await (s.deps.db.$client as any).unsafe(`alter table events add constraint refuse_test_actor check (actor_id <> ${refused.user.id}) not valid`)
    try {
      const m = await measure(() => s.post('/repos/refused/tail/issues', { title: 'never filed', body: 'text' }, { token: refused.token }), 500)
      expect(m.transactions).toBe(1)
      expect(m.roundTrips).toBeLessThanOrEqual(2)
      expect(await countOf(`select count(*) as n from issues where title = 'never filed'`)).toBe(0)
      expect(await theirEvents()).toBe(before)
      expect((await s.get('/repos/refused/tail', { token: refused.token })).body.open_issues_count).toBe(1)
    } finally {
      await (s.deps.db.$client as any).unsafe(`alter table events drop constraint refuse_test_actor`)
    }
    const next = await s.post('/repos/refused/tail/issues', { title: 'two' }, { token: refused.token })
    expect(next.status).toBe(201)
    expect(next.body.number).toBe(2)
    expect(await theirEvents()).toBe(before + 1)
  }, 240_000)
})
