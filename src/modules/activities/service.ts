import { and, count, desc, eq, exists, gte, inArray, isNull, lte, or, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { readableRepoCondition, visibleOwnerCondition } from '../../auth/visibility'
import { AccessMode } from '../../auth/access-mode'
import { comments, events, issues, orgUsers, repositories, teamRepos, users, watches, type RepoRow, type TeamRow } from '../../db/schema'
import { queryBuilder } from '../../db/sql'
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
    return team.includesAllRepositories || team.authorize >= AccessMode.Owner
      ? inArray(events.repoId, reposOf(team.orgId))
      : and(eq(repositories.ownerId, team.orgId), inArray(events.repoId, teamRepoIds))!
  }
  const { user, onlyPerformedBy } = of
  if (onlyPerformedBy) return eq(events.actorId, user.id)
  return or(
    eq(events.actorId, user.id),
    inArray(events.repoId, qb.select({ id: watches.repoId }).from(watches).where(eq(watches.userId, user.id))),
    user.type === 1 ? inArray(events.repoId, reposOf(user.id)) : undefined,
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

/**
 * One page of a feed, newest first, with its total: events of the activity kinds, in
 * repositories `viewer` may read (the visibility rule), by actors whose activity `viewer` may
 * see, none of an issue or comment since deleted (Gitea deletes their actions). A person who
 * keeps their activity private has an empty feed for anyone but themself and site administrators.
 */
export async function listFeed(deps: AppDeps, viewer: UserRow | null, of: FeedOf, opts: FeedOptions, page: Page): Promise<Paged<ActivityRow>> {
  const day = opts.date === undefined || opts.date === '' ? null : dayBounds(opts.date)
  if ('user' in of && of.user.keepActivityPrivate && viewer?.id !== of.user.id && !(viewer?.isAdmin && !viewer.publicOnly)) return { rows: [], total: 0 }
  const where = and(
    feedCondition(of),
    inArray(events.kind, [...ACTIVITY_KINDS]),
    readableRepoCondition(viewer),
    opts.includePrivate ? undefined : eq(repositories.isPrivate, false),
    visibleActorCondition(viewer, of),
    or(isNull(events.issueId), exists(qb.select({ one: issues.id }).from(issues).where(eq(issues.id, events.issueId)))),
    or(isNull(events.commentId), exists(qb.select({ one: comments.id }).from(comments).where(eq(comments.id, events.commentId)))),
    day ? and(gte(events.createdUnix, day[0]), lte(events.createdUnix, day[1])) : undefined,
  )
  const total = (await deps.db.select({ n: count() }).from(events).innerJoin(repositories, eq(repositories.id, events.repoId)).where(where))[0]!.n
  const rows = await deps.db
    .select({ event: events, repo: repositories })
    .from(events)
    .innerJoin(repositories, eq(repositories.id, events.repoId))
    .where(where)
    .orderBy(desc(events.id))
    .limit(page.limit)
    .offset(page.offset)
  return { rows, total: Number(total) }
}
