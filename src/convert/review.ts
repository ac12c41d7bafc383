import { and, asc, count, eq, inArray, ne } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { perConnection } from '../db/client'
import { inJsonList } from '../db/sql'
import type { UserRow } from '../auth/caller'
import { reviewComments, reviews, type IssueRow, type PullRow, type ReviewCommentRow, type ReviewRow } from '../db/schema'
import { isoTime } from '../lib/time'
import { issueHtmlUrl, type RepoRef } from './issue'
import { usersByIds } from './people'
import { teamsByIds, toApiTeam, type TeamWithUnits } from './team'
import { userConverter, type ApiUser } from './user'

/** Gitea's ReviewType numbers, as stored in reviews.type. */
export const ReviewType = { Pending: 0, Approve: 1, Comment: 2, Reject: 3, Request: 4 } as const
export type ReviewType = (typeof ReviewType)[keyof typeof ReviewType]

/** The API's ReviewStateType of each stored type. */
export const REVIEW_STATES: Record<number, string> = {
  [ReviewType.Pending]: 'PENDING',
  [ReviewType.Approve]: 'APPROVED',
  [ReviewType.Comment]: 'COMMENT',
  [ReviewType.Reject]: 'REQUEST_CHANGES',
  [ReviewType.Request]: 'REQUEST_REVIEW',
}

/**
 * Whether a submitted review is stale: it was made on a head commit the pull request no longer
 * has (Gitea marks reviews stale when a push changes the head; the commit kept on the review
 * tells the same).
 */
export const isStale = (review: Pick<ReviewRow, 'type' | 'commitId'>, pull: Pick<PullRow, 'headSha'>): boolean =>
  (review.type === ReviewType.Approve || review.type === ReviewType.Reject || review.type === ReviewType.Comment) &&
  review.commitId !== '' && pull.headSha !== '' && review.commitId !== pull.headSha

/** What the records of one pull request's reviews refer to. */
export interface ReviewScope {
  repo: RepoRef
  issue: Pick<IssueRow, 'index' | 'isPull'>
  pull: Pick<PullRow, 'headSha'>
  /** The repository's owner: the organisation of requested teams. */
  owner: UserRow
}

/** The PullReview records of `rows` (one pull request's), in a fixed number of queries. */
export async function reviewsToApi(deps: AppDeps, scope: ReviewScope, rows: ReviewRow[], viewer: UserRow | null) {
  if (rows.length === 0) return []
  const people = await usersByIds(deps, rows.map((r) => r.reviewerId).filter((id) => id > 0))
  const teamIds = [...new Set(rows.map((r) => r.reviewerTeamId).filter((id) => id > 0))]
  const teamRows = await teamsByIds(deps, teamIds)
  const counts = new Map(
    (await deps.db
      .select({ reviewId: reviewComments.reviewId, n: count() })
      .from(reviewComments)
      .where(inArray(reviewComments.reviewId, rows.map((r) => r.id)))
      .groupBy(reviewComments.reviewId)).map((c) => [c.reviewId, Number(c.n)]),
  )
  const userToApi = userConverter(deps.config, viewer)
  const pullUrl = issueHtmlUrl(deps.config, scope.repo, scope.issue)
  return rows.map((r) => {
    const team = teamRows.get(r.reviewerTeamId)
    return {
      id: r.id,
      user: r.reviewerId > 0 ? userToApi(people.get(r.reviewerId)) : null,
      team: team ? toApiTeam(deps.config, team, scope.owner, viewer) : null,
      state: REVIEW_STATES[r.type] ?? '',
      body: r.content,
      commit_id: r.commitId,
      stale: isStale(r, scope.pull),
      official: r.official,
      dismissed: r.dismissed,
      comments_count: counts.get(r.id) ?? 0,
      submitted_at: isoTime(r.createdUnix),
      updated_at: isoTime(r.updatedUnix),
      html_url: `${pullUrl}#pullrequestreview-${r.id}`,
      pull_request_url: pullUrl,
    }
  })
}
export type ApiReview = Awaited<ReturnType<typeof reviewsToApi>>[number]

/**
 * The PullReviewComment records of one review's line comments. `position` is the line of the new
 * file and `original_position` the line of the old one, as Gitea's; a comment a later push made
 * outdated has `position` 0 and keeps its line in `original_position`.
 */
