import { readdirSync, type Dirent } from 'node:fs'

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
