import { and, asc, count, eq, exists, gte, lt, lte, or, sql, type Placeholder } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { recordContentEdit } from '../content-history/service'
import { preparedPage, selectPage, type Page, type Paged } from '../../lib/pagination'
import { perConnection, perConnectionShape, writeTransaction } from '../../db/client'
import { comments, issues, reactions, type CommentRow, type IssueRow } from '../../db/schema'
import { greatestOf, queryBuilder } from '../../db/sql'
import type { UserRow } from '../../auth/caller'
import { AccessMode } from '../../auth/access'
import { refuseBlocked, refuseBlockedInConversation } from '../../auth/blocking'
import type { RepoContext } from '../../auth/repo-context'
import { forbidden, notFound, unprocessable } from '../../lib/errors'
import { nowUnix, parseTimestamp } from '../../lib/time'
import { findIssue } from '../issues/queries'
import { recordCommentEvent } from '../../events/issue-events'
import { attachmentFilesOf } from '../attachments/files'

import { PLAIN_COMMENT } from './types'
export { PLAIN_COMMENT }

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

/** Comments updated within the window, both ends inclusive (an end a value, or a placeholder for a prepared statement). */
const inWindow = (w: { since?: number | Placeholder; before?: number | Placeholder }) =>
  and(w.since === undefined ? undefined : gte(comments.updatedUnix, w.since), w.before === undefined ? undefined : lte(comments.updatedUnix, w.before))

const commentOrder = [asc(comments.createdUnix), asc(comments.id)]

/**
 * listIssueComments' statements for one shape (which ends of the window are given, a page or
 * all): the rows and their count, the values bound. Every issue page and comment list reads them;
 * building them anew each time cost more than running them.
 */
function prepareIssueComments(db: AppDeps['db'], since: boolean, before: boolean, paged: boolean) {
  const p = sql.placeholder
  const where = and(eq(comments.issueId, p('issue')), eq(comments.type, PLAIN_COMMENT), inWindow({ since: since ? p('since') : undefined, before: before ? p('before') : undefined }))
  const all = db.select().from(comments).where(where).orderBy(...commentOrder)
  return {
    rows: (paged ? all.limit(p('limit')).offset(p('offset')) : all).prepare(),
    count: db.select({ n: count() }).from(comments).where(where).prepare(),
  }
}
/** Each connection's statements of listIssueComments, by shape (at most 2 × 2 × 2), prepared when first asked. */
const issueCommentStatements = perConnectionShape<ReturnType<typeof prepareIssueComments>>()

/** Plain comments of an issue, oldest first, updated within the window: a page, or all with `page` null. */
export async function listIssueComments(deps: AppDeps, issue: IssueRow, window: CommentWindow, page: Page | null): Promise<Paged<CommentRow>> {
  const shape = [window.since !== undefined, window.before !== undefined, page !== null] as const
  const found = issueCommentStatements(deps.db, shape.map(Number).join(''), () => prepareIssueComments(deps.db, ...shape))
  return await preparedPage<CommentRow>(found, { issue: issue.id, since: window.since ?? 0, before: window.before ?? 0 }, page)
}

/**
 * How many of an issue's plain comments come before comment `id` in listIssueComments' order
 * (where a page of them starts), or null when it is not one of them.
 */
export async function commentPosition(deps: AppDeps, issue: IssueRow, id: number): Promise<number | null> {
  const ofIssue = and(eq(comments.issueId, issue.id), eq(comments.type, PLAIN_COMMENT))
  const [found] = await deps.db.select({ createdUnix: comments.createdUnix }).from(comments).where(and(ofIssue, eq(comments.id, id)))
  if (!found) return null
  const earlier = or(lt(comments.createdUnix, found.createdUnix), and(eq(comments.createdUnix, found.createdUnix), lt(comments.id, id)))
  const [before] = await deps.db.select({ n: count() }).from(comments).where(and(ofIssue, earlier))
  return Number(before?.n ?? 0)
}

/** How many of an issue's plain comments were made at or before `unix` (a conversation page's window ends at the next one). */
export async function commentsUntil(deps: AppDeps, issue: IssueRow, unix: number): Promise<number> {
  const [found] = await deps.db
    .select({ n: count() })
    .from(comments)
    .where(and(eq(comments.issueId, issue.id), eq(comments.type, PLAIN_COMMENT), lte(comments.createdUnix, unix)))
  return Number(found?.n ?? 0)
}

