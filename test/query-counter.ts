import type { SQL } from 'bun'
import type { Db } from '../src/db/client'
import { readThreadOf } from '../src/db/read-thread'

/**
 * Calls `onStatement` with the SQL text of every statement the database runs from now on, on
 * either dialect, by wrapping the driver under Drizzle (no src hook needed):
 * - SQLite: `db.$client` is the bun:sqlite connection; every statement Drizzle prepares or
 *   fetches from the connection's cache (`query`) after this is installed reports its runs, and
 *   so does each statement sent to its read thread (src/db/read-thread.ts).
 *   BEGIN/COMMIT (`exec`) are the runtime's, not the services', and are not reported.
 * - PostgreSQL: `db.$client` is Bun's SQL pool; src/db/postgres.ts sends every statement through
 *   `unsafe(text, params)`, looked up on the pool at call time, or, inside a write transaction,
 *   on the transaction's own connection, which `reserve` of the write transactions' pool
 *   (`db.$writers`) hands out. Both are wrapped. What the runtime sends around a write
 *   transaction (BEGIN, the advisory lock, COMMIT, ROLLBACK) is its own, like SQLite's BEGIN
 *   IMMEDIATE, and is not reported.
 * Placeholders differ: `?` on SQLite, `$1` on PostgreSQL.
 */
export function recordStatements(db: Db, onStatement: (sql: string) => void): void {
  if (db.$runtime.dialect === 'postgres') recordPostgres(db.$client as unknown as SQL, writersOf(db), onStatement)
  else recordSqlite(db, onStatement)
}

function recordSqlite(db: Db, onStatement: (sql: string) => void): void {
  // The reads src/db/read-thread.ts runs off the event loop are the connection's too.
  readThreadOf(db)?.observers.push(onStatement)
  const client = db.$client as any
  // query() hands out its cached statement again: wrap each once per recorder.
  const wrapped = Symbol('recorded')
  for (const factory of ['prepare', 'query']) {
    const original = client[factory].bind(client)
    client[factory] = (sql: string, ...rest: unknown[]) => {
      const st = original(sql, ...rest)
      if (!st[wrapped]) {
        st[wrapped] = true
        for (const m of ['get', 'all', 'values', 'run']) {
          const run = st[m].bind(st)
          st[m] = (...args: unknown[]) => {
            onStatement(sql)
            return run(...args)
          }
        }
      }
      return st
    }
  }
}

