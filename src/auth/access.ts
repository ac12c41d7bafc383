import { and, eq, exists, gte, or, sql, type SQL } from 'drizzle-orm'
import { perConnection, type Db } from '../db/client'
import { inJsonList, queryBuilder } from '../db/sql'
import { collaborations, orgUsers, teamRepos, teams, teamUnits, teamUsers, users, type RepoRow } from '../db/schema'
import { AccessMode, REPO_UNITS, teamCoversAll, teamUnitMode, type RepoUnitKey } from './access-mode'
import type { UserRow } from './caller'
import { publicRepoOpen, teamCoversSql, type OwnerInfo } from './visibility'

/** Re-exported for the callers that name it with the access rules (declared beside its table). */
export type { RepoRow }

// The modes' vocabulary lives in access-mode.ts, which visibility.ts reads too (this file reads
// visibility.ts for the public half of the rule): every importer keeps finding it here.
export { AccessMode, accessModeFromName, accessModeName, issueUnitOf, permissionOf, REPO_UNITS, teamCoversAll, teamUnitMode, type RepoUnitKey } from './access-mode'

const USER = sql.placeholder('user')

/** The statements accessLevels runs, prepared once per database. */
function prepareAccessQueries(db: Db) {
  return {
    owners: db
      .select({ id: users.id, type: users.type, visibility: users.visibility })
      .from(users)
      .where(inJsonList(users.id, 'ids'))
      .prepare(),
    collaborations: db
      .select({ repoId: collaborations.repoId, mode: collaborations.mode })
      .from(collaborations)
      .where(and(eq(collaborations.userId, USER), inJsonList(collaborations.repoId, 'repos')))
      .prepare(),
    memberships: db
      .select({ orgId: orgUsers.orgId })
      .from(orgUsers)
      .where(and(eq(orgUsers.uid, USER), inJsonList(orgUsers.orgId, 'orgs')))
      .prepare(),
    // One row per team and unit (a team without unit rows once, with a null unit).
    teams: db
      .select({
        id: teams.id,
        orgId: teams.orgId,
        authorize: teams.authorize,
        all: teams.includesAllRepositories,
        unit: teamUnits.type,
        unitMode: teamUnits.accessMode,
      })
      .from(teamUsers)
      .innerJoin(teams, eq(teams.id, teamUsers.teamId))
      .leftJoin(teamUnits, eq(teamUnits.teamId, teams.id))
      .where(and(eq(teamUsers.uid, USER), inJsonList(teamUsers.orgId, 'orgs')))
      .prepare(),
    teamRepos: db
      .select({ teamId: teamRepos.teamId, repoId: teamRepos.repoId })
      .from(teamRepos)
      .where(and(inJsonList(teamRepos.teamId, 'teams'), inJsonList(teamRepos.repoId, 'repos')))
      .prepare(),
  }
}
const accessQueriesOf = perConnection(prepareAccessQueries)

/**
 * What a caller may do in one repository (Gitea's Permission): `mode`, the repository-wide mode
 * (owner, site admin, collaborator, the best of the teams' modes, read for the public), and, when
 * teams below admin grant it, each unit's own mode (`units`; Gitea's UnitsMode). Without `units`
 * the mode holds for every unit.
 */
export interface RepoAccess {
  mode: AccessMode
  units?: Partial<Record<RepoUnitKey, AccessMode>>
}

/**
 * The caller's mode in one unit (Gitea's UnitAccessMode): the repository-wide mode from admin up or
 * where no team sets the units; otherwise the unit's own (none when absent).
 */
export const unitMode = (access: RepoAccess, unit: RepoUnitKey): AccessMode =>
  !access.units || access.mode >= AccessMode.Admin ? access.mode : (access.units[unit] ?? AccessMode.None)

/** A team's grant as accessLevels reads it: its mode and, below admin, each unit's (teamUnitMode). */
type TeamGrant = { id: number; orgId: number; authorize: number; includesAllRepositories: boolean; units: Map<string, number> }

/**
 * What `user` (null = anonymous) may do in each repository, in a fixed number of queries
 * whatever the number of repositories (none for an anonymous caller whose repositories' owners
 * are all in `knownOwners`, at most six otherwise, each prepared once):
 * site admin and owning user → owner; owners team of the owning organisation → owner;
 * otherwise the highest of the collaboration and the caller's teams that cover the repository;
 * everyone at least read on public repositories whose owner is open to them (visibility.ts).
 * Teams below admin also give each unit its mode: the highest over the covering teams of the
 * team's mode for that unit, and the collaboration's and the public's read for every unit
 * (Gitea's GetUserRepoPermission); a team whose units are all none grants nothing.
 * A public-only caller (UserRow.publicOnly) keeps their own level on public repositories of
 * public owners and has none on the others.
 */
