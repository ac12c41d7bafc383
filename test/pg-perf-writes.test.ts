// runs in one half: postgresql
/**
 * What a write holds PostgreSQL's write lock for, counted, never timed: every write transaction
 * takes one cluster-wide lock (src/db/postgres.ts), so the round trips between taking it and
 * COMMIT are what serialises writers, within a process and across processes. BEGIN, the lock and
 * the transaction's statements follow one another on the connection without waiting for answers
 * (Bun pipelines statements with parameters), and COMMIT once they are answered. Filing an issue
 * sends its index, row, counters and event without awaiting any answer (src/db/client.ts
 * answerAfterCommit and writeBehind): two round trips, the second COMMIT's. The statements a
 * request sends are recorded as it runs (test/query-counter.ts); that everything before COMMIT
 * runs while this process's thread is held is checked on the wire. A write behind that fails
 * rolls back all of its transaction, which PostgreSQL does itself (an aborted transaction's
 * COMMIT is a ROLLBACK). PostgreSQL only.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { eq, sql } from 'drizzle-orm'
import { afterCommit, answerAfterCommit, closeDatabase, writeBehind, writeTransaction } from '../src/db/client'
import { DIALECT } from '../src/db/dialect'
import { openPostgres, WRITE_LOCK } from '../src/db/postgres'
import { events, repositories } from '../src/db/schema'
import { claimEvents, markDone, recordEvent } from '../src/events/outbox'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { recordStatements, writeRoundTrips } from './query-counter'
import { freshPostgresDatabase } from './test-database'

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

  test('POST issue: one round trip of reads, then one write transaction of 2 (index, row, counters and event behind the lock; COMMIT)', async () => {
    // The first issue of the repository makes its index row; the figures are those of any later one.
    expect((await s.post('/repos/filer/queue/issues', { title: 'first' }, { token: owner.token })).status).toBe(201)
    const m = await measure(() => s.post('/repos/filer/queue/issues', { title: 'counted', body: 'text' }, { token: owner.token }), 201)
    expect(m.transactions).toBe(1)
    expect(m.roundTrips).toBe(2)
    const writes = m.statements.filter((t) => /^(insert|update|delete)\b/i.test(t))
    expect(writes.map((t) => /^(?:insert into|update) "(\w+)"/i.exec(t)?.[1])).toEqual(['issue_indexes', 'issues', 'repositories', 'events'])
    // Before the transaction: who asks and the repository (its owner and its row), read side by
    // side in one round trip (the last write emptied the caches); after it, nothing (the record is
    // made from what it has). The change's notification to other processes goes with COMMIT, in
    // the transaction's last round trip (sent only when it changed what a cache may read).
    expect(m.statements.at(-1)).toBe('select pg_notify($1, $2)')
    expect(m.statements.length - 1).toBeLessThanOrEqual(7)
    expect(m.poolRoundTrips).toBeLessThanOrEqual(1)
  }, 240_000)

  test('filed closed with a milestone, a label and an assignee: the reads, the index, row and counters, the links, counts and events, COMMIT; events in order', async () => {
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
    // Milestone and label read together behind the lock; index, row and counters (the links need
    // the row's id); the label's link and count and the events; COMMIT.
    expect(m.roundTrips).toBeLessThanOrEqual(4)
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
    expect(m).toMatchObject({ transactions: 1, roundTrips: 3 }) // the change; the writes behind; COMMIT
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
    expect(m).toMatchObject({ transactions: 1, roundTrips: 2 }) // BEGIN, the lock and the write in one; COMMIT
    expect((await db.select().from(repositories).where(eq(repositories.id, repo.id)))[0]!.description).toBe('written')
  }, 240_000)

  test('an issue whose event fails to be written is not filed: no row, no event, no counter moved, the next one numbered next', async () => {
    const refused = await s.user('refused')
    expect((await s.post('/user/repos', { name: 'tail' }, { token: refused.token })).status).toBe(201)
    expect((await s.post('/repos/refused/tail/issues', { title: 'one' }, { token: refused.token })).status).toBe(201)
    const theirEvents = () => countOf(`select count(*) as n from events where actor_id = $1`, [refused.user.id])
    const before = await theirEvents() // the repository's and the first issue's
    // The database refuses this person's events from now on: the event, written behind the issue's insert, fails.
    await (s.deps.db.$client as any).unsafe(`alter table events add constraint refuse_test_actor check (actor_id <> ${refused.user.id}) not valid`)
    try {
      const m = await measure(() => s.post('/repos/refused/tail/issues', { title: 'never filed', body: 'text' }, { token: refused.token }), 500)
      expect(m.transactions).toBe(1)
      // Everything behind the lock in one round trip, then COMMIT, which PostgreSQL answers with ROLLBACK (the transaction was aborted).
      expect(m.roundTrips).toBe(2)
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

  test("an outbox consumer's claim awaits one read under the lock, its acknowledgement nothing", async () => {
    const db = s.deps.db
    // At least four events, whatever ran before.
    for (let i = 0; i < 4; i++) await recordEvent(db, { kind: 'push', repoId: null, actorId: null })
    let first: Awaited<ReturnType<typeof claimEvents>> = []
    let second: typeof first = []
    // BEGIN, the lock, the consumer's row (behind) and the events past its position; the claim
    // (behind, its last event's id); COMMIT. It was five round trips, each awaited.
    expect(await countRoundTrips(async () => void (first = await claimEvents(db, 'round-trips', 2)))).toMatchObject({ transactions: 1, roundTrips: 3 })
    expect(await countRoundTrips(async () => void (second = await claimEvents(db, 'round-trips', 2)))).toMatchObject({ transactions: 1, roundTrips: 3 })
    // The first claim's lease holds its events: the second takes the next ones.
    expect(first).toHaveLength(2)
    expect(second).toHaveLength(2)
    expect(second[0]!.id).toBeGreaterThan(first[1]!.id)
    // The consumer's row and its position, both behind the lock; COMMIT.
    expect(await countRoundTrips(() => markDone(db, 'round-trips', second[1]!.id))).toMatchObject({ transactions: 1, roundTrips: 2 })
    const position = await countOf(`select done_id as n from event_consumers where name = 'round-trips'`)
    expect(position).toBe(second[1]!.id)
  }, 240_000)

  test('a transaction that awaits nothing runs all its statements behind the lock while this process is held: only COMMIT waits for it', async () => {
    // A database of its own, with a pool of two connections (one for write transactions) and
    // nothing else running on it: the write lock is the database's, so no other writer of the
    // suite stands in its queue.
    const database = await freshPostgresDatabase(s.deps.config.databaseUrl!, 'warren_pipeline')
    const db = await openPostgres(database.url, { poolSize: 2, listen: false })
    const holder = new SQL(database.url, { max: 1 })
    try {
      const insert = db
        .insert(events)
        .values({ kind: 'push', repoId: sql.placeholder('repo'), actorId: null, payload: '{}', createdUnix: 1 } as never)
        .returning({ id: events.id })
        .prepare()
      const file = (repo: number) =>
        writeTransaction(db, async () => {
          const row = answerAfterCommit(db, insert.execute({ repo }))
          await writeBehind(db, db.insert(events).values({ kind: 'push', repoId: repo + 1000, actorId: null, payload: '{}', createdUnix: 1 }))
          return { row }
        })
      // Twice first: a statement is prepared on a connection at its first use (not pipelined then).
      for (const repo of [1, 2]) expect((await (await file(repo)).row)[0]!.id).toBeGreaterThan(0)
      const [{ pid }] = await holder.unsafe('select pg_advisory_lock($1), pg_backend_pid() as pid', [WRITE_LOCK])
      const filing = file(3)
      // The transaction waits for the lock, its statements sent behind it.
      while (Number((await holder.unsafe(`select count(*) as n from pg_locks where locktype = 'advisory' and not granted`))[0].n) === 0) await Bun.sleep(5)
      await Bun.sleep(20)
      // This thread held (a synchronous child) while another process lets the lock go and watches
      // the transaction: it runs everything it was sent, the inserts and the notification of its
      // change, and then waits for this process (COMMIT), which has done nothing since.
      const script = `
        import { SQL } from 'bun'
        const c = new SQL(process.env.PIPELINE_URL, { max: 1 })
        await c.unsafe('select pg_terminate_backend($1)', [Number(process.env.PIPELINE_HOLDER)])
        const deadline = Date.now() + 60_000
        let seen = null
        while (Date.now() < deadline) {
          const rows = await c.unsafe("select query from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state = 'idle in transaction'")
          if (rows.length) { seen = rows.map((r) => r.query); break }
          await Bun.sleep(10)
        }
        console.log(JSON.stringify({ seen }))
        await c.close()
      `
      const child = Bun.spawnSync([process.execPath, '-e', script], { env: { ...process.env, PIPELINE_URL: database.url, PIPELINE_HOLDER: String(pid) }, stderr: 'pipe' })
      expect(JSON.parse(child.stdout.toString())).toEqual({ seen: ['select pg_notify($1, $2)'] })
      // Let go, it commits: both rows there.
      expect((await (await filing).row)[0]!.id).toBeGreaterThan(0)
      expect(Number((await holder.unsafe('select count(*) as n from events where repo_id in (3, 1003)'))[0].n)).toBe(2)
    } finally {
      await holder.close().catch(() => {})
      await closeDatabase(db)
      await database.drop()
    }
  }, 240_000)
})
