import { and, asc, count, countDistinct, desc, eq, gte, lt, sql, type AnyColumn, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { gitRepoOf, modeIn, type RepoContext } from '../../auth/repo-context'
import { AccessMode, type RepoUnitKey } from '../../auth/access'
import { issues, pullRequests, releases } from '../../db/schema'
import { usersByIds } from '../../convert/people'
import { PageCache, pageCacheOf } from '../../db/page-cache'
import { readerFor } from '../../db/read-thread'
import { codeActivity, type CodeActivity } from '../../git/code-activity'

/*
 * A repository's activity over a period (Gitea 1.23's GetActivityStats, models/activities/
 * repo_activity.go, behind its Activity page): pull requests merged and proposed, issues closed
 * and new, unresolved conversations (open, filed before the period, updated in it), releases
 * published, and the code committed (git/code-activity.ts). Each list is its count, its number of
 * distinct authors and its first LIST_LIMIT rows, in Gitea's order; only the units the repository
 * has on are read. The caller already passed the repository's read rule (the pipeline): every row
 * listed is the repository's own; draft releases are never "published" (Gitea leaves them out).
 */

/** Gitea's periods, in the switcher's order, with their labels. */
export const ACTIVITY_PERIODS = {
  daily: '1 day',
  halfweekly: '3 days',
  weekly: '1 week',
  monthly: '1 month',
  quarterly: '3 months',
  semiyearly: '6 months',
  yearly: '1 year',
} as const
export type ActivityPeriod = keyof typeof ACTIVITY_PERIODS

export const isActivityPeriod = (s: string): s is ActivityPeriod => Object.hasOwn(ACTIVITY_PERIODS, s)

/** Rows each list shows at most (its count says how many there are). */
export const LIST_LIMIT = 50

/** The start of a period ending at `now` (Gitea's: hours for the short ones, calendar months for the rest). */
export function periodStart(period: ActivityPeriod, now: Date): Date {
  const hours = { daily: 24, halfweekly: 72, weekly: 168 } as Record<string, number>
  if (hours[period]) return new Date(now.getTime() - hours[period]! * 3600_000)
  const months = { monthly: 1, quarterly: 3, semiyearly: 6, yearly: 12 }[period as 'monthly']
  const from = new Date(now.getTime())
  from.setUTCMonth(from.getUTCMonth() - months)
  return from
}

export interface ActivityItem {
  /** The issue's or pull request's number, or 0 for a release. */
  index: number
  isPull: boolean
  title: string
  /** A release's tag. */
  tag?: string
  prerelease?: boolean
  /** Its author (the Ghost, id 0, for a deleted account). */
  author: { login: string; id: number }
  /** The time that put it in the list (merged, filed, closed, updated, published). */
  unix: number
}

export interface ActivityList {
  total: number
  /** Distinct authors of the whole list. */
  authors: number
  /** Its first LIST_LIMIT rows. */
  items: ActivityItem[]
}

export interface RepoActivity {
  from: number
  until: number
  /** Present when the pull requests unit is on. */
  mergedPulls?: ActivityList
  openedPulls?: ActivityList
  /** Present when the issues unit is on. */
  closedIssues?: ActivityList
  newIssues?: ActivityList
  /** Issues and pull requests of the units that are on. */
  unresolved?: ActivityList
  /** Present when the releases unit is on. */
  releases?: ActivityList
  /** The code's summary; null for an empty repository, or when git could not answer (`codeError`). */
  code: CodeActivity | null
  codeError?: string
}

const personOf = (people: Map<number, { name: string; id: number }>, id: number) => {
  const user = people.get(id)
  return user ? { login: user.name, id: user.id } : { login: 'Ghost', id: 0 }
}

/**
 * An issue list of the repository: its count, distinct posters, and first rows in `order`, each at
 * `time`. The count reads every issue of the period (a year's of a busy repository, or one whose
 * issues all came in the last week: 70-115 ms of the event loop at 100,000): both reads run off
 * the event loop (db/read-thread.ts).
 */
async function issueList(deps: AppDeps, where: SQL | undefined, time: AnyColumn, order: 'asc' | 'desc'): Promise<ActivityList> {
  const sort = order === 'asc' ? asc : desc
  const reader = readerFor(deps.db)
  const [[counted], rows] = await Promise.all([
    reader
      .select({ n: count(), authors: countDistinct(issues.posterId) })
      .from(issues)
      .leftJoin(pullRequests, eq(pullRequests.issueId, issues.id))
      .where(where),
    reader
      .select({ index: issues.index, isPull: issues.isPull, title: issues.title, posterId: issues.posterId, unix: sql<number>`${time}` })
      .from(issues)
      .leftJoin(pullRequests, eq(pullRequests.issueId, issues.id))
      .where(where)
      .orderBy(sort(time), sort(issues.id))
      .limit(LIST_LIMIT),
  ])
  const people = await usersByIds(deps, rows.map((r) => r.posterId))
  return {
    total: Number(counted?.n ?? 0),
    authors: Number(counted?.authors ?? 0),
    items: rows.map((r) => ({ index: r.index, isPull: r.isPull, title: r.title, author: personOf(people, r.posterId), unix: Number(r.unix) })),
  }
}

/** The published releases since `from`, newest first. */
async function releaseList(deps: AppDeps, repoId: number, from: number): Promise<ActivityList> {
  const where = and(eq(releases.repoId, repoId), eq(releases.isDraft, false), gte(releases.createdUnix, from))
  const [[counted], rows] = await Promise.all([
    deps.db.select({ n: count(), authors: countDistinct(releases.publisherId) }).from(releases).where(where),
    deps.db.select().from(releases).where(where).orderBy(desc(releases.createdUnix), desc(releases.id)).limit(LIST_LIMIT),
  ])
  const people = await usersByIds(deps, rows.map((r) => r.publisherId))
  return {
    total: Number(counted?.n ?? 0),
    authors: Number(counted?.authors ?? 0),
    items: rows.map((r) => ({ index: 0, isPull: false, title: r.title || r.tagName, tag: r.tagName, prerelease: r.isPrerelease, author: personOf(people, r.publisherId), unix: r.createdUnix })),
  }
}

/** The lists of an activity (RepoActivity but the period and the code). */
type ActivityLists = Omit<RepoActivity, 'from' | 'until' | 'code' | 'codeError'>

/** Activities' lists kept while the database is unchanged (the one page cache), at most this many. */
const LISTS_KEPT = 200

/**
 * The repository's activity from `from` to `until` (unix seconds), for a caller who may read it.
 * Its lists depend on the repository's rows, `from` and which units the caller reads: kept while
 * the database is unchanged (db/page-cache.ts) under those, shared by the callers they answer
 * (read only). The code's summary is kept under the refs' state (git/code-activity.ts).
 */
export async function repoActivity(deps: AppDeps, ctx: RepoContext, from: number, until: number): Promise<RepoActivity> {
  const { repo } = ctx
  // A unit's lists only where it is on and the caller reads it (a team may give them none of it).
  const reads = (unit: RepoUnitKey) => modeIn(ctx, unit) >= AccessMode.Read
  const units = { pulls: repo.hasPullRequests && reads('repo.pulls'), tracker: repo.hasIssues && reads('repo.issues'), releases: repo.hasReleases && reads('repo.releases') }
  const code = repo.isEmpty
    ? Promise.resolve({ code: null })
    : codeActivity(gitRepoOf(deps, ctx), repo.defaultBranch, from).then(
        (code) => ({ code }),
        (e: Error) => ({ code: null, codeError: e.message }),
      )
  const cache = pageCacheOf(deps.db, 'repo-activity', () => new PageCache<Promise<ActivityLists>>(deps.db, { maxCost: LISTS_KEPT }))
  const lists = cache.getOrMake(JSON.stringify([repo.id, from, units]), () => activityLists(deps, repo.id, from, units))
  const [listed, codeResult] = await Promise.all([lists, code])
  return { from, until, ...listed, ...codeResult }
}

/** The lists of the units `units` names, of the repository `repoId`, since `from`. */
async function activityLists(deps: AppDeps, repoId: number, from: number, units: { pulls: boolean; tracker: boolean; releases: boolean }): Promise<ActivityLists> {
  const { pulls, tracker } = units
  const ofRepo = eq(issues.repoId, repoId)
  const kind = (isPull: boolean) => eq(issues.isPull, isPull)
  const [mergedPulls, openedPulls, closedIssues, newIssues, unresolved, published] = await Promise.all([
    pulls ? issueList(deps, and(ofRepo, kind(true), eq(pullRequests.hasMerged, true), gte(pullRequests.mergedUnix, from)), pullRequests.mergedUnix, 'desc') : undefined,
    pulls ? issueList(deps, and(ofRepo, kind(true), eq(issues.isClosed, false), gte(issues.createdUnix, from)), issues.createdUnix, 'asc') : undefined,
    tracker ? issueList(deps, and(ofRepo, kind(false), eq(issues.isClosed, true), gte(issues.closedUnix, from)), issues.closedUnix, 'desc') : undefined,
    tracker ? issueList(deps, and(ofRepo, kind(false), gte(issues.createdUnix, from)), issues.createdUnix, 'asc') : undefined,
    pulls || tracker
      ? issueList(deps, and(ofRepo, pulls && tracker ? undefined : kind(pulls), eq(issues.isClosed, false), lt(issues.createdUnix, from), gte(issues.updatedUnix, from)), issues.updatedUnix, 'desc')
      : undefined,
    units.releases ? releaseList(deps, repoId, from) : undefined,
  ])
  return {
    ...(mergedPulls ? { mergedPulls } : {}),
    ...(openedPulls ? { openedPulls } : {}),
    ...(closedIssues ? { closedIssues } : {}),
    ...(newIssues ? { newIssues } : {}),
    ...(unresolved ? { unresolved } : {}),
    ...(published ? { releases: published } : {}),
  }
}
