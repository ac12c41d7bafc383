import { inArray } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import type { UserRow } from '../auth/caller'
import { issues, labels, milestones, type CommentRow, type IssueRow, type RepoRow, type ReviewRow } from '../db/schema'
import { AccessMode, issueUnitOf, repoAccesses, unitMode } from '../auth/access'
import { isoTime } from '../lib/time'
import { commentTargetUrls, issueHtmlUrl, issuesOfReposToApi, toApiLabel, toApiMilestone, type ApiIssue, type ApiLabel, type ApiMilestone } from './issue'
import { usersByIds } from './people'
import { reposByIds } from './repo'
import { userConverter, type ApiUser } from './user'

/** Gitea's timeline type of each comment row type Warren keeps (0: a plain comment). */
const COMMENT_TYPES: Record<number, string> = {
  0: 'comment',
  11: 'delete_branch',
  12: 'start_tracking',
  13: 'stop_tracking',
  14: 'add_time_manual',
  15: 'cancel_tracking',
  4: 'commit_ref',
  16: 'added_deadline',
  17: 'modified_deadline',
  18: 'removed_deadline',
  26: 'delete_time_manual',
  34: 'pull_scheduled_merge',
  35: 'pull_cancel_scheduled_merge',
}

/** An outbox event as the timeline reads it (the outbox's EventRecord). */
interface TimelineEvent {
  id: number
  kind: string
  actorId: number | null
  createdUnix: number
  payload: Record<string, unknown>
}

/** One entry of the API's timeline (the sources `modules/issues/timeline.ts` merges). */
export type TimelineSource =
  | { kind: 'comment'; row: CommentRow }
  | { kind: 'review'; row: ReviewRow }
  | { kind: 'event'; event: TimelineEvent }

/** A label or milestone deleted since its event: what the event kept of it. */
type Gone = { id: number; name: string } | { id: number; title: string }
type Named = { id?: unknown; name?: unknown; title?: unknown; login?: unknown }
const idsOf = (value: unknown): number[] => (Array.isArray(value) ? value.map((v) => Number((v as Named | null)?.id)).filter((id) => Number.isSafeInteger(id) && id > 0) : [])
const idOf = (value: unknown): number => {
  const id = Number((value as Named | null | undefined)?.id)
  return Number.isSafeInteger(id) && id > 0 ? id : 0
}
const text = (value: unknown): string => (typeof value === 'string' ? value : '')

/**
 * Gitea's TimelineComment records of an issue's timeline (ToTimelineComment's field set). An event
 * of the outbox carries its event id as `id` (a comment's or review's id space is its own); a label
 * change becomes one record per label (body "1" added, "" removed), as Gitea keeps one comment each;
 * a label or milestone deleted since is given by the id and name the event kept.
 */
