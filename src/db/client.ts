import { Database } from 'bun:sqlite'
import { AsyncLocalStorage } from 'node:async_hooks'
import { drizzle as drizzleForMigrations } from 'drizzle-orm/bun-sqlite'
import type { MigrationMeta } from 'drizzle-orm/migrator'
import { drizzle, type SqliteRemoteDatabase } from 'drizzle-orm/sqlite-proxy'
import { getTableName, type Table } from 'drizzle-orm'
import { chmodSync, existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type * as tables from './schema/tables'
import type { Dialect } from './dialect'
import { conflict } from '../lib/errors'
import { BUSY_TIMEOUT_MS, STATEMENTS_KEPT } from './sqlite-settings'
import { migrationsOfFolder, migrationTimesOfFolder } from './migrations-macro' with { type: 'macro' }

/**
 * The database every service queries: Drizzle's asynchronous SQLite API, typed with the SQLite
 * tables, so that one set of queries serves SQLite and PostgreSQL (./postgres.ts, whose tables
 * have the same names, keys and value types). `$runtime` is what differs by dialect:
 * transactions, wake-ups after a commit, the caches' change mark, closing. On SQLite the
 * statements run on one bun:sqlite connection, `$client`, which the SQLite-only tools reach
 * through sqliteOf.
 */
export type Db = SqliteRemoteDatabase<typeof tables> & { $client: Database; $runtime: DatabaseRuntime }

/** What a database's dialect decides (see Db). */
export interface DatabaseRuntime {
  dialect: Dialect
  /** writeTransaction's implementation. */
  transaction<T>(fn: () => Promise<T>): Promise<T>
  /** afterCommit's implementation. */
  afterCommit(fn: () => void): void
  /** writeBehind's implementation. */
  writeBehind(statement: BuiltStatement): Promise<void>
  /** answerAfterCommit's implementation. */
  answerAfterCommit<T>(statement: Promise<T>): Promise<T>
  /** changeMarkOf's implementation (`tables`: their names). */
  changeMark(tables?: readonly string[]): () => string
  /** Whether the caller runs inside a write transaction (its reads may see what a rollback undoes). */
  inWriteTransaction(): boolean
  /** freshReads' implementation. */
  freshReads(): void
  /**
   * Takes the named lock for the caller's process, exclusive or shared, without waiting: null
   * when another process holds it in a conflicting mode. Held until released or the process
   * ends (on PostgreSQL a session advisory lock on the process's lock connection, so a crash frees it;
   * on SQLite one process owns the database, so every lock is granted).
   */
  tryLock(name: string, mode: 'exclusive' | 'shared'): Promise<HeldLock | null>
  /** withLock's implementation. */
  withLock<T>(name: string, fn: () => Promise<T>): Promise<T>
  /** claimWork's implementation: refused (beingRepaired) after waiting `waitMs` for a repair's take-over. */
  claim(kind: ClaimKind, id: number, waitMs: number): Promise<HeldLock>
  /** unclaimedWork's implementation. */
  unclaimed(kind: ClaimKind, ids: number[]): Promise<number[]>
  /**
   * Takes work's claim exclusively, without waiting: null while any live process (this one
   * included) claims it; while held, a claim of the work waits (repairAbandoned).
   */
  takeOver(kind: ClaimKind, id: number): Promise<HeldLock | null>
  /** checkpointWal's implementation. */
  checkpoint(): void
  /** Closes the connection(s); the database is not used after. */
  close(): Promise<void>
}

/** A statement Drizzle built, not run yet: run by awaiting it; its text and parameters by `toSQL`. */
export type BuiltStatement = PromiseLike<unknown> & { toSQL(): { sql: string; params: unknown[] } }

/** Work a process claims while it does it (a push, a merge, a folder move), so others can tell what a dead process left. */
export type ClaimKind = 'push' | 'merge' | 'folder-move'

export interface HeldLock {
  release(): Promise<void>
  /**
   * Whether the lock is still held: on PostgreSQL a lock goes with its connection, which the
   * server may cut (a restart, a terminated session) while this process runs on. Absent: it is.
   */
  stillHeld?(): Promise<boolean>
}

/**
 * Runs `fn` holding the named lock, waiting for it: work on one thing (a repository's sync, a pull
 * request's check, a mirror's update) never overlaps itself across the processes sharing a
 * PostgreSQL database. On SQLite one process owns the database: `fn` runs at once (its in-process
 * queue, oneAtATime, orders it).
 */
export function withLock<T>(db: Db, name: string, fn: () => Promise<T>): Promise<T> {
  return db.$runtime.withLock(name, fn)
}

/** Tries to take a process-wide lock on the database (see DatabaseRuntime.tryLock). */
export function tryLock(db: Db, name: string, mode: 'exclusive' | 'shared' = 'exclusive'): Promise<HeldLock | null> {
  return db.$runtime.tryLock(name, mode)
}

/**
 * Marks work in progress in this process (a pending push by its id, a merge by its pull request's
 * id) until released: the work's row says what to repair if the process dies, and the claim says
 * it has not. Taken before the row is visible to others (inside the transaction that writes it,
 * or before it when the id is known), released after the row is gone (repairAbandoned relies on
 * that order). On PostgreSQL a shared advisory lock on the session locks' connection, so it goes
 * with the process. Waits only while a repair has taken the work over (repairAbandoned), and
 * at most `waitMs`: then it is refused with 409 (beingRepaired), the caller's work not begun.
 */
export function claimWork(db: Db, kind: ClaimKind, id: number, opts: { waitMs?: number } = {}): Promise<HeldLock> {
  return db.$runtime.claim(kind, id, opts.waitMs ?? CLAIM_WAIT_MS)
}

/** How long claimWork waits for a repair that took the work over (it repairs one piece of work, then lets go). */
export const CLAIM_WAIT_MS = 30_000

/** claimWork's refusal once it waited CLAIM_WAIT_MS, in the API's error shape. */
export const beingRepaired = () => conflict('this is being repaired after a failed process; try again')

/** Of these ids of work of one kind, those no running process claims: what a dead process left. */
export function unclaimedWork(db: Db, kind: ClaimKind, ids: number[]): Promise<number[]> {
  return db.$runtime.unclaimed(kind, ids)
}

/**
 * The one handshake of the repairs of what a dead process left while others run (folder moves,
 * merges, pending pushes): `listed` are the ids of the work's rows as read a moment ago. Asking
 * which are unclaimed after that read is not enough: an owner that finished in between (removed
 * its row, then released its claim: every owner does it in that order) looks dead. So each
 * unclaimed one's claim is taken over, exclusively (granted only while no live process claims it;
 * a claim asked meanwhile waits, at most CLAIM_WAIT_MS), and its row read again under it
 * (`reread`, fresh): a row still there is abandoned for certain, one gone was finished. `repair`
 * runs on that row, the claim held until it ends; one id at a time, so a claim waits for one
 * repair at most, never for the whole batch. Answers the sum of what `repair` answered.
 * `afterListing`: a test's step between the two reads.
 */
export async function repairAbandoned<R>(
  db: Db,
  kind: ClaimKind,
  listed: number[],
  work: { reread: (ids: number[]) => Promise<R[]>; repair: (rows: R[]) => Promise<number> },
  afterListing?: () => Promise<void>,
): Promise<number> {
  await afterListing?.()
  let total = 0
  for (const id of await unclaimedWork(db, kind, listed)) {
    const claim = await db.$runtime.takeOver(kind, id)
    if (!claim) continue
    try {
      freshReads(db)
      const rows = await work.reread([id])
      if (rows.length) total += await work.repair(rows)
    } finally {
      await claim.release().catch(() => {})
    }
  }
  return total
}

/**
 * One connection serves every request, so a write transaction (BEGIN ... COMMIT around awaited
 * statements) must not take in another request's statements: while one is open, statements from
 * outside it wait until it ends (the open transaction is known by its async context), and the
 * next transaction begins only then. Transactions hold no git work or network wait, so the wait
 * is as short as the synchronous transactions it replaces.
 */
export interface WriteGate {
  /** The async context of a transaction's own statements: the transaction it belongs to. */
  inside: AsyncLocalStorage<OpenTransaction>
  /** The open transaction; null when none is. */
  current: OpenTransaction | null
}

interface OpenTransaction {
  /** Settles when the transaction ends. */
  ended: Promise<void>
  /** What runs once it committed (afterCommit). */
  committed: (() => void)[]
  /** Whether it ran a statement that moves the change mark (movesChangeMark): its commit moves it. */
  movesMark: boolean
  /** The statements answered after the commit (answerAfterCommit): each settles with its failure, or null. */
  answered: Promise<unknown>[]
}

/** Whether the caller's statements belong to the open transaction (work started inside one that outlives it does not). */
const insideOpen = (gate: WriteGate): boolean => gate.current !== null && gate.inside.getStore() === gate.current

/**
 * Whether the caller must wait for the open transaction to end. Callers check it in a loop and
 * act (run the statement, claim the gate) in the same synchronous step as its last `false`: an
 * await between the check and the act would let another waiter claim the gate in between.
 */
const mustWait = (gate: WriteGate): boolean => gate.current !== null && gate.inside.getStore() !== gate.current

/**
 * Runs `fn` once the transaction the caller is in has committed (never if it rolls back), outside
 * its context; at once (in a microtask) when the caller is in none. For wake-ups of background
 * work that must see what the transaction wrote.
 */
export function afterCommit(db: Db, fn: () => void): void {
  db.$runtime.afterCommit(fn)
}

/**
 * Runs a write whose answer the caller does not need (an outbox event), in the write transaction
 * the caller is in. On SQLite it runs at once. On PostgreSQL it is sent with the transaction's next
 * statement or, at the latest, just before its COMMIT (which waits for its answer), pipelined,
 * without a round trip of its own under the write lock: the statements of the transaction still
 * reach the server in the order they were run. If it fails, PostgreSQL aborts the transaction (every statement after it fails, and COMMIT
 * rolls back), and writeTransaction throws its error: nothing of the transaction is committed.
 */
export function writeBehind(db: Db, statement: BuiltStatement): Promise<void> {
  return db.$runtime.writeBehind(statement)
}

/**
 * A statement of the write transaction the caller is in, run already (a prepared statement's
 * `execute()`), whose answer the caller needs only once the transaction is over (the row an
 * insert returns, for the request's answer): the transaction goes on without waiting for it. On
 * PostgreSQL the statements after it follow it on the connection without waiting, and COMMIT
 * once they are answered: a transaction that awaits nothing waits for its client under the write
 * lock only there (db/postgres.ts). If it fails, the transaction fails with its error (the first failure, in the order the
 * statements were sent) and nothing of it is committed. A statement only: on PostgreSQL the
 * failure must be the database's, which aborts the transaction there (a check that throws must be
 * awaited in the transaction). Await the answer after writeTransaction returns. Outside a
 * transaction, the statement itself.
 */
export function answerAfterCommit<T>(db: Db, statement: Promise<T>): Promise<T> {
  return db.$runtime.answerAfterCommit(statement)
}

/**
 * A promise's failure, or null when it succeeds (never rejects). Its `then` is called at once: a
 * Bun query is sent then, in the order of the calls (a query given to Promise.resolve or awaited
 * is sent a microtask later, after one whose `then` was called after it).
 */
export const failureOf = (p: PromiseLike<unknown>): Promise<unknown> =>
  Promise.resolve(
    p.then(
      () => null,
      (e: unknown) => e,
    ),
  )

/** The first failure of the statements sent ahead, in the order sent, once all are answered; null if none failed. */
export async function firstFailure(sent: Promise<unknown>[]): Promise<unknown> {
  return (await Promise.all(sent)).find((e) => e !== null) ?? null
}

/**
 * The migrations drizzle-kit generated in drizzle/ (committed with the code), inlined when this
 * file is transpiled or bundled (a Bun macro): the single binary carries them, no folder needed.
 * Made into objects only when a migration is pending: a start on an up-to-date database asks
 * only their times (MIGRATION_TIMES), and their SQL text stays in the code, not in the heap.
 */
const migrations = () => migrationsOfFolder()
const MIGRATION_TIMES = migrationTimesOfFolder()

/** The data folder, created if needed and narrowed to 0700 (whatever the database: it holds the repositories). */
export function prepareDataFolder(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  chmodSync(dataDir, 0o700)
}

/**
 * The database and its -wal/-shm files are the service's alone: 0600, whatever the umask; files
 * made with wider modes are narrowed at start. Only SQLite ever opens the file: the locks that
 * keep SQLite's write-ahead log alive are POSIX locks, and the kernel drops every one a process
 * holds on a file when that process closes any descriptor of it. This runs again when another
 * connection of the same process opens the file (the webhook thread's), so a descriptor opened
 * and closed here would leave the serving connection unlocked: the next outside client (the
 * sqlite3 tool, a dump) would take itself for the last one, checkpoint and delete the live log,
 * and the writes after it would be lost at a crash. Modes are set by path (chmod) only; a file
 * SQLite has just created is reachable by nobody else before its chmod, as its folder is 0700.
 */
function restrictModes(file: string): void {
  for (const path of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(path)) chmodSync(path, 0o600)
}

Database.MAX_QUERY_CACHE_SIZE = STATEMENTS_KEPT

/**
 * Opens (creating if needed) `warren.db` in the data folder, sets the pragmas Warren relies on
 * and applies pending migrations, so an old data folder is upgraded in place.
 */
export function openDatabase(dataDir: string): Db {
  const file = join(dataDir, 'warren.db')
  prepareDataFolder(dataDir)
  const sqlite = new Database(file, { create: true, strict: true })
  restrictModes(file)
  // SQLite gives new -wal and -shm files the database file's mode (0600); older ones were narrowed above.
  sqlite.exec('PRAGMA journal_mode = WAL')
  sqlite.exec('PRAGMA synchronous = NORMAL')
  sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
  sqlite.exec('PRAGMA temp_store = MEMORY')
  // A commit that leaves the write-ahead log past this many pages copies it into the database
  // (SQLite's automatic checkpoint), on the committing connection, for as long as the copy takes.
  // The API's connection (the main thread's) does so at 16 MiB of log. A webhook thread's connection
  // never does: while it runs it copies the log on a timer (checkpointWal, every
  // WAL_CHECKPOINT_MS), off its commits. At each of its commits past the threshold the copy ran
  // again, with two fsyncs, for as long as the log was not restarted: most of its commits under
  // load (bench/webhooks.ts), CPU and disk the API's requests were waiting for.
  sqlite.exec(`PRAGMA wal_autocheckpoint = ${Bun.isMainThread ? API_CHECKPOINT_PAGES : 0}`)
  // Up to date (every start but the first after an upgrade, and the webhook thread's connection):
  // nothing to apply, and no foreign key check, which reads every table.
  if (!migrated(sqlite)) applyMigrations(sqlite, migrations())
  sqlite.exec('PRAGMA foreign_keys = ON')
  return sqliteDatabase(sqlite)
}

/**
 * Applies the migrations of `list` the database has not had (drizzle's migrator, in one
 * transaction), and raises the caches' change mark in that transaction, just before its COMMIT,
 * as Warren's own write transactions do (changeMarkOf): a migration may change rows that another
 * connection's caches hold (a start while another process has the file open, a tool's). Foreign
 * keys are off meanwhile and checked after. Exported for test/change-mark.test.ts.
 */
export function applyMigrations(sqlite: Database, list: MigrationMeta[]): void {
  const forMigrations = drizzleForMigrations({ client: sqlite })
  // A migration may rebuild a table (drizzle-kit: copy, drop, rename); with foreign keys enforced
  // the drop would cascade-delete the rows of its children. The migration's own PRAGMAs run inside
  // the migrator's transaction, where SQLite ignores them: so keys are off while migrating, checked
  // after, and on from then on (SQLite's documented procedure for altering tables).
  sqlite.exec('PRAGMA foreign_keys = OFF')
  // The last migration is pending whenever one is (the migrator applies each one newer than the
  // latest recorded): the mark's raise is its last statement, its text made when the migrator
  // comes to it (the migration's statements iterated), so the mark is read inside the migrator's
  // transaction, under the write lock its statements took: no other connection's commit between
  // the read and the raise could leave the mark where that commit put it.
  const last = list[list.length - 1]
  if (last) {
    const statements = last.sql
    const withRaise: Iterable<string> = { *[Symbol.iterator]() { yield* statements; yield raiseMark(sqlite) } }
    list = [...list.slice(0, -1), { ...last, sql: withRaise as string[] }]
  }
  // drizzle's migrate() reads a folder; its dialect applies the inlined list the same way.
  ;(forMigrations as any).dialect.migrate(list, (forMigrations as any).session, { migrationsFolder: 'drizzle' })
  const broken = sqlite.prepare('PRAGMA foreign_key_check').all()
  if (broken.length > 0) throw new Error(`database migration left broken references: ${JSON.stringify(broken.slice(0, 5))}`)
}

/**
 * Whether every migration is applied: drizzle's own test (it applies each migration newer than
 * the latest one recorded). A history with a migration newer than this binary's last (the
 * database of a newer Warren) is refused: this binary would read and write a schema it does not
 * know. SQLite's and PostgreSQL's starts both ask this (one read of the latest time).
 */
export function appliedAll(latest: number | string | null | undefined, times: readonly number[]): boolean {
  if (latest !== null && latest !== undefined && times.length && Number(latest) > Math.max(...times))
    throw new Error(`the database was migrated by a newer Warren (a migration of ${new Date(Number(latest)).toISOString()}, after this version's last): run that version or a newer one`)
  return latest !== null && latest !== undefined && times.every((time) => Number(latest) >= time)
}

/** Whether every migration is applied (appliedAll), asked before drizzle's migrator runs, with one read. Exported for restore's check. */
export function migrated(sqlite: Database): boolean {
  if (!sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get()) return false
  const latest = (sqlite.prepare('SELECT max(created_at) AS at FROM __drizzle_migrations').get() as { at: number | string | null } | null)?.at
  return appliedAll(latest, MIGRATION_TIMES)
}

/**
 * The reads of one turn of the event loop share one read transaction on the connection, a
 * snapshot: in write-ahead-log mode each statement run on its own begins and ends a read
 * transaction (file locks and the log's index: most of a point read's cost, and many times it
 * on a busy machine), and a request's reads (its caller's change mark, its token, its record),
 * like those of the requests answered in the same turn, are then one. The snapshot begins with
 * the turn's first read outside a write transaction and ends when the turn does (setImmediate),
 * or before anything else runs on the connection: a write transaction's BEGIN IMMEDIATE, a write
 * outside one, a checkpoint, closing. Only reads join it (Drizzle's `select`, the change mark); what another
 * connection (the webhook thread's) commits meanwhile is seen from the next turn on, as if the
 * turn's reads had come a moment earlier.
 */
export interface ReadSnapshots {
  /** Runs the turn's reads in the open snapshot, beginning it if none is (a write transaction open: nothing). */
  join(): void
  /** Ends the open snapshot, if any (before a write, a write transaction, closing). */
  end(): void
  /** The open snapshot's number (each one begun gets a new one); 0 when none is open. */
  current(): number
}

function readSnapshots(sqlite: Database, gate: WriteGate): ReadSnapshots {
  // Prepared once, on the connection itself (not Drizzle's statements).
  const begin = sqlite.prepare('BEGIN')
  const commit = sqlite.prepare('COMMIT')
  let open = false
  let begun = 0
  const end = () => {
    if (!open) return
    open = false
    // A read transaction commits nothing; SQLite may have ended it already (an error that rolls back).
    try {
      if (sqlite.inTransaction) commit.run()
    } catch (e) {
      // The connection was closed under the snapshot (by its owner, without `close()`): nothing to end.
      if (!/closed/i.test((e as Error).message)) throw e
    }
  }
  return {
    join() {
      if (open ? sqlite.inTransaction : gate.current !== null || sqlite.inTransaction) return
      begin.run()
      open = true
      begun++
      setImmediate(end)
    },
    end,
    current: () => (open && sqlite.inTransaction ? begun : 0),
  }
}

/** A statement Drizzle runs that only reads (a query builder's `select`, a raw `SELECT`): it may run in the turn's snapshot. */
const readsOnly = (text: string): boolean => text.startsWith('select ') || text.startsWith('SELECT ')

/**
 * The writes that leave the caches' change mark where it is: those of the webhook deliveries and
 * the outbox consumers, to what no cache reads (and must never read): a webhook task's rows and
 * outcome (`hook_tasks`), a payload (`hook_payloads`), a consumer's done position
 * (`event_consumers`), the mail queue's rows (`mail_queue`: queued in the transaction of the change
 * that causes them, which moves the mark itself; sent or failed by the mailer job), and a hook's
 * last status alone (`hooks.last_status`; any other change of a hook moves the mark). Recognised by the text Drizzle builds (the same on both dialects); every
 * other statement that is not a `select` moves the mark.
 */
const QUIET_WRITE = /^(?:insert into|update|delete from) "(?:hook_tasks|hook_payloads|event_consumers|mail_queue)" |^update "hooks" set "last_status" = [^,()]* (?:from|where) /

/** Whether a statement may change what a cache read (movesChangeMark's test; a `select` never does). */
export const movesChangeMark = (text: string): boolean => !/^\s*select\b/i.test(text) && !QUIET_WRITE.test(text)

/** Drizzle's asynchronous SQLite API over one bun:sqlite connection (see WriteGate). */
function sqliteDatabase(sqlite: Database): Db {
  const gate: WriteGate = { inside: new AsyncLocalStorage(), current: null }
  const snapshots = readSnapshots(sqlite, gate)
  const marked = markedWrites(sqlite)
  const mark = sqliteChangeMark(sqlite, snapshots)
  const claims = new Map<string, number>()
  /** Claims a repair took over (takeOver), with the claims waiting for them. */
  const takenOver = new Map<string, (() => void)[]>()
  const runtime: DatabaseRuntime = {
    dialect: 'sqlite',
    transaction: (fn) => sqliteTransaction(sqlite, gate, snapshots, marked, fn),
    afterCommit(fn) {
      if (insideOpen(gate)) gate.current!.committed.push(fn)
      else queueMicrotask(() => gate.inside.exit(fn))
    },
    async writeBehind(statement) {
      await statement
    },
    answerAfterCommit(statement) {
      if (insideOpen(gate)) gate.current!.answered.push(failureOf(statement))
      return statement
    },
    changeMark: () => mark,
    inWriteTransaction: () => insideOpen(gate),
    freshReads: () => snapshots.end(),
    tryLock: async () => ({ release: async () => {} }),
    withLock: (_name, fn) => fn(),
    // One process owns the database: its own claims are all there are.
    async claim(kind, id, waitMs) {
      const key = `${kind}:${id}`
      const deadline = Date.now() + waitMs
      while (takenOver.has(key)) {
        if (Date.now() >= deadline) throw beingRepaired()
        await new Promise<void>((resolve) => {
          takenOver.get(key)!.push(resolve)
          setTimeout(resolve, deadline - Date.now()).unref?.()
        })
      }
      claims.set(key, (claims.get(key) ?? 0) + 1)
      let held = true
      return {
        async release() {
          if (!held) return
          held = false
          const left = claims.get(key)! - 1
          if (left > 0) claims.set(key, left)
          else claims.delete(key)
        },
      }
    },
    unclaimed: async (kind, ids) => ids.filter((id) => !claims.has(`${kind}:${id}`)),
    async takeOver(kind, id) {
      const key = `${kind}:${id}`
      if (claims.has(key) || takenOver.has(key)) return null
      takenOver.set(key, [])
      let held = true
      return {
        async release() {
          if (!held) return
          held = false
          const waiting = takenOver.get(key)
          takenOver.delete(key)
          for (const wake of waiting ?? []) wake()
        },
      }
    },
    checkpoint() {
      // Not inside this connection's open transaction (it would wait for its own write lock), nor
      // its read snapshot (which would keep the log it reads from being copied).
      if (gate.current) return
      snapshots.end()
      sqlite.exec('PRAGMA wal_checkpoint(PASSIVE)')
    },
    async close() {
      snapshots.end()
      sqlite.close()
    },
  }
  const run = (text: string, params: unknown[], method: 'run' | 'all' | 'values' | 'get') => {
    // query() keeps the compiled statement, keyed by its text: a prepared statement each.
    const statement = sqlite.query(text)
    if (method === 'run') return { rows: [], ...statement.run(...(params as any[])) }
    const rows = statement.values(...(params as any[]))
    return { rows: method === 'get' ? rows[0] : rows }
  }
  // No schema given: nothing uses drizzle's relational queries (db.query), whose configuration
  // drizzle would otherwise build from every table at each connection's start.
  const db = drizzle(async (text, params, method) => {
    while (mustWait(gate)) await gate.current!.ended
    // Outside a write transaction (none is open then): a read joins the turn's snapshot; a write
    // runs on its own, committed at once, as it always was.
    if (gate.current === null) {
      if (readsOnly(text)) snapshots.join()
      else {
        snapshots.end()
        if (movesChangeMark(text)) return marked.outside(() => run(text, params, method)) as { rows: any[] }
      }
    } else if (movesChangeMark(text)) gate.current.movesMark = true
    return run(text, params, method) as { rows: any[] }
  }) as unknown as Db
  db.$client = sqlite
  db.$runtime = runtime
  return db
}

/**
 * Runs `fn` as one transaction, begun with `BEGIN IMMEDIATE`: the write lock is taken up front,
 * so a read followed by a write never fails with "database is locked" under concurrency (the
 * busy timeout waits instead). Every statement `fn` runs through `db`, directly or through the
 * functions it calls, belongs to the transaction (its async context says so); a transaction
 * begun inside one joins it. `fn` does database work only: no git, no network.
 */
export function writeTransaction<T>(db: Db, fn: () => Promise<T>): Promise<T> {
  return db.$runtime.transaction(fn)
}

/**
 * Copies the write-ahead log into the database, on SQLite: a passive checkpoint, which takes no
 * write lock (the API's and the other connections' writes go on meanwhile) and copies what no
 * reader still needs; the log restarts from its beginning at a later write once all of it was
 * copied. What the webhook thread does every WAL_CHECKPOINT_MS while it runs (its connection
 * makes no automatic checkpoint). On PostgreSQL nothing: the server checkpoints itself.
 */
export function checkpointWal(db: Db): void {
  db.$runtime.checkpoint()
}

/**
 * How often a webhook thread's checkpointWal runs (the thread runs whenever the outbox holds events,
 * hooks or not): often enough that the log a busy API writes is copied by this thread rather than
 * by the API's own automatic checkpoint, which blocks the API's event loop for the copy and its
 * fsyncs. One request at a time with ten hooks (bench/webhooks.ts, 4,000 pages of log in about half
 * a second), once a second left the API's connection checkpointing several times a second (its
 * fsyncs counted with strace), every 100-200 ms about once a second or less: POST issue p99 with
 * hooks 10.2-10.8 -> 7.3-9.0 ms, without 4.5-5.3 -> 3.4-4.2 ms. Under 16 writers (`warren serve`,
 * autocannon) the API's connection still checkpoints at its commits (the log is not restarted while
 * a reader holds it), but each copy is small: POST issue p99 35-40 -> 27-31 ms.
 */
export const WAL_CHECKPOINT_MS = 100

/** The API connection's automatic checkpoint, in pages of the write-ahead log (openDatabase). */
const API_CHECKPOINT_PAGES = 4000

/** Spins, yielding to the event loop between tries, for this long before sleeping a millisecond between tries. */
const BUSY_SPIN_MS = 2

/**
 * SQLite's write lock between the threads of this process (the API's connection and the webhook
 * thread's, to one file): which connection holds it, in memory both threads share (`shareWriteLock`).
 * A transaction that finds the lock held by the other thread waits to be told it was let go
 * (Atomics.waitAsync, its event loop free meanwhile), instead of trying again and again: the spin
 * took a core for as long as it lasted, the very core the holder (the webhook thread, whose CPU
 * priority is lower) needed to finish, so a 0.1 ms transaction held the lock for milliseconds
 * while the API span for it (bench/webhooks.ts). Another process's hold (the sqlite3 tool's) is
 * not known here and is waited for as before.
 */
interface WriteLockShare {
  /** [holder: a connection's id, or 0; the last id given]. */
  cells: Int32Array
  /** This connection's id among the connections sharing `cells`. */
  id: number
}
const HOLDER = 0
const LAST_ID = 1
/** Sharing connections, by their SQLite handle. */
const writeLockShares = new WeakMap<Database, WriteLockShare>()
/** How long a wait for the other thread's word lasts at most before the lock is tried again (its word normally comes first). */
const HOLDER_WAIT_MS = 50

/**
 * Shares the SQLite write lock's holder between this connection and connections of other threads
 * given the same memory: called with none, makes it (the answer, to send to the other thread);
 * with the other thread's, joins it. Nothing on PostgreSQL (null), whose waits are its own.
 */
export function shareWriteLock(db: Db, memory?: SharedArrayBuffer): SharedArrayBuffer | null {
  if (db.$runtime.dialect !== 'sqlite') return null
  const shared = memory ?? new SharedArrayBuffer(8)
  const cells = new Int32Array(shared)
  writeLockShares.set(db.$client, { cells, id: Atomics.add(cells, LAST_ID, 1) + 1 })
  return shared
}

/** Marks the write lock this connection's (once its BEGIN IMMEDIATE succeeded). */
function holdingWriteLock(sqlite: Database): void {
  const share = writeLockShares.get(sqlite)
  if (share) Atomics.store(share.cells, HOLDER, share.id)
}

/** Marks it let go (after COMMIT or ROLLBACK), and wakes the other thread's waiting transaction. */
function releasedWriteLock(sqlite: Database): void {
  const share = writeLockShares.get(sqlite)
  if (share && Atomics.compareExchange(share.cells, HOLDER, share.id, 0) === share.id) Atomics.notify(share.cells, HOLDER)
}

/**
 * Takes SQLite's write lock (BEGIN IMMEDIATE), waiting while another connection holds it without
 * blocking the event loop: SQLite's own busy handler sleeps the thread in growing steps (1, 2, 5,
 * 10… ms), so a request that found the lock held by the webhook thread's millisecond-long
 * transaction slept several times as long as it, and every other request with it. Here each try
 * fails at once (busy_timeout 0 for the BEGIN alone). Held by another thread of this process
 * (WriteLockShare), the next try comes once that thread says it let go; otherwise after the event
 * loop has turned, then after 1 ms sleeps once the wait is longer than BUSY_SPIN_MS. Nothing else
 * runs on the connection meanwhile: the gate holds every other statement until this transaction ends.
 */
async function beginImmediate(sqlite: Database): Promise<void> {
  const start = performance.now()
  sqlite.exec('PRAGMA busy_timeout = 0')
  let waited = 0
  try {
    for (;;) {
      try {
        sqlite.exec('BEGIN IMMEDIATE')
        holdingWriteLock(sqlite)
        return
      } catch (e) {
        waited = performance.now() - start
        if ((e as { code?: string }).code !== 'SQLITE_BUSY' || waited >= BUSY_TIMEOUT_MS) throw e
        writeLockWaits.tries++
        const share = writeLockShares.get(sqlite)
        const holder = share ? Atomics.load(share.cells, HOLDER) : 0
        if (holder !== 0 && holder !== share!.id) {
          // Answered at once ('not-equal') when the holder let go meanwhile.
          const told = Atomics.waitAsync(share!.cells, HOLDER, holder, HOLDER_WAIT_MS)
          if (told.async) await told.value
        } else await (waited < BUSY_SPIN_MS ? new Promise((resolve) => setImmediate(resolve)) : Bun.sleep(1))
      }
    }
  } finally {
    sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
    writeLockWaits.transactions++
    if (waited > 0) {
      writeLockWaits.waits++
      writeLockWaits.waitedMs += waited
    }
  }
}

/**
 * This thread's SQLite transactions and the waits of theirs that found the write lock held by
 * another connection (what bench/webhooks.ts prints: the API's waits for the webhook thread), and
 * the tries of BEGIN that found it held.
 */
export const writeLockWaits = { transactions: 0, waits: 0, waitedMs: 0, tries: 0 }

/** writeTransaction on SQLite: one BEGIN IMMEDIATE ... COMMIT at a time on the one connection (WriteGate). */
async function sqliteTransaction<T>(sqlite: Database, gate: WriteGate, snapshots: ReadSnapshots, marked: MarkedWrites, fn: () => Promise<T>): Promise<T> {
  if (insideOpen(gate)) return fn()
  while (gate.current) await gate.current.ended
  // Claimed in the same step as the check above (no await in between).
  let end!: () => void
  const transaction: OpenTransaction = { ended: new Promise((resolve) => (end = resolve)), committed: [], movesMark: false, answered: [] }
  gate.current = transaction
  let result: T
  try {
    // The turn's read snapshot ends first (no read joins one while the gate is held).
    snapshots.end()
    await beginImmediate(sqlite)
    try {
      // Awaited inside the transaction's context: a function that hands back a query unawaited
      // (a thenable Drizzle builder) still runs it in the transaction, not after it, outside, where
      // it would wait for the write lock its own transaction holds.
      result = await gate.inside.run(transaction, async () => await fn())
      // A statement answered after the commit that failed fails the transaction (it ran already: SQLite runs each when called).
      const failed = await firstFailure(transaction.answered)
      if (failed) throw failed
      // In the same synchronous step as COMMIT: no reader of this connection sees the mark moved before the rows.
      if (transaction.movesMark) marked.move()
      sqlite.exec('COMMIT')
    } catch (e) {
      if (sqlite.inTransaction) sqlite.exec('ROLLBACK')
      // As on PostgreSQL: the failure of a statement sent ahead of the one that threw is the cause.
      throw (await firstFailure(transaction.answered)) ?? e
    } finally {
      releasedWriteLock(sqlite)
    }
  } finally {
    if (gate.current === transaction) gate.current = null
    end()
  }
  for (const fn of transaction.committed) gate.inside.exit(fn)
  return result
}

/**
 * A mark that changes whenever what the caches read does: caches compare it to know they are
 * stale. It moves at the commit of every write but those movesChangeMark leaves out (the webhook
 * deliveries' and the outbox consumers' bookkeeping, which no cache reads), so a busy webhook
 * thread does not empty the API's caches at each of its batches. On SQLite it is the database
 * header's `user_version`, which every such write transaction, of any connection or process,
 * raises by one in the step that commits it (a write outside a transaction runs in one of its
 * own for that: MarkedWrites); reading it costs a few microseconds, in the turn's read snapshot.
 * On PostgreSQL it moves at each such commit of this process and at each notification of another
 * process's (LISTEN, db/postgres.ts), and at every call while this process is not listening, so
 * caches then keep nothing. A mark scoped to `tables` (what a cache's values are read from) moves
 * on PostgreSQL only at the changes of those tables, or of tables not known (db/change-scope.ts:
 * the table a statement writes and those its foreign keys' actions reach), so a cache of tokens
 * or of repositories by name is not emptied by every comment; on SQLite it is the one mark.
 */
/**
 * Makes the next reads see every commit made before this call. The turn's read snapshot on SQLite
 * (`ReadSnapshots`) may have begun before something this code has just learnt of outside the
 * database (another thread's word that it committed a change): a turn can hold many tasks, so
 * the snapshot is ended and the next read begins a new one. PostgreSQL reads each statement anew.
 */
export function freshReads(db: Db): void {
  db.$runtime.freshReads()
}

export function changeMarkOf(db: Db, tables?: readonly Table[]): () => string {
  return db.$runtime.changeMark(tables?.map((table) => getTableName(table)))
}

/**
 * The connection's change mark reader (one for all its caches). Read in the turn's snapshot (the
 * cache it guards reads in the same one), where it cannot move: another connection's commit is
 * seen from the next snapshot on, and this connection's own writes end the snapshot first. So it
 * is read once a snapshot (a request asks it at each cache it looks in: a statement each was most
 * of a warm point read's time). Outside a snapshot (this connection's write transaction is open)
 * it is read every time.
 */
function sqliteChangeMark(sqlite: Database, snapshots: ReadSnapshots): () => string {
  const query = sqlite.query<{ v: number }, []>('SELECT user_version AS v FROM pragma_user_version')
  let readIn = 0
  let read = ''
  return () => {
    snapshots.join()
    const snapshot = snapshots.current()
    if (snapshot !== 0 && snapshot === readIn) return read
    read = String(query.get()!.v)
    readIn = snapshot
    return read
  }
}

/** How a SQLite connection moves the change mark (changeMarkOf). */
interface MarkedWrites {
  /** Raises the mark, inside the write transaction the connection holds, just before its COMMIT. */
  move(): void
  /** Runs a write outside a write transaction in one of its own that moves the mark. */
  outside<T>(write: () => T): T
}

/** The statement that raises the change mark by one from where it is now (changeMarkOf). */
function raiseMark(sqlite: Database): string {
  const now = sqlite.query<{ v: number }, []>('SELECT user_version AS v FROM pragma_user_version').get()!.v
  // A 32-bit header field: past its largest value it goes on from the smallest, still a new value.
  return `PRAGMA user_version = ${(now + 1) | 0}`
}

function markedWrites(sqlite: Database): MarkedWrites {
  const move = () => sqlite.exec(raiseMark(sqlite))
  return {
    move,
    outside(write) {
      // The write lock from the start (busy_timeout waits for it, as the write alone would): the
      // mark is read and raised under it, so two connections never raise it to the same value.
      sqlite.exec('BEGIN IMMEDIATE')
      holdingWriteLock(sqlite)
      try {
        const result = write()
        move()
        sqlite.exec('COMMIT')
        return result
      } catch (e) {
        if (sqlite.inTransaction) sqlite.exec('ROLLBACK')
        throw e
      } finally {
        releasedWriteLock(sqlite)
      }
    },
  }
}

/** The SQLite connection, for the tools that work on SQLite only (doctor's checks, dump); a clear error on PostgreSQL. */
export function sqliteOf(db: Db, tool: string): Database {
  if (db.$runtime.dialect !== 'sqlite') throw new Error(`${tool} works on the embedded SQLite database only; on PostgreSQL use its own tools (pg_dump, pg_restore)`)
  return db.$client
}

/**
 * `make(db)`, made once per database connection and kept with it: prepared statements, which
 * belong to their connection.
 */
export function perConnection<T>(make: (db: Db) => T): (db: Db) => T {
  const made = new WeakMap<Db, T>()
  return (db) => {
    let found = made.get(db)
    if (found === undefined) made.set(db, (found = make(db)))
    return found
  }
}

/**
 * What is made once per connection and shape: `of(db, key, make)` answers what `make` made for
 * that connection and key the first time (a statement prepared for each shape of a query whose
 * filters and order vary). The keys must come from a bounded set (the shapes, never a value).
 */
export function perConnectionShape<T>(): (db: Db, key: string, make: () => T) => T {
  const made = new WeakMap<Db, Map<string, T>>()
  return (db, key, make) => {
    let shapes = made.get(db)
    if (!shapes) made.set(db, (shapes = new Map()))
    let found = shapes.get(key)
    if (found === undefined) shapes.set(key, (found = make()))
    return found
  }
}

const closing = new WeakMap<Db, (() => void)[]>()

/** Runs `fn` when `db` is closed (closeDatabase), before its connections close: what was made beside them (a read thread) ends with them. */
export function whenClosed(db: Db, fn: () => void): void {
  const list = closing.get(db)
  if (list) list.push(fn)
  else closing.set(db, [fn])
}

/** Closes the database's connection(s). */
export function closeDatabase(db: Db): Promise<void> {
  for (const fn of closing.get(db) ?? []) fn()
  closing.delete(db)
  return db.$runtime.close()
}
