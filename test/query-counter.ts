import type { SQL } from 'bun'
import type { Db } from '../src/db/client'

/**
 * Calls `onStatement` with the SQL text of every statement the database runs from now on, on
 * either dialect, by wrapping the driver under Drizzle (no src hook needed):
 * - SQLite: `db.$client` is the bun:sqlite connection; every statement Drizzle prepares or
 *   fetches from the connection's cache (`query`) after this is installed reports its runs.
 *   BEGIN/COMMIT (`exec`) are the runtime's, not the services', and are not reported.
 * - PostgreSQL: `db.$client` is Bun's SQL pool; src/db/postgres.ts sends every statement through
 *   `unsafe(text, params)`, looked up on the pool at call time, or, inside a write transaction,
 *   on the transaction's own connection, which `begin` hands out. Both are wrapped. The advisory
 *   lock each write transaction takes first is the runtime's, like SQLite's BEGIN IMMEDIATE, and
 *   is not reported.
 * Placeholders differ: `?` on SQLite, `$1` on PostgreSQL.
 */
export function recordStatements(db: Db, onStatement: (sql: string) => void): void {
  if (db.$runtime.dialect === 'postgres') recordPostgres(db.$client as unknown as SQL, onStatement)
  else recordSqlite(db, onStatement)
}

function recordSqlite(db: Db, onStatement: (sql: string) => void): void {
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

/** Replaces `target.unsafe` with one that reports each statement first. */
function reportUnsafe(target: SQL, onStatement: (sql: string) => void): void {
  const unsafe = target.unsafe.bind(target)
  ;(target as any).unsafe = (text: string, params?: unknown[]) => {
    if (!/^select pg_advisory_xact_lock\(/i.test(text)) onStatement(text)
    return unsafe(text, params as any[])
  }
}

function recordPostgres(pool: SQL, onStatement: (sql: string) => void): void {
  reportUnsafe(pool, onStatement)
  const begin = pool.begin.bind(pool) as (fn: (connection: SQL) => Promise<unknown>) => Promise<unknown>
  ;(pool as any).begin = (fn: (connection: SQL) => Promise<unknown>) =>
    begin((connection) => {
      reportUnsafe(connection, onStatement)
      return fn(connection)
    })
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
