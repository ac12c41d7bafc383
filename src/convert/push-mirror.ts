import type { PushMirrorRow, RepoRow } from '../db/schema'
import { isoTime, isoTimeOrNull } from '../lib/time'
import { goDuration } from './repo'

/**
 * PushMirror records of one repository's push mirrors. The address is kept without credentials,
 * so none can show; `public_key` is '' (no SSH push mirrors: `use_ssh` is refused).
 */
export function pushMirrorToApi(repo: RepoRow, row: PushMirrorRow) {
  return {
    repo_name: repo.name,
    remote_name: row.remoteName,
    remote_address: row.remoteAddress,
    created: isoTime(row.createdUnix),
    last_update: isoTimeOrNull(row.lastUpdateUnix),
    last_error: row.lastError,
    interval: goDuration(row.interval),
    sync_on_commit: row.syncOnCommit,
    public_key: '',
  }
}
