import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AppDeps } from '../deps'
import { tryLock, withLock } from '../db/client'

/**
 * Whether a server runs on the data (the one rule doctor and serve read):
 * - SQLite: `warren.pid` in the data folder, taken by a starting server before it opens the
 *   database (made whole, then linked into place: of two starting at once one gets it, the other
 *   is refused), removed when it stops, and only by the process it names (a second process that
 *   leaves never removes a running server's mark). A crash leaves it behind; a process id no
 *   longer alive counts as no server.
 * - PostgreSQL: every serving process holds the shared "serving" lock for as long as it runs
 *   (src/serve.ts; a crash frees it with its connection): a server runs when that lock cannot be
 *   taken exclusively.
 */
export const SERVE_MARK = 'warren.pid'

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

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: alive, but another user's.
    return (e as { code?: string }).code === 'EPERM'
  }
}

/**
 * Takes the SQLite serve mark for this process: answers the process id of a server already
 * running on the folder (nothing taken), or undefined once the mark is this process's. A mark of
 * a process no longer alive is replaced.
 */
export function takeServeMark(dataDir: string): number | undefined {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const temp = join(dataDir, `.${SERVE_MARK}.${process.pid}`)
  writeFileSync(temp, `${process.pid}\n`, { mode: 0o600 })
  try {
    for (let tries = 0; tries < 3; tries++) {
      try {
        // A link never replaces a file: of two processes, one gets the mark.
        linkSync(temp, markOf(dataDir))
        return undefined
      } catch (e) {
        if ((e as { code?: string }).code !== 'EEXIST') throw e
      }
      const other = runningServer(dataDir)
      if (other) return other
      // This process's own (an earlier process of the same id), or left by a crash: replaced.
      if (markedPid(dataDir) === process.pid) return undefined
      rmSync(markOf(dataDir), { force: true })
    }
    return runningServer(dataDir) ?? -1
  } finally {
    rmSync(temp, { force: true })
  }
}

/** Removes the SQLite serve mark, only when it is this process's. */
export function releaseServeMark(dataDir: string): void {
  if (markedPid(dataDir) === process.pid) rmSync(markOf(dataDir), { force: true })
}

/** The process id of a server running on this data folder by its SQLite mark (not this process), if any. */
export function runningServer(dataDir: string): number | undefined {
  const pid = markedPid(dataDir)
  if (pid === undefined || pid === process.pid) return undefined
  return alive(pid) ? pid : undefined
}

/**
 * Runs `fn` told whether a server runs on `deps`' data (a description of it, or undefined), on
 * PostgreSQL holding the "starting" lock meanwhile: a server starting waits until `fn` is over,
 * so what `fn` does while none runs is not done behind one's start-up repairs.
 */
export async function besideServers<T>(deps: AppDeps, fn: (running: string | undefined) => Promise<T>): Promise<T> {
  if (!deps.config.databaseUrl) {
    const pid = runningServer(deps.config.dataDir)
    return await fn(pid ? `process ${pid}` : undefined)
  }
  return await withLock(deps.db, 'starting', async () => {
    const alone = await tryLock(deps.db, 'serving', 'exclusive')
    await alone?.release()
    return await fn(alone ? undefined : 'a Warren serving this PostgreSQL database')
  })
}
