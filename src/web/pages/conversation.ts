import type { AppDeps } from '../../deps'
import { editCounts } from '../../modules/content-history/service'
import type { RepoContext } from '../../auth/repo-context'
import type { IssueRow, ReviewCommentRow, ReviewRow } from '../../db/schema'
import { issueToApi, commentsToApi, type ApiComment, type ApiIssue } from '../../convert/issue'
import { usersByIds } from '../../convert/people'
import { reviewCommentsToApi, reviewsToApi, ReviewType, type ApiReview } from '../../convert/review'
import type { PullItem } from '../../convert/pull'
import type { EventRecord } from '../../events/outbox'
import { commentPosition, commentsUntil, listIssueComments } from '../../modules/comments/service'
import { issueTimeline, typedCommentRows } from '../../modules/issues/timeline'
import { timelineToApi, type ApiTimelineComment } from '../../convert/timeline'
import { renderMarkdownAll } from '../../modules/markdown/service'
import { commentsOfReviews, listReviews, submittedReviewTime } from '../../modules/reviews/service'
import { ApiError } from '../../lib/errors'
import { pageNumber } from '../forms'
import type { LabelRow, MilestoneRow } from '../../db/schema'
import { listLabels } from '../../modules/labels/service'
import { listMilestones } from '../../modules/milestones/service'
import { projectChoices } from '../../modules/projects/service'
import type { ProjectRow } from '../../db/schema'

/** Comments one page of a conversation shows (Gitea shows them all; a page bounds the HTML and the work). */
export const COMMENTS_PER_PAGE = 50
/** Reviews a pull request's conversation lists at most. */
const MAX_REVIEWS = 200

export type ApiReviewComment = Awaited<ReturnType<typeof reviewCommentsToApi>>[number]

/** One entry of a conversation, in time order. */
export type TimelineItem =
  | { kind: 'comment'; at: number; comment: ApiComment; html: string | null }
  | { kind: 'event'; at: number; event: EventRecord; actor: string | null; people: Map<number, string> }
  /** A comment row kept as a timeline event (time tracked, a due date, a scheduled merge), as the API's timeline gives it. */
  | { kind: 'record'; at: number; record: ApiTimelineComment }
  | { kind: 'review'; at: number; review: ApiReview; html: string | null; lines: { comment: ApiReviewComment; html: string | null }[] }

export interface Conversation {
  issue: ApiIssue
  bodyHtml: string | null
  items: TimelineItem[]
  page: number
  pages: number
  totalComments: number
  /** Whether the window had more events than were read. */
  moreEvents: boolean
  /** How many times the description (0) and each comment (its id) were edited (content-history.tsx). */
  edits: Map<number, number>
}

/**
 * Which page of a conversation a request asks for: `?page=`, or the page holding a comment
 * (`?comment=`) or a review (`?review=`): the page script's way to a `#issuecomment-N` or
 * `#pullrequestreview-N` address (an html_url) whose record is not on the page it opened.
 */
export interface ConversationAt {
  page?: string
  comment?: string
  review?: string
}

const idOf = (value: string | undefined): number | undefined => (value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : undefined)

/**
 * The page `at` names (1-based). A plain comment is on the page of its place in the list; a review,
 * or a review's line comment, on the page whose comments' times frame its own (as loadConversation
 * places them). The first page when the record is none of this conversation's.
 */
async function pageAt(deps: AppDeps, row: IssueRow, at: ConversationAt): Promise<number> {
  const comment = idOf(at.comment)
  const review = idOf(at.review)
  if (comment === undefined && review === undefined) return pageNumber(at.page)
  if (comment !== undefined) {
    const position = await commentPosition(deps, row, comment)
    if (position !== null) return Math.floor(position / COMMENTS_PER_PAGE) + 1
  }
  if (!row.isPull) return 1
  const time = await submittedReviewTime(deps, row.id, review !== undefined ? { review } : { lineComment: comment })
  return time === null ? 1 : Math.max(1, Math.ceil((await commentsUntil(deps, row, time)) / COMMENTS_PER_PAGE))
}

/** When an ISO time was, in Unix seconds. */
const unixOf = (iso: string) => Math.floor(Date.parse(iso) / 1000)

/**
 * An issue's (or pull request's) conversation, one page of comments at a time: its record, its
 * comments, the timeline events between them, and for a pull request its reviews with their line
 * comments. Every text is rendered by the markdown service in one batch (one job, one time
 * budget); past the budget the page shows the texts as they were written.
 */