export async function timelineToApi(deps: AppDeps, repo: RepoRow, issue: IssueRow, sources: TimelineSource[], viewer: UserRow | null) {
  const events = sources.flatMap((s) => (s.kind === 'event' ? [s.event] : []))
  const userIds = sources.flatMap((s) =>
    s.kind === 'comment' ? [s.row.posterId] : s.kind === 'review' ? [s.row.reviewerId] : [s.event.actorId ?? 0, idOf(s.event.payload.assignee), Number(s.event.payload.reviewerId ?? 0)],
  )
  const people = await usersByIds(deps, userIds.filter((id) => Number.isSafeInteger(id) && id > 0))
  const labelIds = [...new Set(events.flatMap((e) => [...idsOf(e.payload.added), ...idsOf(e.payload.removed)]))]
  const milestoneIds = [...new Set(events.map((e) => idOf(e.payload.milestone)).filter((id) => id > 0))]
  const labelRows = new Map((labelIds.length ? await deps.db.select().from(labels).where(inArray(labels.id, labelIds)) : []).map((l) => [l.id, l]))
  const milestoneRows = new Map((milestoneIds.length ? await deps.db.select().from(milestones).where(inArray(milestones.id, milestoneIds)) : []).map((m) => [m.id, m]))
  const dependents = await dependentIssues(deps, events, viewer)
  const toUser = userConverter(deps.config, viewer)
  const user = (id: number | null | undefined): ApiUser => toUser(id ? people.get(id) : undefined)
  const issueUrl = issueHtmlUrl(deps.config, repo, issue)
  const base = { html_url: issueUrl, ...commentTargetUrls(deps.config, repo, issue) }
  const label = (value: unknown): ApiLabel | Gone | null => {
    const id = idOf(value)
    const row = labelRows.get(id)
    if (row) return toApiLabel(deps.config, repo, row)
    return id ? { id, name: text((value as Named).name) } : null
  }
  const milestone = (value: unknown): ApiMilestone | Gone | null => {
    const id = idOf(value)
    const row = milestoneRows.get(id)
    if (row) return toApiMilestone(row)
    return id ? { id, title: text((value as Named).title) } : null
  }
  // A title change keeps the title it replaced; the new one is the next change's old one, or the title now.
  const titleChanges = events.filter((e) => e.kind === 'issue.edited')
  const newTitle = new Map(titleChanges.map((e, i) => [e.id, text((titleChanges[i + 1]?.payload.changes as { title?: { from?: unknown } } | undefined)?.title?.from) || issue.title]))

  const records = []
  for (const source of sources) {
    if (source.kind === 'comment') {
      const c = source.row
      records.push(
        timelineRecord({
          ...base,
          id: c.id,
          html_url: `${issueUrl}#issuecomment-${c.id}`,
          type: COMMENT_TYPES[c.type] ?? 'comment',
          user: user(c.posterId),
          body: c.content,
          // A commit's reference names its commit (Gitea's RefCommitSHA).
          ...(c.type === 4 ? { ref_commit_sha: text((JSON.parse(c.meta) as { commit?: unknown }).commit) } : {}),
          created_at: isoTime(c.createdUnix),
          updated_at: isoTime(c.updatedUnix),
        }),
      )
      continue
    }
    if (source.kind === 'review') {
      const r = source.row
      records.push(
        timelineRecord({
          ...base,
          id: r.id,
          html_url: `${issueUrl}#pullrequestreview-${r.id}`,
          type: 'review',
          review_id: r.id,
          user: user(r.reviewerId),
          body: r.content,
          created_at: isoTime(r.createdUnix),
          updated_at: isoTime(r.updatedUnix),
        }),
      )
      continue
    }
    const e = source.event
    const p = e.payload
    const at = { ...base, id: e.id, user: user(e.actorId), created_at: isoTime(e.createdUnix), updated_at: isoTime(e.createdUnix) }
    switch (e.kind) {
      case 'issue.closed':
      case 'issue.reopened':
        records.push(timelineRecord({ ...at, type: e.kind === 'issue.closed' ? 'close' : 'reopen', ...(p.commit ? { ref_commit_sha: text(p.commit) } : {}) }))
        break
      case 'issue.label_updated':
      case 'issue.label_cleared':
        for (const [list, body] of [[p.added, '1'], [p.removed, '']] as const)
          for (const l of Array.isArray(list) ? list : []) records.push(timelineRecord({ ...at, type: 'label', body, label: label(l) }))
        break
      case 'issue.assigned':
      case 'issue.unassigned':
        records.push(timelineRecord({ ...at, type: 'assignees', assignee: user(idOf(p.assignee)), removed_assignee: e.kind === 'issue.unassigned' }))
        break
      case 'issue.milestoned':
        records.push(timelineRecord({ ...at, type: 'milestone', milestone: milestone(p.milestone) }))
        break
      case 'issue.demilestoned':
        records.push(timelineRecord({ ...at, type: 'milestone', old_milestone: milestone(p.milestone) }))
        break
      case 'issue.edited':
        records.push(timelineRecord({ ...at, type: 'change_title', old_title: text((p.changes as { title?: { from?: unknown } } | undefined)?.title?.from), new_title: newTitle.get(e.id) ?? issue.title }))
        break
      case 'issue.ref_changed':
        records.push(timelineRecord({ ...at, type: 'change_issue_ref', old_ref: text(p.oldRef), new_ref: text(p.newRef) }))
        break
      case 'issue.dependency_added':
      case 'issue.dependency_removed':
        records.push(timelineRecord({ ...at, type: e.kind === 'issue.dependency_added' ? 'add_dependency' : 'remove_dependency', dependent_issue: dependents.get(idOf(p.dependent)) ?? null }))
        break
      case 'issue.pinned':
      case 'issue.unpinned':
        records.push(timelineRecord({ ...at, type: e.kind === 'issue.pinned' ? 'pin' : 'unpin' }))
        break
      case 'issue.locked':
      case 'issue.unlocked':
        // Gitea's lock and unlock comments: the lock's reason is the comment's content.
        records.push(timelineRecord({ ...at, type: e.kind === 'issue.locked' ? 'lock' : 'unlock', body: text(p.reason) }))
        break
      case 'issue.project_changed':
        // Gitea's `project` comment: the project it went into (project_id) and the one it left (old_project_id).
        records.push(timelineRecord({ ...at, type: 'project', project_id: idOf(p.project), old_project_id: idOf(p.oldProject) }))
        break
      case 'issue.project_column_changed':
        records.push(timelineRecord({ ...at, type: 'project_board', project_id: idOf(p.project) }))
        break
      case 'pull.merged':
        records.push(timelineRecord({ ...at, type: 'merge_pull', ref_commit_sha: text(p.mergeCommitSha) }))
        break
      case 'pull.synchronized':
        // Gitea's pull_push body: the push as JSON (the commits it added are not kept; the new head is).
        records.push(timelineRecord({ ...at, type: 'pull_push', body: JSON.stringify({ is_force_push: false, commit_ids: [text(p.after)].filter(Boolean) }) }))
        break
      case 'review.requested':
      case 'review.request_removed':
        records.push(timelineRecord({ ...at, type: 'review_request', assignee: user(Number(p.reviewerId ?? 0)), removed_assignee: e.kind === 'review.request_removed' }))
        break
    }
  }
  return records
}

