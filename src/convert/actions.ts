import type { ActionSecretRow, ActionVariableRow } from '../db/schema'
import { isoTime } from '../lib/time'

/** The Secret record: its name and when it was made, never its value. */
export const secretToApi = (row: ActionSecretRow) => ({ name: row.name, created_at: isoTime(row.createdUnix) })

/** The ActionVariable record: a repository's has `owner_id` 0, a user's or organisation's `repo_id` 0, as Gitea's. */
export const variableToApi = (row: ActionVariableRow) => ({
  owner_id: row.ownerId ?? 0,
  repo_id: row.repoId ?? 0,
  name: row.name,
  data: row.data,
})