export async function loadConversation(deps: AppDeps, ctx: RepoContext, row: IssueRow, asked: ConversationAt, client: string, pull?: PullItem): Promise<Conversation> {
  const viewer = ctx.caller.user
  const page = await pageAt(deps, row, asked)
  const issue = await issueToApi(deps, ctx.repo, row, viewer)
  // One comment past the page tells where the page's window of events ends.
  const found = await listIssueComments(deps, row, {}, { page, limit: COMMENTS_PER_PAGE + 1, offset: (page - 1) * COMMENTS_PER_PAGE })
  const rows = found.rows.slice(0, COMMENTS_PER_PAGE)
  const next = found.rows[COMMENTS_PER_PAGE]
  const pages = Math.max(1, Math.ceil(found.total / COMMENTS_PER_PAGE))
  const window = { from: page > 1 ? rows[0]?.createdUnix : undefined, to: next?.createdUnix }
  const timeline = await issueTimeline(deps, row, window)
  const typed = await typedCommentRows(deps, row, window)
  const records = await timelineToApi(deps, ctx.repo, row, typed.rows.map((r) => ({ kind: 'comment' as const, row: r })), viewer)
  const comments = await commentsToApi(deps, ctx.repo, rows, viewer)

  let reviews: ApiReview[] = []
  let lineRows: ReviewCommentRow[] = []
  let lineRecords: ApiReviewComment[] = []
  if (pull) {
    const shown = (await submittedReviews(deps, ctx, row.index)).filter((r) => inWindow(r.createdUnix, window))
    const scope = { repo: ctx.repo, issue: row, pull: pull.pull, owner: ctx.owner }
    reviews = await reviewsToApi(deps, scope, shown, viewer)
    lineRows = await commentsOfReviews(deps, shown.map((r) => r.id))
    lineRecords = await reviewCommentsToApi(deps, scope, lineRows, viewer)
  }

  const texts = [row.content, ...rows.map((c) => c.content), ...reviews.map((r) => r.body), ...lineRecords.map((c) => c.body)]
  const html = await renderAll(deps, ctx, texts, client)
  let at = 1
  const items: TimelineItem[] = comments.map((comment, i) => ({ kind: 'comment', at: rows[i]!.createdUnix, comment, html: html[at + i] ?? null }))
  at += rows.length
  const reviewHtml = html.slice(at, at + reviews.length)
  at += reviews.length
  const lineHtml = html.slice(at)
  reviews.forEach((review, i) => {
    const lines = lineRecords.flatMap((comment, j) => (comment.pull_request_review_id === review.id ? [{ comment, html: lineHtml[j] ?? null }] : []))
    items.push({ kind: 'review', at: unixOf(review.submitted_at), review, html: reviewHtml[i] ?? null, lines })
  })
  const people = await usersByIds(deps, timeline.events.flatMap((e) => [e.actorId ?? 0, Number(e.payload.reviewerId ?? 0)]).filter((id) => id > 0))
  const names = new Map([...people].map(([id, u]) => [id, u.name]))
  for (const event of timeline.events) items.push({ kind: 'event', at: event.createdUnix, event, actor: event.actorId ? (names.get(event.actorId) ?? null) : null, people: names })
  records.forEach((record, i) => items.push({ kind: 'record', at: typed.rows[i]!.createdUnix, record }))
  // Stable: comments, then reviews, then events of the same second keep the order they were read in.
  items.sort((a, b) => a.at - b.at)
  const edits = await editCounts(deps, row.id)
  return { issue, bodyHtml: html[0] ?? null, items, page, pages, totalComments: found.total, moreEvents: timeline.more || typed.more, edits }
}

/**
 * The reviews a pull request's pages show (at most MAX_REVIEWS, oldest first): submitted ones only.
 * Review requests are shown as the timeline's events; pending reviews are their reviewer's draft.
 */
export async function submittedReviews(deps: AppDeps, ctx: RepoContext, index: number): Promise<ReviewRow[]> {
  const listed = await listReviews(deps, ctx, index, { page: 1, limit: MAX_REVIEWS, offset: 0 })
  return listed.found.rows.filter((r) => r.type !== ReviewType.Request && r.type !== ReviewType.Pending)
}

const inWindow = (at: number, w: { from?: number; to?: number }) => (w.from === undefined || at >= w.from) && (w.to === undefined || at < w.to)

/** The texts rendered in one batch (those rendered before kept by the markdown service); null for each when the batch could not be rendered (too long, too slow, the pool busy). */
export async function renderAll(deps: AppDeps, ctx: RepoContext, texts: string[], client: string): Promise<(string | null)[]> {
  try {
    return await renderMarkdownAll(deps.config, texts, { mode: 'gfm', context: `${ctx.owner.name}/${ctx.repo.name}`, branch: ctx.repo.defaultBranch }, client)
  } catch (e) {
    if (e instanceof ApiError) return texts.map(() => null)
    throw e
  }
}

/** Labels, milestones and people a filter or a form offers at most. */
export const MAX_CHOICES = 100

/** The repository's labels (its own and its organisation's) and milestones, for filters and forms. */
export async function choicesOf(deps: AppDeps, ctx: RepoContext): Promise<{ labels: LabelRow[]; milestones: MilestoneRow[] }> {
  const first = { page: 1, limit: MAX_CHOICES, offset: 0 }
  const own = (await listLabels(deps, { repoId: ctx.repo.id }, undefined, first)).rows
  const org = ctx.owner.type === 1 ? (await listLabels(deps, { orgId: ctx.owner.id }, undefined, first)).rows : []
  const milestones = (await listMilestones(deps, ctx.repo.id, first, 'all')).rows
  return { labels: [...own, ...org], milestones }
}

/**
 * The projects an issue of the repository may go on, for filters and the sidebar: the
 * repository's own and its owner's (Gitea's retrieveProjects), open ones first.
 */
export async function projectsFor(deps: AppDeps, ctx: RepoContext): Promise<ProjectRow[]> {
  const [own, owners] = await Promise.all([projectChoices(deps, { repoId: ctx.repo.id }, MAX_CHOICES), projectChoices(deps, { owner: ctx.owner }, MAX_CHOICES)])
  return [...own, ...owners]
}
