/**
 * PostgreSQL (WARREN_DATABASE_URL=postgres://...): Drizzle's PostgreSQL dialect over Bun's own
 * SQL client, with the tables derived from the one schema (./pg-schema.ts), presented as the same
 * Db the services use on SQLite (./client.ts).
 *
 * Several Warren processes may share the database. Write transactions keep SQLite's semantics, on
 * which every service was written: they run one at a time, cluster-wide, because each one first
 * takes the same transaction-scoped advisory lock (`pg_advisory_xact_lock`), so a read followed by
 * a write inside one sees no other writer in between (issue indexes, counters, "already exists"
 * checks). Reads never wait for it. Migrations run under a session advisory lock, so processes
 * starting together apply them once.
 */
import { SQL } from 'bun'
import { AsyncLocalStorage } from 'node:async_hooks'
import { drizzle } from 'drizzle-orm/bun-sql'
import type { Db, DatabaseRuntime } from './client'
import { ApiError } from '../lib/errors'
import { SessionLocks, unclaimedIds } from './pg-locks'
import { UNAVAILABLE_RETRY_AFTER } from './unavailable'
import { migrationsOfFolder } from './migrations-macro' with { type: 'macro' }

/** The PostgreSQL migrations drizzle-kit generated in drizzle-pg/, inlined like SQLite's. */
const MIGRATIONS = migrationsOfFolder('drizzle-pg')

/** Advisory lock keys (any two fixed 64-bit numbers; "Warren writes" and "Warren migrates"). */
const WRITE_LOCK = 0x5761727265_6e57n
const MIGRATE_LOCK = 0x5761727265_6e4dn

/** How long a write transaction waits for the write lock (and row locks) before giving up. */
const WRITE_LOCK_WAIT = '30s'
/** PostgreSQL's SQLSTATE for a lock wait past lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03'

/**
 * Seconds a connection of the pool may sit unused before it is closed: Bun opens the whole pool
 * at the first query, and an idle process need not keep it.
 */
const POOL_IDLE_TIMEOUT = 30

export interface PostgresOptions {
  /** Connections in the pool (queries and transactions); the session locks take one more. */
  poolSize: number
}

/** Connects, applies pending migrations and answers the Db. */
export async function openPostgres(url: string, opts: PostgresOptions): Promise<Db> {
  // Named, so an operator (and test/pg-connections.test.ts) can tell Warren's apart in pg_stat_activity.
  const connection = { application_name: 'warren' }
  const client = new SQL(url, { max: opts.poolSize, idleTimeout: POOL_IDLE_TIMEOUT, connection })
  // Session locks live on one connection of their own, opened at the first lock, so that holders
  // (which query through the pool) can never starve the pool, nor the pool the locks.
  const locks = new SessionLocks(new SQL(url, { max: 1, connection }))
  try {
    await migrate(client)
  } catch (e) {
    await Promise.all([client.close().catch(() => {}), locks.close().catch(() => {})])
    throw e
  }
  // The transaction a statement belongs to is known by its async context, as on SQLite, so the
  // services need not pass a transaction object down: every statement Drizzle sends, prepared
  // ones too, goes to the connection of the transaction it is run in, or else to the pool.
  const inside = new AsyncLocalStorage<OpenTransaction>()
  const live = new Set<OpenTransaction>()
  const current = (): OpenTransaction | undefined => {
    const t = inside.getStore()
    return t && live.has(t) ? t : undefined
  }
  const routed = new Proxy(client, {
    get(target, key) {
      if (key === 'unsafe') return (text: string, params?: unknown[]) => (current()?.connection ?? target).unsafe(text, params as any[])
      const value = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  // No schema: nothing uses relational queries (db.query), whose configuration drizzle would build at start.
  const db = drizzle({ client: routed }) as unknown as Db
  const runtime: DatabaseRuntime = {
    dialect: 'postgres',
    async transaction<T>(fn: () => Promise<T>): Promise<T> {
      if (current()) return fn()
      const committed: (() => void)[] = []
      const result = (await client.begin(async (connection) => {
        // The wait for the lock is bounded (a process stuck inside a transaction holds every
        // writer): past it the request answers 503 and may be retried.
        await connection.unsafe(`select set_config('lock_timeout', '${WRITE_LOCK_WAIT}', true), pg_advisory_xact_lock(${WRITE_LOCK})`)
        const open: OpenTransaction = { connection, committed }
        live.add(open)
        try {
          return await inside.run(open, fn)
        } finally {
          live.delete(open)
        }
      }).catch((e: unknown) => {
        if ((e as { errno?: string }).errno === LOCK_NOT_AVAILABLE) throw new ApiError(503, 'The database is busy; try again', {}, { 'Retry-After': UNAVAILABLE_RETRY_AFTER })
        throw e
      })) as T
      for (const run of committed) inside.exit(run)
      return result
    },
    afterCommit(fn) {
      const open = current()
      if (open) open.committed.push(fn)
      else queueMicrotask(() => inside.exit(fn))
    },
    changeMark() {
      let n = 0
      return () => `pg:${++n}`
    },
    withLock: (name, fn) => locks.withLock(name, fn),
    tryLock: (name, mode) => locks.tryLock(name, mode),
    claim: (kind, id) => locks.claim(kind, id),
    unclaimed: (kind, ids) => unclaimedIds(client, kind, ids),
    async close() {
      await Promise.all([client.close(), locks.close()])
    },
  }
  Object.assign(db, { $runtime: runtime, $client: client })
  return db
}

interface OpenTransaction {
  /** The transaction's own connection. */
  connection: SQL
  committed: (() => void)[]
}

/** Applies the pending migrations, one process at a time. */
async function migrate(client: SQL): Promise<void> {
  const connection = await client.reserve()
  try {
    await connection.unsafe(`select pg_advisory_lock(${MIGRATE_LOCK})`)
    try {
      const db = drizzle({ client: connection as unknown as SQL })
      await (db as any).dialect.migrate(MIGRATIONS, (db as any).session, { migrationsFolder: 'drizzle-pg' })
    } finally {
      await connection.unsafe(`select pg_advisory_unlock(${MIGRATE_LOCK})`)
    }
  } finally {
    connection.release()
  }
}
