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
 * A mark of what the database holds, for "the request changed nothing": two equal marks, nothing
 * was written in between. On SQLite it is the rows the serving connection changed (SQLite's
 * `total_changes()`), which moves at every write of that connection, which serves every request,
 * and costs microseconds; what the webhook thread's connection commits in the background
 * (deliveries' outcomes, swept payloads) leaves it still, whatever the request did. On PostgreSQL
 * there is no such count of one connection's changes, so there the mark is every row of every
 * table, digested by the server in one statement.
 */
export function contentMark(db: Db): () => Promise<string> {
  if (db.$runtime.dialect === 'postgres') {
    // Every row of every table as PostgreSQL prints it, digested where it lies: one statement (a read
    // of each table in turn from here cost a round trip a table, seconds a mark on a busy machine).
    const rowsOf = tables.map((t) => getTableName(t)).map((name) => `select '${name}:' || t::text as line from "${name}" t`)
    const statement = sql.raw(`select count(*)::text as n, md5(coalesce(string_agg(line, E'\\n' order by line), '')) as digest from (${rowsOf.join(' union all ')}) everything`)
    return async () => {
      const [row] = (await (db as any).execute(statement)) as { n: string; digest: string }[]
      return `${row!.n}:${row!.digest}`
    }
  }
  const ownChanges = sqliteOf(db, 'contentMark').query<{ c: number }, []>('SELECT total_changes() AS c')
  return async () => String(ownChanges.get()!.c)
}
