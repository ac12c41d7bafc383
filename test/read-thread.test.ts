/**
 * src/db/read-thread.ts: reads whose work grows with the data run off the event loop on SQLite
 * (their own thread and connection), within a budget; on PostgreSQL the connection is the
 * database's own. No timings: what is checked is which connection ran a statement, and the order
 * in which answers came.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { DIALECT } from '../src/db/dialect'
import { offThreadReads, readerFor, readThreadOf } from '../src/db/read-thread'
import { writeTransaction } from '../src/db/client'
import { ApiError } from '../src/lib/errors'
import { databaseUnavailable } from '../src/db/unavailable'
import { repositories } from '../src/db/schema'
import { servingClient } from '../src/lib/request-client'
import { startTestServer, type TestServer } from './helpers'
import { statementRecorder } from './query-counter'

let s: TestServer
beforeAll(async () => {
  s = await startTestServer()
})
afterAll(() => s.stop())

/** A read SQLite works at for a while: counting `n` rows made one by one. */
const counting = (n: number) => sql`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${n}) SELECT count(*) AS n FROM c`

/** counting(n) on the read thread, as a request of `client` reads (lib/request-client.ts). */
const readFor = (client: string, n: number) =>
  servingClient(
    () => client,
    // Awaited inside: Drizzle runs a statement when it is awaited, not when it is made.
    async () => await offThreadReads(s.deps.db).values(counting(n)),
  )

