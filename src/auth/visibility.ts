import { and, eq, exists, gte, inArray, ne, or, sql, type AnyColumn, type Placeholder, type SQL } from 'drizzle-orm'
import { alias } from 'drizzle-orm/sqlite-core'
import { queryBuilder } from '../db/sql'
import type { Db } from '../db/client'
import { collaborations, follows, orgUsers, repositories, teamRepos, teams, teamUnits, teamUsers, users } from '../db/schema'
import { AccessMode, type RepoUnitKey } from './access-mode'
import type { UserRow } from './caller'

/**
 * SQL: a team (`t`, the teams table or an alias of it) covers a repository: it covers every one of
 * its organisation's (an owner team, or one including all: access-mode.ts teamCoversAll's SQL
 * form), or `given` (the repository given to it) holds. The one form of the access levels, the
 * visibility rule and the teams' lists.
 */
export const teamCoversSql = (t: { authorize: AnyColumn; includesAllRepositories: AnyColumn }, given?: SQL): SQL =>
  or(gte(t.authorize, AccessMode.Owner), eq(t.includesAllRepositories, true), given)!

/*
 * The one visibility rule: who may see a user, an organisation or a repository. Each part has
 * its code form (for a row at hand) and its SQL form (a Drizzle condition for list queries)
 * side by side, and test/visibility.test.ts checks that the two agree for every kind of caller.
 *
 * Owners (users and organisations: rows of `users`), after Gitea's isUserVisibleToViewer and
 * HasOrgOrUserVisible:
 * - public: seen by everyone;
 * - limited: seen by every signed-in caller;
 * - private: seen by itself and site administrators, a private organisation by its members,
 *   and a private person also by the people it has ties with: those it follows and those
 *   who share an organisation with it (Gitea shows them the profile).
 *
 * Repositories: readable by their owner, site administrators, collaborators and members of a
 * team that covers them; everyone else reads a public repository only when its owner is open
 * to them by the rule above WITHOUT personal ties (Gitea's HasOrgOrUserVisible: following a
 * private person or sharing an organisation with them shows their profile, not their code).
 */

/*
 * A viewer signed in with a `public-only` token (UserRow.publicOnly) is shown what an anonymous
 * one is: public owners and public repositories of public owners, nothing through their own
 * rights, ties or site administration (Gitea 1.23's public-only scope). What they may change in
 * what they see is still their own (accessLevels in access.ts).
 */

/** The viewer as the rule needs it (null: anonymous). */
export type Viewer = Pick<UserRow, 'id' | 'isAdmin' | 'publicOnly'> | null

/** The viewer the rule sees: a public-only viewer counts as anonymous. */
const seen = (viewer: Viewer): Viewer => (viewer?.publicOnly ? null : viewer)

/**
 * Whether `user` keeps their activity (the feeds, the heatmap) from `viewer`: when they hide it,
 * from everyone but themself and site administrators (not through a public-only token).
 */
export const activityHiddenFrom = (user: Pick<UserRow, 'id' | 'keepActivityPrivate'>, viewer: Viewer): boolean =>
  user.keepActivityPrivate && viewer?.id !== user.id && !seen(viewer)?.isAdmin

/**
 * Statements prepared once per shape of viewer (the lists of repositories, notification threads,
 * the issue search): the viewer's id is this placeholder (bound as `viewer`), and the shape is
 * viewerKind's, as the rule's SQL differs only by it.
 */
export const VIEWER_ID = sql.placeholder('viewer')

/** The shape of the rule's SQL for `viewer`: a public-only viewer's is an anonymous one's. */
export function viewerKind(asked: Viewer): 'anon' | 'admin' | 'user' {
  const viewer = seen(asked)
  return !viewer ? 'anon' : viewer.isAdmin ? 'admin' : 'user'
}

/** `viewer` with VIEWER_ID for its id, for the rule's SQL in a statement prepared per viewerKind. */
export const viewerStandIn = <V extends Viewer>(viewer: V): V => (viewer ? { ...viewer, id: VIEWER_ID as unknown as number } : viewer)

/** An owner (user or organisation) as the rule needs it. */
export type OwnerInfo = Pick<UserRow, 'id' | 'type' | 'visibility'>

/** What ties the viewer to a private owner. */
export interface Ties {
  /** The viewer is a member of the owner (an organisation). */
  member: boolean
  /** The owner (a person) follows the viewer or shares an organisation with them. */
  personal: boolean
}

/** No ties (what an anonymous viewer has). */
export const NO_TIES: Ties = { member: false, personal: false }

// ---- owners: code form ----------------------------------------------------------------------

/** Whether `viewer` may see `owner`, given the viewer's ties to it. */
export function ownerVisible(owner: OwnerInfo, asked: Viewer, ties: Ties): boolean {
  if (owner.visibility === 'public') return true
  const viewer = seen(asked)
  if (!viewer) return false
  if (viewer.isAdmin || viewer.id === owner.id || owner.visibility !== 'private') return true
  return ties.member || ties.personal
}

