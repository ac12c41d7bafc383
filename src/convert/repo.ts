import { and, eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import type { Config } from '../config'
import { repositories, type RepoRow } from '../db/schema'
import type { UserRow } from '../auth/caller'
import { AccessMode, accessLevels, permissionOf } from '../auth/access'
import { usersByIds } from './people'
import { resultCacheOf } from './repo-page-cache'
import { isoTime } from '../lib/time'
import { apiUrl, webUrl } from '../lib/urls'
import { toApiUser, userConverter, type ApiUser } from './user'

function sshCloneUrl(config: Config, owner: string, name: string): string {
  return config.sshPort === 22
    ? `${config.sshUser}@${config.sshDomain}:${owner}/${name}.git`
    : `ssh://${config.sshUser}@${config.sshDomain}:${config.sshPort}/${owner}/${name}.git`
}

export interface ApiRepo {
  id: number
  owner: ApiUser
  name: string
  full_name: string
  description: string
  empty: boolean
  private: boolean
  fork: boolean
  /** A fork's source (whose own `parent` is null). */
  parent: (Omit<ApiRepo, 'parent'> & { parent: null }) | null
  mirror: boolean
  size: number
  html_url: string
  ssh_url: string
  clone_url: string
  website: string
  stars_count: number
  forks_count: number
  watchers_count: number
  open_issues_count: number
  open_pr_counter: number
  release_counter: number
  default_branch: string
  archived: boolean
  created_at: string
  updated_at: string
  permissions?: { admin: boolean; push: boolean; pull: boolean }
  has_issues: boolean
  has_wiki: boolean
  has_pull_requests: boolean
  ignore_whitespace_conflicts: boolean
  allow_merge_commits: boolean
  allow_rebase: boolean
  allow_rebase_explicit: boolean
  allow_squash_merge: boolean
  avatar_url: string
  internal_tracker: {
    enable_time_tracker: boolean
    allow_only_contributors_to_track_time: boolean
    enable_issue_dependencies: boolean
  }
}

/**
 * The Repository record. `mode` is the viewer's access (accessLevels) and fills `permissions`;
 * pass `null` where Gitea computes "no access" (webhook payloads, PR branch info).
 */
export function toApiRepo(
  config: Config,
  repo: RepoRow,
  owner: UserRow,
  viewer: UserRow | null,
  mode: number | null,
  parent: ApiRepo['parent'] = null,
): ApiRepo {
  return repoRecord(config, repo, owner.name, toApiUser(config, owner, viewer), mode, parent)
}

/**
 * toApiRepo with the owner's User record already made (`ownerRecord`, as toApiUser gives it for
 * the viewer): lists build it once per owner and share it between that owner's repositories.
 */
export function repoRecord(
  config: Config,
  repo: RepoRow,
  ownerName: string,
  ownerRecord: ApiUser,
  mode: number | null,
  parent: ApiRepo['parent'] = null,
): ApiRepo {
  const path = `${ownerName}/${repo.name}`
  return {
    id: repo.id,
    owner: ownerRecord,
    name: repo.name,
    full_name: path,
    description: repo.description,
    empty: repo.isEmpty,
    private: repo.isPrivate,
    fork: repo.isFork,
    parent,
    mirror: repo.isMirror,
    size: Math.floor(repo.size / 1024),
    html_url: webUrl(config, path),
    ssh_url: sshCloneUrl(config, ownerName, repo.name),
    clone_url: webUrl(config, `${path}.git`),
    website: repo.website,
    stars_count: repo.numStars,
    forks_count: repo.numForks,
    watchers_count: repo.numWatches,
    open_issues_count: repo.numIssues - repo.numClosedIssues,
    open_pr_counter: repo.numPulls - repo.numClosedPulls,
    release_counter: repo.numReleases,
    default_branch: repo.defaultBranch,
    archived: repo.isArchived,
    created_at: isoTime(repo.createdUnix),
    updated_at: isoTime(repo.updatedUnix),
    permissions: permissionOf(mode ?? 0),
    has_issues: repo.hasIssues,
    has_wiki: repo.hasWiki,
    has_pull_requests: repo.hasPullRequests,
    ignore_whitespace_conflicts: repo.ignoreWhitespaceConflicts,
    allow_merge_commits: repo.allowMergeCommits,
    allow_rebase: repo.allowRebase,
    allow_rebase_explicit: repo.allowRebaseExplicit,
    allow_squash_merge: repo.allowSquashMerge,
    avatar_url: '',
    internal_tracker: {
      enable_time_tracker: repo.enableTimeTracker,
      allow_only_contributors_to_track_time: repo.allowOnlyContributorsToTrackTime,
      enable_issue_dependencies: false,
    },
  }
}

/**
 * Repository records for a list, with owners and the viewer's permissions, in a fixed number
 * of queries whatever the list's length.
 */
export async function reposToApi(deps: AppDeps, viewer: UserRow | null, rows: RepoRow[]): Promise<ApiRepo[]> {
  if (rows.length === 0) return []
  return resultCacheOf(deps.db).recordsOf(rows, viewer?.id ?? 0, async () => await makeRepoRecords(deps, viewer, rows))
}

async function makeRepoRecords(deps: AppDeps, viewer: UserRow | null, rows: RepoRow[], permissions = true): Promise<ApiRepo[]> {
  // The forks' parents come along in the same queries: one read of them, then one of all owners
  // and one of the viewer's access to all (a parent the viewer may not read shows as null).
  const parentIds = [...new Set(rows.filter((r) => r.isFork && r.forkId).map((r) => r.forkId))]
  const parents = parentIds.length
    ? await deps.db.select().from(repositories).where(and(inArray(repositories.id, parentIds), eq(repositories.status, 'ready')))
    : []
  const all = [...rows, ...parents]
  const owners = await usersByIds(deps, [...new Set(all.map((r) => r.ownerId))])
  const modes = await accessLevels(deps.db, viewer, all, [...owners.values()])
  // One User record per owner, shared by that owner's repositories.
  const ownerRecord = userConverter(deps.config, viewer)
  const record = (r: RepoRow, parent: ApiRepo['parent']) => {
    const owner = owners.get(r.ownerId)!
    return repoRecord(deps.config, r, owner.name, ownerRecord(owner), permissions ? (modes.get(r.id) ?? 0) : null, parent)
  }
  const parentRecords = new Map<number, ApiRepo['parent']>()
  for (const p of parents) if ((modes.get(p.id) ?? 0) >= AccessMode.Read) parentRecords.set(p.id, record(p, null) as ApiRepo['parent'])
  return rows.map((r) => record(r, (r.isFork && parentRecords.get(r.forkId)) || null))
}

/**
 * The Repository record of a webhook payload: the record the API shows an anonymous caller (the
 * same owner record; a fork's parent only when an anonymous caller may read it), with no
 * permissions (all false), as Gitea's payloads show records to nobody in particular.
 */
export async function payloadRepoToApi(deps: AppDeps, repo: RepoRow, owner: UserRow): Promise<ApiRepo> {
  if (!repo.isFork || !repo.forkId) return toApiRepo(deps.config, repo, owner, null, null)
  return (await makeRepoRecords(deps, null, [repo], false))[0]!
}

/**
 * One Repository record, for a viewer whose access `mode` is already known (a route's
 * RepoContext); a fork's parent is looked up as reposToApi does.
 */
export async function repoToApi(deps: AppDeps, repo: RepoRow, owner: UserRow, viewer: UserRow | null, mode: AccessMode): Promise<ApiRepo> {
  if (!repo.isFork || !repo.forkId) return toApiRepo(deps.config, repo, owner, viewer, mode)
  return (await reposToApi(deps, viewer, [repo]))[0]!
}

/** The WatchInfo record of a watched repository (Gitea sends the repository's creation time). */
export function toApiWatchInfo(config: Config, ownerName: string, repo: RepoRow) {
  const repoUrl = apiUrl(config, `repos/${ownerName}/${repo.name}`)
  return {
    subscribed: true,
    ignored: false,
    reason: null,
    created_at: isoTime(repo.createdUnix),
    url: `${repoUrl}/subscription`,
    repository_url: repoUrl,
  }
}
