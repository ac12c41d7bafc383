import { and, asc, count, eq, gt, inArray, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { events, repositories } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { activityHiddenFrom, readableRepoCondition } from '../../auth/visibility'
import { ACTIVITY_KINDS } from '../../convert/activity'
import { nowUnix } from '../../lib/time'

/** Gitea's heatmap: contributions in buckets of 15 minutes (the client sums them into days), over the last 366 days. */
const BUCKET_SECONDS = 900
const WINDOW_SECONDS = 366 * 24 * 3600

/**
 * The user's contributions per 15 minutes over the last year, counting only events in
 * repositories `viewer` may read. A contribution is an action of the activity feeds
 * (ACTIVITY_KINDS: pushes, repositories made, renamed or transferred, issues and pull requests
 * opened, closed, reopened or merged, comments, reviews, releases), as Gitea counts its action
 * rows; not edits, labels, assignments or statuses; nothing when the user hides their activity from `viewer`
 * (anyone but themself and site administrators).
 */
export async function userHeatmap(deps: AppDeps, user: UserRow, viewer: UserRow | null): Promise<{ timestamp: number; contributions: number }[]> {
  if (activityHiddenFrom(user, viewer)) return []
  const bucket = sql<number>`(${events.createdUnix} / ${sql.raw(String(BUCKET_SECONDS))}) * ${sql.raw(String(BUCKET_SECONDS))}`
  const rows = await deps.db
    .select({ timestamp: bucket, contributions: count() })
    .from(events)
    .innerJoin(repositories, eq(repositories.id, events.repoId))
    .where(
      and(
        eq(events.actorId, user.id),
        gt(events.createdUnix, nowUnix() - WINDOW_SECONDS),
        inArray(events.kind, [...ACTIVITY_KINDS]),
        readableRepoCondition(viewer),
      ),
    )
    .groupBy(bucket)
    .orderBy(asc(bucket))
    .limit(Math.ceil(WINDOW_SECONDS / BUCKET_SECONDS))
  return rows.map((r) => ({ timestamp: Number(r.timestamp), contributions: Number(r.contributions) }))
}