const qb = queryBuilder()
const mine = alias(orgUsers, 'vis_mine')
const mate = alias(orgUsers, 'vis_mate')
const OWNER = sql.placeholder('owner')
const VIEWER = sql.placeholder('viewer')

/** The statement that reads a viewer's ties to one owner, prepared once per database. */
function prepareTies(db: Db) {
  return db
    .select({
      member: exists(qb.select({ one: orgUsers.id }).from(orgUsers).where(and(eq(orgUsers.orgId, OWNER), eq(orgUsers.uid, VIEWER)))),
      follows: exists(qb.select({ one: follows.id }).from(follows).where(and(eq(follows.userId, OWNER), eq(follows.followId, VIEWER)))),
      sharesOrg: exists(
        qb
          .select({ one: mine.id })
          .from(mine)
          .innerJoin(mate, eq(mate.orgId, mine.orgId))
          .where(and(eq(mine.uid, VIEWER), eq(mate.uid, OWNER))),
      ),
    })
    .from(users)
    .where(eq(users.id, OWNER))
    .prepare()
}
const tiesStatements = new WeakMap<Db, ReturnType<typeof prepareTies>>()

/** The viewer's ties to one owner, in one query. */
export async function tiesTo(db: Db, viewer: Viewer, ownerId: number): Promise<Ties> {
  if (!viewer) return NO_TIES
  let statement = tiesStatements.get(db)
  if (!statement) tiesStatements.set(db, (statement = prepareTies(db)))
  const row = (await statement.execute({ owner: ownerId, viewer: viewer.id }))[0]
  return { member: !!row?.member, personal: !!row?.follows || !!row?.sharesOrg }
}

/** ownerVisible for one owner row, reading the viewer's ties only when they matter. */
export async function ownerVisibleTo(db: Db, owner: OwnerInfo, asked: Viewer): Promise<boolean> {
  const viewer = seen(asked)
  if (ownerVisible(owner, viewer, NO_TIES)) return true
  return viewer !== null && ownerVisible(owner, viewer, await tiesTo(db, viewer, owner.id))
}

// ---- owners: SQL form -----------------------------------------------------------------------

/**
 * SQL form of ownerVisible over the `users` table (people and organisations); `personal`
 * false leaves personal ties out (the repository rule). Undefined: no restriction (site admins).
 */
export function visibleOwnerCondition(asked: Viewer, personal = true): SQL | undefined {
  const viewer = seen(asked)
  if (!viewer) return eq(users.visibility, 'public')
  if (viewer.isAdmin) return undefined
  const memberOf = qb.select({ id: orgUsers.orgId }).from(orgUsers).where(eq(orgUsers.uid, viewer.id))
  const followers = qb.select({ id: follows.userId }).from(follows).where(eq(follows.followId, viewer.id))
  const orgMates = qb.select({ id: mate.uid }).from(mine).innerJoin(mate, eq(mate.orgId, mine.orgId)).where(eq(mine.uid, viewer.id))
  return or(
    ne(users.visibility, 'private'),
    eq(users.id, viewer.id),
    inArray(users.id, memberOf),
    ...(personal ? [inArray(users.id, followers), inArray(users.id, orgMates)] : []),
  )
}

// ---- repositories: code form ----------------------------------------------------------------

/*
 * Owner, site admin, collaborator or member of a team covering the repository: read access
 * (accessLevels in access.ts works those out, with their modes, for many repositories at once);
 * anyone else: the public half below.
 */

/** The public half of the repository rule: a public repository of an owner open to the viewer. */
export const publicRepoOpen = (repo: { isPrivate: boolean }, owner: OwnerInfo, viewer: Viewer, member: boolean): boolean =>
  !repo.isPrivate && ownerVisible(owner, viewer, { member, personal: false })

// ---- repositories: SQL form -----------------------------------------------------------------

/** The public half of the repository rule in SQL (publicRepoOpen), a condition on `repositories`. */
function publicRepoCondition(viewer: Viewer): SQL {
  // A correlated EXISTS: one primary-key read per repository row (measured: `owner_id IN (SELECT
  // id FROM users WHERE …)` builds the whole list of open owners first, ten times slower).
  const ownerOpen = and(eq(users.id, repositories.ownerId), visibleOwnerCondition(viewer, false))
  return and(eq(repositories.isPrivate, false), exists(qb.select({ one: users.id }).from(users).where(ownerOpen)))!
}

/**
 * SQL form of the repository rule (what repoAccesses grants read on), a condition on
 * `repositories`; with `unit`, the repositories whose unit the viewer may read (repoAccesses'
 * `unitMode` at read or above: where their teams give that unit none, a team's member who
 * reads the repository through it reads nothing of the unit). Undefined: no restriction.
 */
export function readableRepoCondition(asked: Viewer, unit?: RepoUnitKey): SQL | undefined {
  return readableUnitsCondition(asked, [[undefined, unit]])
}

