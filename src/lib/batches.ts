/**
 * How many values one `IN (...)` list of a statement holds at most: well under SQLite's and
 * PostgreSQL's limits on bound parameters, and a bounded amount of rows read back at once.
 */
export const IN_LIST_MAX = 500

/** `items` in consecutive slices of at most `size` (none for an empty list). */
export function* batchesOf<T>(items: readonly T[], size = IN_LIST_MAX): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size)
}
