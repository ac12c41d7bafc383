import { and, count, desc, eq, exists, gte, inArray, isNull, lt, lte, not, notInArray, or, sql, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { activityHiddenFrom, readableRepoCondition, visibleOwnerCondition } from '../../auth/visibility'
import { AccessMode, teamCoversAll } from '../../auth/access-mode'
import { repoAccesses, unitMode } from '../../auth/access'
import { comments, events, issues, orgUsers, repositories, teamRepos, teams, teamUnits, teamUsers, users, watches, type RepoRow, type TeamRow } from '../../db/schema'
import { inJsonList, inRowsOf, queryBuilder } from '../../db/sql'
import { ACTIVITY_KINDS, type ActivityRow } from '../../convert/activity'
import { unprocessable } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'

/*
 * Gitea's activity feeds (GetFeeds), read from the outbox rather than from per-feed copies of
 * each action: whose feed an event is in is a condition on the event (its actor, its repository,
 * the repositories watched), worked out in SQL with the page, so a page converts at most `limit`
 * events whatever the feed's length. Newest first by id: the outbox's ids grow with its times
 * (events are written one write transaction at a time), and the repository index holds them in
 * that order.
 */

const qb = queryBuilder()

/** Whose activity is asked for (Gitea's RequestedUser, RequestedTeam, RequestedRepo). */
export type FeedOf =
  /** A user's or an organisation's feed; `onlyPerformedBy`: only what they did themselves. */
  | { user: UserRow; onlyPerformedBy: boolean }
  | { team: TeamRow; org: UserRow }
  | { repo: RepoRow }

export interface FeedOptions {
  /** Events in private repositories too (Gitea's IncludePrivate: the route decides). */
  includePrivate: boolean
  /** `YYYY-MM-DD`: that day only, in the server's time zone (Gitea's DefaultUILocation). */
  date?: string
}

/** The first and last second of a `YYYY-MM-DD` day in the server's time zone; 422 for anything else. */
export function dayBounds(date: string): [number, number] {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date)
  const day = m ? new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : null
  if (!m || !day || day.getFullYear() !== Number(m[1]) || day.getMonth() !== Number(m[2]) - 1 || day.getDate() !== Number(m[3]))
    throw unprocessable(`invalid date ${JSON.stringify(date.slice(0, 40))}: expected YYYY-MM-DD`, 'date')
  const low = Math.floor(day.getTime() / 1000)
  return [low, low + 86399]
}

/**
 * Gitea's rule on whose actions a viewer sees in any feed: those of people (and organisations)
 * who do not keep their activity private and whom the viewer may see (the visibility rule), the
 * viewer's own, and the organisation's own in its feed (or, in a person's, those of the
 * organisations they belong to). Undefined: no restriction (site administrators).
 */
function visibleActorCondition(viewer: UserRow | null, of: FeedOf): SQL | undefined {
  const seen = viewer?.publicOnly ? null : viewer
  if (seen?.isAdmin) return undefined
  // A correlated EXISTS: one primary-key read per event, not a list of every open account.
  const open = exists(qb.select({ one: users.id }).from(users).where(and(eq(users.id, events.actorId), eq(users.keepActivityPrivate, false), visibleOwnerCondition(seen, false))))
  const feedOwner = 'team' in of ? of.org : 'user' in of ? of.user : null
  return or(
    open,
    seen ? eq(events.actorId, seen.id) : undefined,
    feedOwner?.type === 1 ? eq(events.actorId, feedOwner.id) : undefined,
    feedOwner && feedOwner.type !== 1 ? inArray(events.actorId, qb.select({ id: orgUsers.orgId }).from(orgUsers).where(eq(orgUsers.uid, feedOwner.id))) : undefined,
  )
}

/**
 * An owner's repositories, as a list of ids the events' `repo_id` is looked up in: every term of
 * a feed's condition then reads an index of `events` (by repository or by actor).
 */
const reposOf = (ownerId: number) => qb.select({ id: repositories.id }).from(repositories).where(eq(repositories.ownerId, ownerId))

