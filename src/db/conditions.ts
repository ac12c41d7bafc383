import { sql, type SQL } from 'drizzle-orm'
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core'

/**
 * `column IN (ids)` with the ids given as one JSON array in the placeholder `name`: the statement
 * text is the same whatever the number of ids, so it is prepared once (`.all({ [name]: JSON })`).
 */
export const inJsonList = (column: SQLiteColumn, name: string): SQL =>
  sql`${column} IN (SELECT value FROM json_each(${sql.placeholder(name)}))`

/** `column IN (values)` with the values bound as one JSON array: the statement's size does not grow with their number. */
export const inJsonArray = (column: SQLiteColumn, values: readonly (string | number)[]): SQL =>
  sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`

/** A LIKE pattern matching `text` anywhere, LIKE's own wildcards escaped (use with `ESCAPE '\\'`). */
export const containsPattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => '\\' + c)}%`
