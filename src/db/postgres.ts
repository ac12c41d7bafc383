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
 * starting together apply them once. Each write transaction that changes what a cache may read
 * also notifies the other processes (their page caches empty: ChangeListener) and, unless asked otherwise, commits without waiting
 * for the flush to disk (PostgresOptions.synchronousCommit).
 */
import { SQL } from 'bun'
import { AsyncLocalStorage } from 'node:async_hooks'
import { drizzle } from 'drizzle-orm/bun-sql'
import { appliedAll, failureOf, firstFailure, movesChangeMark, type Db, type DatabaseRuntime } from './client'
import { ApiError } from '../lib/errors'
import { SessionLocks, unclaimedIds } from './pg-locks'
import { UNAVAILABLE_RETRY_AFTER } from './unavailable'
import { tablesReachedFrom, tableWrittenBy } from './change-scope'
import { migrationsOfFolder, migrationTimesOfFolder } from './migrations-macro' with { type: 'macro' }

/** The PostgreSQL migrations drizzle-kit generated in drizzle-pg/, inlined like SQLite's. */
const MIGRATIONS = migrationsOfFolder('drizzle-pg')
const MIGRATION_TIMES = migrationTimesOfFolder('drizzle-pg')

/** Advisory lock keys (any two fixed 64-bit numbers; "Warren writes" and "Warren migrates"). */
export const WRITE_LOCK = 0x5761727265_6e57n
const MIGRATE_LOCK = 0x5761727265_6e4dn

/**
 * BEGIN's parameter, which it does not use: Bun sends a query without parameters by PostgreSQL's
 * simple protocol, and then sends nothing more on the connection until its answer has reached
 * this process (its event loop, busy with other requests); a query with parameters goes by the
 * extended protocol, prepared once per connection, and once prepared follows the one before it at
 * once (Bun's pipelining). PostgreSQL accepts a parameter a statement does not refer to.
 *
 * COMMIT has none, on purpose: Bun may send a prepared statement before one queued ahead of it
 * that is still being prepared (a statement's first use on a connection), and a prepared COMMIT
 * would then end the transaction before its last statements (seen: the event written after the
 * commit, outside the transaction). Without parameters, COMMIT waits for every statement before
 * it to be answered: the one wait for this process a transaction that awaits nothing has under
 * the lock.
 */
const UNUSED = [0]

/**
 * How many of a process's `poolSize` connections are kept for write transactions, a pool of their
 * own (at least one; a third of the pool). On them BEGIN and the write lock are the first two
 * statements ever prepared, sent first in every transaction: so no statement of a transaction can
 * be sent before the lock is (Bun sends a statement prepared on the connection before one still
 * being prepared: a read prepared on a shared connection would have run before a transaction's
 * lock, at the lock's first use there). Writers wait for one another on the lock, so a few
 * connections serve them all; queries outside transactions keep the rest.
 */
export function writerConnections(poolSize: number): number {
  return Math.max(1, Math.floor(poolSize / 3))
}

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
  /**
   * Whether a write transaction waits until PostgreSQL has flushed its commit to disk. Without it
   * (the default) a commit returns once PostgreSQL holds it, and its own WAL writer flushes it
   * within a fraction of a second: the durability of SQLite's `synchronous=NORMAL` in WAL mode,
   * which Warren uses there. A crash of Warren loses nothing; a crash of the database's machine
   * may lose the last fraction of a second of commits, whole, never leaving one half written.
   * Write transactions run one at a time (the write lock), so waiting for each flush is most of
   * a write's time.
   */
  synchronousCommit?: boolean
  /**
   * Whether the caches' change mark may listen for other processes' changes (one more connection,
   * opened when a cache first asks; see ChangeListener). Without it the mark moves at every call.
   */
  listen?: boolean
}

/** The channel every write transaction notifies at its commit (ChangeListener). */
export const CHANGES_CHANNEL = 'warren_changes'

/** The longest notification with its list of tables (PostgreSQL takes payloads under 8,000 bytes). */
const MAX_PAYLOAD = 4000

/** How long after a refused subscription the change listener waits before it tries again. */
const LISTEN_RETRY_MS = 5000

