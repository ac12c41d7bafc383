import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import type { AppDeps } from '../deps'
import { tryLock, withLock } from '../db/client'

/**
 * Whether a server runs on the data (the one rule doctor and serve read):
 * - SQLite: `warren.lock` in the data folder, a database file a serving process holds an exclusive
 *   transaction on for as long as it runs (the kernel's lock: a crash frees it; of two starting at
 *   once, one gets it), taken before the database opens; `warren.pid` beside it names the holder
 *   (for the messages; written once the lock is held, removed only by its holder). `warren doctor
 *   --fix` holds the lock while it repairs, so no server starts meanwhile.
 * - PostgreSQL: every serving process holds the shared "serving" lock for as long as it runs
 *   (src/serve.ts; a crash frees it with its connection): a server runs when that lock cannot be
 *   taken exclusively.
 */
export const SERVE_MARK = 'warren.pid'
export const SERVE_LOCK = 'warren.lock'

const markOf = (dataDir: string) => join(dataDir, SERVE_MARK)

/** The process id a mark names, if it reads as one. */
function markedPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(markOf(dataDir), 'utf8').trim())
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/** The lock connections this process holds, by data folder. */
const held = new Map<string, Database>()

/** Takes the data folder's lock unless another process holds it: true when this process holds it now. */
function hold(dataDir: string): boolean {
  if (held.has(dataDir)) return true
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const lock = new Database(join(dataDir, SERVE_LOCK), { create: true })
  try {
    lock.exec('PRAGMA busy_timeout = 0')
    // An exclusive transaction left open: SQLite's lock on the file, held until this process lets
    // go or ends (the kernel frees it with the process).
    lock.exec('BEGIN EXCLUSIVE')
    held.set(dataDir, lock)
    return true
  } catch {
    lock.close()
    return false
  }
}

function letGo(dataDir: string): void {
  const lock = held.get(dataDir)
  if (!lock) return
  held.delete(dataDir)
  try {
    lock.exec('ROLLBACK')
  } catch {}
  lock.close()
}

/** Who holds the lock, as a process id (-1: a process that wrote no mark yet, or an unreadable one). */
const holder = (dataDir: string): number => markedPid(dataDir) ?? -1

/**
 * Takes the SQLite serve mark for this process: answers the process id of the process already
 * holding the folder (a server, or doctor repairing; nothing taken), or undefined once the lock
 * is this process's and the mark names it.
 */
export function takeServeMark(dataDir: string): number | undefined {
  if (!hold(dataDir)) return holder(dataDir)
  writeFileSync(markOf(dataDir), `${process.pid}\n`, { mode: 0o600 })
  return undefined
}

/** Gives the SQLite serve mark back: the mark removed when it names this process, the lock let go. */
export function releaseServeMark(dataDir: string): void {
  if (!held.has(dataDir)) return
  if (markedPid(dataDir) === process.pid) rmSync(markOf(dataDir), { force: true })
  letGo(dataDir)
}

/** The process id of a process holding this data folder's SQLite lock (not this one), if any; -1 when it wrote no mark. */
export function runningServer(dataDir: string): number | undefined {
  if (held.has(dataDir)) return undefined
  if (!hold(dataDir)) return holder(dataDir)
  letGo(dataDir)
  return undefined
}

/**
 * Runs `fn` told whether a server runs on `deps`' data (a description of it, or undefined), on
 * PostgreSQL holding the "starting" lock meanwhile: a server starting waits until `fn` is over,
 * so what `fn` does while none runs is not done behind one's start-up repairs.
 */
export async function besideServers<T>(deps: AppDeps, fn: (running: string | undefined) => Promise<T>): Promise<T> {
  if (!deps.config.databaseUrl) {
    const { dataDir } = deps.config
    // Held while `fn` runs (its repairs), so no server starts meanwhile; let go after, unless this
    // process held it before (a server's own).
    const mine = held.has(dataDir)
    const other = mine ? undefined : takeServeMark(dataDir)
    try {
      return await fn(other === undefined ? undefined : other > 0 ? `process ${other}` : 'another process')
    } finally {
      if (!mine && other === undefined) releaseServeMark(dataDir)
    }
  }
  return await withLock(deps.db, 'starting', async () => {
    const alone = await tryLock(deps.db, 'serving', 'exclusive')
    await alone?.release()
    return await fn(alone ? undefined : 'a Warren serving this PostgreSQL database')
  })
}
