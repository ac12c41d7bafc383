import { and, asc, count, eq, lt, ne, or, inArray, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { perConnectionShape, writeTransaction } from '../../db/client'
import { reviewComments, reviews, type ReviewRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode } from '../../auth/access'
import { refuseBlockedInConversation } from '../../auth/blocking'
import { gitOfRow, type RepoContext } from '../../auth/repo-context'
import { recordEvent } from '../../events/outbox'
import { readRef } from '../../git/merge'
import { isObjectId, runGit } from '../../git/run'
import { ApiError, forbidden, notFound, unprocessable } from '../../lib/errors'
import { preparedPage, type Page, type Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { ReviewType } from '../../convert/review'
import type { PullItem } from '../../convert/pull'
import { findPull } from '../pulls/service'
import { pullHeadRef } from '../../push'
import { placeComments, type AskedComment, type PlacedComment } from './line-comments'

/**
 * Reviews of a pull request: listed, read, written (at once or as a pending draft submitted
 * later), deleted, dismissed. Gitea's rules: the poster neither approves nor requests changes on
 * their own pull request; a request for changes needs a body, a comment a body or line comments;
 * a closed pull request takes no approval or rejection; a pending review is its reviewer's alone.
 */

/** The review type an API event names (Gitea's preparePullReviewType: anything else is pending). */
const TYPE_OF_EVENT: Record<string, number> = { APPROVED: ReviewType.Approve, REQUEST_CHANGES: ReviewType.Reject, COMMENT: ReviewType.Comment }
const EVENT_NAME: Record<number, string> = { [ReviewType.Approve]: 'approved', [ReviewType.Reject]: 'rejected', [ReviewType.Comment]: 'comment' }

/** Who sees a pending review: its reviewer and site administrators. */
const seesPending = (viewer: UserRow | null, r: Pick<ReviewRow, 'reviewerId'>) => !!viewer && (viewer.isAdmin || viewer.id === r.reviewerId)

/**
 * listReviews' statements, for a site administrator (every review) or anyone else (no pending
 * review but the viewer's own), prepared when first asked: every pull request page reads them.
 */
function prepareReviewList(db: AppDeps['db'], admin: boolean) {
  const p = sql.placeholder
  const where = and(eq(reviews.issueId, p('issue')), admin ? undefined : or(ne(reviews.type, ReviewType.Pending), eq(reviews.reviewerId, p('viewer'))))
  return {
    rows: db.select().from(reviews).where(where).orderBy(asc(reviews.id)).limit(p('limit')).offset(p('offset')).prepare(),
    count: db.select({ n: count() }).from(reviews).where(where).prepare(),
  }
}
const reviewListStatements = perConnectionShape<ReturnType<typeof prepareReviewList>>()

/** A pull request's reviews, oldest first, without the pending ones of others. */
export async function listReviews(deps: AppDeps, ctx: RepoContext, index: number, page: Page): Promise<{ item: PullItem; found: Paged<ReviewRow> }> {
  const item = await findPull(deps, ctx.repo.id, index)
  const viewer = ctx.caller.user
  const admin = !!viewer?.isAdmin
  const statements = reviewListStatements(deps.db, admin ? 'admin' : 'other', () => prepareReviewList(deps.db, admin))
  return { item, found: await preparedPage<ReviewRow>(statements, { issue: item.issue.id, viewer: viewer?.id ?? -1 }, page) }
}

/** One review of the pull request `index`; 404 when it is another's, or a pending review of someone else. */
export async function findReview(deps: AppDeps, ctx: RepoContext, index: number, id: number): Promise<{ item: PullItem; review: ReviewRow }> {
  const item = await findPull(deps, ctx.repo.id, index)
  const review = (await deps.db.select().from(reviews).where(eq(reviews.id, id)))[0]
  if (!review || review.issueId !== item.issue.id || (review.type === ReviewType.Pending && !seesPending(ctx.caller.user, review)))
    throw notFound(`review does not exist [id: ${id}]`)
  return { item, review }
}

/** The line comments of a review, in the order they were made. */
export const commentsOfReview = (deps: AppDeps, reviewId: number) =>
  deps.db.select().from(reviewComments).where(eq(reviewComments.reviewId, reviewId)).orderBy(asc(reviewComments.id))

/** Most line comments a pull request's conversation reads at once (the rest are counted). */
export const MAX_CONVERSATION_LINE_COMMENTS = 1000

/** The line comments of several reviews (one pull request's), in the order they were made; bounded. */
export async function commentsOfReviews(deps: AppDeps, reviewIds: number[]) {
  if (reviewIds.length === 0) return []
  return await deps.db.select().from(reviewComments).where(inArray(reviewComments.reviewId, reviewIds)).orderBy(asc(reviewComments.id)).limit(MAX_CONVERSATION_LINE_COMMENTS)
}

/** The type an event asks for, checked as Gitea checks it (422 otherwise). */
function reviewTypeOf(item: PullItem, user: UserRow, event: string | undefined, body: string | undefined, hasComments: boolean): number {
  const type = TYPE_OF_EVENT[(event ?? '').toUpperCase()] ?? ReviewType.Pending
  const hasBody = (body ?? '').trim().length > 0
  if ((type === ReviewType.Approve || type === ReviewType.Reject) && item.issue.posterId === user.id)
    throw unprocessable(type === ReviewType.Approve ? 'approve your own pull is not allowed' : 'reject your own pull is not allowed')
  if (type === ReviewType.Reject && !hasBody) throw unprocessable(`review event ${event} requires a body`)
  if (type === ReviewType.Comment && !hasBody && !hasComments) throw unprocessable(`review event ${event} requires a body or a comment`)
  if ((type === ReviewType.Approve || type === ReviewType.Reject) && (item.issue.isClosed || item.pull.hasMerged))
    throw unprocessable("can't submit review for a closed or merged PR")
  return type
}

/** The pull request's head as the base repository keeps it (refs/pull/N/head), else its last recorded head. */
async function currentHead(deps: AppDeps, ctx: RepoContext, item: PullItem): Promise<string> {
  const head = (await readRef(gitOfRow(deps, ctx.repo), pullHeadRef(item.pull.index))) ?? item.pull.headSha
  if (!head) throw new ApiError(409, 'the pull request has no head commit yet')
  return head
}

/** A commit named by the caller: it must be a commit of the base repository. */
async function checkedCommit(deps: AppDeps, ctx: RepoContext, sha: string): Promise<string> {
  const id = sha.trim().toLowerCase()
  const ok = isObjectId(id) && (await runGit(['cat-file', '-e', `${id}^{commit}`], gitOfRow(deps, ctx.repo))).code === 0
  if (!ok) throw unprocessable(`commit ${sha} does not exist in the repository`, 'CommitID')
  return id
}

/**
 * Writes the caller's review: their pending review (made now when there is none) takes the type,
 * body and commit, and the new line comments. An official approval or rejection (the reviewer
 * may write) makes their earlier ones (and their review request) unofficial, so that each person counts once. Announced
 * unless it stays pending.
 */
async function writeReview(deps: AppDeps, ctx: RepoContext, user: UserRow, item: PullItem, type: number, content: string, commitId: string, placed: PlacedComment[]) {
  const db = deps.db
  const official = (type === ReviewType.Approve || type === ReviewType.Reject) && ctx.mode >= AccessMode.Write
  const now = nowUnix()
  return await writeTransaction(db, async () => {
    // A review is comments: refused to one the poster or the owner blocked, as a comment is.
    await refuseBlockedInConversation(db, user.id, { posterId: item.issue.posterId, ownerId: ctx.repo.ownerId, repoAdmin: ctx.mode >= AccessMode.Admin })
    const mine = and(eq(reviews.issueId, item.issue.id), eq(reviews.reviewerId, user.id))
    // Their review requests too (as Gitea's SubmitReview): an official request is answered.
    if (official)
      await db.update(reviews).set({ official: false }).where(and(mine, inArray(reviews.type, [ReviewType.Approve, ReviewType.Reject, ReviewType.Request])))
    const pending = (await db.select().from(reviews).where(and(mine, eq(reviews.type, ReviewType.Pending))))[0]
    const fields = { type, content, commitId, official, updatedUnix: now }
    const review = pending
      ? (await db.update(reviews).set(type === ReviewType.Pending ? { commitId, updatedUnix: now, ...(content ? { content } : {}) } : { ...fields, createdUnix: now }).where(eq(reviews.id, pending.id)).returning())[0]!
      : (await db.insert(reviews).values({ ...fields, issueId: item.issue.id, repoId: ctx.repo.id, reviewerId: user.id, createdUnix: now }).returning())[0]!
    if (placed.length)
      await db.insert(reviewComments).values(placed.map((c) => ({ ...c, reviewId: review.id, issueId: item.issue.id, posterId: user.id, commitId, createdUnix: now, updatedUnix: now })))
    if (type !== ReviewType.Pending)
      await recordEvent(db, {
        kind: 'review.submitted',
        repoId: ctx.repo.id,
        actorId: user.id,
        issueId: item.issue.id,
        payload: { index: item.issue.index, isPull: true, reviewId: review.id, type: EVENT_NAME[type], content: review.content },
      })
    return review
  })
}

export interface NewReview {
  body?: string
  event?: string
  commit_id?: string
  comments?: AskedComment[]
}

/** POST …/reviews: a review with its line comments, submitted or (no event) pending. */
/**
 * A locked conversation takes comments only from writers (comments/service.ts), and a review is
 * comments (its text, its line comments): a reader's review of a locked pull request is refused too.
 */
function requireUnlocked(ctx: RepoContext, item: PullItem): void {
  if (item.issue.isLocked && ctx.mode < AccessMode.Write) throw forbidden('The pull request is locked: only collaborators may review it')
}

export async function createReview(deps: AppDeps, ctx: RepoContext, user: UserRow, index: number, opts: NewReview): Promise<{ item: PullItem; review: ReviewRow }> {
  const item = await findPull(deps, ctx.repo.id, index)
  requireUnlocked(ctx, item)
  const asked = opts.comments ?? []
  const type = reviewTypeOf(item, user, opts.event, opts.body, asked.length > 0)
  const commitId = opts.commit_id ? await checkedCommit(deps, ctx, opts.commit_id) : await currentHead(deps, ctx, item)
  const placed = await placeComments(deps, ctx.repo, item.pull, commitId, asked)
  return { item, review: await writeReview(deps, ctx, user, item, type, opts.body ?? '', commitId, placed) }
}

/** POST …/reviews/{id}: submits the caller's pending review on the current head. */
export async function submitReview(deps: AppDeps, ctx: RepoContext, user: UserRow, index: number, id: number, opts: { body?: string; event?: string }) {
  const { item, review } = await findReview(deps, ctx, index, id)
  requireUnlocked(ctx, item)
  if (review.type !== ReviewType.Pending || review.reviewerId !== user.id) throw unprocessable('only a pending review can be submitted')
  const comments = (await deps.db.select({ n: count() }).from(reviewComments).where(eq(reviewComments.reviewId, review.id)))[0]!.n
  const type = reviewTypeOf(item, user, opts.event, opts.body, Number(comments) > 0)
  if (type === ReviewType.Pending) throw unprocessable('review stay pending')
  return { item, review: await writeReview(deps, ctx, user, item, type, opts.body ?? '', await currentHead(deps, ctx, item), []) }
}

/** DELETE …/reviews/{id}: by its reviewer or a site administrator; its line comments go with it. */
export async function deleteReview(deps: AppDeps, ctx: RepoContext, user: UserRow, index: number, id: number): Promise<void> {
  const { review } = await findReview(deps, ctx, index, id)
  if (!user.isAdmin && user.id !== review.reviewerId) throw forbidden('only the reviewer or a site administrator may delete a review')
  await writeTransaction(deps.db, async () => {
    await deps.db.delete(reviews).where(eq(reviews.id, review.id))
  })
}

/**
 * …/dismissals and …/undismissals: by repository administrators, of approvals and rejections of
 * open pull requests; `priors` also dismisses the reviewer's earlier ones.
 */
export async function dismissReview(deps: AppDeps, ctx: RepoContext, index: number, id: number, dismiss: boolean, priors: boolean) {
  if (ctx.mode < AccessMode.Admin) throw forbidden('Must be repo admin')
  const { item, review } = await findReview(deps, ctx, index, id)
  if (review.type !== ReviewType.Approve && review.type !== ReviewType.Reject)
    throw forbidden("not need to dismiss this review because it's type is not Approve or change request")
  if (item.issue.isClosed || item.pull.hasMerged) throw forbidden('not need to dismiss this review because the pull request is closed')
  const now = nowUnix()
  const updated = await writeTransaction(deps.db, async () => {
    if (dismiss && priors)
      await deps.db
        .update(reviews)
        .set({ dismissed: true, updatedUnix: now })
        .where(and(eq(reviews.issueId, item.issue.id), eq(reviews.reviewerId, review.reviewerId), lt(reviews.id, review.id), inArray(reviews.type, [ReviewType.Approve, ReviewType.Reject])))
    return (await deps.db.update(reviews).set({ dismissed: dismiss, updatedUnix: now }).where(eq(reviews.id, review.id)).returning())[0]!
  })
  return { item, review: updated }
}

/**
 * When a submitted review of issue `issueId` was made: the review `review`, or the one holding the
 * line comment `lineComment`; null when it is none of this issue's (or a pending one). A
 * conversation page shows a review among the comments of its time.
 */
export async function submittedReviewTime(deps: AppDeps, issueId: number, named: { review?: number; lineComment?: number }): Promise<number | null> {
  const submitted = and(eq(reviews.issueId, issueId), ne(reviews.type, ReviewType.Pending), ne(reviews.type, ReviewType.Request))
  const pick = { createdUnix: reviews.createdUnix }
  const [found] =
    named.review !== undefined
      ? await deps.db.select(pick).from(reviews).where(and(submitted, eq(reviews.id, named.review)))
      : named.lineComment !== undefined
        ? await deps.db
            .select(pick)
            .from(reviewComments)
            .innerJoin(reviews, eq(reviews.id, reviewComments.reviewId))
            .where(and(submitted, eq(reviewComments.id, named.lineComment), eq(reviewComments.issueId, issueId)))
        : []
  return found?.createdUnix ?? null
}
