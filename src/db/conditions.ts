import { sql, type SQL } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'

/**
 * `column IN (list)` with the list bound as one JSON array, so the statement's text and size are
 * the same whatever its length: `values` given now, or a placeholder's name for a prepared
 * statement (`.all({ [name]: JSON.stringify(ids) })`).
 */
export const inJsonList = (column: SQLiteColumn, list: string | readonly (string | number)[]): SQL =>
  sql`${column} IN (SELECT value FROM json_each(${typeof list === 'string' ? sql.placeholder(list) : JSON.stringify(list)}))`

/** A LIKE pattern matching `text` anywhere, LIKE's own wildcards escaped (use with `ESCAPE '\\'`). */
export const containsPattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => '\\' + c)}%`
