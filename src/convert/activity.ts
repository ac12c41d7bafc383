import { inArray } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import type { UserRow } from '../auth/caller'
import { comments, issues, releases, type events, type RepoRow } from '../db/schema'
import { ZERO_ID } from '../git/run'
import type { LoggedCommit } from '../git/log'
import { isoTime } from '../lib/time'
import { attachmentsOfComments } from './attachment'
import { toApiComment, type ApiComment } from './issue'
import { pushCommits } from './payload-commit'
import { usersByIds } from './people'
import { mapInBatches } from '../lib/batches'
import { reposToApi, type ApiRepo } from './repo'
import { userConverter, type ApiUser } from './user'

/*
 * Gitea's activity feeds, read from the outbox: each event of the kinds below is one Activity,
 * its op type and content worked out here, the one place the outbox's kinds meet Gitea's action
 * types (models/activities/action.go) and the way its feed notifier fills `content` and `ref_name`.
 */

/** An outbox row (events table). */
type EventRow = typeof events.$inferSelect

/**
 * The outbox kinds that are activities. Left out: `ref.created` / `ref.deleted` (the `push` of
 * the same change is the activity: Gitea's tag pair is one action, and a new branch's commits
 * carry it), edits, labels, assignments, statuses, and `repo.forked` (recorded on the source
 * repository, where Gitea's create_repo action is the fork's).
 */
export const ACTIVITY_KINDS = [
  'push',
  'repo.created',
  'repo.renamed',
  'repo.transferred',
  'issue.opened',
  'issue.closed',
  'issue.reopened',
  'comment.created',
  'pull.opened',
  'pull.merged',
  'review.submitted',
  'release.published',
] as const

export type OpType =
  | 'create_repo'
  | 'rename_repo'
  | 'transfer_repo'
  | 'commit_repo'
  | 'push_tag'
  | 'delete_tag'
  | 'delete_branch'
  | 'create_issue'
  | 'create_pull_request'
  | 'close_issue'
  | 'reopen_issue'
  | 'close_pull_request'
  | 'reopen_pull_request'
  | 'comment_issue'
  | 'comment_pull'
  | 'merge_pull_request'
  | 'approve_pull_request'
  | 'reject_pull_request'
  | 'publish_release'

type Payload = Record<string, unknown>
const str = (v: unknown): string => (typeof v === 'string' ? v : '')

/** Gitea's action type of one event of ACTIVITY_KINDS. */
export function opTypeOf(kind: string, payload: Payload): OpType {
  const pull = payload.isPull === true
  switch (kind) {
    case 'push': {
      const deleted = str(payload.after) === ZERO_ID
      if (str(payload.ref).startsWith('refs/tags/')) return deleted ? 'delete_tag' : 'push_tag'
      return deleted ? 'delete_branch' : 'commit_repo'
    }
    case 'repo.created':
      return 'create_repo'
    case 'repo.renamed':
      return 'rename_repo'
    case 'repo.transferred':
      return 'transfer_repo'
    case 'issue.opened':
    case 'pull.opened':
      return pull || kind === 'pull.opened' ? 'create_pull_request' : 'create_issue'
    case 'issue.closed':
      return pull ? 'close_pull_request' : 'close_issue'
    case 'issue.reopened':
      return pull ? 'reopen_pull_request' : 'reopen_issue'
    case 'comment.created':
      return pull ? 'comment_pull' : 'comment_issue'
    case 'pull.merged':
      return 'merge_pull_request'
    case 'review.submitted':
      return payload.type === 'approved' ? 'approve_pull_request' : payload.type === 'rejected' ? 'reject_pull_request' : 'comment_pull'
    case 'release.published':
      return 'publish_release'
    default:
      throw new Error(`not an activity: ${kind}`)
  }
}

/** Gitea's PushCommit (JSON field names as Go writes them). */
const pushCommit = (c: LoggedCommit) => ({
  Sha1: c.id,
  Message: c.message,
  AuthorEmail: c.authorEmail,
  AuthorName: c.authorName,
  CommitterEmail: c.committerEmail,
  CommitterName: c.committerName,
  Timestamp: c.authorDate,
})

/**
 * A push's content: Gitea's PushCommits as JSON (the newest commits, at most 5, the head, the
 * comparison's path, pushCommits', and how many commits were pushed); a deleted branch has none
 * (its action comes from Gitea's DeleteRef), a tag its head commit only.
 */
async function pushContent(deps: AppDeps, repo: RepoRow, payload: Payload): Promise<string> {
  const ref = str(payload.ref)
  const tag = ref.startsWith('refs/tags/')
  if (str(payload.after) === ZERO_ID && !tag) return ''
  const found = await pushCommits(deps, repo, ref, str(payload.before), str(payload.after))
  const head = found.head ? pushCommit(found.head) : null
  if (tag) return JSON.stringify({ Commits: null, HeadCommit: head, CompareURL: found.compare, Len: 0 })
  return JSON.stringify({ Commits: found.commits.map(pushCommit), HeadCommit: head, CompareURL: found.compare, Len: found.total })
}

/** Gitea cuts a comment's text in an action at 200 characters, dropping a word cut short near the end. */
const COMMENT_CUT = 200
function cutComment(text: string): string {
  // The first characters only (a comment may hold a megabyte: spreading it all was most of a feed's time).
  const chars: string[] = []
  for (const c of text) if (chars.push(c) > COMMENT_CUT) break
  if (chars.length <= COMMENT_CUT) return text
  let cut = chars.slice(0, COMMENT_CUT - 1).join('')
  const space = cut.lastIndexOf(' ')
  if (space !== -1 && cut.length - space < 15) cut = cut.slice(0, space)
  return `${cut}…`
}

