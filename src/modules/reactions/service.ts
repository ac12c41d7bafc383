import { and, asc, eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { comments, issues, reactions, type IssueRow, type ReactionRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode } from '../../auth/access'
import { refuseBlocked } from '../../auth/blocking'
import type { RepoContext } from '../../auth/repo-context'
import { forbidden, notFound } from '../../lib/errors'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { findIssue } from '../issues/queries'
import { commentOfRepo } from '../comments/service'

/** What a reaction is given to: an issue (commentId 0) or one of its comments. */
export interface ReactionTarget {
  issue: IssueRow
  commentId: number
  /** The comment's poster (0 for an issue): one they blocked may not react to it. */
  commentPosterId: number
}

/** The issue of `index` as a reaction target. */
export const issueTarget = async (deps: AppDeps, ctx: RepoContext, index: number): Promise<ReactionTarget> => ({
  issue: await findIssue(deps, ctx.repo.id, index),
  commentId: 0,
  commentPosterId: 0,
})

/** A comment of this repository (any kind, as Gitea's GetCommentByID) as a reaction target; 404 otherwise. */
export async function commentTarget(deps: AppDeps, ctx: RepoContext, id: number): Promise<ReactionTarget> {
  const row = await commentOfRepo(deps, ctx.repo.id, id)
  if (!row) throw notFound(`comment does not exist [id: ${id}]`)
  const issue = (await deps.db.select().from(issues).where(eq(issues.id, row.issueId)))[0]!
  return { issue, commentId: row.id, commentPosterId: row.posterId }
}

const ofTarget = (target: ReactionTarget) => and(eq(reactions.issueId, target.issue.id), eq(reactions.commentId, target.commentId))

/** The reactions of an issue or a comment, oldest first: a page, or all with `page` null. */
export async function listReactions(deps: AppDeps, target: ReactionTarget, page: Page | null): Promise<Paged<ReactionRow>> {
  return await selectPage(deps.db, reactions, ofTarget(target), [asc(reactions.createdUnix), asc(reactions.id)], page)
}

/**
 * Gitea's check before a reaction changes: a locked issue takes reactions from writers only
 * (403), and only the configured reactions exist (403, Gitea's ErrForbiddenIssueReaction).
 */
function checkChange(deps: AppDeps, ctx: RepoContext, target: ReactionTarget, content: string | undefined, adding: boolean): string {
  if (target.issue.isLocked && ctx.mode < AccessMode.Write) throw forbidden('no permission to change reaction')
  const type = content ?? ''
  if (adding && !deps.config.reactions.includes(type)) throw forbidden(`'${type}' is not an allowed reaction`)
  return type
}

/**
 * Gives a reaction; `created` false (Gitea answers 200) when the caller had already given it, the
 * stored one answered unchanged.
 */
export async function addReaction(
  deps: AppDeps,
  ctx: RepoContext,
  user: UserRow,
  target: ReactionTarget,
  content: string | undefined,
): Promise<{ row: ReactionRow; created: boolean }> {
  const type = checkChange(deps, ctx, target, content, true)
  return await writeTransaction(deps.db, async () => {
    // Gitea's CreateIssueReaction / CreateCommentReaction: not for one the issue's poster, the comment's or the owner blocked.
    await refuseBlocked(deps.db, user.id, [target.issue.posterId, target.commentPosterId, ctx.repo.ownerId])
    const inserted = await deps.db
      .insert(reactions)
      .values({ type, issueId: target.issue.id, commentId: target.commentId, userId: user.id, createdUnix: nowUnix() })
      .onConflictDoNothing()
      .returning()
    if (inserted[0]) return { row: inserted[0], created: true }
    const existing = (await deps.db
      .select()
      .from(reactions)
      .where(and(ofTarget(target), eq(reactions.userId, user.id), eq(reactions.type, type))))[0]!
    return { row: existing, created: false }
  })
}

/** Takes the caller's reaction back (nothing to do when there was none, as Gitea). */
export async function removeReaction(deps: AppDeps, ctx: RepoContext, user: UserRow, target: ReactionTarget, content: string | undefined): Promise<void> {
  const type = checkChange(deps, ctx, target, content, false)
  await deps.db.delete(reactions).where(and(ofTarget(target), eq(reactions.userId, user.id), eq(reactions.type, type)))
}
