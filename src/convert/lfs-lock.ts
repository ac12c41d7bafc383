import type { LfsLockRow } from '../db/schema'
import { isoTime } from '../lib/time'

/** The LFS API's Lock record (Gitea's api.LFSLock): the id as a string, the holder by login name. */
export function toLfsLock(row: LfsLockRow, ownerName: string) {
  return { id: String(row.id), path: row.path, locked_at: isoTime(row.createdUnix), owner: { name: ownerName } }
}
export type LfsLock = ReturnType<typeof toLfsLock>