/**
 * The Issue records of the other issues the dependency events name, as `viewer` may see them: one
 * in a repository (or a unit of it) the viewer cannot read is left out (`dependent_issue` null).
 */
async function dependentIssues(deps: AppDeps, events: TimelineEvent[], viewer: UserRow | null): Promise<Map<number, ApiIssue>> {
  const ids = [...new Set(events.filter((e) => e.kind.startsWith('issue.dependency_')).map((e) => idOf(e.payload.dependent)).filter((id) => id > 0))]
  if (ids.length === 0) return new Map()
  const rows = await deps.db.select().from(issues).where(inArray(issues.id, ids))
  const repoIds = [...new Set(rows.map((r) => r.repoId))]
  const repoRows = await reposByIds(deps, repoIds)
  // The issue's unit, not the repository's code: a team may give the code and not the issues.
  const accesses = await repoAccesses(deps.db, viewer, repoRows)
  const byId = new Map(repoRows.map((r) => [r.id, r]))
  const shown = rows.filter((r) => {
    const repo = byId.get(r.repoId)
    const access = accesses.get(r.repoId)
    if (!repo || !access || !(r.isPull ? repo.hasPullRequests : repo.hasIssues)) return false
    return unitMode(access, issueUnitOf(r)) >= AccessMode.Read
  })
  const readable = new Map(shown.map((r) => [r.repoId, byId.get(r.repoId)!]))
  const records = await issuesOfReposToApi(deps, readable, shown, viewer)
  return new Map(shown.map((r, i) => [r.id, records[i]!]))
}

/** A TimelineComment with Gitea's defaults for the fields a record of its type leaves unset. */
function timelineRecord(fields: {
  id: number
  type: string
  html_url: string
  pull_request_url: string
  issue_url: string
  user: ApiUser
  created_at: string
  updated_at: string
  body?: string
  label?: ApiLabel | Gone | null
  milestone?: ApiMilestone | Gone | null
  old_milestone?: ApiMilestone | Gone | null
  assignee?: ApiUser | null
  removed_assignee?: boolean
  old_title?: string
  new_title?: string
  old_ref?: string
  new_ref?: string
  review_id?: number
  ref_commit_sha?: string
  dependent_issue?: ApiIssue | null
  project_id?: number
  old_project_id?: number
}) {
  return {
    body: '',
    label: null,
    milestone: null,
    old_milestone: null,
    assignee: null,
    assignee_team: null,
    removed_assignee: false,
    resolve_doer: null,
    old_title: '',
    new_title: '',
    old_ref: '',
    new_ref: '',
    old_project_id: 0,
    project_id: 0,
    review_id: 0,
    ref_action: '',
    ref_commit_sha: '',
    ref_issue: null,
    ref_comment: null,
    tracked_time: null,
    dependent_issue: null,
    ...fields,
  }
}
export type ApiTimelineComment = ReturnType<typeof timelineRecord>
