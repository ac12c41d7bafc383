import { and, asc, eq, gte, inArray, lt } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { events, type IssueRow } from '../../db/schema'
import type { EventKind, EventRecord } from '../../events/outbox'

/**
 * An issue's timeline events (Gitea's timeline comments of other types than a plain comment):
 * what the outbox recorded of it, in the transaction of each change, so nothing is kept twice.
 * Closed and reopened, labels, assignees, milestone, title changes; for a pull request also its
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

/**
 * The timeline events of `issue` within `window`, oldest first, at most MAX_TIMELINE_EVENTS (the
 * first ones), read through the outbox's index by issue. An edit that changed neither the title
 * (a body edit) is left out, as Gitea's timeline shows only title changes.
 */
export async function issueTimeline(deps: AppDeps, issue: Pick<IssueRow, 'id'>, window: TimelineWindow = {}): Promise<{ events: EventRecord[]; more: boolean }> {
  const rows = await deps.db
    .select()
    .from(events)
    .where(
      and(
        eq(events.issueId, issue.id),
        inArray(events.kind, [...TIMELINE_KINDS]),
        window.from === undefined ? undefined : gte(events.createdUnix, window.from),
        window.to === undefined ? undefined : lt(events.createdUnix, window.to),
      ),
    )
    .orderBy(asc(events.id))
    .limit(MAX_TIMELINE_EVENTS + 1)
  const records = rows.slice(0, MAX_TIMELINE_EVENTS).map((row) => ({ ...row, kind: row.kind as EventKind, payload: JSON.parse(row.payload) as Record<string, unknown> }))
  return { events: records.filter((e) => e.kind !== 'issue.edited' || (e.payload.changes as { title?: unknown } | undefined)?.title !== undefined), more: rows.length > MAX_TIMELINE_EVENTS }
}
