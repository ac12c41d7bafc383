import { perConnection } from '../db/client'
import { inJsonList } from '../db/sql'
import { issues, type AttachmentRow, type CommentRow, type IssueRow, type LabelRow, type MilestoneRow, type RepoRow, type StopwatchRow, type TrackedTimeRow } from '../db/schema'
import type { Config } from '../config'
import type { UserRow } from '../auth/caller'
import { isoTime, isoTimeOrNull } from '../lib/time'
import { apiUrl, webUrl } from '../lib/urls'
import { userConverter, type ApiUser } from './user'
import { issueRelations, type IssueRelations } from './issue-relations'
import type { AppDeps } from '../deps'
import { usersByIds } from './people'
import { attachmentsOfComments, toApiAttachment } from './attachment'

export type { IssueRelations }

/** The repository an issue-area record belongs to: enough to build its URLs. */
export type RepoRef = Pick<RepoRow, 'id' | 'name' | 'ownerName'>

/** `owner/name`, URL-encoded; computed once per repository row (lists convert many records of one). */
const repoPaths = new WeakMap<RepoRef, string>()
export function repoPath(repo: RepoRef): string {
  let path = repoPaths.get(repo)
  if (path === undefined) repoPaths.set(repo, (path = `${encodeURIComponent(repo.ownerName)}/${encodeURIComponent(repo.name)}`))
  return path
}

/** `{base}<owner>/<repo>/issues/<n>` (or `/pulls/<n>` for a pull request). */
export const issueHtmlUrl = (config: Config, repo: RepoRef, issue: Pick<IssueRow, 'index' | 'isPull'>) =>
  webUrl(config, `${repoPath(repo)}/${issue.isPull ? 'pulls' : 'issues'}/${issue.index}`)

/** Gitea's default work-in-progress prefixes: a pull request whose title starts with one (any case) is a draft. */
const WIP_PREFIXES = ['WIP:', '[WIP]']
export const isDraftTitle = (title: string): boolean => WIP_PREFIXES.some((p) => title.toUpperCase().startsWith(p))
/** A title with its WIP prefix taken off, or `WIP: ` put before it (Gitea's toggle of a pull request's work-in-progress mark). */
export function toggledDraftTitle(title: string): string {
  const prefix = WIP_PREFIXES.find((p) => title.toUpperCase().startsWith(p))
  return prefix ? title.slice(prefix.length).trim() : `${WIP_PREFIXES[0]} ${title}`
}