export async function reviewCommentsToApi(deps: AppDeps, scope: ReviewScope, rows: ReviewCommentRow[], viewer: UserRow | null) {
  const people = await usersByIds(deps, rows.map((c) => c.posterId))
  const userToApi = userConverter(deps.config, viewer)
  const pullUrl = issueHtmlUrl(deps.config, scope.repo, scope.issue)
  return rows.map((c) => {
    const line = Math.abs(c.line)
    const newSide = c.line > 0
    return {
      id: c.id,
      body: c.content,
      user: userToApi(people.get(c.posterId)),
      resolver: null as ApiUser | null,
      pull_request_review_id: c.reviewId,
      created_at: isoTime(c.createdUnix),
      updated_at: isoTime(c.updatedUnix),
      path: c.path,
      commit_id: c.commitId,
      original_commit_id: c.commitId,
      diff_hunk: c.patch,
      position: newSide && !c.invalidated ? line : 0,
      original_position: newSide ? (c.invalidated ? line : 0) : line,
      html_url: `${pullUrl}/files#issuecomment-${c.id}`,
      pull_request_url: pullUrl,
    }
  })
}

/** What a PullRequest record shows of its reviews. */
export interface PullReviewState {
  reviewers: UserRow[]
  teams: TeamWithUnits[]
  /** Line comments of submitted reviews. */
  comments: number
}
const NO_REVIEWS: PullReviewState = { reviewers: [], teams: [], comments: 0 }

/**
 * pullReviewStates' reads, the issue ids bound as one JSON list: prepared once per connection, as
 * every pull request record reads them (building them took longer than running them).
 */
const reviewStateReadsOf = perConnection((db: AppDeps['db']) => ({
  verdicts: db
    .select({ issueId: reviews.issueId, type: reviews.type, reviewerId: reviews.reviewerId, teamId: reviews.reviewerTeamId })
    .from(reviews)
    .where(and(inJsonList(reviews.issueId, 'ids'), inArray(reviews.type, [ReviewType.Approve, ReviewType.Reject, ReviewType.Request])))
    .orderBy(asc(reviews.id))
    .prepare(),
  lineComments: db
    .select({ issueId: reviewComments.issueId, n: count() })
    .from(reviewComments)
    .innerJoin(reviews, eq(reviews.id, reviewComments.reviewId))
    .where(and(inJsonList(reviewComments.issueId, 'ids'), ne(reviews.type, ReviewType.Pending)))
    .groupBy(reviewComments.issueId)
    .prepare(),
}))

/**
 * The review state of pull requests (by issue id), in three queries whatever their number: the
 * people asked to review (those whose latest approval, rejection or request is a request, as
 * Gitea's), the teams asked, and the number of line comments of submitted reviews.
 */
export async function pullReviewStates(deps: AppDeps, issueIds: number[]): Promise<Map<number, PullReviewState>> {
  const states = new Map<number, PullReviewState>()
  if (issueIds.length === 0) return states
  const reads = reviewStateReadsOf(deps.db)
  const ids = JSON.stringify(issueIds)
  const rows = await reads.verdicts.execute({ ids })
  const latest = new Map<string, (typeof rows)[number]>()
  for (const r of rows) latest.set(r.teamId > 0 ? `t${r.issueId}:${r.teamId}` : `u${r.issueId}:${r.reviewerId}`, r)
  const asked = [...latest.values()].filter((r) => r.type === ReviewType.Request)
  const people = await usersByIds(deps, asked.filter((r) => r.teamId === 0).map((r) => r.reviewerId))
  const teamIds = [...new Set(asked.map((r) => r.teamId).filter((id) => id > 0))]
  const teamRows = await teamsByIds(deps, teamIds)
  const stateOf = (issueId: number) => {
    let s = states.get(issueId)
    if (!s) states.set(issueId, (s = { reviewers: [], teams: [], comments: 0 }))
    return s
  }
  for (const r of asked) {
    const person = r.teamId === 0 ? people.get(r.reviewerId) : undefined
    const team = teamRows.get(r.teamId)
    if (person) stateOf(r.issueId).reviewers.push(person)
    if (team) stateOf(r.issueId).teams.push(team)
  }
  const counted = await reads.lineComments.execute({ ids })
  for (const c of counted) stateOf(c.issueId).comments = Number(c.n)
  for (const id of issueIds) if (!states.has(id)) states.set(id, NO_REVIEWS)
  return states
}