export async function repoAccesses(db: Db, user: UserRow | null, repos: RepoRow[], knownOwners: OwnerInfo[] = []): Promise<Map<number, RepoAccess>> {
  const result = new Map<number, RepoAccess>()
  if (repos.length === 0) return result
  if (user && !user.publicOnly && (user.isAdmin || repos.every((r) => r.ownerId === user.id))) {
    for (const r of repos) result.set(r.id, { mode: AccessMode.Owner })
    return result
  }
  const queries = accessQueriesOf(db)
  const ownerIds = [...new Set(repos.map((r) => r.ownerId))]
  const owners = new Map<number, OwnerInfo>()
  for (const o of knownOwners) owners.set(o.id, o)
  const missing = ownerIds.filter((id) => !owners.has(id))
  if (missing.length)
    for (const o of await queries.owners.execute({ ids: JSON.stringify(missing) })) owners.set(o.id, o)
  const memberOf = new Set<number>()
  const collaboration = new Map<number, AccessMode>()
  /** Per repository, the caller's teams below admin that cover it. */
  const unitTeams = new Map<number, TeamGrant[]>()
  /** Per repository, the best mode of the teams covering it. */
  const teamModes = new Map<number, number>()
  if (user) {
    const orgIds = ownerIds.filter((id) => owners.get(id)?.type === 1)
    const repoIds = JSON.stringify(repos.map((r) => r.id))
    for (const c of await queries.collaborations.execute({ user: user.id, repos: repoIds })) collaboration.set(c.repoId, c.mode as AccessMode)
    if (orgIds.length) {
      for (const m of await queries.memberships.execute({ user: user.id, orgs: JSON.stringify(orgIds) })) memberOf.add(m.orgId)
      if (memberOf.size) {
        // Teams of the caller in those organisations (one row per unit), with the repositories each covers.
        const grants = new Map<number, TeamGrant>()
        for (const row of await queries.teams.execute({ user: user.id, orgs: JSON.stringify([...memberOf]) })) {
          let grant = grants.get(row.id)
          if (!grant) grants.set(row.id, (grant = { id: row.id, orgId: row.orgId, authorize: row.authorize, includesAllRepositories: row.all, units: new Map() }))
          if (row.unit !== null) grant.units.set(row.unit, teamUnitMode(row.authorize, row.unitMode))
        }
        const live = [...grants.values()].filter((t) => t.authorize > AccessMode.None)
        const wide = teamCoversAll
        const cover = (repoId: number, t: TeamGrant) => {
          teamModes.set(repoId, Math.max(teamModes.get(repoId) ?? 0, t.authorize))
          if (t.authorize < AccessMode.Admin) unitTeams.set(repoId, [...(unitTeams.get(repoId) ?? []), t])
        }
        const narrow = new Map(live.filter((t) => !wide(t)).map((t) => [t.id, t]))
        if (narrow.size)
          for (const tr of await queries.teamRepos.execute({ teams: JSON.stringify([...narrow.keys()]), repos: repoIds })) cover(tr.repoId, narrow.get(tr.teamId)!)
        for (const r of repos) for (const t of live) if (wide(t) && t.orgId === r.ownerId) cover(r.id, t)
      }
    }
  }
  for (const r of repos) {
    // A public-only token reaches public repositories of public owners only (visibility.ts).
    if (user?.publicOnly && (r.isPrivate || owners.get(r.ownerId)?.visibility !== 'public')) {
      result.set(r.id, { mode: AccessMode.None })
      continue
    }
    if (user && (r.ownerId === user.id || user.isAdmin)) {
      result.set(r.id, { mode: AccessMode.Owner })
      continue
    }
    const collab = collaboration.get(r.id) ?? AccessMode.None
    const owner = owners.get(r.ownerId)
    const publicMode = owner && publicRepoOpen(r, owner, user, memberOf.has(r.ownerId)) ? AccessMode.Read : AccessMode.None
    const mode = Math.max(collab, teamModes.get(r.id) ?? 0, publicMode) as AccessMode
    const byUnit = unitTeams.get(r.id)
    // Units matter only when no team of admin or above covers the repository.
    if (!byUnit || (teamModes.get(r.id) ?? 0) >= AccessMode.Admin) {
      result.set(r.id, { mode })
      continue
    }
    const units: Partial<Record<RepoUnitKey, AccessMode>> = {}
    for (const unit of REPO_UNITS) {
      let m: number = Math.max(collab, publicMode)
      for (const t of byUnit) m = Math.max(m, t.units.get(unit) ?? AccessMode.None)
      units[unit] = m as AccessMode
    }
    result.set(r.id, { mode, units })
  }
  return result
}

