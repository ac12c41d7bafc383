import { and, asc, count, eq, gte, inArray, lt, lte, ne, notInArray, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { perConnection } from '../../db/client'
import { inJsonList } from '../../db/sql'
import { comments, events, reviews, type CommentRow, type IssueRow, type ReviewRow } from '../../db/schema'
import type { Page, Paged } from '../../lib/pagination'
import { ReviewType } from '../../convert/review'
import { PLAIN_COMMENT } from '../comments/service'
import type { EventKind, EventRecord } from '../../events/outbox'

/**
 * An issue's timeline events (Gitea's timeline comments of other types than a plain comment):
 * what the outbox recorded of it, in the transaction of each change, so nothing is kept twice.
 * Closed and reopened, labels, assignees, milestone, title changes, dependencies, pins; for a pull request also its
 * merge, its pushes and its review requests (its reviews are rows of their own).
 */
export const TIMELINE_KINDS: readonly EventKind[] = [
  'issue.closed',
  'issue.reopened',
  'issue.label_updated',
  'issue.label_cleared',
  'issue.assigned',
  'issue.unassigned',
  'issue.milestoned',
  'issue.demilestoned',
  'issue.edited',
  'issue.ref_changed',
  'issue.dependency_added',
  'issue.dependency_removed',
  'issue.pinned',
  'issue.unpinned',
  'issue.locked',
  'issue.unlocked',
  'issue.project_changed',
  'issue.project_column_changed',
  'pull.merged',
  'pull.synchronized',
  'review.requested',
  'review.request_removed',
]

/** Most events one window of a timeline reads (an issue's events grow without bound). */
export const MAX_TIMELINE_EVENTS = 500

/** The window of a timeline: events at or after `from` and before `to` (Unix seconds), either open. */
export interface TimelineWindow {
  from?: number
  to?: number
}

/** A window's open ends as bounds every time is within (the reads below have one shape whatever the window). */
const EARLIEST = -Number.MAX_SAFE_INTEGER
const LATEST = Number.MAX_SAFE_INTEGER
const windowParams = (issue: Pick<IssueRow, 'id'>, window: TimelineWindow) => ({ issue: issue.id, from: window.from ?? EARLIEST, to: window.to ?? LATEST })

/**
 * A conversation page's reads of its timeline, prepared once per connection (each page view ran
 * them as new statements, drizzle building each anew: several times the time SQLite takes to run
 * them), the window's ends bound (open ones as EARLIEST and LATEST).
 */
const timelineReadsOf = perConnection((db: AppDeps['db']) => {
  const p = sql.placeholder
  return {
    events: db
      .select()
      .from(events)
      .where(and(eq(events.issueId, p('issue')), inArray(events.kind, [...TIMELINE_KINDS]), gte(events.createdUnix, p('from')), lt(events.createdUnix, p('to'))))
      .orderBy(asc(events.id))
      .limit(MAX_TIMELINE_EVENTS + 1)
      .prepare(),
    typedComments: db
      .select()
      .from(comments)
      .where(and(eq(comments.issueId, p('issue')), ne(comments.type, PLAIN_COMMENT), gte(comments.createdUnix, p('from')), lt(comments.createdUnix, p('to'))))
      .orderBy(asc(comments.createdUnix), asc(comments.id))
      .limit(MAX_TIMELINE_EVENTS + 1)
      .prepare(),
    ...apiTimelineReads(db),
  }
})

/**
 * listIssueTimeline's reads: its comments and submitted reviews within an updated-time window
 * (`since` and `before`, open ends bound as EARLIEST and LATEST) up to the page's `reach`, their
 * counts, and the outbox positions of the plain comments' `comment.created` events (`plain`, a
 * JSON list of comment ids).
 */
function apiTimelineReads(db: AppDeps['db']) {
  const p = sql.placeholder
  const commentWhere = and(eq(comments.issueId, p('issue')), gte(comments.updatedUnix, p('since')), lte(comments.updatedUnix, p('before')))
  const reviewWhere = and(
    eq(reviews.issueId, p('issue')),
    notInArray(reviews.type, [ReviewType.Pending, ReviewType.Request]),
    gte(reviews.updatedUnix, p('since')),
    lte(reviews.updatedUnix, p('before')),
  )
  return {
    comments: db.select().from(comments).where(commentWhere).orderBy(asc(comments.createdUnix), asc(comments.id)).limit(p('reach')).prepare(),
    commentCount: db.select({ n: count() }).from(comments).where(commentWhere).prepare(),
    reviews: db.select().from(reviews).where(reviewWhere).orderBy(asc(reviews.createdUnix), asc(reviews.id)).limit(p('reach')).prepare(),
    reviewCount: db.select({ n: count() }).from(reviews).where(reviewWhere).prepare(),
    commentEvents: db
      .select({ id: events.id, commentId: events.commentId })
      .from(events)
      .where(and(eq(events.issueId, p('issue')), eq(events.kind, 'comment.created'), inJsonList(events.commentId, 'plain')))
      .prepare(),
  }
}

/**
 * The timeline events of `issue` within `window`, oldest first, at most MAX_TIMELINE_EVENTS (the
 * first ones), read through the outbox's index by issue. An edit that changed neither the title
 * (a body edit) is left out, as Gitea's timeline shows only title changes.
 */
export async function issueTimeline(deps: AppDeps, issue: Pick<IssueRow, 'id'>, window: TimelineWindow = {}): Promise<{ events: EventRecord[]; more: boolean }> {
  const rows = (await timelineReadsOf(deps.db).events.execute(windowParams(issue, window))) as (typeof events.$inferSelect)[]
  const records = rows.slice(0, MAX_TIMELINE_EVENTS).map((row) => ({ ...row, kind: row.kind as EventKind, payload: JSON.parse(row.payload) as Record<string, unknown> }))
  return { events: records.filter((e) => e.kind !== 'issue.edited' || (e.payload.changes as { title?: unknown } | undefined)?.title !== undefined), more: rows.length > MAX_TIMELINE_EVENTS }
}

/**
 * The comment rows of `issue` that are timeline events (every type but a plain comment: time
 * tracked, due dates, a deleted branch, a scheduled merge) within `window`, oldest first, at most
 * MAX_TIMELINE_EVENTS (the first ones).
 */
export async function typedCommentRows(deps: AppDeps, issue: Pick<IssueRow, 'id'>, window: TimelineWindow = {}): Promise<{ rows: CommentRow[]; more: boolean }> {
  const rows = (await timelineReadsOf(deps.db).typedComments.execute(windowParams(issue, window))) as CommentRow[]
  return { rows: rows.slice(0, MAX_TIMELINE_EVENTS), more: rows.length > MAX_TIMELINE_EVENTS }
}

/** Most records of all kinds one answer of the API's timeline reaches into (its page ends there). */
export const MAX_TIMELINE_REACH = 2000

/** One row of an issue's API timeline, in time order: a comment row (plain or an event kept there), a submitted review, an outbox event. */
export type TimelineEntry =
  | { kind: 'comment'; at: number; row: CommentRow }
  | { kind: 'review'; at: number; row: ReviewRow }
  | { kind: 'event'; at: number; event: EventRecord }

/** Updated-time window of the API's timeline: `since` and `before`, both inclusive (Gitea's). */
export interface UpdatedWindow {
  since?: number
  before?: number
}

/**
 * A page of an issue's timeline (Gitea's ListIssueCommentsAndTimeline): every comment row, the
 * submitted reviews of a pull request and the outbox's timeline events, merged by time. Each source
 * is read up to the page's end only (at most MAX_TIMELINE_REACH rows, events MAX_TIMELINE_EVENTS),
 * so a page costs what comes before it; the total counts every comment and review and the events read.
 */
export async function listIssueTimeline(deps: AppDeps, issue: IssueRow, window: UpdatedWindow, page: Page): Promise<Paged<TimelineEntry>> {
  const reach = Math.min(page.offset + page.limit, MAX_TIMELINE_REACH)
  const reads = timelineReadsOf(deps.db)
  const params = { issue: issue.id, since: window.since ?? EARLIEST, before: window.before ?? LATEST, reach }
  const commentRows = (await reads.comments.execute(params)) as CommentRow[]
  const [commentCount] = (await reads.commentCount.execute(params)) as { n: number }[]
  const reviewRows = issue.isPull ? ((await reads.reviews.execute(params)) as ReviewRow[]) : []
  const [reviewCount] = issue.isPull ? ((await reads.reviewCount.execute(params)) as { n: number }[]) : [{ n: 0 }]
  const timeline = await issueTimeline(deps, issue, { from: window.since, to: window.before === undefined ? undefined : window.before + 1 })
  // Within one second, records keep the order of their events in the outbox: a comment's is its
  // `comment.created` event (those kept as rows without an event, and reviews, come first).
  const plain = commentRows.map((c) => c.id)
  const created = new Map(
    (plain.length ? ((await reads.commentEvents.execute({ issue: issue.id, plain: JSON.stringify(plain) })) as { id: number; commentId: number | null }[]) : []).map((e) => [
      e.commentId,
      e.id,
    ]),
  )
  const entries: (TimelineEntry & { seq: number })[] = [
    ...commentRows.map((row) => ({ kind: 'comment' as const, at: row.createdUnix, seq: created.get(row.id) ?? 0, row })),
    ...reviewRows.map((row) => ({ kind: 'review' as const, at: row.createdUnix, seq: 0, row })),
    ...timeline.events.map((event) => ({ kind: 'event' as const, at: event.createdUnix, seq: event.id, event })),
  ]
  entries.sort((a, b) => a.at - b.at || a.seq - b.seq)
  return {
    rows: page.offset >= reach ? [] : entries.slice(page.offset, reach),
    total: Number(commentCount?.n ?? 0) + Number(reviewCount?.n ?? 0) + timeline.events.length,
  }
}
