import { and, asc, eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { comments, issues, reactions, type IssueRow, type ReactionRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode } from '../../auth/access'
import { refuseBlocked } from '../../auth/blocking'
import type { RepoContext } from '../../auth/repo-context'
import { conflict, forbidden, notFound } from '../../lib/errors'
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
 * stored one answered unchanged. The insert and the read of the stored one are one transaction
 * under the write lock, as removeReaction's delete: no removal lands between them. Should one
 * still (a write made without the lock), the insert is tried again: never an answer without a row.
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
    for (let attempt = 0; attempt < ADD_ATTEMPTS; attempt++) {
      const inserted = await deps.db
        .insert(reactions)
        .values({ type, issueId: target.issue.id, commentId: target.commentId, userId: user.id, createdUnix: nowUnix() })
        .onConflictDoNothing()
        .returning()
      if (inserted[0]) return { row: inserted[0], created: true }
      const existing = (await deps.db.select().from(reactions).where(mine(target, user, type)))[0]
      if (existing) return { row: existing, created: false }
    }
    throw conflict('the reaction changed meanwhile; try again')
  })
}

/** How many times addReaction inserts when the reaction it conflicted with was gone before it was read. */
const ADD_ATTEMPTS = 3

/** The caller's reaction of `type` to the target. */
const mine = (target: ReactionTarget, user: UserRow, type: string) => and(ofTarget(target), eq(reactions.userId, user.id), eq(reactions.type, type))

/**
 * Takes the caller's reaction back (nothing to do when there was none, as Gitea). A write
 * transaction like every write: on PostgreSQL it takes the write lock, so it never lands between
 * addReaction's insert and its read.
 */
export async function removeReaction(deps: AppDeps, ctx: RepoContext, user: UserRow, target: ReactionTarget, content: string | undefined): Promise<void> {
  const type = checkChange(deps, ctx, target, content, false)
  await writeTransaction(deps.db, async () => {
    await deps.db.delete(reactions).where(mine(target, user, type))
  })
}