/** The events in the feed of `of` (Gitea's user_id: the actor's own, watched repositories', an organisation's repositories'). */
function feedCondition(of: FeedOf): SQL {
  if ('repo' in of) return eq(events.repoId, of.repo.id)
  if ('team' in of) {
    const { team } = of
    const teamRepoIds = qb.select({ id: teamRepos.repoId }).from(teamRepos).where(eq(teamRepos.teamId, team.id))
    // The Owners team and teams given every repository cover all of the organisation's, as in the repository rule.
    return teamCoversAll(team)
      ? inArray(events.repoId, reposOf(team.orgId))
      : and(eq(repositories.ownerId, team.orgId), inArray(events.repoId, teamRepoIds))!
  }
  const { user, onlyPerformedBy } = of
  if (onlyPerformedBy) return eq(events.actorId, user.id)
  // Each term an index of events (actor_id; repo_id among a list made once, inRowsOf): PostgreSQL's
  // `IN (subquery)` inside an OR is a filter run on every event, read whole in id order.
  return or(
    eq(events.actorId, user.id),
    inRowsOf(events.repoId, qb.select({ id: watches.repoId }).from(watches).where(eq(watches.userId, user.id))),
    user.type === 1 ? inRowsOf(events.repoId, reposOf(user.id)) : undefined,
  )!
}

/**
 * Whether a person's feed, as `viewer` reads it, holds private repositories' events (Gitea's
 * IncludePrivate of the user feed and the profile's activity tab): for themself and site
 * administrators only, never through a public-only token.
 */
export const userFeedIncludesPrivate = (viewer: UserRow | null, user: UserRow): boolean =>
  !!viewer && !viewer.publicOnly && (viewer.isAdmin || viewer.id === user.id)

/** Gitea's organisation feed: private repositories' actions for its members and site administrators (never a public-only caller). */
export const orgFeedIncludesPrivate = (viewer: UserRow | null, member: boolean): boolean => !!viewer && !viewer.publicOnly && (viewer.isAdmin || member)

/** The events of the code unit (Gitea's watcher feed shows them to those who read the code: pushes, tags, releases). */
const CODE_KINDS = ['push', 'release.published'] as const
/** The units a feed's events belong to (a repository's own events, created or renamed, to none). */
const FEED_UNITS = ['repo.code', 'repo.issues', 'repo.pulls'] as const

/**
 * The repositories the viewer may read whose code, issues or pull requests a team of theirs keeps
 * from them (Gitea's per-unit team permissions): every repository a team of theirs below admin
 * with unit settings covers, judged by the access rule (another team, a collaboration or the
 * public may give the unit back). None without such a team: the common case costs one query.
 */
async function unitHidden(deps: AppDeps, viewer: UserRow | null, of: FeedOf): Promise<{ code: number[]; issues: number[]; pulls: number[] }> {
  const hidden = { code: [] as number[], issues: [] as number[], pulls: [] as number[] }
  if (!viewer || viewer.isAdmin) return hidden
  // Teams below admin that do not give all three units (a unit without its row is none).
  const given = qb
    .select({ n: count() })
    .from(teamUnits)
    .where(and(eq(teamUnits.teamId, teams.id), inArray(teamUnits.type, [...FEED_UNITS]), gte(teamUnits.accessMode, AccessMode.Read)))
  const limited = await deps.db
    .select({ id: teams.id, orgId: teams.orgId, all: teams.includesAllRepositories })
    .from(teamUsers)
    .innerJoin(teams, eq(teams.id, teamUsers.teamId))
    .where(and(eq(teamUsers.uid, viewer.id), lt(teams.authorize, AccessMode.Admin), lt(sql`(${given})`, FEED_UNITS.length)))
  if (limited.length === 0) return hidden
  const covered = await deps.db
    .select()
    .from(repositories)
    .where(
      and(
        // A repository's feed: that repository alone matters.
        'repo' in of ? eq(repositories.id, of.repo.id) : undefined,
        or(
          inArray(repositories.id, qb.select({ id: teamRepos.repoId }).from(teamRepos).where(inJsonList(teamRepos.teamId, limited.filter((t) => !t.all).map((t) => t.id)))),
          inJsonList(repositories.ownerId, limited.filter((t) => t.all).map((t) => t.orgId)),
        ),
      ),
    )
  for (const [id, access] of await repoAccesses(deps.db, viewer, covered)) {
    if (unitMode(access, 'repo.code') < AccessMode.Read) hidden.code.push(id)
    if (unitMode(access, 'repo.issues') < AccessMode.Read) hidden.issues.push(id)
    if (unitMode(access, 'repo.pulls') < AccessMode.Read) hidden.pulls.push(id)
  }
  return hidden
}