/**
 * readableRepoCondition for rows of several kinds, each of its own unit (an issue of the issues
 * unit, a pull request of the pull requests unit): `kinds` pairs a condition telling a row's kind
 * (undefined: every row) with its unit (undefined: any); no row is of two kinds. One condition,
 * the public half, ownership and the grants said once: for several kinds the unit a team must give
 * is the row's, picked by a CASE over the kinds (unitOfKind), where a grant said once a kind cost
 * PostgreSQL a plan twice as long (0.8 ms against 0.3 for a notification list's three kinds,
 * planned again at each execution where its generic plan is costed higher: a person with fewer
 * threads than the average).
 */
export function readableUnitsCondition(asked: Viewer, kinds: [SQL | undefined, RepoUnitKey | undefined][]): SQL | undefined {
  const viewer = seen(asked)
  if (viewer?.isAdmin) return undefined
  const publicRepo = publicRepoCondition(viewer)
  if (!viewer) return publicRepo
  const owned = eq(repositories.ownerId, viewer.id)
  if (kinds.length < 2 || kinds.some(([kind, unit]) => !kind || !unit))
    return or(publicRepo, owned, ...kinds.map(([kind, unit]) => and(kind, grantedRepoCondition(viewer.id, unit))))
  const known = kinds as [SQL, RepoUnitKey][]
  return or(publicRepo, owned, and(or(...known.map(([kind]) => kind)), grantedRepoCondition(viewer.id, unitOfKind(known))))
}

/** The unit of a row of one of `kinds` (a condition each), in SQL: the first kind the row is of. */
const unitOfKind = (kinds: [SQL, RepoUnitKey][]): SQL => sql`(case ${sql.join(kinds.map(([kind, unit]) => sql`when ${kind} then ${unit}`), sql` `)} end)`

const grantTeams = alias(teams, 'vis_grant_teams')

/**
 * SQL: user `userId` has been given access to the repository, as a collaborator or through one
 * of their teams in the owning organisation (ownership and public access excluded); with `unit`
 * (a unit, or SQL telling the row's), access to that unit: a team of admin or above, or one whose
 * mode for the unit is read or above.
 * A team whose units are all none (mode none) gives nothing.
 */
export function grantedRepoCondition(userId: number | Placeholder, unit?: RepoUnitKey | SQL): SQL {
  const teamGives = unit
    ? or(
        gte(grantTeams.authorize, AccessMode.Admin),
        exists(
          qb
            .select({ one: teamUnits.id })
            .from(teamUnits)
            .where(and(eq(teamUnits.teamId, grantTeams.id), eq(teamUnits.type, unit), gte(teamUnits.accessMode, AccessMode.Read))),
        ),
      )
    : gte(grantTeams.authorize, AccessMode.Read)
  return or(
    exists(qb.select({ one: collaborations.id }).from(collaborations).where(and(eq(collaborations.repoId, repositories.id), eq(collaborations.userId, userId)))),
    exists(
      qb
        .select({ one: teamUsers.id })
        .from(teamUsers)
        .innerJoin(grantTeams, eq(grantTeams.id, teamUsers.teamId))
        .where(
          and(
            eq(teamUsers.uid, userId),
            eq(grantTeams.orgId, repositories.ownerId),
            teamGives,
            teamCoversSql(grantTeams, exists(qb.select({ one: teamRepos.id }).from(teamRepos).where(and(eq(teamRepos.teamId, grantTeams.id), eq(teamRepos.repoId, repositories.id))))),
          ),
        ),
    ),
  )!
}

const grantedRepos = alias(repositories, 'vis_granted_repos')

/**
 * The ids of the repositories user `userId` has been given access to: grantedRepoCondition (without
 * a unit) as a list, for lists of what was shared with someone (their repositories, a search of
 * those they collaborate on), which that condition, a test of each repository, would answer by
 * reading every one (at 100,000 repositories 46-88 ms a list on SQLite, 80-240 on PostgreSQL). Its
 * collaborations, the repositories its teams cover, and every repository of an organisation where
 * one of its teams covers all (owners, or `includes_all_repositories`); test/visibility.test.ts
 * checks that both forms name the same repositories.
 */
export function grantedRepoIds(userId: number | Placeholder) {
  const memberOf = and(eq(teamUsers.uid, userId), gte(grantTeams.authorize, AccessMode.Read))
  const collaborating = qb.select({ id: collaborations.repoId }).from(collaborations).where(eq(collaborations.userId, userId))
  const coveredByTeams = qb
    .select({ id: grantedRepos.id })
    .from(teamUsers)
    .innerJoin(grantTeams, eq(grantTeams.id, teamUsers.teamId))
    .innerJoin(teamRepos, eq(teamRepos.teamId, grantTeams.id))
    .innerJoin(grantedRepos, and(eq(grantedRepos.id, teamRepos.repoId), eq(grantedRepos.ownerId, grantTeams.orgId)))
    .where(memberOf)
  const wholeOrganisations = qb
    .select({ id: grantedRepos.id })
    .from(teamUsers)
    .innerJoin(grantTeams, eq(grantTeams.id, teamUsers.teamId))
    .innerJoin(grantedRepos, eq(grantedRepos.ownerId, grantTeams.orgId))
    .where(and(memberOf, teamCoversSql(grantTeams)))
  return collaborating.unionAll(coveredByTeams).unionAll(wholeOrganisations)
}