describe('reads off the event loop', () => {
  test.skipIf(DIALECT !== 'postgres')('PostgreSQL: the connection itself (its server runs every statement)', () => {
    expect(offThreadReads(s.deps.db)).toBe(s.deps.db)
  })

  test.skipIf(DIALECT !== 'sqlite')('SQLite: a read runs on the thread, not on the connection of the event loop, with the same answers', async () => {
    const off = offThreadReads(s.deps.db)
    expect(off).not.toBe(s.deps.db)
    const user = await s.user('reader')
    await s.post('/user/repos', { name: 'one' }, { token: user.token })
    const mainClient = s.deps.db.$client as unknown as { query: (text: string) => unknown }
    const asked: string[] = []
    const query = mainClient.query.bind(mainClient)
    mainClient.query = (text: string) => (asked.push(text), query(text))
    try {
      const rows = await off.select({ name: repositories.name, isPrivate: repositories.isPrivate }).from(repositories)
      expect(rows).toEqual([{ name: 'one', isPrivate: false }])
      expect(await off.select({ name: repositories.name }).from(repositories).where(sql`${repositories.name} = ${'nothing'}`)).toEqual([])
    } finally {
      mainClient.query = query
    }
    expect(asked.filter((text) => text.includes('repositories'))).toEqual([])
    // The statements are recorded as the connection's (test/query-counter.ts).
    const sent = statementRecorder(s.deps.db)
    expect((await sent.during(() => off.select({ n: sql`count(*)` }).from(repositories))).some((text) => text.includes('count(*)'))).toBe(true)
    // Writes are refused there; inside a write transaction the reads are the connection's own (they see its rows).
    const failure = (statement: PromiseLike<unknown>) => Promise.resolve(statement).then(() => null, (e: Error) => e)
    expect(await failure(off.run(sql`DELETE FROM repositories`))).toBeInstanceOf(Error)
    expect(String((await failure(off.all(sql`DELETE FROM repositories RETURNING id`)))?.cause)).toContain('readonly')
    expect(await s.deps.db.select({ name: repositories.name }).from(repositories)).toEqual([{ name: 'one' }])
    await writeTransaction(s.deps.db, async () => expect(readerFor(s.deps.db)).toBe(s.deps.db))
    expect(readerFor(s.deps.db)).toBe(off)
  })

  test.skipIf(DIALECT !== 'sqlite')('SQLite: while a long read runs, other requests are answered', async () => {
    const off = offThreadReads(s.deps.db)
    let done = false
    const long = off.values(counting(3_000_000)).then((rows) => ((done = true), rows))
    // Answered while the read still runs: the event loop is not waiting for it.
    expect((await s.get('/version')).status).toBe(200)
    expect(done).toBe(false)
    expect(await long).toEqual([[3_000_000]])
  })

  test.skipIf(DIALECT !== 'sqlite')('SQLite: the thread ends with the database, and no read starts another', async () => {
    const other = await startTestServer()
    const off = offThreadReads(other.deps.db)
    expect(await off.values(counting(5))).toEqual([[5]])
    await other.stop()
    const failure = await Promise.resolve(off.values(counting(5))).then(() => null, (e: Error) => e)
    expect(String(failure?.cause)).toContain('the database was closed')
    // A request's read answers 503 with Retry-After then, as any database gone away (app.ts), not 500.
    expect(databaseUnavailable(failure)).toBe(true)
  })

  test.skipIf(DIALECT !== 'sqlite')('SQLite: a read past its budget fails alone with 503; the reads queued behind it are answered', async () => {
    const off = offThreadReads(s.deps.db)
    const thread = readThreadOf(s.deps.db)!
    const budget = thread.budgetMs
    thread.budgetMs = 1
    const failing = off.values(counting(500_000)).catch((e: unknown) => e)
    thread.budgetMs = budget
    const behind = off.values(counting(10))
    const failed = await failing
    // Drizzle wraps what the driver throws; the app answers the refusal beneath (app.ts).
    const refusal = (failed as Error).cause
    expect(refusal).toBeInstanceOf(ApiError)
    expect((refusal as ApiError).status).toBe(503)
    expect(await behind).toEqual([[10]])
  })

  test.skipIf(DIALECT !== 'sqlite')("SQLite: the turns go round the clients: one client's reads queued first wait behind another's", async () => {
    const answered: string[] = []
    const read = (client: string, name: string, n: number) => readFor(client, n).then(() => answered.push(name))
    // All queued at once: a's first read runs, then b's and c's (queued while it ran) before a's others.
    const reads = [read('a', 'a0', 300_000), read('a', 'a1', 10), read('a', 'a2', 10), read('b', 'b1', 10), read('a', 'a3', 10), read('c', 'c1', 10), read('b', 'b2', 10)]
    await Promise.all(reads)
    expect(answered).toEqual(['a0', 'b1', 'c1', 'a1', 'b2', 'a2', 'a3'])
    // Nothing runs or waits: no client is remembered (the turns' record is as small as the work).
    expect(readThreadOf(s.deps.db)!.clientsRemembered).toBe(0)
    // Outside a request (no client: '') reads queue as one more client.
    expect(await offThreadReads(s.deps.db).values(counting(3))).toEqual([[3]])
  })

  test.skipIf(DIALECT !== 'sqlite')('SQLite: clients asking one read at a time, each forgotten between its reads, do not keep another client\'s second read waiting', async () => {
    const answered: string[] = []
    const read = (client: string, name: string, n: number) => readFor(client, n).then(() => answered.push(name))
    // Each of a and b asks its next read only once its last one was answered.
    const oneByOne = async (client: string) => {
      for (let i = 0; i < 4; i++) await read(client, `${client}${i}`, 20_000)
    }
    await Promise.all([read('x', 'x1', 300_000), read('x', 'x2', 10), oneByOne('a'), oneByOne('b')])
    // x2 waited since before a's and b's second reads were asked: it goes before them.
    expect(answered.indexOf('x2')).toBeLessThan(answered.indexOf('a1'))
    expect(answered.indexOf('x2')).toBeLessThan(answered.indexOf('b1'))
    expect(answered.length).toBe(10)
    expect(readThreadOf(s.deps.db)!.clientsRemembered).toBe(0)
  })

  test.skipIf(DIALECT !== 'sqlite')("SQLite: an API request's reads take the turn of its client's address, ahead of another client's queued reads", async () => {
    const answered: string[] = []
    const read = (name: string, n: number) => readFor('another client', n).then(() => answered.push(name))
    const others = [read('long', 3_000_000), ...[1, 2, 3, 4, 5].map((i) => read(`other ${i}`, 300_000))]
    // The search's count and page (one issue at least, so the page is read too) each take a turn
    // between the other client's reads: answered long before the last of them.
    const search = s.get('/repos/issues/search?q=one').then((res) => (answered.push('search'), res))
    expect((await search).status).toBe(200)
    await Promise.all(others)
    expect(answered.indexOf('search')).toBeLessThan(answered.indexOf('other 5'))
    expect(answered.indexOf('search')).toBeGreaterThan(answered.indexOf('long'))
  })

  test.skipIf(DIALECT !== 'sqlite')("SQLite: the issue search's reads go to the thread; past the budget, 503 in the API's error shape", async () => {
    const thread = readThreadOf(s.deps.db)!
    const onThread: string[] = []
    thread.observers.push((text) => onThread.push(text))
    expect((await s.get('/repos/issues/search')).status).toBe(200)
    // Its count (no issue yet, so no page to read).
    expect(onThread.filter((text) => /^select coalesce\(sum\(.* from \(select .* from "issues"/.test(text)).length).toBe(1)
    const budget = thread.budgetMs
    // A long read ahead of the search's: the search's wait, its turn included, passes a budget of 1 ms.
    const long = offThreadReads(s.deps.db).values(counting(3_000_000)).catch((e: unknown) => e)
    thread.budgetMs = 1
    try {
      const res = await s.get('/repos/issues/search?q=anything')
      expect(res.status).toBe(503)
      expect(res.body.message).toContain('took too long')
      expect(res.headers.get('retry-after')).toBe('5')
    } finally {
      thread.budgetMs = budget
    }
    // The read ahead was not failed by the search's budget.
    expect(await long).toEqual([[3_000_000]])
    expect((await s.get('/repos/issues/search')).status).toBe(200)
  })

  test.skipIf(DIALECT !== 'sqlite')("SQLite: a repository's issue list filtered (a short text, labels) reads on the thread; its plain lists stay on the event loop's connection", async () => {
    const thread = readThreadOf(s.deps.db)!
    const owner = await s.user('lister')
    await s.post('/user/repos', { name: 'tracker' }, { token: owner.token })
    for (const title of ['ab one', 'two', 'ab three']) await s.post('/repos/lister/tracker/issues', { title }, { token: owner.token })
    const onThread: string[] = []
    thread.observers.push((text) => onThread.push(text))
    const filtered = await s.get('/repos/lister/tracker/issues?q=ab', { token: owner.token })
    expect(filtered.body.map((i: { title: string }) => i.title)).toEqual(['ab three', 'ab one'])
    expect(filtered.headers.get('x-total-count')).toBe('2')
    expect(onThread.filter((text) => text.includes('from "issues"')).length).toBe(2)
    onThread.length = 0
    expect((await s.get('/repos/lister/tracker/issues?state=open', { token: owner.token })).body.length).toBe(3)
    expect((await s.get('/repos/lister/tracker/issues?state=open&type=issues', { token: owner.token })).body.length).toBe(3)
    expect(onThread).toEqual([])
  })

  test.skipIf(DIALECT !== 'sqlite')('SQLite: the repository search without a text the trigram index finds (the explore page) reads on the thread', async () => {
    const thread = readThreadOf(s.deps.db)!
    const onThread: string[] = []
    thread.observers.push((text) => onThread.push(text))
    const all = await s.get('/repos/search?limit=50')
    expect(all.body.data.map((r: { name: string }) => r.name)).toContain('tracker')
    expect(onThread.filter((text) => text.includes('from "repositories"')).length).toBe(2)
    onThread.length = 0
    expect((await s.get('/repos/search?q=tr')).body.data.map((r: { name: string }) => r.name)).toEqual(['tracker'])
    expect(onThread.length).toBe(2)
    onThread.length = 0
    // A text the trigram index finds starts from its ids: on the connection.
    expect((await s.get('/repos/search?q=track')).body.data.map((r: { name: string }) => r.name)).toEqual(['tracker'])
    expect(onThread).toEqual([])
  })

  test.skipIf(DIALECT !== 'sqlite')("SQLite: a repository's activity page counts and lists its period's issues and pull requests on the thread", async () => {
    const thread = readThreadOf(s.deps.db)!
    const onThread: string[] = []
    thread.observers.push((text) => onThread.push(text))
    const res = await fetch(`${s.url}/lister/tracker/activity/monthly`, { headers: { accept: 'text/html' } })
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('ab three')
    // Merged and proposed pull requests, closed and new issues, unresolved conversations: a count and a page each.
    const lists = onThread.filter((text) => text.includes('from "issues" left join "pull_requests"'))
    expect([lists.filter((text) => text.startsWith('select count(*)')).length, lists.length]).toEqual([5, 10])
  })
})
