import { and, eq, inArray, ne } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { Db } from '../../db/client'
import { reviews, teamUsers, type PullRow } from '../../db/schema'
import { isStale, ReviewType } from '../../convert/review'

/**
 * What reviews say to the merge gate (branch protection): approvals counted and rejections, from
 * official reviews that are not dismissed (Gitea's GetGrantedApprovalsCount and
 * MergeBlockedByRejectedReview). A reviewer's latest approval or rejection is the only official
 * one of theirs, so each person counts once.
 */
export interface ReviewGateOptions {
  /** Only these people's reviews count (the protection's approvals whitelist)... */
  userIds?: number[]
  /** ...and those of members of these teams. Both absent: everyone's official reviews count. */
  teamIds?: number[]
  /** Stale approvals count too (a protection that does not dismiss stale approvals). */
  countStale?: boolean
}

type PullRef = Pick<PullRow, 'issueId' | 'headSha'>

async function officialReviews(deps: AppDeps, pull: PullRef, type: number, opts: ReviewGateOptions) {
  const rows = await deps.db
    .select({ reviewerId: reviews.reviewerId, type: reviews.type, commitId: reviews.commitId })
    .from(reviews)
    .where(and(eq(reviews.issueId, pull.issueId), eq(reviews.type, type), eq(reviews.official, true), eq(reviews.dismissed, false)))
  if (!opts.userIds && !opts.teamIds) return rows
  const allowed = new Set(opts.userIds ?? [])
  if (opts.teamIds?.length)
    for (const m of await deps.db.select({ uid: teamUsers.uid }).from(teamUsers).where(inArray(teamUsers.teamId, opts.teamIds))) allowed.add(m.uid)
  return rows.filter((r) => allowed.has(r.reviewerId))
}

/** The number of people whose official, non-dismissed (and, unless `countStale`, non-stale) approval the pull request has. */
export async function approvalsOf(deps: AppDeps, pull: PullRef, opts: ReviewGateOptions = {}): Promise<number> {
  const rows = await officialReviews(deps, pull, ReviewType.Approve, opts)
  return new Set(rows.filter((r) => opts.countStale || !isStale(r, pull)).map((r) => r.reviewerId)).size
}

/** Whether an official, non-dismissed review requests changes (restricted as approvalsOf when asked). */
export async function hasRejection(deps: AppDeps, pull: PullRef, opts: Pick<ReviewGateOptions, 'userIds' | 'teamIds'> = {}): Promise<boolean> {
  return (await officialReviews(deps, pull, ReviewType.Reject, opts)).length > 0
}

/**
 * A push to the head under a rule with `dismiss_stale_approvals` (Gitea's DismissApprovalReviews):
 * the approvals made on another head commit are dismissed, for good (a later push back to that
 * commit does not bring them back). Inside the transaction that records the new head.
 */
export async function dismissStaleApprovals(db: Db, issueId: number, headSha: string, now: number): Promise<number> {
  const dismissed = await db
    .update(reviews)
    .set({ dismissed: true, updatedUnix: now })
    .where(and(eq(reviews.issueId, issueId), eq(reviews.type, ReviewType.Approve), eq(reviews.official, true), eq(reviews.dismissed, false), ne(reviews.commitId, headSha)))
    .returning({ id: reviews.id })
  return dismissed.length
}

/** Whether someone asked to review officially has not answered yet (Gitea's MergeBlockedByOfficialReviewRequests). */
export async function hasOfficialReviewRequest(deps: AppDeps, pull: Pick<PullRow, 'issueId'>): Promise<boolean> {
  const rows = await deps.db
    .select({ id: reviews.id })
    .from(reviews)
    .where(and(eq(reviews.issueId, pull.issueId), eq(reviews.type, ReviewType.Request), eq(reviews.official, true)))
    .limit(1)
  return rows.length > 0
}
