/**
 * The whole database as tests compare it ("the request changed nothing"), read through Drizzle
 * with the process's tables (src/db/schema), so it works on SQLite and PostgreSQL alike: no
 * sqlite_master, no raw SQL. Drizzle's own migrations table is not a table of the schema, so it
 * is never part of a snapshot.
 */
import { count, getTableName, type Table } from 'drizzle-orm'
import { changeMarkOf, type Db } from '../src/db/client'
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
 * was written in between. On SQLite it is the runtime's change mark (src/db/client.ts
 * changeMarkOf) less the part other connections move, which moves at every write of the
 * connection and costs microseconds. On
 * PostgreSQL the runtime's mark changes at every call by design (caches never trust it), so
 * there the mark is every row of every table (databaseRows).
 */
export function contentMark(db: Db): () => Promise<string> {
  if (db.$runtime.dialect === 'postgres') return async () => JSON.stringify(await databaseRows(db))
  const mark = changeMarkOf(db)
  // Its second part only: the changes made on this connection, which serves every request. The
  // first (SQLite's data_version) moves when another connection commits, and the webhook thread's
  // does in the background (deliveries' outcomes, swept payloads) whatever the request did.
  return async () => mark().split(':')[1]!
}
