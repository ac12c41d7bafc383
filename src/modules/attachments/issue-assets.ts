import { and, asc, eq, isNull } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { AccessMode } from '../../auth/access'
import type { RepoContext } from '../../auth/repo-context'
import { attachments, comments, issues, type AttachmentRow, type CommentRow, type IssueRow } from '../../db/schema'
import { recordCommentEvent, recordIssueEvent } from '../../events/issue-events'
import { forbidden, notFound } from '../../lib/errors'
import { pathNumber } from '../../lib/path-number'
import { nowUnix } from '../../lib/time'
import { findIssue } from '../issues/queries'
import { PLAIN_COMMENT, commentOfRepo } from '../comments/service'
import { checkAllowedType, checkAttachmentName, checkRoomFor, deleteAttachment, receiveAttachment } from './files'

/**
 * Files attached to an issue (or pull request) and to its comments (Gitea's issue_attachment.go
 * and issue_comment_attachment.go), in the one `attachments` table beside release assets, stored,
 * streamed and downloaded as ./files.ts does for all of them.
 *
 * Who may: whoever reads the issue tracker lists and gets them; an issue's files are added,
 * renamed and deleted by its poster or a writer (a locked issue's by writers only); a comment's
 * by writers who posted it or administer the repository (Gitea's rule, which also asks write
 * access of the comment's poster). Others get 403; an issue, comment or attachment that is not
 * there (or not of that issue or comment) is 404. Names must be of the allowed types
 * (WARREN_ATTACHMENT_ALLOWED_TYPES), on upload and on rename, else 422.
 *
 * An upload is announced as Gitea does (it saves the issue's or comment's content again, which
 * notifies an edit): `issue.edited` / `comment.edited` with the body unchanged as `changes.body.from`,
 * in the row's transaction, and the issue's or comment's `updated_at` moves. Renames and deletions
 * announce nothing (Gitea's neither).
 */

/** An issue's own attachments (not its comments'). */
const ofIssue = (issueId: number) => and(eq(attachments.issueId, issueId), isNull(attachments.commentId))
const ofComment = (commentId: number) => eq(attachments.commentId, commentId)

/** The attachment `rawId` among those `of` selects, else 404. */
async function attachmentAmong(deps: AppDeps, of: ReturnType<typeof ofIssue>, rawId: string, holder: string): Promise<AttachmentRow> {
  const id = pathNumber(rawId)
  const row = Number.isNaN(id) ? undefined : (await deps.db.select().from(attachments).where(and(of, eq(attachments.id, id))))[0]
  if (!row) throw notFound(`no such attachment in ${holder}`)
  return row
}

const listOf = async (deps: AppDeps, of: ReturnType<typeof ofIssue>) => await deps.db.select().from(attachments).where(of).orderBy(asc(attachments.id))

// ---- issues ---------------------------------------------------------------------------------

/** 403 unless the caller may change the issue's attachments: its poster or a writer; writers only on a locked issue. */
function checkIssueWriter(ctx: RepoContext, issue: IssueRow, caller: UserRow): void {
  const writer = ctx.mode >= AccessMode.Write
  if (!writer && issue.posterId !== caller.id) throw forbidden('user should have permission to write issue')
  if (!writer && issue.isLocked) throw forbidden('The issue is locked')
}

/** An issue's attachments, oldest first (all of them: at most MAX_ATTACHMENTS_PER_HOLDER). */
export async function listIssueAssets(deps: AppDeps, ctx: RepoContext, index: number): Promise<AttachmentRow[]> {
  return await listOf(deps, ofIssue((await findIssue(deps, ctx.repo.id, index)).id))
}

export async function getIssueAsset(deps: AppDeps, ctx: RepoContext, index: number, rawId: string): Promise<AttachmentRow> {
  return await attachmentAmong(deps, ofIssue((await findIssue(deps, ctx.repo.id, index)).id), rawId, 'issue')
}

/** Uploads an attachment to an issue (Gitea's CreateIssueAttachment). */
export async function uploadIssueAsset(deps: AppDeps, ctx: RepoContext, caller: UserRow, index: number, request: Request, name: string | undefined): Promise<AttachmentRow> {
  const issue = await findIssue(deps, ctx.repo.id, index)
  checkIssueWriter(ctx, issue, caller)
  await checkRoomFor(deps, ofIssue(issue.id), 'issue')
  const issueNow = async () => (await deps.db.select().from(issues).where(eq(issues.id, issue.id)))[0]
  return await receiveAttachment(deps, request, name, {
    repoId: ctx.repo.id,
    checkName: (stored) => checkAllowedType(deps.config.attachmentAllowedTypes, stored),
    insert: async ({ uuid, name: stored, size }) => {
      const current = await issueNow()
      if (!current) throw notFound('issue does not exist')
      // Again here: uploads running side by side all passed the first check.
      await checkRoomFor(deps, ofIssue(issue.id), 'issue')
      const now = nowUnix()
      const row = (await deps.db
        .insert(attachments)
        .values({ uuid, repoId: ctx.repo.id, issueId: issue.id, uploaderId: caller.id, name: stored, size, createdUnix: now })
        .returning())[0]!
      await deps.db.update(issues).set({ updatedUnix: now }).where(eq(issues.id, issue.id))
      await recordIssueEvent(deps.db, current, caller.id, 'issue.edited', { changes: { body: { from: current.content } } })
      return row
    },
    holderGone: async () => ((await issueNow()) ? null : notFound('issue does not exist')),
  })
}

