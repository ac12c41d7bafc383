/**
 * The thread of db/read-thread.ts: its own connection to the SQLite file, which may only read
 * (`query_only`), running each statement it is sent in turn and answering its rows as arrays of
 * values (what Drizzle's proxy driver maps), or the error's message.
 */
import { Database } from 'bun:sqlite'
import { BUSY_TIMEOUT_MS, STATEMENTS_KEPT } from './sqlite-settings'

// As many compiled statements kept as the API's connection keeps (the search's shapes, the lists').
Database.MAX_QUERY_CACHE_SIZE = STATEMENTS_KEPT

declare const self: Worker

export type ReadThreadMessage = { open: string } | { id: number; text: string; params: unknown[]; method: 'all' | 'values' | 'get' }
export type ReadThreadReport = { id: number; rows: unknown } | { id: number; error: string; code?: string }

let sqlite: Database | null = null

self.onmessage = (event: MessageEvent<ReadThreadMessage>) => {
  const message = event.data
  if ('open' in message) {
    // The file the API's connection made: never a new one (a data folder gone meanwhile is an error).
    sqlite = new Database(message.open, { readwrite: true, create: false, strict: true })
    // Never a write, even one a caller got wrong; a write lock held by the API's connection is
    // waited for, as every Warren connection waits (only a checkpoint may ask for it here).
    sqlite.exec('PRAGMA query_only = ON')
    sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
    // Sorts and groups in memory, as the API's connection makes them.
    sqlite.exec('PRAGMA temp_store = MEMORY')
    return
  }
  try {
    const rows = sqlite!.query(message.text).values(...(message.params as never[]))
    postMessage({ id: message.id, rows: message.method === 'get' ? rows[0] : rows } satisfies ReadThreadReport)
  } catch (e) {
    postMessage({ id: message.id, error: e instanceof Error ? e.message : String(e), code: (e as { code?: string }).code } satisfies ReadThreadReport)
  }
}
