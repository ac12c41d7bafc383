/**
 * The database a test server gets. On SQLite (the default run) nothing: the server makes its own
 * file in its temp data folder. On PostgreSQL (a run with WARREN_DATABASE_URL=postgres://...,
 * `npm run test:pg`), a fresh database on that server for each test server, dropped when the test
 * is done, so tests never see each other's rows.
 */
import { SQL } from 'bun'
import { DIALECT } from '../src/db/dialect'

export interface TestDatabase {
  /** The WARREN_DATABASE_URL of the new database; null on SQLite. */
  url: string | null
  drop(): Promise<void>
}

let admin: SQL | undefined
let counter = 0

export async function freshTestDatabase(): Promise<TestDatabase> {
  if (DIALECT !== 'postgres') return { url: null, drop: async () => {} }
  const base = new URL(process.env.WARREN_DATABASE_URL!)
  admin ??= new SQL(base.href, { max: 2 })
  const name = `warren_test_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`
  await admin.unsafe(`CREATE DATABASE "${name}"`)
  const url = new URL(base.href)
  url.pathname = `/${name}`
  return {
    url: url.href,
    async drop() {
      await admin!.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    },
  }
}