/** A statement that changes rows: what, run outside a write transaction, moves the change mark too. */
const CHANGING = /^\s*(insert|update|delete)\b/i

/** Connects, applies pending migrations and answers the Db. */
export async function openPostgres(url: string, opts: PostgresOptions): Promise<Db> {
  // Named, so an operator (and test/pg-connections.test.ts) can tell Warren's apart in pg_stat_activity.
  // Without JIT compilation: PostgreSQL compiles a statement whose estimated cost passes
  // jit_above_cost at every execution of it (a prepared one too), which for a request's bounded
  // reads is time lost: 24-31 ms added to each count of the explore page at 100,000 repositories
  // (bench/scale.ts's data); a count over every visible issue passes the threshold at about 1.5
  // million issues.
  const connection = { application_name: 'warren', jit: 'off' }
  // Write transactions run on connections of their own (see writerConnections), the queries
  // outside them on the rest of the pool.
  const writers = writerConnections(opts.poolSize)
  const client = new SQL(url, { max: Math.max(1, opts.poolSize - writers), idleTimeout: POOL_IDLE_TIMEOUT, connection })
  const writing = new SQL(url, { max: writers, idleTimeout: POOL_IDLE_TIMEOUT, connection })
  // Session locks live on one connection of their own, opened at the first lock, so that holders
  // (which query through the pool) can never starve the pool, nor the pool the locks.
  const locks = new SessionLocks(new SQL(url, { max: 1, connection }))
  try {
    await migrate(client)
  } catch (e) {
    await Promise.all([client.close().catch(() => {}), writing.close().catch(() => {}), locks.close().catch(() => {})])
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
  const changes = new ChangeListener(url, connection, opts.listen ?? true)
  // The write lock, taken first in every write transaction, with the transaction's settings. Asked
  // for synchronous commits, the server's own setting holds (on, unless its operator chose otherwise).
  const lockStatement = `select set_config('lock_timeout', $1, true), ${opts.synchronousCommit ? '' : `set_config('synchronous_commit', 'off', true), `}pg_advisory_xact_lock($2)`
  const lockParams = [WRITE_LOCK_WAIT, WRITE_LOCK]
  const routed = new Proxy(client, {
    get(target, key) {
      if (key === 'unsafe')
        return (text: string, params?: unknown[]) => {
          const open = current()
          if (open) {
            sendBehind(open) // the transaction's writes behind go first, in the order they were run
            noteChange(open, text)
            return open.connection.unsafe(text, params as any[])
          }
          const query = target.unsafe(text, params as any[])
          // A change made outside a write transaction (its own commit): announced once it is done.
          return CHANGING.test(text) && movesChangeMark(text) ? whenSettled(query, () => changes.changedOutside(target, writtenTables(text))) : query
        }
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
      let movedMark = false
      let changedTables: ReadonlySet<string> | null = null
      const connection = await writing.reserve()
      let result: T
      try {
        // BEGIN, the write lock and the transaction's statements follow one another on the
        // connection without waiting for each other's answers: PostgreSQL runs them in order,
        // each once the one before it is done, so they run under the lock, and a transaction
        // that awaits nothing holds it for no round trip of this process (what serialises
        // writers, in this process and across processes). The wait for the lock is bounded (a
        // process stuck inside a transaction holds every writer): past it the request answers 503
        // and may be retried.
        const lockFailure = firstFailure([failureOf(connection.unsafe('begin', UNUSED)), failureOf(connection.unsafe(lockStatement, lockParams))])
        const open: OpenTransaction = { connection, committed, behind: [], sent: [], movesMark: false, tables: new Set() }
        live.add(open)
        try {
          result = await inside.run(open, async () => await fn()) // a query handed back unawaited runs inside too (client.ts)
        } catch (e) {
          // A statement sent behind a lock or a write that failed fails too ("transaction aborted"): that failure is the cause.
          const failed = (await lockFailure) ?? (await firstFailure(open.sent))
          await connection.unsafe('rollback').catch(() => {})
          throw failed ?? e
        } finally {
          live.delete(open)
        }
        // The writes behind (with the lock's round trip, when nothing was awaited since), then
        // COMMIT, which Bun sends once they are answered (UNUSED). Should any of them, or the
        // lock, have failed, PostgreSQL aborted the transaction and answers COMMIT with ROLLBACK:
        // nothing of it is committed, and its failure is thrown. A transaction that changed what
        // a cache may read (movesChangeMark) announces it behind its last write: PostgreSQL
        // delivers the notification when (and only if) it commits, before its COMMIT returns here.
        if (open.movesMark) open.behind.push({ text: 'select pg_notify($1, $2)', params: [CHANGES_CHANNEL, changes.payload(open.tables)] })
        sendBehind(open)
        const ended = await connection.unsafe('commit')
        const failed = (await lockFailure) ?? (await firstFailure(open.sent))
        if (failed) throw failed
        if ((ended as { command?: string }).command !== 'COMMIT') throw new Error(`the transaction ended with ${(ended as { command?: string }).command} instead of COMMIT`)
        movedMark = open.movesMark
        changedTables = open.tables
      } catch (e) {
        if ((e as { errno?: string }).errno === LOCK_NOT_AVAILABLE) throw new ApiError(503, 'The database is busy; try again', {}, { 'Retry-After': UNAVAILABLE_RETRY_AFTER })
        throw e
      } finally {
        connection.release()
      }
      if (movedMark) changes.changedHere(changedTables)
      for (const run of committed) inside.exit(run)
      return result
    },
    afterCommit(fn) {
      const open = current()
      if (open) open.committed.push(fn)
      else queueMicrotask(() => inside.exit(fn))
    },
    async writeBehind(statement) {
      const open = current()
      if (!open) return void (await statement)
      const { sql, params } = statement.toSQL()
      noteChange(open, sql)
      open.behind.push({ text: sql, params })
    },
    answerAfterCommit(statement) {
      // Sent already, after every write behind (a statement sends them first): in `sent` in the order sent.
      current()?.sent.push(failureOf(statement))
      return statement
    },
    changeMark: (tables) => changes.mark(tables),
    inWriteTransaction: () => current() !== undefined,
    // Each statement outside a transaction reads what is committed when it starts.
    freshReads: () => {},
    withLock: (name, fn) => locks.withLock(name, fn),
    tryLock: (name, mode) => locks.tryLock(name, mode),
    claim: (kind, id, waitMs) => locks.claim(kind, id, waitMs),
    unclaimed: (kind, ids) => unclaimedIds(client, kind, ids),
    takeOver: (kind, id) => locks.takeOver(kind, id),
    // The server checkpoints its own log.
    checkpoint() {},
    async close() {
      // The notifications of changes made outside a transaction go out first (a CLI's write must
      // reach the servers' caches though the CLI closes its database at once).
      await changes.flush()
      await Promise.all([client.close(), writing.close(), locks.close(), changes.close()])
    },
  }
  // $writers: the write transactions' pool (tests watch what is sent on its connections).
  Object.assign(db, { $runtime: runtime, $client: client, $writers: writing })
  return db
}

/**
 * The query as Drizzle uses it (awaited, or its `values()` awaited), running `after` once it has
 * run, whatever its outcome. Bun's queries start when first awaited, so the hook is attached then.
 */
function whenSettled<Q extends SQL.Query<any>>(query: Q, after: () => void): Q {
  let hooked = false
  const hook = <P extends PromiseLike<unknown>>(running: P): P => {
    if (!hooked) {
      hooked = true
      running.then(after, after)
    }
    return running
  }
  return new Proxy(query, {
    get(target, key) {
      if (key === 'values') return () => hook(target.values())
      if (key === 'then') return (ok?: (v: unknown) => unknown, failed?: (e: unknown) => unknown) => hook(target).then(ok, failed)
      const value = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

interface OpenTransaction {
  /** The transaction's own connection. */
  connection: SQL
  committed: (() => void)[]
  /** Writes behind (writeBehind) not sent yet. */
  behind: { text: string; params: unknown[] }[]
  /** The writes behind and the statements answered after the commit (answerAfterCommit), sent: each settles with its failure, or null. */
  sent: Promise<unknown>[]
  /** Whether it ran a statement that moves the change mark (movesChangeMark): its commit notifies. */
  movesMark: boolean
  /** The tables those statements wrote (tableWrittenBy); null: not known, any. */
  tables: Set<string> | null
}

/** Notes what a statement run in the transaction changes (movesChangeMark, tableWrittenBy). */
function noteChange(open: OpenTransaction, text: string): void {
  // Known already to move every mark: nothing a statement says adds to it.
  if ((open.movesMark && open.tables === null) || !movesChangeMark(text)) return
  open.movesMark = true
  if (open.tables === null) return
  const table = tableWrittenBy(text)
  if (table === null) open.tables = null
  else open.tables.add(table)
}

/** The table a statement outside a transaction writes, as a list; null: not known. */
const writtenTables = (text: string): string[] | null => {
  const table = tableWrittenBy(text)
  return table === null ? null : [table]
}

/**
 * Sends the transaction's writes behind, without waiting for their answers: PostgreSQL runs them
 * in order, before whatever is sent after them on the connection.
 */
function sendBehind(open: OpenTransaction): void {
  for (const { text, params } of open.behind.splice(0))
    open.sent.push(
      // A query is sent when first awaited: `then` sends it now.
      failureOf(open.connection.unsafe(text, params as any[])),
    )
}

/** Applies the pending migrations, one process at a time. */
async function migrate(client: SQL): Promise<void> {
  // Up to date (every start but the first after an upgrade): one read, no lock, nothing to apply.
  if (await migrated(client)) return
  const connection = await client.reserve()
  try {
    await connection.unsafe(`select pg_advisory_lock(${MIGRATE_LOCK})`)
    try {
      const db = drizzle({ client: connection as unknown as SQL })
      await (db as any).dialect.migrate(MIGRATIONS, (db as any).session, { migrationsFolder: 'drizzle-pg' })
      // A migration may rewrite rows other processes have cached: their change marks move (ChangeListener).
      await connection.unsafe(`select pg_notify('${CHANGES_CHANNEL}', 'migration')`)
    } finally {
      await connection.unsafe(`select pg_advisory_unlock(${MIGRATE_LOCK})`)
    }
  } finally {
    connection.release()
  }
}

/**
 * Whether every migration is applied (appliedAll), in one round trip: false when drizzle's journal
 * is not there yet (a new database), and the migrator, under its lock, decides.
 */
async function migrated(client: SQL): Promise<boolean> {
  try {
    const rows = (await client.unsafe('select max(created_at) as at from drizzle.__drizzle_migrations')) as { at: string | number | null }[]
    return appliedAll(rows[0]?.at, MIGRATION_TIMES)
  } catch (e) {
    // 42P01 undefined_table, 3F000 invalid_schema_name: never migrated.
    if (['42P01', '3F000'].includes(String((e as { errno?: string }).errno))) return false
    throw e
  }
}

/**
 * The caches' change mark on PostgreSQL (changeMarkOf): a number that moves whenever the database
 * may have changed, read without a query. Every write transaction that changed what a cache may
 * read (movesChangeMark: not the webhook deliveries' and outbox consumers' bookkeeping) notifies
 * CHANGES_CHANNEL in its COMMIT's round trip (delivered at its commit, dropped at a rollback); a
 * change made outside one notifies after it. Each process LISTENs on one connection of its own, opened
 * when a cache first asks for the mark, and moves its mark at every notification from another
 * process and at each of its own commits (after COMMIT returns, so an answer made from what was
 * read before it is dropped).
 *
 * While the listening connection is not (yet, or no longer) subscribed, notifications may be
 * missed: the mark then moves at every call, so caches keep nothing, as before there was a
 * listener; it moves once more when the subscription is back. What another process committed
 * reaches this one when PostgreSQL delivers the notification: it is queued at the commit but
 * delivered on the listener's own schedule, so for a moment after the writer's COMMIT returns
 * another process may still answer from what it kept (a token just deleted, a repository just
 * made private): not read-your-writes across processes.
 */
class ChangeListener {
  /** This process's notifications carry this tag; its own are known by it (its commits moved the mark already). */
  readonly tag = `${process.pid}.${Math.random().toString(36).slice(2, 10)}`
  /** Moves at every change: the mark of the caches of every table. */
  private generation = 0
  /** Moves at the changes whose tables are not known (and whatever may have been missed): every scoped mark moves too. */
  private everything = 0
  /** How often each table was changed (the changes whose tables are known): the marks scoped to tables. */
  private readonly byTable = new Map<string, number>()
  private listening = false
  private listener: SQL | null = null
  private closed = false
  /** After a refused subscription, when to try again (ms since the epoch). */
  private retryAt = 0

  constructor(
    private readonly url: string,
    private readonly connection: Record<string, string>,
    private readonly enabled: boolean,
  ) {}

  /**
   * A change mark reader (DatabaseRuntime.changeMark); the first one starts listening. Scoped to
   * `tables`, it moves only at the changes of those tables (or of tables not known), read from
   * the notifications' lists.
   */
  mark(tables?: readonly string[]): () => string {
    const unheard = () => {
      this.start()
      return `pg:unheard:${++this.generation}`
    }
    if (!tables) return () => (this.listening ? `pg:${this.generation}` : unheard())
    return () => {
      if (!this.listening) return unheard()
      let mark = `pg:${this.everything}`
      for (const table of tables) mark += `.${this.byTable.get(table) ?? 0}`
      return mark
    }
  }

  /**
   * A write of `tables` (null: of tables not known) moves the marks: those of the tables their
   * changes reach (tablesReachedFrom), every one for a table not in this process's schema.
   */
  private changed(tables: Iterable<string> | null): void {
    this.generation++
    if (tables === null) return void this.everything++
    for (const written of tables) {
      const reached = tablesReachedFrom(written)
      if (reached === null) this.everything++
      else for (const table of reached) this.byTable.set(table, (this.byTable.get(table) ?? 0) + 1)
    }
  }

  /** A transaction of this process committed, having written `tables` (null: not known). */
  changedHere(tables: ReadonlySet<string> | null): void {
    this.changed(tables)
  }

  /**
   * What a notification says: this process's tag, then the tables written (a list of names after
   * a space; none: not known), whose reach each listener works out from its own schema. A list
   * that would make it long is left out: every mark moves then.
   */
  payload(tables: ReadonlySet<string> | readonly string[] | null): string {
    if (tables === null) return this.tag
    const listed = `${this.tag} ${[...tables].join(',')}`
    return listed.length <= MAX_PAYLOAD ? listed : this.tag
  }

  /** A notification's changes: none of this process's own; the tables listed, or every table. */
  private heard(payload: string): void {
    const space = payload.indexOf(' ')
    if ((space < 0 ? payload : payload.slice(0, space)) === this.tag) return
    this.changed(space < 0 ? null : payload.slice(space + 1).split(','))
  }

  /** Notifications on their way (changedOutside's): `flush` waits for them. */
  private readonly sending = new Set<Promise<unknown>>()

  /** A statement outside a write transaction wrote `tables` (null: not known): moves the marks, then tells the other processes. */
  changedOutside(pool: SQL, tables: readonly string[] | null): void {
    this.changed(tables)
    const sent: Promise<unknown> = pool.unsafe('select pg_notify($1, $2)', [CHANGES_CHANNEL, this.payload(tables)]).catch(() => {})
    this.sending.add(sent)
    void sent.finally(() => this.sending.delete(sent))
  }

  /** Waits until the notifications on their way are sent (before the pool closes). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.sending])
  }

  async close(): Promise<void> {
    this.closed = true
    this.listening = false
    await this.listener?.close().catch(() => {})
  }

  private start(): void {
    if (!this.enabled || this.listener || this.closed || Date.now() < this.retryAt) return
    const listener = new SQL(this.url, {
      max: 1,
      connection: this.connection,
      // The listening connection is this client's only one: its end is the subscription's.
      onclose: () => {
        this.listening = false
        this.changed(null)
      },
    })
    this.listener = listener
    listener
      .listen(
        CHANGES_CHANNEL,
        (payload) => this.heard(payload),
        () => {
          // (Re)subscribed: whatever was missed meanwhile is covered by moving the marks once more.
          this.changed(null)
          this.listening = !this.closed
        },
      )
      .catch(() => {
        // Not subscribed (the database refused): the mark keeps moving at every call; tried again a little later.
        this.retryAt = Date.now() + LISTEN_RETRY_MS
        if (this.listener === listener) this.listener = null
        listener.close().catch(() => {})
      })
  }
}
