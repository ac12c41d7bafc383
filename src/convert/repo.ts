import { and, eq, inArray } from 'drizzle-orm'
import { perConnection } from '../db/client'
import { inJsonList } from '../db/sql'
import type { AppDeps } from '../deps'
import type { Config } from '../config'
import { mirrors, repoTransfers, repositories, type RepoRow } from '../db/schema'
import type { UserRow } from '../auth/caller'
import { AccessMode, accessLevels, permissionOf } from '../auth/access'
import { usersByIds } from './people'
import { resultCacheOf } from './repo-page-cache'
import { isoTime, ZERO_TIME } from '../lib/time'
import { apiUrl, webUrl } from '../lib/urls'
import { toApiUser, userConverter, type ApiUser } from './user'
import { teamsByIds, toApiTeam } from './team'

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
  allow_fast_forward_only_merge: boolean
  allow_rebase_update: boolean
  default_merge_style: string
  default_delete_branch_after_merge: boolean
  default_allow_maintainer_edit: boolean
  avatar_url: string
  internal: boolean
  template: boolean
  url: string
  link: string
  language: string
  languages_url: string
  original_url: string
  mirror_interval: string
  mirror_updated: string
  archived_at: string
  has_releases: boolean
  has_packages: boolean
  has_projects: boolean
  has_actions: boolean
  projects_mode: string
  /** Null when the built-in issues are off (none, or an external tracker). */
  internal_tracker: {
    enable_time_tracker: boolean
    allow_only_contributors_to_track_time: boolean
    enable_issue_dependencies: boolean
  } | null
  external_tracker: {
    external_tracker_url: string
    external_tracker_format: string
    external_tracker_style: string
    external_tracker_regexp_pattern: string
  } | null
  external_wiki: { external_wiki_url: string } | null
  topics: string[]
  licenses: string[]
  object_format_name: string
  /** The transfer waiting for its recipient to accept (table repo_transfers), else null. */
  repo_transfer: RepoTransferRecord | null
}

/** Gitea's RepoTransfer: who offered the repository, to whom, with which of the recipient's teams. */
export interface RepoTransferRecord {
  doer: ApiUser
  recipient: ApiUser
  teams: ReturnType<typeof toApiTeam>[]
}

/** What a pull mirror's record shows: its interval (seconds) and its last update (unix). */
export interface MirrorInfo {
  interval: number
  updatedUnix: number
}

