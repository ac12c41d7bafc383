import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * `warren.pid` in the data folder says a server runs on it: written once it listens, removed
 * when it stops. Commands that must not act behind a running server's back (doctor's repairs)
 * read it. A crash leaves it behind; a process id no longer alive counts as no server.
 */
export const SERVE_MARK = 'warren.pid'

const markOf = (dataDir: string) => join(dataDir, SERVE_MARK)

export function takeServeMark(dataDir: string): void {
  writeFileSync(markOf(dataDir), `${process.pid}\n`, { mode: 0o600 })
}

export function releaseServeMark(dataDir: string): void {
  rmSync(markOf(dataDir), { force: true })
}

/** The process id of a server running on this data folder (not this process), if any. */
export function runningServer(dataDir: string): number | undefined {
  let pid: number
  try {
    pid = Number(readFileSync(markOf(dataDir), 'utf8').trim())
  } catch {
    return undefined
  }
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return undefined
  try {
    process.kill(pid, 0)
    return pid
  } catch (e) {
    // EPERM: alive, but another user's.
    return (e as { code?: string }).code === 'EPERM' ? pid : undefined
  }
}