/** The Label record: colour without its `#`. */
const labelRecord = (label: LabelRow, url: string) => ({
  id: label.id,
  name: label.name,
  color: label.color.replace(/^#/, ''),
  description: label.description,
  url,
})
export type ApiLabel = ReturnType<typeof labelRecord>

/** An organisation's label, at its organisation's URL (Gitea's ToLabel with an org). */
export const toApiOrgLabel = (config: Config, orgName: string, label: LabelRow): ApiLabel =>
  labelRecord(label, apiUrl(config, `orgs/${encodeURIComponent(orgName)}/labels/${label.id}`))

/** A label as a repository shows it: its own, or one of its owning organisation's. */
export const toApiLabel = (config: Config, repo: RepoRef, label: LabelRow): ApiLabel =>
  label.orgId !== null ? toApiOrgLabel(config, repo.ownerName, label) : labelRecord(label, apiUrl(config, `repos/${repoPath(repo)}/labels/${label.id}`))

/** The Milestone record. */
export function toApiMilestone(milestone: MilestoneRow) {
  return {
    id: milestone.id,
    title: milestone.name,
    description: milestone.content,
    state: milestone.isClosed ? 'closed' : 'open',
    open_issues: milestone.numIssues - milestone.numClosedIssues,
    closed_issues: milestone.numClosedIssues,
    closed_at: milestone.isClosed ? isoTimeOrNull(milestone.closedUnix) : null,
    due_on: isoTimeOrNull(milestone.deadlineUnix),
    created_at: isoTime(milestone.createdUnix),
    updated_at: isoTime(milestone.updatedUnix),
  }
}
export type ApiMilestone = ReturnType<typeof toApiMilestone>

/** The Issue record, as `viewer` may see it (`userToApi`: a shared userConverter in lists). */
export function toApiIssue(
  config: Config,
  repo: RepoRef,
  issue: IssueRow,
  rel: IssueRelations,
  viewer: UserRow | null,
  userToApi: (user: UserRow | undefined) => ApiUser = userConverter(config, viewer),
) {
  const assignees: ApiUser[] = rel.assignees.map(userToApi)
  return {
    id: issue.id,
    url: apiUrl(config, `repos/${repoPath(repo)}/issues/${issue.index}`),
    html_url: issueHtmlUrl(config, repo, issue),
    number: issue.index,
    user: userToApi(rel.poster),
    original_author: '',
    original_author_id: 0,
    title: issue.title,
    body: issue.content,
    ref: issue.ref,
    assets: (rel.assets ?? []).map((a) => toApiAttachment(config, a)),
    labels: rel.labels.map((l) => toApiLabel(config, repo, l)),
    milestone: rel.milestone ? toApiMilestone(rel.milestone) : null,
    assignee: assignees[0] ?? null,
    assignees,
    state: issue.isClosed ? 'closed' : 'open',
    is_locked: issue.isLocked,
    comments: issue.numComments,
    created_at: isoTime(issue.createdUnix),
    updated_at: isoTime(issue.updatedUnix),
    closed_at: issue.isClosed ? isoTimeOrNull(issue.closedUnix) : null,
    due_date: isoTimeOrNull(issue.deadlineUnix),
    // Gitea's PullRequestMeta: where the pull request is, and whether it is merged or a draft.
    pull_request: issue.isPull
      ? {
          merged: rel.pull?.hasMerged ?? false,
          merged_at: rel.pull?.hasMerged ? isoTimeOrNull(rel.pull.mergedUnix) : null,
          draft: isDraftTitle(issue.title),
          html_url: issueHtmlUrl(config, repo, issue),
        }
      : null,
    repository: { id: repo.id, name: repo.name, owner: repo.ownerName, full_name: `${repo.ownerName}/${repo.name}` },
    // Its place among the repository's pinned issues or pull requests; 0 when not pinned.
    pin_order: issue.pinOrder,
  }
}
export type ApiIssue = ReturnType<typeof toApiIssue>

/** Issue records for a page of rows of one repository (fixed number of queries). */
export const issuesToApi = async (deps: AppDeps, repo: RepoRef, rows: IssueRow[], viewer: UserRow | null) =>
  await issuesOfReposToApi(deps, new Map([[repo.id, repo]]), rows, viewer)

/** Issue records for a page of rows of several repositories (`repos`: each row's, by id). */
export async function issuesOfReposToApi(deps: AppDeps, repos: Map<number, RepoRef>, rows: IssueRow[], viewer: UserRow | null) {
  const rel = await issueRelations(deps, rows)
  const userToApi = userConverter(deps.config, viewer)
  return rows.map((r) => toApiIssue(deps.config, repos.get(r.repoId)!, r, rel.get(r.id)!, viewer, userToApi))
}

export const issueToApi = async (deps: AppDeps, repo: RepoRow, row: IssueRow, viewer: UserRow | null) =>
  (await issuesToApi(deps, repo, [row], viewer))[0]!

/**
 * Gitea's Comment.PRURL and Comment.IssueURL, of a comment or a timeline event: the address of the
 * pull request it is on, or of the issue; the other one '' (a pull request's comments have no
 * `issue_url`, in the API as in payloads).
 */
export function commentTargetUrls(config: Config, repo: RepoRef, issue: Pick<IssueRow, 'index' | 'isPull'>) {
  const url = issueHtmlUrl(config, repo, issue)
  return { pull_request_url: issue.isPull ? url : '', issue_url: issue.isPull ? '' : url }
}

/** The Comment record; `issue` gives the URLs (commentTargetUrls). */
export function toApiComment(
  config: Config,
  repo: RepoRef,
  issue: Pick<IssueRow, 'index' | 'isPull'>,
  comment: CommentRow,
  /** Undefined when the author's account was deleted: shown as the Ghost user. */
  poster: UserRow | undefined,
  viewer: UserRow | null,
  /** The comment's attachments, oldest first. */
  assets: AttachmentRow[],
  userToApi: (user: UserRow | undefined) => ApiUser = userConverter(config, viewer),
) {
  const issueUrl = issueHtmlUrl(config, repo, issue)
  return {
    id: comment.id,
    html_url: `${issueUrl}#issuecomment-${comment.id}`,
    ...commentTargetUrls(config, repo, issue),
    user: userToApi(poster),
    original_author: '',
    original_author_id: 0,
    body: comment.content,
    assets: assets.map((a) => toApiAttachment(config, a)),
    created_at: isoTime(comment.createdUnix),
    updated_at: isoTime(comment.updatedUnix),
  }
}
export type ApiComment = ReturnType<typeof toApiComment>

/** The number and kind of a list of issues (ids bound as one JSON list), for comment records: prepared once per connection. */
const issueNumbersOf = perConnection((db: AppDeps['db']) =>
  db.select({ id: issues.id, index: issues.index, isPull: issues.isPull }).from(issues).where(inJsonList(issues.id, 'ids')).prepare(),
)

/** Comment records for rows of one repository (authors, issues and attachments fetched in one query each, side by side). */
export async function commentsToApi(deps: AppDeps, repo: RepoRow, rows: CommentRow[], viewer: UserRow | null) {
  if (rows.length === 0) return []
  const issueIds = [...new Set(rows.map((c) => c.issueId))]
  const [people, issueRows, assets] = await Promise.all([
    usersByIds(deps, rows.map((c) => c.posterId)),
    issueNumbersOf(deps.db).execute({ ids: JSON.stringify(issueIds) }),
    attachmentsOfComments(deps, rows.map((c) => c.id)),
  ])
  const issueById = new Map(issueRows.map((i) => [i.id, i]))
  const userToApi = userConverter(deps.config, viewer)
  return rows.map((c) => toApiComment(deps.config, repo, issueById.get(c.issueId)!, c, people.get(c.posterId), viewer, assets.get(c.id) ?? [], userToApi))
}

/**
 * The record of a comment its poster has just made (createComment): its issue and poster known,
 * no attachment yet (they are added to a comment after it is made), so nothing is read.
 */
export function newCommentToApi(deps: AppDeps, repo: RepoRow, issue: Pick<IssueRow, 'index' | 'isPull'>, row: CommentRow, poster: UserRow) {
  return toApiComment(deps.config, repo, issue, row, poster, poster, [])
}

/** The TrackedTime record. */
export function toApiTrackedTime(time: TrackedTimeRow, user: Pick<UserRow, 'name'> | undefined) {
  return {
    id: time.id,
    created: isoTime(time.createdUnix),
    time: time.time,
    user_id: time.userId,
    user_name: user?.name ?? '',
    issue_id: time.issueId,
  }
}
export type ApiTrackedTime = ReturnType<typeof toApiTrackedTime>

/** TrackedTime records (user names fetched in one query). */
export async function timesToApi(deps: AppDeps, rows: TrackedTimeRow[]) {
  const people = await usersByIds(deps, rows.map((r) => r.userId))
  return rows.map((r) => toApiTrackedTime(r, people.get(r.userId)))
}

/** The StopWatch record: a running stopwatch with its issue and repository, `seconds` so far. */
export function toApiStopwatch(watch: StopwatchRow, issue: Pick<IssueRow, 'index' | 'title'>, repo: RepoRef, seconds: number) {
  const parts = [[Math.floor(seconds / 3600), 'h'], [Math.floor((seconds % 3600) / 60), 'm'], [seconds % 60, 's']] as const
  return {
    created: isoTime(watch.createdUnix),
    seconds,
    duration: parts.filter(([n]) => n > 0).map(([n, unit]) => `${n}${unit}`).join(' ') || '0s',
    issue_index: issue.index,
    issue_title: issue.title,
    repo_owner_name: repo.ownerName,
    repo_name: repo.name,
  }
}

/** Whether the caller follows an issue (Gitea's WatchInfo of `…/issues/{index}/subscriptions/check`). */
export function toApiIssueWatchInfo(config: Config, repo: RepoRef, issue: IssueRow, subscribed: boolean) {
  const repoUrl = apiUrl(config, `repos/${repoPath(repo)}`)
  return {
    subscribed,
    ignored: !subscribed,
    reason: null,
    created_at: isoTime(issue.createdUnix),
    url: `${repoUrl}/issues/${issue.index}/subscriptions`,
    repository_url: repoUrl,
  }
}
