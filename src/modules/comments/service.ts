import { and, asc, eq, gte, inArray, lte, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { writeTransaction } from '../../db/client'
import { comments, issues } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode, type RepoRow } from '../../auth/access'
import type { RepoContext } from '../../auth/repo-context'
import { forbidden, notFound, unprocessable } from '../../lib/errors'
import { nowUnix, parseTimestamp } from '../../lib/time'
import { toApiComment, type CommentRow, type IssueRow } from '../../lib/convert/issue'
import { userConverter } from '../../lib/convert/user'
import { findIssue } from '../issues/service'
import { usersByIds } from '../users/service'
import { recordCommentEvent } from '../../events/issue-events'

/** Plain comments (type 0) are the only ones the API lists; other types are timeline events. */
export const PLAIN_COMMENT = 0

/** `since` (Gitea's name) or `string` (the seed's) → Unix seconds, or undefined. */
/** Updated-time window of a comment list: `since` (or the seed's `string`) and, Gitea 1.12+, `before` (both inclusive). */
export interface CommentWindow {
  since?: number
  before?: number
}

export function windowOf(query: { since?: string; string?: string; before?: string }): CommentWindow {
  const since = query.since || query.string
  return {
    since: since ? parseTimestamp(since, 'since') : undefined,
    before: query.before ? parseTimestamp(query.before, 'before') : undefined,
  }
}

const inWindow = (w: CommentWindow) =>
  and(w.since === undefined ? undefined : gte(comments.updatedUnix, w.since), w.before === undefined ? undefined : lte(comments.updatedUnix, w.before))

/** Comment records for rows of one repository (authors and issues fetched in one query each). */
export function commentsToApi(deps: AppDeps, repo: RepoRow, rows: CommentRow[], viewer: UserRow | null) {
  if (rows.length === 0) return []
  const people = usersByIds(deps, rows.map((c) => c.posterId))
  const issueIds = [...new Set(rows.map((c) => c.issueId))]
  const issueById = new Map(
    deps.db
      .select({ id: issues.id, index: issues.index, isPull: issues.isPull })
      .from(issues)
      .where(inArray(issues.id, issueIds))
      .all()
      .map((i) => [i.id, i]),
  )
  const userToApi = userConverter(deps.config, viewer)
  return rows.map((c) => toApiComment(deps.config, repo, issueById.get(c.issueId)!, c, people.get(c.posterId), viewer, userToApi))
}

const commentOrder = [asc(comments.createdUnix), asc(comments.id)]

/** Plain comments of an issue, oldest first, updated within the window: a page, or all with `page` null. */
export function listIssueComments(deps: AppDeps, issue: IssueRow, window: CommentWindow, page: Page | null): Paged<CommentRow> {
  return selectPage(deps.db, comments, and(eq(comments.issueId, issue.id), eq(comments.type, PLAIN_COMMENT), inWindow(window)), commentOrder, page)
}

/** Plain comments of a repository, oldest first, updated within the window: one page. */
export function listRepoComments(deps: AppDeps, repoId: number, window: CommentWindow, page: Page): Paged<CommentRow> {
  return selectPage(deps.db, comments, and(eq(comments.repoId, repoId), eq(comments.type, PLAIN_COMMENT), inWindow(window)), commentOrder, page)
}

const requireBody = (body: string) => {
  if (body.trim() === '') throw unprocessable('Required', 'Body')
}

/** Adds a comment (or a timeline event, `type` > 0) to an issue and keeps its count; inside or outside a transaction. */
export function insertComment(deps: AppDeps, issue: IssueRow, poster: UserRow, type: number, content: string, meta = '{}'): CommentRow {
  const now = nowUnix()
  const row = deps.db
    .insert(comments)
    .values({ type, posterId: poster.id, issueId: issue.id, repoId: issue.repoId, content, meta, createdUnix: now, updatedUnix: now })
    .returning()
    .get()
  deps.db
    .update(issues)
    .set(type === PLAIN_COMMENT ? { numComments: sql`${issues.numComments} + 1`, updatedUnix: now } : { updatedUnix: now })
    .where(eq(issues.id, issue.id))
    .run()
  return row
}

/** Comments on an issue: anyone who can read; a locked issue only takes comments from writers. */
export function createComment(deps: AppDeps, ctx: RepoContext, index: number, poster: UserRow, body: string) {
  requireBody(body)
  return writeTransaction(deps.db, () => {
    const issue = findIssue(deps, ctx.repo.id, index)
    if (issue.isLocked && ctx.mode < AccessMode.Write) throw forbidden('The issue is locked')
    const row = insertComment(deps, issue, poster, PLAIN_COMMENT, body)
    recordCommentEvent(deps.db, issue, row, poster.id, 'comment.created')
    return row
  })
}

/** A comment of this repository (and of issue `index` when given) that the caller may change. */
function ownComment(deps: AppDeps, ctx: RepoContext, id: number, index: number | undefined, caller: UserRow): CommentRow {
  const row = Number.isSafeInteger(id)
    ? deps.db
        .select()
        .from(comments)
        .where(and(eq(comments.id, id), eq(comments.repoId, ctx.repo.id)))
        .get()
    : undefined
  if (!row) throw notFound(`comment does not exist [id: ${id}]`)
  if (index !== undefined && findIssue(deps, ctx.repo.id, index).id !== row.issueId) throw notFound(`comment does not exist [id: ${id}]`)
  if (row.posterId !== caller.id && ctx.mode < AccessMode.Admin) throw forbidden('Only the author or a repository admin may change a comment')
  return row
}

/** Edits a comment; null when it is not a plain comment (Gitea answers 204 and changes nothing). */
export function editComment(deps: AppDeps, ctx: RepoContext, id: number, index: number | undefined, caller: UserRow, body: string) {
  return writeTransaction(deps.db, () => {
    const row = ownComment(deps, ctx, id, index, caller)
    if (row.type !== PLAIN_COMMENT) return null
    requireBody(body)
    const updated = deps.db
      .update(comments)
      .set({ content: body, updatedUnix: nowUnix() })
      .where(eq(comments.id, row.id))
      .returning()
      .get()!
    if (row.content !== body)
      recordCommentEvent(deps.db, issueOfComment(deps, row), updated, caller.id, 'comment.edited', { changes: { body: { from: row.content } } })
    return updated
  })
}

/** The issue a comment belongs to (index and kind, for its events). */
const issueOfComment = (deps: AppDeps, row: CommentRow) =>
  deps.db.select({ id: issues.id, index: issues.index, isPull: issues.isPull }).from(issues).where(eq(issues.id, row.issueId)).get()!

/**
 * Deletes a comment and keeps the issue's count. A timeline event (not a plain comment) stays,
 * answered like a deletion (Gitea 1.12+: 204, unchanged), so the events of tracked time remain.
 */
export function deleteComment(deps: AppDeps, ctx: RepoContext, id: number, index: number | undefined, caller: UserRow): void {
  writeTransaction(deps.db, () => {
    const row = ownComment(deps, ctx, id, index, caller)
    if (row.type !== PLAIN_COMMENT) return
    // The comment cannot be read after this: the event keeps it as it was.
    recordCommentEvent(deps.db, issueOfComment(deps, row), row, caller.id, 'comment.deleted', { comment: row })
    deps.db.delete(comments).where(eq(comments.id, row.id)).run()
    deps.db
      .update(issues)
      .set({ numComments: sql`max(${issues.numComments} - 1, 0)` })
      .where(eq(issues.id, row.issueId))
      .run()
  })
}
