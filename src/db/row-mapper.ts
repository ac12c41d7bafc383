import { getTableColumns } from 'drizzle-orm'
import { DIALECT, type Dialect } from './dialect'

/**
 * Maps raw row values (in table-column order, as valueRows gives them for a prepared `select()`
 * of whole tables) to the table's row type. Drizzle's generic row mapper costs more than the
 * query itself on SQLite's hot paths (a page of 50 repositories, every repository lookup); only
 * boolean columns need decoding there. `width` is the number of values a row takes.
 */
export function rowMapper<T>(table: Parameters<typeof getTableColumns>[0]): { width: number; map: (values: unknown[], from?: number) => T } {
  const columns = Object.entries(getTableColumns(table)).map(([key, column]) => [key, column.dataType === 'boolean'] as const)
  return {
    width: columns.length,
    map(values, from = 0) {
      const row: Record<string, unknown> = {}
      for (let i = 0; i < columns.length; i++) {
        const [key, boolean] = columns[i]!
        const value = values[from + i]
        row[key] = boolean ? decodeBoolean(value) : value
      }
      return row as T
    },
  }
}

/**
 * A boolean column's value: SQLite stores 0/1, PostgreSQL's values arrive as true/false (valueRows
 * gives them decoded); NULL stays null, as in Drizzle's own mapping.
 */
const decodeBoolean = (value: unknown): boolean | null => (value === null ? null : value === 1 || value === true)

/** The placeholder values of a prepared statement. */
type Params = Record<string, unknown>

/**
 * What valueRows needs of a prepared select: on SQLite its raw values (`values`), on PostgreSQL
 * its mapped rows (`execute`) and Drizzle's list of the selected fields in order (`fields`, which
 * every PostgreSQL driver's prepared query keeps to map rows).
 */
export interface PreparedSelect {
  values(params?: Params): unknown
  execute(params?: Params): Promise<unknown>
}

interface SelectedField {
  /** Where the field's value sits in a mapped row: [key] for one table, [table, key] for a join. */
  path: string[]
}

/**
 * The rows of a prepared select of whole tables (`select().from(a)`, joins included) as arrays of
 * values in the tables' column order, what rowMapper maps: on SQLite the driver's raw values, as
 * fast as a read gets; PostgreSQL's prepared queries have no raw form in Drizzle, so their mapped
 * rows (numbers, booleans and dates already decoded) are laid back out in the selection's order.
 */
export function valueRowsFor(dialect: Dialect): (prepared: PreparedSelect, params: Params) => Promise<unknown[][]> {
  // The driver's own answer, handed on as it is: nothing added to SQLite's read.
  if (dialect === 'sqlite') return (prepared, params) => prepared.values(params) as Promise<unknown[][]>
  return async (prepared, params) => {
    const fields = (prepared as unknown as { fields?: SelectedField[] }).fields
    if (!fields) throw new Error('valueRows: the prepared statement does not list its fields (not a select?)')
    const rows = (await prepared.execute(params)) as Record<string, unknown>[]
    return rows.map((row) =>
      fields.map(({ path }) => {
        // A joined table whose columns are all NULL is mapped to null as a whole: each of them is NULL.
        let value: unknown = row
        for (const key of path) value = (value as Record<string, unknown> | null)?.[key] ?? null
        return value
      }),
    )
  }
}

/** valueRowsFor the process's dialect. */
export const valueRows = valueRowsFor(DIALECT)