/** What src/db/postgres.ts sends around a write transaction: BEGIN, the write lock, COMMIT or ROLLBACK. */
const RUNTIME_STATEMENT = /^(begin|commit|rollback)$|^select set_config\('lock_timeout'/i

const REPORTED = Symbol('reported')

/** Replaces `target.unsafe` with one that reports each statement first. */
function reportUnsafe(target: SQL, onStatement: (sql: string) => void): void {
  // A connection handed out again keeps its one wrapper per recorder.
  const seen = ((target as any)[REPORTED] ??= new Set<unknown>()) as Set<unknown>
  if (seen.has(onStatement)) return
  seen.add(onStatement)
  const unsafe = target.unsafe.bind(target)
  ;(target as any).unsafe = (text: string, params?: unknown[]) => {
    if (!RUNTIME_STATEMENT.test(text)) onStatement(text)
    return unsafe(text, params as any[])
  }
}

/** PostgreSQL: the pool write transactions reserve their connections from (src/db/postgres.ts). */
const writersOf = (db: Db): SQL => (db as unknown as { $writers: SQL }).$writers

function recordPostgres(pool: SQL, writers: SQL, onStatement: (sql: string) => void): void {
  reportUnsafe(pool, onStatement)
  const reserve = writers.reserve.bind(writers)
  ;(writers as any).reserve = async () => {
    const connection = await reserve()
    reportUnsafe(connection, onStatement)
    return connection
  }
}

/**
 * Counts SQL statement executions on the database (see recordStatements): install it before
 * the first request of the kind measured.
 */
export function queryCounter(db: Db) {
  let counting = false
  let executed = 0
  recordStatements(db, () => {
    if (counting) executed++
  })
  /** The number of statements run while `fn` runs. */
  return async function countQueries(fn: () => Promise<unknown>): Promise<number> {
    executed = 0
    counting = true
    try {
      await fn()
    } finally {
      counting = false
    }
    return executed
  }
}

/**
 * PostgreSQL only: counts the round trips of write transactions, the time a write holds the
 * write lock being that many waits for the server (src/db/postgres.ts), and those of the
 * statements sent outside them (through the pool: the reads before a write). Every statement sent
 * on a transaction's connection (BEGIN with the lock, and COMMIT, included) is recorded; one sent
 * while none of that connection's statements is still unanswered starts a round trip, one sent
 * while some are (pipelined behind them) joins theirs. The pool's statements are counted alike,
 * whatever connection of it runs them: those sent side by side are one round trip. Install it
 * before the request measured.
 */
export function writeRoundTrips(db: Db) {
  if (db.$runtime.dialect !== 'postgres') throw new Error('writeRoundTrips: PostgreSQL only')
  const pool = db.$client as unknown as SQL
  let counting = false
  let roundTrips = 0
  let transactions = 0
  let poolRoundTrips = 0
  countRounds(pool, () => {
    if (counting) poolRoundTrips++
  })
  const writers = writersOf(db)
  const reserve = writers.reserve.bind(writers)
  ;(writers as any).reserve = async () => {
    const connection = await reserve()
    if (!(connection as any)[ROUND_TRIPS]) {
      ;(connection as any)[ROUND_TRIPS] = true
      countRounds(connection, () => {
        if (counting) roundTrips++
      }, (text) => {
        if (counting && /^begin$/i.test(text)) transactions++
      })
    }
    return connection
  }
  /** The write transactions `fn` ran and their round trips (BEGIN to COMMIT), and the round trips of the statements sent outside them. */
  return async function countRoundTrips(fn: () => Promise<unknown>): Promise<{ transactions: number; roundTrips: number; poolRoundTrips: number }> {
    roundTrips = 0
    transactions = 0
    poolRoundTrips = 0
    counting = true
    try {
      await fn()
    } finally {
      counting = false
    }
    return { transactions, roundTrips, poolRoundTrips }
  }
}

/**
 * Wraps `target.unsafe`: `newRound` is called for a statement sent while none of those sent
 * before it through `target` is unanswered, `sent` for every statement. Bun pipelines only
 * statements with parameters (the extended protocol): one without (the simple protocol) waits for
 * the answers of all before it, and all after it wait for its answer, so it starts a round trip of
 * its own, and so do the statements sent behind it while it is unanswered (one more round trip).
 */
function countRounds(target: SQL, newRound: (text: string) => void, sent: (text: string) => void = () => {}): void {
  let unanswered = 0
  let unansweredSimple = 0
  /** Whether a statement was sent behind the last simple one (it started their round trip). */
  let behindSimple = false
  const unsafe = target.unsafe.bind(target)
  ;(target as any).unsafe = (text: string, params?: unknown[]) => {
    const simple = !params?.length
    if (unanswered === 0 || simple || (unansweredSimple > 0 && !behindSimple)) newRound(text)
    behindSimple = !simple && unansweredSimple > 0
    sent(text)
    unanswered++
    if (simple) unansweredSimple++
    let answered = false
    const done = () => {
      if (!answered) {
        unanswered--
        if (simple) unansweredSimple--
      }
      answered = true
    }
    // Bun sends a query when it is first awaited (or its values() asked): the answer is watched from then.
    const query = unsafe(text, params as any[])
    return new Proxy(query, {
      get(target, key) {
        if (key === 'values') return () => {
          const running = target.values()
          running.then(done, done)
          return running
        }
        if (key === 'then')
          return (ok?: (v: unknown) => unknown, failed?: (e: unknown) => unknown) => {
            // Its own `then` called at once, as the runtime's are (Promise.resolve would send it a
            // microtask later, after a statement whose values() was asked after it).
            const running = target.then((v: unknown) => v)
            running.then(done, done)
            return running.then(ok, failed)
          }
        const value = Reflect.get(target, key, target)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
  }
}

const ROUND_TRIPS = Symbol('round trips counted')

/**
 * What a recorder hands over while `during(fn)` runs, and nothing at other times: `add` is given to
 * recordStatements (or a test's own hook on the driver); `during` answers what came while `fn` ran.
 */
export function recorder<T>() {
  const got: T[] = []
  let on = false
  return {
    add(item: T): void {
      if (on) got.push(item)
    },
    async during(fn: () => Promise<unknown>): Promise<T[]> {
      got.length = 0
      on = true
      try {
        await fn()
      } finally {
        on = false
      }
      return [...got]
    },
  }
}

/** A recorder of the SQL texts `db` runs while its `during` runs (recordStatements installed once for it). */
export function statementRecorder(db: Db) {
  const sent = recorder<string>()
  recordStatements(db, sent.add)
  return sent
}

/**
 * SQLite's plan of `text` (EXPLAIN QUERY PLAN), its parameters bound to NULL: SQLite plans without
 * the values (and without statistics: Warren never runs ANALYZE), so the plan is the statement's.
 */
export function sqlitePlanOf(db: Db, text: string): string[] {
  const statement = (db.$client as any).query(`EXPLAIN QUERY PLAN ${text}`)
  return (statement.all(...Array(statement.paramsCount).fill(null)) as { detail: string }[]).map((row) => row.detail)
}