/** repoAccesses for one repository (pass its owner's row when at hand to save a query). */
export async function repoAccess(db: Db, user: UserRow | null, repo: RepoRow, owner?: OwnerInfo): Promise<RepoAccess> {
  return (await repoAccesses(db, user, [repo], owner ? [owner] : [])).get(repo.id) ?? { mode: AccessMode.None }
}

/**
 * What `user` may do with each repository's code (Gitea's AccessLevel: the code unit's mode of
 * repoAccesses): reading and pushing its git refs, merging into them, its Repository record's
 * permissions.
 */
export async function accessLevels(db: Db, user: UserRow | null, repos: RepoRow[], knownOwners: OwnerInfo[] = []): Promise<Map<number, AccessMode>> {
  const result = new Map<number, AccessMode>()
  for (const [id, access] of await repoAccesses(db, user, repos, knownOwners)) result.set(id, unitMode(access, 'repo.code'))
  return result
}

/** accessLevels for one repository (pass its owner's row when at hand to save a query). */
export async function accessLevel(db: Db, user: UserRow | null, repo: RepoRow, owner?: OwnerInfo): Promise<AccessMode> {
  return (await accessLevels(db, user, [repo], owner ? [owner] : [])).get(repo.id) ?? AccessMode.None
}

const qb = queryBuilder()

/**
 * The SQL form of "accessLevel(user, repo) >= Write" for the people given that access, a
 * condition on `users` (Gitea's GetRepoAssignees): the owning person, collaborators at write or
 * above, and members of the owning organisation whose teams at write or above cover the
 * repository (the same grants accessLevels reads, at the same levels). Site administrators,
 * who may write everywhere, are not listed for that alone, as in Gitea.
 */
export function repoWritersCondition(repo: Pick<RepoRow, 'id' | 'ownerId'>): SQL {
  return repoGranteesCondition(repo, AccessMode.Write)
}

/** SQL: the team (`teams`) gives at least `least` in `unit` (access-mode.ts `teamUnitMode`'s rule: admin teams every unit). */
function teamUnitGrant(least: AccessMode, unit: RepoUnitKey): SQL {
  if (least >= AccessMode.Admin) return gte(teams.authorize, least)
  return or(
    gte(teams.authorize, AccessMode.Admin),
    and(
      gte(teams.authorize, AccessMode.Read),
      exists(
        qb
          .select({ one: teamUnits.id })
          .from(teamUnits)
          .where(and(eq(teamUnits.teamId, teams.id), eq(teamUnits.type, unit), gte(teamUnits.accessMode, least))),
      ),
    ),
  )!
}

/**
 * The people given at least `least` in the repository by a grant of their own (the owning person,
 * a collaboration, a team of the owning organisation covering it), as a condition on `users`:
 * repoWritersCondition's rule at any level (readers: the people a review may be asked of), in
 * `unit` (by default the code unit, accessLevel's; a pull request's reviewers and an issue's
 * readers are those of its own unit, unitMode's).
 */
export function repoGranteesCondition(repo: Pick<RepoRow, 'id' | 'ownerId'>, least: AccessMode, unit: RepoUnitKey = 'repo.code'): SQL {
  return or(
    eq(users.id, repo.ownerId),
    exists(
      qb
        .select({ one: collaborations.id })
        .from(collaborations)
        .where(and(eq(collaborations.repoId, repo.id), eq(collaborations.userId, users.id), gte(collaborations.mode, least))),
    ),
    exists(
      qb
        .select({ one: teamUsers.id })
        .from(teamUsers)
        .innerJoin(teams, eq(teams.id, teamUsers.teamId))
        .innerJoin(orgUsers, and(eq(orgUsers.orgId, teams.orgId), eq(orgUsers.uid, teamUsers.uid)))
        .where(
          and(
            eq(teamUsers.uid, users.id),
            eq(teams.orgId, repo.ownerId),
            teamUnitGrant(least, unit),
            teamCoversSql(teams, exists(qb.select({ one: teamRepos.id }).from(teamRepos).where(and(eq(teamRepos.teamId, teams.id), eq(teamRepos.repoId, repo.id))))),
          ),
        ),
    ),
  )!
}
