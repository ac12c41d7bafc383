import { and, asc, eq, exists, gte, inArray, lte, sql, sum, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { perConnection, writeTransaction } from '../../db/client'
import { issueAssignees, issues, repositories, stopwatches, trackedTimes, type IssueRow, type StopwatchRow, type TrackedTimeRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode, type RepoRow } from '../../auth/access'
import type { RepoContext } from '../../auth/repo-context'
import { ApiError, forbidden, notFound } from '../../lib/errors'
import { nowUnix, parseTimestamp } from '../../lib/time'
import { findIssue } from '../issues/queries'
import { getUserByName } from '../users/service'
import { insertComment } from '../comments/service'
import { readableUnitsCondition } from '../../auth/visibility'
import { queryBuilder } from '../../db/sql'

const qb = queryBuilder()

/** Gitea's comment types of the time tracker's timeline events. */
export const TIME_EVENTS = { started: 12, stopped: 13, added: 14, cancelled: 15, deleted: 26 } as const

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
  await requireTracker(deps, ctx, issue, caller)
  return await writeTransaction(deps.db, async () => await recordTime(deps, issue, worker, opts.time, created, TIME_EVENTS.added))
}

/** A tracked time and its event ("time added", or a stopwatch's "stopped"); inside a write transaction. */
async function recordTime(deps: AppDeps, issue: IssueRow, worker: UserRow, time: number, created: number, type: number): Promise<TrackedTimeRow> {
  const row = (await deps.db
    .insert(trackedTimes)
    .values({ issueId: issue.id, repoId: issue.repoId, userId: worker.id, time, createdUnix: created })
    .returning())[0]!
  await insertComment(deps, issue, worker, type, String(time), JSON.stringify({ tracked_time_id: row.id }))
  return row
}

/**
 * Gitea's stopwatch rules (prepareIssueStopwatch): time tracking on (400), a writer of the issue's
 * kind who may track time on it (403), and a stopwatch of the caller on the issue running or not
 * as the action needs (409).
 */
async function stopwatchIssue(deps: AppDeps, ctx: RepoContext, index: number, caller: UserRow, running: boolean) {
  requireTimeTracking(ctx.repo)
  const issue = await findIssue(deps, ctx.repo.id, index)
  if (ctx.mode < AccessMode.Write) throw forbidden('Only writers may use a stopwatch on this issue')
  await requireTracker(deps, ctx, issue, caller)
  const [watch] = await deps.db.select().from(stopwatches).where(and(eq(stopwatches.userId, caller.id), eq(stopwatches.issueId, issue.id)))
  if (running && !watch) throw new ApiError(409, 'cannot stop/cancel a non existent stopwatch')
  if (!running && watch) throw new ApiError(409, 'cannot start a stopwatch again if it already exists')
  return { issue, watch }
}

/** Stops a stopwatch: its time (at least a second) recorded as tracked time; inside a write transaction. */
async function finishStopwatch(deps: AppDeps, watch: StopwatchRow, issue: IssueRow, user: UserRow): Promise<void> {
  const removed = await deps.db.delete(stopwatches).where(eq(stopwatches.id, watch.id)).returning()
  if (removed.length === 0) return
  const now = nowUnix()
  await recordTime(deps, issue, user, Math.max(1, now - watch.createdUnix), now, TIME_EVENTS.stopped)
}

/** Starts the caller's stopwatch on an issue; one running elsewhere is stopped first (Gitea's CreateIssueStopwatch). */
export async function startStopwatch(deps: AppDeps, ctx: RepoContext, index: number, caller: UserRow): Promise<void> {
  const { issue } = await stopwatchIssue(deps, ctx, index, caller, false)
  await writeTransaction(deps.db, async () => {
    for (const other of await deps.db.select().from(stopwatches).where(eq(stopwatches.userId, caller.id))) {
      const [otherIssue] = await deps.db.select().from(issues).where(eq(issues.id, other.issueId))
      if (otherIssue) await finishStopwatch(deps, other, otherIssue, caller)
    }
    const inserted = await deps.db.insert(stopwatches).values({ issueId: issue.id, userId: caller.id, createdUnix: nowUnix() }).onConflictDoNothing().returning()
    if (inserted.length === 0) throw new ApiError(409, 'cannot start a stopwatch again if it already exists')
    await insertComment(deps, issue, caller, TIME_EVENTS.started, '')
  })
}

/** Stops the caller's stopwatch on an issue (its time recorded), or cancels it (`record` false). */
export async function stopStopwatch(deps: AppDeps, ctx: RepoContext, index: number, caller: UserRow, record: boolean): Promise<void> {
  const { issue, watch } = await stopwatchIssue(deps, ctx, index, caller, true)
  await writeTransaction(deps.db, async () => {
    if (record) await finishStopwatch(deps, watch!, issue, caller)
    else if ((await deps.db.delete(stopwatches).where(eq(stopwatches.id, watch!.id)).returning()).length)
      await insertComment(deps, issue, caller, TIME_EVENTS.cancelled, '')
  })
}

/**
 * The caller's stopwatches on issues they may read now: the issues unit of the issue's repository
 * for an issue, the pull requests unit for a pull request (readableUnitsCondition, as the
 * notification list and the issue search: a public-only token reads only public repositories of
 * public owners, a collaborator removed reads the repository no more). A correlated EXISTS on
 * `stopwatches`: one primary-key read of the issue and its repository per stopwatch.
 */
