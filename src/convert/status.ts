import type { AppDeps } from '../deps'
import type { Config } from '../config'
import type { StatusRow } from '../db/schema'
import type { RepoContext } from '../auth/repo-context'
import { isoTime } from '../lib/time'
import { apiUrl } from '../lib/urls'
import { usersByIds } from './people'
import { repoToApi } from './repo'
import { userConverter } from './user'

/** A commit's latest statuses as the combined status shows them: a page of them, their number, the state they add up to. */
export interface LatestStatuses {
  rows: StatusRow[]
  total: number
  state: string
}

/** Status records of `rows`, their creators read in one query (a deleted account is the Ghost). */
export async function toApiStatuses(deps: AppDeps, ctx: RepoContext, rows: StatusRow[]) {
  const creators = await usersByIds(deps, rows.map((r) => r.creatorId))
  const userOf = userConverter(deps.config, ctx.caller.user)
  return rows.map((row) => toApiStatus(deps.config, ctx, row, userOf(creators.get(row.creatorId))))
}

/** A Status record as the converter makes it. */
export type ApiStatus = ReturnType<typeof toApiStatus>
/** A commit's checks for the pages: the Status records of its latest statuses and their combined state ("" when none). */
export type CommitChecks = { state: string; statuses: ApiStatus[] }

/**
 * The checks of a page's commits (the statuses service's `latestStatusesOf`), every status through
 * the Status record's converter, their creators read in one query.
 */
export async function toCommitChecks(deps: AppDeps, ctx: RepoContext, latest: Map<string, { rows: StatusRow[]; state: string }>): Promise<Map<string, CommitChecks>> {
  const all = [...latest.values()].flatMap((one) => one.rows)
  const records = await toApiStatuses(deps, ctx, all)
  const bySha = new Map<string, CommitChecks>()
  all.forEach((row, i) => {
    const one = bySha.get(row.sha) ?? { state: latest.get(row.sha)!.state, statuses: [] }
    one.statuses.push(records[i]!)
    bySha.set(row.sha, one)
  })
  return bySha
}

/** The Status record (records.md §20): `id` is the per-commit index. */
function toApiStatus(config: Config, ctx: RepoContext, row: StatusRow, creator: ReturnType<ReturnType<typeof userConverter>>) {
  return {
    id: row.index,
    status: row.state,
    target_url: row.targetUrl,
    description: row.description,
    url: apiUrl(config, `repos/${ctx.owner.name}/${ctx.repo.name}/statuses/${row.sha}`),
    context: row.context,
    creator,
    created_at: isoTime(row.createdUnix),
    updated_at: isoTime(row.updatedUnix),
  }
}

/** The CombinedStatus record of a commit (records.md §20), `sha` being the resolved commit id. */
export async function toApiCombinedStatus(deps: AppDeps, ctx: RepoContext, sha: string, latest: LatestStatuses) {
  const commitPath = `repos/${ctx.owner.name}/${ctx.repo.name}/commits/${sha}`
  return {
    state: latest.state,
    sha,
    total_count: latest.total,
    statuses: await toApiStatuses(deps, ctx, latest.rows),
    repository: await repoToApi(deps, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode),
    commit_url: apiUrl(deps.config, commitPath),
    url: apiUrl(deps.config, `${commitPath}/status`),
  }
}
