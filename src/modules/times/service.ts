import { and, asc, eq, gte, lte } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { writeTransaction } from '../../db/client'
import { issueAssignees, trackedTimes, type TrackedTimeRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode, type RepoRow } from '../../auth/access'
import type { RepoContext } from '../../auth/repo-context'
import { ApiError, forbidden, notFound } from '../../lib/errors'
import { nowUnix, parseTimestamp } from '../../lib/time'
import { findIssue } from '../issues/queries'
import { getUserByName } from '../users/service'
import { insertComment } from '../comments/service'

/** Timeline event type of "time added" (Gitea's CommentTypeAddTimeManual). */
const TIME_ADDED_EVENT = 15

/**
 * `time tracking disabled` when the repository turned it off: 400 (with Gitea's capitalised
 * `Message` too), or 404 for an issue's list, as Gitea's ListTrackedTimes answers.
 */
export function requireTimeTracking(repo: RepoRow, status: 400 | 404 = 400): void {
  if (repo.enableTimeTracker) return
  if (status === 404) throw notFound('time tracking disabled')
  throw new ApiError(400, 'time tracking disabled', { Message: 'time tracking disabled' })
}

export interface NewTime {
  time: number
  created?: string
  user_name?: string
}

/**
 * Records time on an issue and a "time added" event. When the repository restricts tracking to
 * contributors, only writers, the poster and the assignees may; recording for another user needs admin.
 */
export async function addTime(deps: AppDeps, ctx: RepoContext, index: number, caller: UserRow, opts: NewTime): Promise<TrackedTimeRow> {
  requireTimeTracking(ctx.repo)
  if (!Number.isSafeInteger(opts.time) || opts.time <= 0) throw new ApiError(400, '[Time]: must be a positive number of seconds')
  const created = opts.created ? parseTimestamp(opts.created, 'created') : nowUnix()
  const issue = await findIssue(deps, ctx.repo.id, index)
  let worker = caller
  if (opts.user_name && opts.user_name.toLowerCase() !== caller.lowerName) {
    if (ctx.mode < AccessMode.Admin) throw forbidden('Only repository admins may record time for another user')
    worker = await getUserByName(deps, opts.user_name)
  }
  if (ctx.repo.allowOnlyContributorsToTrackTime && ctx.mode < AccessMode.Write && issue.posterId !== caller.id) {
    const assigned = (await deps.db
      .select({ id: issueAssignees.id })
      .from(issueAssignees)
      .where(and(eq(issueAssignees.issueId, issue.id), eq(issueAssignees.assigneeId, caller.id))))[0]
    if (!assigned) throw forbidden('Only contributors may track time on this repository')
  }
  return await writeTransaction(deps.db, async () => {
    const row = (await deps.db
      .insert(trackedTimes)
      .values({ issueId: issue.id, repoId: ctx.repo.id, userId: worker.id, time: opts.time, createdUnix: created })
      .returning())[0]
    await insertComment(deps, issue, worker, TIME_ADDED_EVENT, String(opts.time), JSON.stringify({ tracked_time_id: row.id }))
    return row
  })
}

export interface TimeFilter {
  issueId?: number
  repoId?: number
  userId?: number
  since?: string
  before?: string
}

/** Tracked times, oldest first, by issue, repository and/or user: a page, or all with `page` null. */
export async function listTimes(deps: AppDeps, f: TimeFilter, page: Page | null): Promise<Paged<TrackedTimeRow>> {
  const where = and(
    f.issueId !== undefined ? eq(trackedTimes.issueId, f.issueId) : undefined,
    f.repoId !== undefined ? eq(trackedTimes.repoId, f.repoId) : undefined,
    f.userId !== undefined ? eq(trackedTimes.userId, f.userId) : undefined,
    f.since ? gte(trackedTimes.createdUnix, parseTimestamp(f.since, 'since')) : undefined,
    f.before ? lte(trackedTimes.createdUnix, parseTimestamp(f.before, 'before')) : undefined,
  )
  return await selectPage(deps.db, trackedTimes, where, [asc(trackedTimes.createdUnix), asc(trackedTimes.id)], page)
}
