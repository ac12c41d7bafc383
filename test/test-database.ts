/**
 * Fresh PostgreSQL databases for tests and benchmarks, each dropped when done, so runs never see
 * each other's rows. `freshTestDatabase` is what a test server gets: nothing on SQLite (the
 * default run: the server makes its own file in its temp data folder), a fresh database on the
 * server WARREN_DATABASE_URL names in a PostgreSQL run (`npm run test:pg`).
 */
import { SQL } from 'bun'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DIALECT } from '../src/db/dialect'
import { openPostgres } from '../src/db/postgres'

/** The PostgreSQL server tests use when the run does not name one (the machine's, trust authentication). */
export const TEST_POSTGRES_URL = process.env.WARREN_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

export interface TestDatabase {
  /** The WARREN_DATABASE_URL of the new database; null on SQLite. */
  url: string | null
  drop(): Promise<void>
}

let counter = 0

/**
 * Creates `<prefix>_t<unix seconds>_<pid>_<n>_<random>` on the server `serverUrl` names (its
 * creation time in its name: PostgreSQL keeps none, and sweepLeftOvers goes by it); answers its
 * URL and how to drop it.
 */
export async function freshPostgresDatabase(serverUrl: string, prefix = 'warren_test', template?: string): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const admin = new SQL(serverUrl, { max: 1 })
  const name = `${prefix}_t${Math.floor(Date.now() / 1000)}_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`
  try {
    await admin.unsafe(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`)
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
      try {
        await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      } finally {
        await admin.close()
      }
    },
  }
}

/** The migrations the server applies, as one digest: a template is for one set of them. */
function migrationsDigest(): string {
  const folder = join(import.meta.dir, '..', 'drizzle-pg')
  const hash = createHash('sha256')
  for (const file of readdirSync(folder, { recursive: true }).map(String).sort()) {
    if (!file.endsWith('.sql') && !file.endsWith('.json')) continue
    hash.update(file).update(readFileSync(join(folder, file)))
  }
  return hash.digest('hex').slice(0, 12)
}

let templateMade: Promise<string> | undefined

/**
 * A database with every migration applied, kept on the server between runs, from which each test
 * database is copied (`CREATE DATABASE … TEMPLATE`): a test server then starts on a migrated
 * database instead of migrating one of its own, which is most of its start on PostgreSQL. It is
 * made under another name and renamed when complete, so a run that dies half-way leaves no
 * half-made template, and two runs making it at once both succeed (one rename wins).
 */
function migratedTemplate(serverUrl: string): Promise<string> {
  templateMade ??= (async () => {
    const name = `warren_template_${migrationsDigest()}`
    const admin = new SQL(serverUrl, { max: 1 })
    try {
      const [found] = await admin.unsafe(`SELECT 1 AS one FROM pg_database WHERE datname = '${name}'`)
      if (found) return name
      const building = `warren_template_building_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
      await admin.unsafe(`CREATE DATABASE "${building}"`)
      try {
        const url = new URL(serverUrl)
        url.pathname = `/${building}`
        const db = await openPostgres(url.href, { poolSize: 1 })
        await db.$runtime.close()
        await admin.unsafe(`ALTER DATABASE "${building}" RENAME TO "${name}"`)
      } catch (e) {
        await admin.unsafe(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`)
        // Another run made it first: use theirs.
        const [made] = await admin.unsafe(`SELECT 1 AS one FROM pg_database WHERE datname = '${name}'`)
        if (!made) throw e
      }
      return name
    } finally {
      await admin.close()
    }
  })()
  return templateMade
}

/** The next test database, being copied from the template while the current one is in use. */
let ahead: Promise<TestDatabase> | undefined

/**
 * A test server's database. Copying the template takes PostgreSQL a second or so (it writes and
 * syncs every file), most of a test server's start: so each call answers the database made ahead
 * (or makes one) and starts copying the next at once, while the caller's tests run. The files of
 * one `bun test` run share its process, so the next file's server finds its database ready. The
 * one made ahead and never taken outlives the process (bun test runs no exit hook): a run an hour
 * or more later drops it (sweepLeftOvers).
 */
export async function freshTestDatabase(): Promise<TestDatabase> {
  if (DIALECT !== 'postgres') return { url: null, drop: async () => {} }
  const serverUrl = process.env.WARREN_DATABASE_URL!
  const make = async () => freshPostgresDatabase(serverUrl, 'warren_test', await migratedTemplate(serverUrl))
  swept ??= sweepLeftOvers(serverUrl).catch(() => {})
  const taken = ahead ?? make()
  ahead = make()
  ahead.catch(() => {}) // a failure shows when it is taken, as the retry's
  return taken.catch(make)
}

let swept: Promise<void> | undefined

/** How old a test database must be for a later run to take it for a leftover (a run of the suite takes minutes). */
const LEFT_OVER_AFTER_S = 3600

/**
 * Drops the test databases (`warren_<prefix>_t<time>_…`, freshPostgresDatabase's names: the suite's
 * and those of the files that start processes of their own) made more than LEFT_OVER_AFTER_S ago (made ahead and never
 * taken, or left by a run that was killed), once a process. By age, not by whether the process
 * that made it lives: a run in another PID namespace (a container) sharing the PostgreSQL server
 * has process ids this one cannot see, or sees as another process. A database someone is
 * connected to is left alone (DROP without FORCE refuses it). Names without a time (made before
 * it was in them) are left too: nothing tells how old they are.
 */
async function sweepLeftOvers(serverUrl: string): Promise<void> {
  const admin = new SQL(serverUrl, { max: 1 })
  try {
    const rows: { datname: string }[] = await admin.unsafe(`SELECT datname FROM pg_database WHERE datname LIKE 'warren\\_%\\_t%'`)
    const now = Date.now() / 1000
    for (const { datname } of rows) {
      const made = Number(/^warren_[a-z_]+?_t(\d+)_\d+_\d+_[a-z0-9]+$/.exec(datname)?.[1])
      if (!made || now - made < LEFT_OVER_AFTER_S) continue
      await admin.unsafe(`DROP DATABASE IF EXISTS "${datname}"`).catch(() => {})
    }
  } finally {
    await admin.close()
  }
}