/** Renames an issue's attachment (an empty or absent name changes nothing, as Gitea). */
export async function editIssueAsset(deps: AppDeps, ctx: RepoContext, caller: UserRow, index: number, rawId: string, name: string | undefined): Promise<AttachmentRow> {
  const issue = await findIssue(deps, ctx.repo.id, index)
  checkIssueWriter(ctx, issue, caller)
  return await rename(deps, await attachmentAmong(deps, ofIssue(issue.id), rawId, 'issue'), name)
}

export async function deleteIssueAsset(deps: AppDeps, ctx: RepoContext, caller: UserRow, index: number, rawId: string): Promise<void> {
  const issue = await findIssue(deps, ctx.repo.id, index)
  checkIssueWriter(ctx, issue, caller)
  await deleteAttachment(deps, await attachmentAmong(deps, ofIssue(issue.id), rawId, 'issue'))
}

// ---- comments -------------------------------------------------------------------------------

/** A plain comment of the repository by id (the path's `{id}`), else 404. */
async function findComment(deps: AppDeps, ctx: RepoContext, rawId: string): Promise<CommentRow> {
  const row = await commentOfRepo(deps, ctx.repo.id, pathNumber(rawId))
  if (!row || row.type !== PLAIN_COMMENT) throw notFound('no matching issue comment found')
  return row
}

/** 403 unless the caller may change the comment's attachments (Gitea: a writer, and its poster or an admin). */
function checkCommentWriter(ctx: RepoContext, comment: CommentRow, caller: UserRow): void {
  const mayEdit = comment.posterId === caller.id || ctx.mode >= AccessMode.Admin
  if (!mayEdit || ctx.mode < AccessMode.Write) throw forbidden('user should have permission to edit comment')
}

export async function listCommentAssets(deps: AppDeps, ctx: RepoContext, rawId: string): Promise<AttachmentRow[]> {
  return await listOf(deps, ofComment((await findComment(deps, ctx, rawId)).id))
}

export async function getCommentAsset(deps: AppDeps, ctx: RepoContext, rawId: string, rawAsset: string): Promise<AttachmentRow> {
  return await attachmentAmong(deps, ofComment((await findComment(deps, ctx, rawId)).id), rawAsset, 'comment')
}

/** Uploads an attachment to a comment (Gitea's CreateIssueCommentAttachment). */
export async function uploadCommentAsset(deps: AppDeps, ctx: RepoContext, caller: UserRow, rawId: string, request: Request, name: string | undefined): Promise<AttachmentRow> {
  const comment = await findComment(deps, ctx, rawId)
  checkCommentWriter(ctx, comment, caller)
  await checkRoomFor(deps, ofComment(comment.id), 'comment')
  const commentNow = async () => (await deps.db.select().from(comments).where(eq(comments.id, comment.id)))[0]
  return await receiveAttachment(deps, request, name, {
    repoId: ctx.repo.id,
    checkName: (stored) => checkAllowedType(deps.config.attachmentAllowedTypes, stored),
    insert: async ({ uuid, name: stored, size }) => {
      if (!(await commentNow())) throw notFound('no matching issue comment found')
      await checkRoomFor(deps, ofComment(comment.id), 'comment')
      const now = nowUnix()
      const row = (await deps.db
        .insert(attachments)
        .values({ uuid, repoId: ctx.repo.id, issueId: comment.issueId, commentId: comment.id, uploaderId: caller.id, name: stored, size, createdUnix: now })
        .returning())[0]!
      const updated = (await deps.db.update(comments).set({ updatedUnix: now }).where(eq(comments.id, comment.id)).returning())[0]!
      const issue = (await deps.db.select({ id: issues.id, index: issues.index, isPull: issues.isPull }).from(issues).where(eq(issues.id, comment.issueId)))[0]!
      await recordCommentEvent(deps.db, issue, updated, caller.id, 'comment.edited', { changes: { body: { from: updated.content } } })
      return row
    },
    holderGone: async () => ((await commentNow()) ? null : notFound('no matching issue comment found')),
  })
}

/** Renames a comment's attachment (an empty or absent name changes nothing, as Gitea). */
export async function editCommentAsset(deps: AppDeps, ctx: RepoContext, caller: UserRow, rawId: string, rawAsset: string, name: string | undefined): Promise<AttachmentRow> {
  const comment = await findComment(deps, ctx, rawId)
  checkCommentWriter(ctx, comment, caller)
  return await rename(deps, await attachmentAmong(deps, ofComment(comment.id), rawAsset, 'comment'), name)
}

export async function deleteCommentAsset(deps: AppDeps, ctx: RepoContext, caller: UserRow, rawId: string, rawAsset: string): Promise<void> {
  const comment = await findComment(deps, ctx, rawId)
  checkCommentWriter(ctx, comment, caller)
  await deleteAttachment(deps, await attachmentAmong(deps, ofComment(comment.id), rawAsset, 'comment'))
}

// ---- shared -----------------------------------------------------------------------------------

/** A new name for an issue's or comment's attachment: a valid name of an allowed type (422 else). */
async function rename(deps: AppDeps, row: AttachmentRow, name: string | undefined): Promise<AttachmentRow> {
  if (!name || name === row.name) return row
  checkAttachmentName(name)
  checkAllowedType(deps.config.attachmentAllowedTypes, name)
  const updated = (await deps.db.update(attachments).set({ name }).where(eq(attachments.id, row.id)).returning())[0]
  if (!updated) throw notFound('attachment does not exist')
  return updated
}
