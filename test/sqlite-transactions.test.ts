// runs in one half: sqlite
/**
 * SQLite's write gate (src/db/client.ts): one connection serves every request, so a write
 * transaction must take in no statement of another request, and transactions queued behind an
 * open one must begin one at a time. Runs on a SQLite file of its own in either test run.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { Database } from 'bun:sqlite'
import { checkpointWal, closeDatabase, openDatabase, shareWriteLock, writeLockWaits, writeTransaction, type Db } from '../src/db/client'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

async function scratch(): Promise<Db> {
  const dir = mkdtempSync(join(tmpdir(), 'warren-gate-'))
  dirs.push(dir)
  const db = openDatabase(dir)
  await db.run(sql`create table t (x integer)`)
  return db
}

const values = async (db: Db) => ((await db.all(sql`select x from t order by x`)) as unknown[][]).map((r) => r[0])
const statuses = (results: PromiseSettledResult<unknown>[]) => results.map((r) => (r.status === 'fulfilled' ? 'ok' : (r.reason as Error).message))

describe('the SQLite write gate', () => {
  test('transactions queued behind an open one all run, one after another', async () => {
    const db = await scratch()
    const first = writeTransaction(db, () => Bun.sleep(10))
    await Bun.sleep(1)
    const queued = [2, 3, 4].map((n) => writeTransaction(db, async () => void (await db.run(sql`insert into t values (${n})`))))
    expect(statuses(await Promise.allSettled([first, ...queued]))).toEqual(['ok', 'ok', 'ok', 'ok'])
    // Started in separate turns of the event loop while each is open.
    const spread = []
    for (let i = 10; i < 15; i++) {
      spread.push(writeTransaction(db, async () => ((await db.run(sql`insert into t values (${i})`)), await Bun.sleep(2))))
      await new Promise((r) => setImmediate(r))
    }
    expect(statuses(await Promise.allSettled(spread))).toEqual(['ok', 'ok', 'ok', 'ok', 'ok'])
    expect(await values(db)).toEqual([2, 3, 4, 10, 11, 12, 13, 14])
    await closeDatabase(db)
  })

  test('a query handed back unawaited (a thenable builder) runs inside its transaction, not after it', async () => {
    const db = await scratch()
    // Run after the function returned, outside the transaction's context, it would wait for the
    // write lock its own transaction holds: a hang.
    const handedBack = () => db.run(sql`insert into t values (7)`) as unknown as Promise<void>
    await writeTransaction(db, handedBack)
    await writeTransaction(db, async () => void (await db.run(sql`insert into t values (8)`)))
    expect(await values(db)).toEqual([7, 8])
    await closeDatabase(db)
  })

  test("a statement from outside waits for the open transaction and is never rolled back with it", async () => {
    const db = await scratch()
    const failing = writeTransaction(db, async () => {
      await db.run(sql`insert into t values (1)`)
      await Bun.sleep(20)
      throw new Error('rolled back')
    })
    const queued = writeTransaction(db, async () => {})
    await Bun.sleep(5)
    await db.run(sql`insert into t values (99)`)
    expect(statuses(await Promise.allSettled([failing, queued]))).toEqual(['rolled back', 'ok'])
    expect(await values(db)).toEqual([99])

    // Another transaction and an outside write wait together; the transaction rolls back.
    const open = writeTransaction(db, () => Bun.sleep(10))
    await Bun.sleep(1)
    const next = writeTransaction(db, async () => {
      await db.run(sql`insert into t values (200)`)
      await Bun.sleep(10)
      throw new Error('next rolled back')
    })
    const outside = db.run(sql`insert into t values (300)`)
    expect(statuses(await Promise.allSettled([open, next, outside]))).toEqual(['ok', 'next rolled back', 'ok'])
    expect(await values(db)).toEqual([99, 300])
    await closeDatabase(db)
  })

  test("waiting for the write lock another connection holds leaves the event loop free, then begins", async () => {
    const db = await scratch()
    // Another connection (as the webhook thread's) holds SQLite's write lock.
    const other = new Database(join(dirs[dirs.length - 1]!, 'warren.db'))
    other.exec('BEGIN IMMEDIATE')
    other.exec('insert into t values (1)')
    const before = writeLockWaits.waits
    const order: string[] = []
    const waiting = writeTransaction(db, async () => {
      order.push('began')
      await db.run(sql`insert into t values (2)`)
    })
    // Timers and other requests' work run meanwhile: SQLite's busy handler would sleep the thread.
    for (let turn = 0; turn < 5; turn++) await Bun.sleep(1)
    order.push('timers ran')
    other.exec('COMMIT')
    await waiting
    expect(order).toEqual(['timers ran', 'began'])
    expect(writeLockWaits.waits).toBe(before + 1)
    expect(await values(db)).toEqual([1, 2])
    // The connection's own busy timeout is back for every other statement.
    expect(((await db.all(sql`pragma busy_timeout`)) as unknown[][])[0]![0]).toBe(10_000)
    other.close()
    await closeDatabase(db)
  })

  test("the lock held by another thread's connection sharing its holder is waited for without trying again and again", async () => {
    const db = await scratch()
    const dbDir = dirs[dirs.length - 1]!
    const apart = await scratch()
    const apartDir = dirs[dirs.length - 1]!
    /** Another thread's transaction on `dataDir` holds the lock while one of `on` waits `holdMs`; answers BEGIN's refused tries. */
    const triesWhileHeld = async (on: Db, dataDir: string, writeLock: SharedArrayBuffer | null, holdMs: number) => {
      const worker = new Worker(new URL('./write-lock-holder.ts', import.meta.url).href)
      const said = (what: string) => new Promise<void>((resolve) => worker.addEventListener('message', (e) => e.data === what && resolve()))
      const holding = said('holding')
      const committed = said('committed')
      worker.postMessage({ dataDir, writeLock })
      await holding
      const before = writeLockWaits.tries
      const order: string[] = []
      const waiting = writeTransaction(on, async () => {
        order.push('began')
        await on.run(sql`insert into t values (2)`)
      })
      await Bun.sleep(holdMs)
      order.push('released')
      worker.postMessage('commit')
      await waiting
      await committed
      worker.terminate()
      expect(order).toEqual(['released', 'began'])
      return writeLockWaits.tries - before
    }
    // Shared: one refused try, then the next when the other thread says it let go (or after each
    // HOLDER_WAIT_MS, 50 ms, meanwhile, in case its word were lost).
    expect(await triesWhileHeld(db, dbDir, shareWriteLock(db), 20)).toBeLessThanOrEqual(4)
    // Not shared (as another process's hold, which is not known): tried at every turn of the event
    // loop for 2 ms, then every millisecond.
    expect(await triesWhileHeld(apart, apartDir, null, 50)).toBeGreaterThan(4)
    expect(await values(db)).toEqual([1, 2])
    expect(await values(apart)).toEqual([1, 2])
    await closeDatabase(apart)
    await closeDatabase(db)
  })

  test('a connection keeps the compiled statements of a working set larger than Bun\'s 20', async () => {
    const db = await scratch()
    // Statements run through the connection (drizzle's path), each a text of its own.
    for (let i = 0; i < 100; i++) await db.all(sql.raw(`select x from t where x = ${i}`))
    const first = db.$client.query('select x from t where x = 0')
    for (let i = 1; i < 100; i++) await db.all(sql.raw(`select x from t where x = ${i}`))
    // Still the one compiled before the 99 others (with Bun's default it was compiled again).
    expect(db.$client.query('select x from t where x = 0')).toBe(first)
    await closeDatabase(db)
  })

  test("a turn's reads share one snapshot, which ends with the turn; writes never wait for it", async () => {
    const db = await scratch()
    await db.run(sql`insert into t values (1)`)
    const other = new Database(join(dirs[dirs.length - 1]!, 'warren.db'))
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve))
    await nextTurn()

    // The turn's first read begins the snapshot; another connection's commit is seen from the next turn on.
    expect(await values(db)).toEqual([1])
    expect(db.$client.inTransaction).toBe(true)
    other.exec('insert into t values (2)')
    expect(await values(db)).toEqual([1])
    await nextTurn()
    expect(db.$client.inTransaction).toBe(false)
    expect(await values(db)).toEqual([1, 2])

    // A write outside a transaction, after reads in the same turn, is committed at once (the
    // other connection sees it before the turn ends), and so is a write transaction's.
    await db.run(sql`insert into t values (3)`)
    expect(other.query('select count(*) as n from t').get()).toEqual({ n: 3 })
    expect(await values(db)).toEqual([1, 2, 3])
    await writeTransaction(db, async () => void (await db.run(sql`insert into t values (4)`)))
    expect(other.query('select count(*) as n from t').get()).toEqual({ n: 4 })
    // Reads after it see it, and the change mark moved with it.
    const mark = db.$runtime.changeMark()
    const before = mark()
    expect(await values(db)).toEqual([1, 2, 3, 4])
    other.exec('insert into t values (5)')
    await nextTurn()
    // Made behind Warren's back (not through a Warren connection), it is read but moves no mark,
    // as on PostgreSQL; another Warren connection's write moves it.
    expect(mark()).toBe(before)
    expect(await values(db)).toEqual([1, 2, 3, 4, 5])
    const warren = openDatabase(dirs[dirs.length - 1]!)
    await warren.run(sql`insert into t values (6)`)
    await closeDatabase(warren)
    await nextTurn()
    expect(mark()).not.toBe(before)
    expect(await values(db)).toEqual([1, 2, 3, 4, 5, 6])
    // The mark is read once a snapshot; this connection's write, in the same turn, ends the snapshot, and the mark read after it has moved.
    const seen = mark()
    await db.run(sql`insert into t values (7)`)
    expect(mark()).not.toBe(seen)
    // A checkpoint (the webhook thread's, on a timer) ends the snapshot first: inside it SQLite refuses one.
    expect(db.$client.inTransaction).toBe(true)
    checkpointWal(db)
    expect(db.$client.inTransaction).toBe(false)
    other.close()
    await closeDatabase(db)
  })
  test("a connection closed by its owner while the turn's snapshot is open: the snapshot's end finds nothing to do", async () => {
    const db = await scratch()
    await values(db) // the turn's snapshot begins
    expect(db.$client.inTransaction).toBe(true)
    db.$client.close()
    // The snapshot ends with the turn; a throw there would be an unhandled error in the process.
    await new Promise((r) => setImmediate(r))
    await new Promise((r) => setImmediate(r))
  })
})
