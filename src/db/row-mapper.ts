import { getTableColumns } from 'drizzle-orm'

/**
 * Maps raw row values (in table-column order, as a prepared `select()` of the whole table gives
 * them through `.values()`) to the table's row type. Drizzle's generic row mapper costs more
 * than the query itself on hot paths (a page of 50 repositories, every repository lookup);
 * only boolean columns need decoding. `width` is the number of values a row takes.
 */
export function rowMapper<T>(table: Parameters<typeof getTableColumns>[0]): { width: number; map: (values: unknown[], from?: number) => T } {
  const columns = Object.entries(getTableColumns(table)).map(
    ([key, column]) => [key, column.columnType === 'SQLiteBoolean' ? column : null] as const,
  )
  return {
    width: columns.length,
    map(values, from = 0) {
      const row: Record<string, unknown> = {}
      for (let i = 0; i < columns.length; i++) {
        const [key, decoder] = columns[i]!
        const value = values[from + i]
        row[key] = decoder ? decoder.mapFromDriverValue(value) : value
      }
      return row as T
    },
  }
}
