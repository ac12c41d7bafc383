import type { AppDeps } from '../deps'
import type { ReactionRow } from '../db/schema'
import type { UserRow } from '../auth/caller'
import { isoTime } from '../lib/time'
import { userConverter, type ApiUser } from './user'
import { usersByIds } from './people'

/** The Reaction record: who gave which reaction, when. */
export const toApiReaction = (row: Pick<ReactionRow, 'type' | 'createdUnix'>, user: ApiUser) => ({
  user,
  content: row.type,
  created_at: isoTime(row.createdUnix),
})
export type ApiReaction = ReturnType<typeof toApiReaction>

/** Reaction records for rows (their people read in one query). */
export async function reactionsToApi(deps: AppDeps, rows: ReactionRow[], viewer: UserRow | null): Promise<ApiReaction[]> {
  const people = await usersByIds(deps, rows.map((r) => r.userId))
  const userToApi = userConverter(deps.config, viewer)
  return rows.map((r) => toApiReaction(r, userToApi(people.get(r.userId))))
}
