import { Database } from 'bun:sqlite'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs'
import { join } from 'node:path'
import * as schema from './schema'
import { migrationsOfFolder } from './migrations-macro' with { type: 'macro' }

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database }

/**
 * The migrations drizzle-kit generated in drizzle/ (committed with the code), inlined when this
 * file is transpiled or bundled (a Bun macro): the single binary carries them, no folder needed.
 */
const MIGRATIONS = migrationsOfFolder()

/**
 * The data folder (every repository, the database) is the service's alone: the folder 0700, the
 * database and its -wal/-shm files 0600, whatever the umask. An existing data folder made with
 * wider modes is narrowed at start.
 */
function restrictModes(dataDir: string, file: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  chmodSync(dataDir, 0o700)
  // Created empty with its final mode before SQLite opens it, so it is never readable by others.
  closeSync(openSync(file, 'a', 0o600))
  for (const path of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(path)) chmodSync(path, 0o600)
}

/**
 * Opens (creating if needed) `warren.db` in the data folder, sets the pragmas Warren relies on
 * and applies pending migrations, so an old data folder is upgraded in place.
 */
export function openDatabase(dataDir: string): Db {
  const file = join(dataDir, 'warren.db')
  restrictModes(dataDir, file)
  const sqlite = new Database(file, { create: true, strict: true })
  // SQLite gives new -wal and -shm files the database file's mode (0600); older ones were narrowed above.
  sqlite.exec('PRAGMA journal_mode = WAL')
  sqlite.exec('PRAGMA synchronous = NORMAL')
  sqlite.exec('PRAGMA busy_timeout = 10000')
  sqlite.exec('PRAGMA temp_store = MEMORY')
  const db = drizzle({ client: sqlite, schema }) as Db
  // A migration may rebuild a table (drizzle-kit: copy, drop, rename); with foreign keys enforced
  // the drop would cascade-delete the rows of its children. The migration's own PRAGMAs run inside
  // the migrator's transaction, where SQLite ignores them: so keys are off while migrating, checked
  // after, and on from then on (SQLite's documented procedure for altering tables).
  sqlite.exec('PRAGMA foreign_keys = OFF')
  // drizzle's migrate() reads a folder; its dialect applies the inlined list the same way.
  ;(db as any).dialect.migrate(MIGRATIONS, (db as any).session, { migrationsFolder: 'drizzle' })
  const broken = sqlite.prepare('PRAGMA foreign_key_check').all()
  if (broken.length > 0) throw new Error(`database migration left broken references: ${JSON.stringify(broken.slice(0, 5))}`)
  sqlite.exec('PRAGMA foreign_keys = ON')
  return db
}

/**
 * Runs `fn` inside `BEGIN IMMEDIATE`: the write lock is taken up front, so a read followed by a
 * write never fails with "database is locked" under concurrency (the busy timeout waits instead).
 * `fn` must be synchronous (bun:sqlite is), which keeps transactions short.
 */
export function writeTransaction<T>(db: Db, fn: () => T): T {
  const sqlite = db.$client
  return sqlite.transaction(fn).immediate()
}

/**
 * A mark that changes whenever the database does, through this connection (`total_changes()`) or
 * another one (`PRAGMA data_version`): caches compare it to know they are stale. One prepared
 * statement; reading it costs a few microseconds.
 */
export function changeMarkOf(db: Db): () => string {
  const query = db.$client.query<{ v: number; c: number }, []>(
    'SELECT (SELECT data_version FROM pragma_data_version) AS v, total_changes() AS c',
  )
  return () => {
    const { v, c } = query.get()!
    return `${v}:${c}`
  }
}
