/**
 * The database a benchmark runs on. SQLite by default (a file in the bench's temp data folder);
 * PostgreSQL when WARREN_DATABASE_URL=postgres://... was set when the process started (the
 * process's dialect is decided then, src/db/dialect.ts): the bench then gets a fresh database of
 * its own on that server, so it never sees or leaves rows in the one the URL names.
 */
import { freshPostgresDatabase } from '../../test/test-database'
import { DIALECT } from '../../src/db/dialect'
import { closeDatabase, type Db } from '../../src/db/client'

export interface BenchDatabase {
  /** The `databaseUrl` to give loadConfig: the fresh database's URL, null on SQLite. */
  url: string | null
  /** "SQLite" or "PostgreSQL (warren_bench_...)", for the bench's first line. */
  label: string
  /** Drops the fresh database (PostgreSQL); nothing on SQLite. */
  drop(): Promise<void>
}

/** Creates `warren_bench_<random>` on the server WARREN_DATABASE_URL names (PostgreSQL), or nothing (SQLite). */
export async function benchDatabase(): Promise<BenchDatabase> {
  if (DIALECT !== 'postgres') return { url: null, label: 'SQLite', drop: async () => {} }
  const database = await freshPostgresDatabase(process.env.WARREN_DATABASE_URL!, 'warren_bench')
  return { url: database.url, label: `PostgreSQL (${database.name} on ${new URL(database.url).host})`, drop: database.drop }
}

/**
 * After a bulk insert, the planner's statistics as a real database has them: PostgreSQL's refreshed
 * (autovacuum would, soon after such a load); SQLite's none, as Warren never runs ANALYZE (the
 * benches once did, and measured plans no Warren made: the forks and starred lists, the issue
 * searches by text, fast here and 100 ms at the same size without statistics).
 */
export async function analyze(db: Db): Promise<void> {
  if (db.$runtime.dialect === 'postgres') await (db as any).$client.unsafe('ANALYZE')
}

/** Closes the bench's database, then drops it when it was a fresh PostgreSQL one. */
export async function closeBenchDatabase(db: Db, database: BenchDatabase): Promise<void> {
  await closeDatabase(db)
  await database.drop()
}