/** Plain comments of a repository, oldest first, updated within the window: one page. */
export async function listRepoComments(deps: AppDeps, repoId: number, window: CommentWindow, page: Page, isPull?: boolean): Promise<Paged<CommentRow>> {
  // `isPull`: only the comments of issues of that kind (the caller reads one tracker only).
  const ofKind =
    isPull === undefined ? undefined : exists(qb.select({ one: issues.id }).from(issues).where(and(eq(issues.id, comments.issueId), eq(issues.isPull, isPull))))
  return await selectPage(deps.db, comments, and(eq(comments.repoId, repoId), eq(comments.type, PLAIN_COMMENT), inWindow(window), ofKind), commentOrder, page)
}

const qb = queryBuilder()

const requireBody = (body: string) => {
  if (body.trim() === '') throw unprocessable('Required', 'Body')
}

/**
 * Adds a comment (or a timeline event, `type` > 0) to an issue and keeps its count; inside or
 * outside a transaction. Both statements sent together (on PostgreSQL one round trip), naming the
 * issue by its repository and index: a caller may send them before its own read of the issue is
 * answered (createComment), and a missing issue fails the insert.
 */
export async function insertComment(deps: AppDeps, issue: Pick<IssueRow, 'repoId' | 'index'>, poster: UserRow, type: number, content: string, meta = '{}'): Promise<CommentRow> {
  const now = nowUnix()
  const writes = commentWritesOf(deps.db)
  const named = { repoId: issue.repoId, index: issue.index, now }
  const [inserted] = await Promise.all([
    writes.insert.execute({ ...named, type, posterId: poster.id, content, meta }) as Promise<CommentRow[]>,
    (type === PLAIN_COMMENT ? writes.counted : writes.touched).execute(named),
  ])
  return inserted[0]!
}

/**
 * insertComment's statements, built once per connection and prepared (a comment's writes are the
 * hottest of a busy site; drizzle built each anew: bench/issues.ts, 16 writers commenting, measured
 * 30-40% more comments a second on SQLite and ~20% on PostgreSQL prepared): the issue named by its
 * repository and index, as the request names it.
 */
const commentWritesOf = perConnection((db) => {
  const p = sql.placeholder
  const named = and(eq(issues.repoId, p('repoId')), eq(issues.index, p('index')))
  return {
    insert: db
      .insert(comments)
      .values({
        type: p('type'),
        posterId: p('posterId'),
        issueId: sql`(select ${issues.id} from ${issues} where ${named})`,
        repoId: p('repoId'),
        content: p('content'),
        meta: p('meta'),
        createdUnix: p('now'),
        updatedUnix: p('now'),
      } as never)
      .returning()
      .prepare(),
    counted: db
      .update(issues)
      .set({ numComments: sql`${issues.numComments} + 1`, updatedUnix: p('now') } as never)
      .where(named)
      .prepare(),
    touched: db
      .update(issues)
      .set({ updatedUnix: p('now') } as never)
      .where(named)
      .prepare(),
  }
})

/**
 * Comments on an issue: anyone who can read; a locked issue only takes comments from writers.
 * Answers the comment and its issue as read in the transaction (for its record, newCommentToApi).
 */
export async function createComment(deps: AppDeps, ctx: RepoContext, index: number, poster: UserRow, body: string): Promise<{ row: CommentRow; issue: IssueRow }> {
  requireBody(body)
  return await writeTransaction(deps.db, async () => {
    // The issue's read, the comment and the issue's count sent together (on PostgreSQL one round
    // trip under the write lock): the checks, made once the issue is read, roll the comment back
    // when they refuse; a missing issue answers 404 (its insert fails too, unseen).
    const found = findIssue(deps, ctx.repo.id, index)
    const written = insertComment(deps, { repoId: ctx.repo.id, index }, poster, PLAIN_COMMENT, body)
    written.catch(() => {}) // awaited below, once the checks passed
    const issue = await found
    if (issue.isLocked && ctx.mode < AccessMode.Write) throw forbidden('The issue is locked')
    // Gitea's CreateIssueComment: blocked by the issue's poster or the repository's owner, unless an administrator of it.
    await refuseBlockedInConversation(deps.db, poster.id, { posterId: issue.posterId, ownerId: ctx.repo.ownerId, repoAdmin: ctx.mode >= AccessMode.Admin })
    const row = await written
    await recordCommentEvent(deps.db, issue, row, poster.id, 'comment.created')
    return { row, issue }
  })
}

