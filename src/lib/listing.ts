import { readdirSync, rmSync, statSync, type Dirent } from 'node:fs'
import { join } from 'node:path'

/**
 * A folder's entries; none when the folder does not exist (any other failure is thrown). For the
 * background sweeps, where a folder listed a moment ago may be gone (its repository deleted).
 */
export function listing(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw e
  }
}

/** Whether `path` is unchanged since `before` (ms; undefined: always), for sweeps that leave alone what is being written now. */
export const unchangedSince = (path: string, before: number | undefined) =>
  before === undefined || (statSync(path, { throwIfNoEntry: false })?.ctimeMs ?? Infinity) < before

/** Removes the entries of a folder of temporary uploads unchanged since `before`; answers their names as `tmp/{name}`. */
export function removeStaleTemporaries(dir: string, before: number | undefined): string[] {
  const removed: string[] = []
  for (const { name } of listing(dir)) {
    const path = join(dir, name)
    if (!unchangedSince(path, before)) continue
    rmSync(path, { recursive: true, force: true })
    removed.push(`tmp/${name}`)
  }
  return removed
}