/** Seconds as Go prints a time.Duration (`8h0m0s`, `10m0s`, `0s`), as Gitea prints mirror intervals. */
export function goDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  const s = seconds % 60
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`
}

/** The mirror rows of those of `rows` that are pull mirrors, by repository id (one query). */
export async function mirrorsOf(deps: AppDeps, rows: RepoRow[]): Promise<Map<number, MirrorInfo>> {
  const ids = rows.filter((r) => r.isMirror).map((r) => r.id)
  if (ids.length === 0) return new Map()
  const found = await deps.db.select({ repoId: mirrors.repoId, interval: mirrors.interval, updatedUnix: mirrors.updatedUnix }).from(mirrors).where(inArray(mirrors.repoId, ids))
  return new Map(found.map((m) => [m.repoId, m]))
}

/** Repositories by id (bound as one JSON list), prepared once per connection: the repositories of a page of issues (the issue search, a timeline's dependencies). */
const reposByIdsOf = perConnection((db: AppDeps['db']) => db.select().from(repositories).where(inJsonList(repositories.id, 'ids')).prepare())

/** Repositories by id, in one statement whatever their number; ids without a row are absent. */
export async function reposByIds(deps: AppDeps, ids: number[]): Promise<RepoRow[]> {
  return ids.length ? await reposByIdsOf(deps.db).execute({ ids: JSON.stringify(ids) }) : []
}

/** The pending transfers of a list of repositories (ids bound as one JSON list): prepared once per connection, as every repository record reads it. */
const transfersOfRepos = perConnection((db: AppDeps['db']) => db.select().from(repoTransfers).where(inJsonList(repoTransfers.repoId, 'ids')).prepare())

/**
 * The pending transfers of those of `rows` that have one, by repository id: three queries at most
 * for the whole list (the transfers, their people, their teams), one when none is pending. Users
 * and teams are shown as Gitea's ToRepoTransfer shows them: to nobody in particular, the teams
 * without their organisation.
 */
export async function transfersOf(deps: AppDeps, rows: RepoRow[]): Promise<Map<number, RepoTransferRecord>> {
  if (rows.length === 0) return new Map()
  const found = await transfersOfRepos(deps.db).execute({ ids: JSON.stringify(rows.map((r) => r.id)) })
  if (found.length === 0) return new Map()
  const allTeamIds = [...new Set(found.flatMap((t) => JSON.parse(t.teamIds) as number[]))]
  const [people, teamRows] = await Promise.all([
    usersByIds(deps, new Set(found.flatMap((t) => [t.doerId, t.recipientId]))),
    teamsByIds(deps, allTeamIds),
  ])
  const teamById = teamRows
  const result = new Map<number, RepoTransferRecord>()
  for (const t of found) {
    const doer = people.get(t.doerId)
    const recipient = people.get(t.recipientId)
    if (!doer || !recipient) continue
    const chosen = (JSON.parse(t.teamIds) as number[]).flatMap((id) => (teamById.has(id) ? [toApiTeam(deps.config, teamById.get(id)!, null, null)] : []))
    result.set(t.repoId, { doer: toApiUser(deps.config, doer, null), recipient: toApiUser(deps.config, recipient, null), teams: chosen })
  }
  return result
}

/** The path part of the base URL (Gitea's AppSubURL), without its trailing slash. */
const subUrl = (config: Config) => new URL(config.baseUrl).pathname.replace(/\/$/, '')

/** The stored topics of a repository row. */
export const topicsOf = (repo: RepoRow): string[] => JSON.parse(repo.topics) as string[]

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
  mirror?: MirrorInfo,
  transfer?: RepoTransferRecord,
): ApiRepo {
  return repoRecord(config, repo, owner.name, toApiUser(config, owner, viewer), mode, parent, mirror, transfer)
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
  mirror?: MirrorInfo,
  transfer?: RepoTransferRecord,
): ApiRepo {
  const path = `${ownerName}/${repo.name}`
  // As Gitea: with pull requests off, none of their settings shows (all false, style `merge`).
  const pulls = repo.hasPullRequests
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
    has_issues: repo.hasIssues || repo.externalTrackerUrl !== '',
    has_wiki: repo.hasWiki || repo.externalWikiUrl !== '',
    has_pull_requests: pulls,
    ignore_whitespace_conflicts: pulls && repo.ignoreWhitespaceConflicts,
    allow_merge_commits: pulls && repo.allowMergeCommits,
    allow_rebase: pulls && repo.allowRebase,
    allow_rebase_explicit: pulls && repo.allowRebaseExplicit,
    allow_squash_merge: pulls && repo.allowSquashMerge,
    allow_fast_forward_only_merge: pulls && repo.allowFastForwardOnlyMerge,
    allow_rebase_update: pulls && repo.allowRebaseUpdate,
    default_merge_style: pulls ? repo.defaultMergeStyle : 'merge',
    default_delete_branch_after_merge: pulls && repo.defaultDeleteBranchAfterMerge,
    default_allow_maintainer_edit: pulls && repo.defaultAllowMaintainerEdit,
    // An uploaded avatar (modules/avatars), else none: Gitea's '' for a repository without one.
    avatar_url: repo.avatar ? webUrl(config, `repo-avatars/${repo.avatar}`) : '',
    // Gitea's internal repositories: public ones of an owner only members may see.
    internal: !repo.isPrivate && ownerRecord.visibility === 'private',
    template: repo.isTemplate,
    url: apiUrl(config, `repos/${path}`),
    link: `${subUrl(config)}/${path}`,
    // No language statistics are kept: Gitea's value for a repository without them.
    language: '',
    languages_url: apiUrl(config, `repos/${path}/languages`),
    original_url: repo.originalUrl,
    mirror_interval: repo.isMirror && mirror ? goDuration(mirror.interval) : '',
    mirror_updated: repo.isMirror && mirror && mirror.updatedUnix > 0 ? isoTime(mirror.updatedUnix) : ZERO_TIME,
    archived_at: isoTime(repo.archivedUnix),
    has_releases: repo.hasReleases,
    has_projects: repo.hasProjects,
    has_packages: repo.hasPackages,
    // Units Warren does not serve (as a Gitea that disables them site-wide): never on.
    has_actions: false,
    projects_mode: 'all',
    internal_tracker: repo.hasIssues
      ? {
          enable_time_tracker: repo.enableTimeTracker,
          allow_only_contributors_to_track_time: repo.allowOnlyContributorsToTrackTime,
          enable_issue_dependencies: repo.enableIssueDependencies,
        }
      : null,
    external_tracker:
      repo.externalTrackerUrl === ''
        ? null
        : {
            external_tracker_url: repo.externalTrackerUrl,
            external_tracker_format: repo.externalTrackerFormat,
            external_tracker_style: repo.externalTrackerStyle,
            external_tracker_regexp_pattern: repo.externalTrackerRegexpPattern,
          },
    external_wiki: repo.externalWikiUrl === '' ? null : { external_wiki_url: repo.externalWikiUrl },
    topics: topicsOf(repo),
    // Left empty: the licenses are found by reading git (modules/licenses), which a converter does
    // not; `/repos/{o}/{r}/licenses` answers them.
    licenses: [],
    object_format_name: repo.objectFormat,
    repo_transfer: transfer ?? null,
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
  const [mirrorRows, transfers] = await Promise.all([mirrorsOf(deps, all), transfersOf(deps, all)])
  // One User record per owner, shared by that owner's repositories.
  const ownerRecord = userConverter(deps.config, viewer)
  const record = (r: RepoRow, parent: ApiRepo['parent']) => {
    const owner = owners.get(r.ownerId)!
    return repoRecord(deps.config, r, owner.name, ownerRecord(owner), permissions ? (modes.get(r.id) ?? 0) : null, parent, mirrorRows.get(r.id), transfers.get(r.id))
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
  if ((!repo.isFork || !repo.forkId) && !repo.isMirror) return toApiRepo(deps.config, repo, owner, null, null, null, undefined, (await transfersOf(deps, [repo])).get(repo.id))
  return (await makeRepoRecords(deps, null, [repo], false))[0]!
}

/**
 * One Repository record, for a viewer whose access `mode` is already known (a route's
 * RepoContext); a fork's parent is looked up as reposToApi does.
 */
export async function repoToApi(deps: AppDeps, repo: RepoRow, owner: UserRow, viewer: UserRow | null, mode: AccessMode): Promise<ApiRepo> {
  if ((!repo.isFork || !repo.forkId) && !repo.isMirror) return toApiRepo(deps.config, repo, owner, viewer, mode, null, undefined, (await transfersOf(deps, [repo])).get(repo.id))
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