/** A comment (of any kind) of the repository by id, or undefined: the one lookup of a comment a path names. */
export async function commentOfRepo(deps: AppDeps, repoId: number, id: number): Promise<CommentRow | undefined> {
  if (!Number.isSafeInteger(id)) return undefined
  return (await deps.db
    .select()
    .from(comments)
    .where(and(eq(comments.id, id), eq(comments.repoId, repoId))))[0]
}

/** A comment of this repository (and of issue `index` when given) that the caller may change. */
async function ownComment(deps: AppDeps, ctx: RepoContext, id: number, index: number | undefined, caller: UserRow): Promise<CommentRow> {
  const row = await commentOfRepo(deps, ctx.repo.id, id)
  if (!row) throw notFound(`comment does not exist [id: ${id}]`)
  if (index !== undefined && (await findIssue(deps, ctx.repo.id, index)).id !== row.issueId) throw notFound(`comment does not exist [id: ${id}]`)
  if (!mayChangeComment(ctx, caller, row.posterId)) throw forbidden('Only the author or a repository admin may change a comment')
  return row
}

/**
 * Who may edit or delete a comment, through the API and the conversation page alike: its author or
 * an administrator of the repository (the API's rule as ../shared/api fixes it; Gitea 1.23 lets
 * writers too).
 */
export const mayChangeComment = (ctx: RepoContext, caller: UserRow, posterId: number): boolean => posterId === caller.id || ctx.mode >= AccessMode.Admin

/** Edits a comment; null when it is not a plain comment (Gitea answers 204 and changes nothing). */
export async function editComment(deps: AppDeps, ctx: RepoContext, id: number, index: number | undefined, caller: UserRow, body: string) {
  return await writeTransaction(deps.db, async () => {
    const row = await ownComment(deps, ctx, id, index, caller)
    if (row.type !== PLAIN_COMMENT) return null
    requireBody(body)
    // Gitea's UpdateComment: not by one the owner blocked, but for the repository's administrators.
    if (ctx.mode < AccessMode.Admin) await refuseBlocked(deps.db, caller.id, [ctx.repo.ownerId])
    const now = nowUnix()
    const updated = (await deps.db
      .update(comments)
      .set({ content: body, updatedUnix: now })
      .where(eq(comments.id, row.id))
      .returning())[0]!
    if (row.content !== body) {
      await recordContentEdit(deps.db, { issueId: row.issueId, commentId: row.id }, { content: row.content, posterId: row.posterId, createdUnix: row.createdUnix }, { content: body, editorId: caller.id, editedUnix: now })
      await recordCommentEvent(deps.db, await issueOfComment(deps, row), updated, caller.id, 'comment.edited', { changes: { body: { from: row.content } } })
    }
    return updated
  })
}

/** The issue a comment belongs to (index and kind, for its events). */
const issueOfComment = async (deps: AppDeps, row: CommentRow) =>
  (await deps.db.select({ id: issues.id, index: issues.index, isPull: issues.isPull }).from(issues).where(eq(issues.id, row.issueId)))[0]!

/**
 * Deletes a comment and keeps the issue's count. A timeline event (not a plain comment) stays,
 * answered like a deletion (Gitea 1.12+: 204, unchanged), so the events of tracked time remain.
 */
export async function deleteComment(deps: AppDeps, ctx: RepoContext, id: number, index: number | undefined, caller: UserRow): Promise<void> {
  const files = await writeTransaction(deps.db, async () => {
    const row = await ownComment(deps, ctx, id, index, caller)
    if (row.type !== PLAIN_COMMENT) return null
    // The comment cannot be read after this: the event keeps it as it was.
    await recordCommentEvent(deps.db, await issueOfComment(deps, row), row, caller.id, 'comment.deleted', { comment: row })
    // Its attachments' rows go by the cascade; their files once this committed (or by the sweep).
    const files = await attachmentFilesOf(deps, { commentId: row.id })
    await deps.db.delete(comments).where(eq(comments.id, row.id))
    // A comment's reactions go with it (reactions name their comment by id, without a foreign key).
    await deps.db.delete(reactions).where(eq(reactions.commentId, row.id))
    await deps.db
      .update(issues)
      .set({ numComments: greatestOf(sql`${issues.numComments} - 1`, 0) })
      .where(eq(issues.id, row.issueId))
    return files
  })
  files?.removeFiles()
}