/**
 * The events whose unit the viewer may read (the repository itself readable): code events where
 * the code is theirs to read, an issue's or a pull request's where that tracker is on and theirs
 * to read; an issue or comment since deleted is in none (Gitea deletes their actions).
 */
function readableUnitCondition(hidden: { code: number[]; issues: number[]; pulls: number[] }): SQL {
  const tracker = (pull: boolean, on: SQL, repos: number[]) =>
    and(eq(issues.isPull, pull), on, repos.length ? not(inJsonList(events.repoId, repos)) : undefined)
  return and(
    hidden.code.length ? or(notInArray(events.kind, [...CODE_KINDS]), not(inJsonList(events.repoId, hidden.code))) : undefined,
    or(
      isNull(events.issueId),
      exists(
        qb
          .select({ one: issues.id })
          .from(issues)
          .where(and(eq(issues.id, events.issueId), or(tracker(false, eq(repositories.hasIssues, true), hidden.issues), tracker(true, eq(repositories.hasPullRequests, true), hidden.pulls)))),
      ),
    ),
  )!
}

/**
 * One page of a feed, newest first, with its total: events of the activity kinds, in
 * repositories `viewer` may read (the visibility rule) and of units they may read there
 * (readableUnitCondition), by actors whose activity `viewer` may see, none of an issue or comment
 * since deleted (Gitea deletes their actions). A person who
 * keeps their activity private has an empty feed for anyone but themself and site administrators.
 */
export async function listFeed(deps: AppDeps, viewer: UserRow | null, of: FeedOf, opts: FeedOptions, page: Page): Promise<Paged<ActivityRow>> {
  const day = opts.date === undefined || opts.date === '' ? null : dayBounds(opts.date)
  if ('user' in of && activityHiddenFrom(of.user, viewer)) return { rows: [], total: 0 }
  const where = and(
    feedCondition(of),
    inArray(events.kind, [...ACTIVITY_KINDS]),
    readableRepoCondition(viewer),
    opts.includePrivate ? undefined : eq(repositories.isPrivate, false),
    visibleActorCondition(viewer, of),
    readableUnitCondition(await unitHidden(deps, viewer, of)),
    or(isNull(events.commentId), exists(qb.select({ one: comments.id }).from(comments).where(eq(comments.id, events.commentId)))),
    day ? and(gte(events.createdUnix, day[0]), lte(events.createdUnix, day[1])) : undefined,
  )
  const total = Number((await deps.db.select({ n: count() }).from(events).innerJoin(repositories, eq(repositories.id, events.repoId)).where(where))[0]!.n)
  if (total <= page.offset) return { rows: [], total }
  const rows = await deps.db
    .select({ event: events, repo: repositories })
    .from(events)
    .innerJoin(repositories, eq(repositories.id, events.repoId))
    .where(where)
    // A repository's feed in the order of its index (repo_id, id). The others by id, but not through
    // the primary key's order: the page is found as the count found its rows (the feed's terms in
    // their own indexes), then the newest kept. Walking the key from the newest event, PostgreSQL
    // expected a feed's events among the first it read, and read every later event of the site
    // before reaching an older feed's (SQLite finds them through the indexes either way).
    .orderBy('repo' in of ? desc(events.id) : sql`${events.id} + 0 desc`)
    .limit(page.limit)
    .offset(page.offset)
  return { rows, total }
}
