/**
 * Fresh PostgreSQL databases for tests and benchmarks, each dropped when done, so runs never see
 * each other's rows. `freshTestDatabase` is what a test server gets: nothing on SQLite (the
 * default run: the server makes its own file in its temp data folder), a fresh database on the
 * server WARREN_DATABASE_URL names in a PostgreSQL run (`npm run test:pg`).
 */
import { SQL } from 'bun'
import { DIALECT } from '../src/db/dialect'

/** The PostgreSQL server tests use when the run does not name one (the machine's, trust authentication). */
export const TEST_POSTGRES_URL = process.env.WARREN_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

export interface TestDatabase {
  /** The WARREN_DATABASE_URL of the new database; null on SQLite. */
  url: string | null
  drop(): Promise<void>
}

let counter = 0

/** Creates `<prefix>_<pid>_<n>_<random>` on the server `serverUrl` names; answers its URL and how to drop it. */
export async function freshPostgresDatabase(serverUrl: string, prefix = 'warren_test'): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const admin = new SQL(serverUrl, { max: 1 })
  const name = `${prefix}_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`
  try {
    await admin.unsafe(`CREATE DATABASE "${name}"`)
  } catch (e) {
    await admin.close()
    throw e
  }
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    url: url.href,
    name,
    async drop() {
      await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      await admin.close()
    },
  }
}

export async function freshTestDatabase(): Promise<TestDatabase> {
  if (DIALECT !== 'postgres') return { url: null, drop: async () => {} }
  return freshPostgresDatabase(process.env.WARREN_DATABASE_URL!)
}