/** At most this many pushes' commits are read from git at once. */
const GIT_READS_AT_ONCE = 4

/** One event of a feed page and its repository, as the feeds' query reads them. */
export interface ActivityRow {
  event: EventRow
  repo: RepoRow
}

/**
 * Activity records of one page of events (ACTIVITY_KINDS only), as `viewer` sees them: actors,
 * repositories, issues, comments and releases read in one query each, the commits of the
 * page's pushes from git a few at a time. `userIdOf` is the record's `user_id`: whose feed the
 * action is in (Gitea keeps one copy per feed).
 */
export async function activitiesToApi(deps: AppDeps, viewer: UserRow | null, rows: ActivityRow[], userIdOf: (row: ActivityRow) => number) {
  if (rows.length === 0) return []
  const payloads = rows.map((r) => JSON.parse(r.event.payload) as Payload)
  const ids = (pick: (r: ActivityRow, p: Payload) => number | null | undefined) => [
    ...new Set(rows.map((r, i) => pick(r, payloads[i]!)).filter((n): n is number => typeof n === 'number')),
  ]
  const issueIds = ids((r) => r.event.issueId)
  const commentIds = ids((r) => (r.event.kind === 'comment.created' ? r.event.commentId : null))
  const releaseIds = ids((r, p) => (r.event.kind === 'release.published' && typeof p.releaseId === 'number' ? p.releaseId : null))
  const [issueRows, commentRows, releaseRows, repoRecords] = await Promise.all([
    issueIds.length ? deps.db.select({ id: issues.id, index: issues.index, title: issues.title, isPull: issues.isPull }).from(issues).where(inArray(issues.id, issueIds)) : [],
    commentIds.length ? deps.db.select().from(comments).where(inArray(comments.id, commentIds)) : [],
    releaseIds.length ? deps.db.select({ id: releases.id, title: releases.title }).from(releases).where(inArray(releases.id, releaseIds)) : [],
    reposToApi(deps, viewer, [...new Map(rows.map((r) => [r.repo.id, r.repo])).values()]),
  ])
  const issueById = new Map(issueRows.map((i) => [i.id, i]))
  const releaseTitle = new Map(releaseRows.map((r) => [r.id, r.title]))
  const repoById = new Map<number, ApiRepo>(repoRecords.map((r) => [r.id, r]))
  const repoRows = new Map(rows.map((r) => [r.repo.id, r.repo]))
  const people = await usersByIds(deps, [...ids((r) => r.event.actorId), ...commentRows.map((c) => c.posterId)])
  const assets = await attachmentsOfComments(deps, commentRows.map((c) => c.id))
  const userToApi = userConverter(deps.config, viewer)

  const commentRecords = new Map<number, ApiComment>()
  for (const c of commentRows) {
    const issue = issueById.get(c.issueId)
    const repo = repoRows.get(c.repoId)
    if (issue && repo) commentRecords.set(c.id, toApiComment(deps.config, repo, issue, c, people.get(c.posterId), viewer, assets.get(c.id) ?? [], userToApi))
  }
  const commentText = new Map(commentRows.map((c) => [c.id, c.content]))

  const pushRows = rows.map((r, i) => ({ r, p: payloads[i]! })).filter(({ r }) => r.event.kind === 'push')
  const pushTexts = await mapInBatches(pushRows, GIT_READS_AT_ONCE, ({ r, p }) => pushContent(deps, r.repo, p))
  const pushes = new Map(pushRows.map(({ r }, i) => [r.event.id, pushTexts[i]!]))

  return rows.map((row, i) => {
    const { event, repo } = row
    const payload = payloads[i]!
    const op = opTypeOf(event.kind, payload)
    const issue = event.issueId === null ? undefined : issueById.get(event.issueId)
    const index = issue?.index ?? (typeof payload.index === 'number' ? payload.index : 0)
    let content = ''
    let refName = ''
    switch (event.kind) {
      case 'push':
        content = pushes.get(event.id) ?? ''
        refName = str(payload.ref)
        break
      case 'repo.renamed':
        content = str(payload.from)
        break
      case 'repo.transferred':
        content = `${str(payload.from)}/${str(payload.name)}`
        break
      case 'issue.opened':
      case 'pull.opened':
      case 'pull.merged':
        content = `${index}|${issue?.title ?? ''}`
        break
      case 'issue.closed':
      case 'issue.reopened':
        content = `${index}|`
        break
      case 'comment.created':
        content = `${index}|${cutComment(commentText.get(event.commentId ?? 0) ?? '')}`
        break
      case 'review.submitted':
        content = `${index}|${str(payload.content).split('\n')[0]}`
        break
      case 'release.published':
        content = releaseTitle.get(Number(payload.releaseId)) ?? ''
        refName = `refs/tags/${str(payload.tagName)}`
        break
    }
    const comment = event.kind === 'comment.created' && event.commentId !== null ? (commentRecords.get(event.commentId) ?? null) : null
    const actor: ApiUser = userToApi(event.actorId === null ? undefined : people.get(event.actorId))
    return {
      id: event.id,
      user_id: userIdOf(row),
      op_type: op,
      act_user_id: event.actorId ?? actor.id,
      act_user: actor,
      repo_id: repo.id,
      repo: repoById.get(repo.id)!,
      comment_id: comment ? comment.id : 0,
      comment,
      ref_name: refName,
      is_private: repo.isPrivate,
      content,
      created: isoTime(event.createdUnix),
    }
  })
}
export type ApiActivity = Awaited<ReturnType<typeof activitiesToApi>>[number]
