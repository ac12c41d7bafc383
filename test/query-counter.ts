import type { Db } from '../src/db/client'

/**
 * Counts SQL statement executions on a connection: every statement prepared after this is
 * installed (before the first request of the kind measured) reports its runs.
 */
export function queryCounter(db: Db) {
  let counting = false
  let executed = 0
  const client = db.$client as any
  for (const factory of ['prepare', 'query']) {
    const original = client[factory].bind(client)
    client[factory] = (sql: string, ...rest: unknown[]) => {
      const st = original(sql, ...rest)
      if (!st.__counted) {
        st.__counted = true
        for (const m of ['get', 'all', 'values', 'run']) {
          const run = st[m].bind(st)
          st[m] = (...args: unknown[]) => {
            if (counting) executed++
            return run(...args)
          }
        }
      }
      return st
    }
  }
  /** The number of statements run while `fn` runs. */
  return async function countQueries(fn: () => Promise<unknown>): Promise<number> {
    executed = 0
    counting = true
    try {
      await fn()
    } finally {
      counting = false
    }
    return executed
  }
}