function ownReadableStopwatches(caller: UserRow): SQL {
  const readable = readableUnitsCondition(caller, [
    [eq(issues.isPull, false), 'repo.issues'],
    [eq(issues.isPull, true), 'repo.pulls'],
  ])
  return and(
    eq(stopwatches.userId, caller.id),
    readable
      ? exists(
          qb
            .select({ one: issues.id })
            .from(issues)
            .innerJoin(repositories, eq(repositories.id, issues.repoId))
            .where(and(eq(issues.id, stopwatches.issueId), readable)),
        )
      : undefined,
  )!
}

/**
 * The caller's running stopwatches on issues they may read (ownReadableStopwatches), oldest
 * first: a page, with their issues and repositories.
 */
export async function listStopwatches(deps: AppDeps, caller: UserRow, page: Page) {
  const found = await selectPage(deps.db, stopwatches, ownReadableStopwatches(caller), [asc(stopwatches.createdUnix), asc(stopwatches.id)], page)
  const issueRows = found.rows.length ? await deps.db.select().from(issues).where(inArray(issues.id, found.rows.map((w) => w.issueId))) : []
  const repoRows = issueRows.length ? await deps.db.select().from(repositories).where(inArray(repositories.id, issueRows.map((i) => i.repoId))) : []
  const issueById = new Map(issueRows.map((i) => [i.id, i]))
  const repoById = new Map(repoRows.map((r) => [r.id, r]))
  const now = nowUnix()
  return {
    total: found.total,
    rows: found.rows.flatMap((w) => {
      const issue = issueById.get(w.issueId)
      const repo = issue && repoById.get(issue.repoId)
      return issue && repo ? [{ watch: w, issue, repo, seconds: Math.max(0, now - w.createdUnix) }] : []
    }),
  }
}

/**
 * Gitea's CanUseTimetracker: when the repository restricts tracking to contributors, only writers,
 * the issue's poster and its assignees may track time on it (403 otherwise).
 */
async function requireTracker(deps: AppDeps, ctx: RepoContext, issue: IssueRow, caller: UserRow): Promise<void> {
  if (!(await mayTrackTime(deps, ctx, issue, caller))) throw forbidden('Only contributors may track time on this repository')
}

/** Whether the caller may track time on the issue (requireTracker's rule; time tracking itself checked apart). */
export async function mayTrackTime(deps: AppDeps, ctx: RepoContext, issue: IssueRow, caller: UserRow): Promise<boolean> {
  if (!ctx.repo.allowOnlyContributorsToTrackTime || ctx.mode >= AccessMode.Write || issue.posterId === caller.id) return true
  const assigned = (await deps.db
    .select({ id: issueAssignees.id })
    .from(issueAssignees)
    .where(and(eq(issueAssignees.issueId, issue.id), eq(issueAssignees.assigneeId, caller.id))))[0]
  return !!assigned
}

/** issueTimeTotal's statement, prepared once per connection (the issue page's sidebar reads it). */
const timeTotalOf = perConnection((db: AppDeps['db']) =>
  db.select({ total: sum(trackedTimes.time) }).from(trackedTimes).where(eq(trackedTimes.issueId, sql.placeholder('issue'))).prepare(),
)

/** The seconds of time tracked on an issue, everyone's (Gitea's TotalTrackedTime on the sidebar). */
export async function issueTimeTotal(deps: AppDeps, issueId: number): Promise<number> {
  const [row] = await timeTotalOf(deps.db).execute({ issue: issueId })
  return Number(row?.total ?? 0)
}

/** The caller's stopwatch on an issue, if running. */
export async function stopwatchOn(deps: AppDeps, userId: number, issueId: number): Promise<StopwatchRow | undefined> {
  return (await deps.db.select().from(stopwatches).where(and(eq(stopwatches.userId, userId), eq(stopwatches.issueId, issueId))))[0]
}

/** Gitea's `- 1:02:03` of a time-deleted event: the seconds taken away. */
const removedTime = (seconds: number) =>
  `- ${Math.floor(seconds / 3600)}:${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}`

/**
 * Deletes tracked time of an issue (Gitea's ResetIssueTime and DeleteTime): all the caller's own
 * on the issue (`id` undefined), or one record (`id`), the caller's own unless site admin; a
 * "time deleted" event says how much went. 404 for a record not of this issue.
 */
export async function deleteTimes(deps: AppDeps, ctx: RepoContext, index: number, caller: UserRow, id?: number): Promise<void> {
  requireTimeTracking(ctx.repo)
  const issue = await findIssue(deps, ctx.repo.id, index)
  await requireTracker(deps, ctx, issue, caller)
  await writeTransaction(deps.db, async () => {
    let rows: TrackedTimeRow[]
    if (id === undefined) {
      rows = await deps.db.select().from(trackedTimes).where(and(eq(trackedTimes.issueId, issue.id), eq(trackedTimes.userId, caller.id)))
    } else {
      rows = Number.isSafeInteger(id) ? await deps.db.select().from(trackedTimes).where(and(eq(trackedTimes.id, id), eq(trackedTimes.issueId, issue.id))) : []
      if (rows.length === 0) throw notFound(`tracked time does not exist [id: ${id}]`)
      if (rows[0]!.userId !== caller.id && !caller.isAdmin) throw forbidden('Cannot delete time of others')
    }
    if (rows.length === 0) return
    await deps.db.delete(trackedTimes).where(inArray(trackedTimes.id, rows.map((r) => r.id)))
    await insertComment(deps, issue, caller, TIME_EVENTS.deleted, removedTime(rows.reduce((sum, r) => sum + r.time, 0)))
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
