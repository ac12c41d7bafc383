/**
 * How many values one `IN (...)` list of a statement holds at most: well under SQLite's and
 * PostgreSQL's limits on bound parameters, and a bounded amount of rows read back at once.
 */
export const IN_LIST_MAX = 500

/** `items` in consecutive slices of at most `size` (none for an empty list). */
export function* batchesOf<T>(items: readonly T[], size = IN_LIST_MAX): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size)
}

/** `each` of every item, in order, at most `size` of them at once (a batch begins when the one before it has ended). */
export async function mapInBatches<T, R>(items: readonly T[], size: number, each: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = []
  for (const batch of batchesOf(items, size)) out.push(...(await Promise.all(batch.map(each))))
  return out
}
