/**
 * The whole database as tests compare it ("the request changed nothing"), read through Drizzle
 * with the process's tables (src/db/schema), so it works on SQLite and PostgreSQL alike: no
 * sqlite_master, no raw SQL (but contentMark's count on SQLite). Drizzle's own migrations table
 * is not a table of the schema, so it is never part of a snapshot.
 */
import { count, getTableName, sql, type Table } from 'drizzle-orm'
import { sqliteOf, type Db } from '../src/db/client'
import { allTables } from '../src/db/schema'

const tables = Object.values(allTables) as unknown as Table[]

/**
 * Every row of every table, as text, by table name. Rows are sorted by their text: a table
 * read without ORDER BY may come back in another order on PostgreSQL while holding the same rows.
 */
export async function databaseRows(db: Db): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const table of tables) {
    const rows = (await db.select().from(table as never)) as unknown[]
    out[getTableName(table)] = JSON.stringify(rows.map((r) => JSON.stringify(r)).sort())
  }
  return out
}

/** The number of rows of every table, by table name: a cheap snapshot. */
export async function databaseCounts(db: Db): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const table of tables) {
    const [row] = (await db.select({ n: count() }).from(table as never)) as { n: number }[]
    out[getTableName(table)] = row!.n
  }
  return out
}

/**
 * A mark of what the database holds, for "the request changed nothing": two equal marks, no row
 * was written in between. On SQLite it is the rows the serving connection changed (SQLite's
 * `total_changes()`), which moves at every write of that connection, which serves every request,
 * and costs microseconds; what the webhook thread's connection commits in the background
 * (deliveries' outcomes, swept payloads) leaves it still, whatever the request did. On PostgreSQL
 * there is no such count of one connection's changes: there a trigger on every table, put on the
 * test's database at the first mark, counts each row inserted, updated or deleted (and each
 * truncation) in a sequence, which moves at once and stays moved whether the transaction commits
 * or not, as SQLite's count does; the mark reads it in one small statement (a digest of every row
 * of every table, which it replaces, cost a full read of the database a mark).
 */
export function contentMark(db: Db): () => Promise<string> {
  if (db.$runtime.dialect === 'postgres') {
    const installed = countRowChanges(db)
    const read = sql.raw(`select last_value::text || ':' || is_called::text as mark from ${CHANGE_COUNT}`)
    return async () => {
      await installed
      const [row] = (await (db as any).execute(read)) as { mark: string }[]
      return row!.mark
    }
  }
  const ownChanges = sqliteOf(db, 'contentMark').query<{ c: number }, []>('SELECT total_changes() AS c')
  return async () => String(ownChanges.get()!.c)
}

/** The sequence contentMark's triggers count row changes in (a test's database only). */
const CHANGE_COUNT = 'warren_test_row_changes'

const installedOn = new WeakMap<Db, Promise<void>>()

/**
 * Puts contentMark's counting trigger on every table of the schema, once a database, while the
 * server may be writing: a table at a time, each in a statement of its own that waits at most
 * LOCK_WAIT for the table (then tries again), so that it never holds one table while waiting for
 * another, and gives up well before PostgreSQL's deadlock check (1 s) could pick a request of the
 * server's as its victim.
 */
function countRowChanges(db: Db): Promise<void> {
  let done = installedOn.get(db)
  if (!done) {
    const run = (text: string) => (db as any).execute(sql.raw(text))
    done = (async () => {
      await run(`create sequence if not exists ${CHANGE_COUNT}`)
      await run(`create or replace function ${CHANGE_COUNT}() returns trigger language plpgsql as $$ begin perform nextval('${CHANGE_COUNT}'); return null; end $$`)
      for (const name of tables.map((t) => getTableName(t))) {
        const install =
          `do $$ begin perform set_config('lock_timeout', '${LOCK_WAIT}', true); ` +
          `if not exists (select 1 from pg_trigger where tgname = '${CHANGE_COUNT}' and tgrelid = '"${name}"'::regclass) then ` +
          `create trigger ${CHANGE_COUNT} after insert or update or delete on "${name}" for each row execute function ${CHANGE_COUNT}(); ` +
          `create trigger ${CHANGE_COUNT}_truncate after truncate on "${name}" for each statement execute function ${CHANGE_COUNT}(); ` +
          `end if; end $$`
        for (let attempt = 1; ; attempt++) {
          try {
            await run(install)
            break
          } catch (e) {
            // lock_not_available: a transaction of the server's holds the table; it ends soon.
            if (attempt >= 200 || !lockTimedOut(e)) throw e
            await Bun.sleep(10)
          }
        }
      }
    })()
    installedOn.set(db, done)
  }
  return done
}

/** PostgreSQL's lock_not_available (lock_timeout passed), as Drizzle passes it on. */
const lockTimedOut = (e: unknown): boolean => {
  const error = e as { errno?: string; cause?: { errno?: string } }
  return (error.cause?.errno ?? error.errno) === '55P03'
}

/** How long a trigger's installation waits for its table (see countRowChanges). */
const LOCK_WAIT = '100ms'
