import { and, eq, exists, gte, or, sql, type SQL } from 'drizzle-orm'
import { perConnection, type Db } from '../db/client'
import { inJsonList, queryBuilder } from '../db/sql'
import { collaborations, orgUsers, teamRepos, teams, teamUsers, users, type RepoRow } from '../db/schema'
import { AccessMode } from './access-mode'
import type { UserRow } from './caller'
import { publicRepoOpen, type OwnerInfo } from './visibility'

/** Re-exported for the callers that name it with the access rules (declared beside its table). */
export type { RepoRow }

// The modes' vocabulary lives in access-mode.ts, which visibility.ts reads too (this file reads
// visibility.ts for the public half of the rule): every importer keeps finding it here.
export { AccessMode, accessModeFromName, accessModeName, permissionOf } from './access-mode'

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
    teams: db
      .select({ id: teams.id, orgId: teams.orgId, authorize: teams.authorize, all: teams.includesAllRepositories })
      .from(teamUsers)
      .innerJoin(teams, eq(teams.id, teamUsers.teamId))
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
 * What `user` (null = anonymous) may do in each repository, in a fixed number of queries
 * whatever the number of repositories (none for an anonymous caller whose repositories' owners
 * are all in `knownOwners`, at most six otherwise, each prepared once):
 * site admin and owning user → owner; owners team of the owning organisation → owner;
 * otherwise the highest of the collaboration and the caller's teams that cover the repository;
 * everyone at least read on public repositories whose owner is open to them (visibility.ts).
 * A public-only caller (UserRow.publicOnly) keeps their own level on public repositories of
 * public owners and has none on the others.
 */
export async function accessLevels(db: Db, user: UserRow | null, repos: RepoRow[], knownOwners: OwnerInfo[] = []): Promise<Map<number, AccessMode>> {
  const result = new Map<number, AccessMode>()
  if (repos.length === 0) return result
  if (user && !user.publicOnly && (user.isAdmin || repos.every((r) => r.ownerId === user.id))) {
    for (const r of repos) result.set(r.id, AccessMode.Owner)
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
  const explicit = new Map<number, AccessMode>()
  if (user) {
    const orgIds = ownerIds.filter((id) => owners.get(id)?.type === 1)
    const repoIds = JSON.stringify(repos.map((r) => r.id))
    for (const c of await queries.collaborations.execute({ user: user.id, repos: repoIds })) explicit.set(c.repoId, c.mode as AccessMode)
    if (orgIds.length) {
      for (const m of await queries.memberships.execute({ user: user.id, orgs: JSON.stringify(orgIds) })) memberOf.add(m.orgId)
      if (memberOf.size) {
        // Teams of the caller in those organisations, with the repositories each covers.
        const myTeams = await queries.teams.execute({ user: user.id, orgs: JSON.stringify([...memberOf]) })
        const wide = new Map<number, number>() // org → best mode of teams covering all its repos
        for (const t of myTeams)
          if (t.authorize >= AccessMode.Owner || t.all) wide.set(t.orgId, Math.max(wide.get(t.orgId) ?? 0, t.authorize))
        const narrowTeams = myTeams.filter((t) => !(t.authorize >= AccessMode.Owner || t.all))
        if (narrowTeams.length) {
          const modeOfTeam = new Map(narrowTeams.map((t) => [t.id, t.authorize]))
          for (const tr of await queries.teamRepos.execute({ teams: JSON.stringify([...modeOfTeam.keys()]), repos: repoIds }))
            explicit.set(tr.repoId, Math.max(explicit.get(tr.repoId) ?? 0, modeOfTeam.get(tr.teamId)!) as AccessMode)
        }
        for (const r of repos) {
          const w = wide.get(r.ownerId)
          if (w) explicit.set(r.id, Math.max(explicit.get(r.id) ?? 0, w) as AccessMode)
        }
      }
    }
  }
  for (const r of repos) {
    // A public-only token reaches public repositories of public owners only (visibility.ts).
    if (user?.publicOnly && (r.isPrivate || owners.get(r.ownerId)?.visibility !== 'public')) {
      result.set(r.id, AccessMode.None)
      continue
    }
    if (user && (r.ownerId === user.id || user.isAdmin)) {
      result.set(r.id, AccessMode.Owner)
      continue
    }
    let mode: number = explicit.get(r.id) ?? AccessMode.None
    const owner = owners.get(r.ownerId)
    if (owner && publicRepoOpen(r, owner, user, memberOf.has(r.ownerId))) mode = Math.max(mode, AccessMode.Read)
    result.set(r.id, mode as AccessMode)
  }
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

/**
 * The people given at least `least` in the repository by a grant of their own (the owning person,
 * a collaboration, a team of the owning organisation covering it), as a condition on `users`:
 * repoWritersCondition's rule at any level (readers: the people a review may be asked of).
 */
export function repoGranteesCondition(repo: Pick<RepoRow, 'id' | 'ownerId'>, least: AccessMode): SQL {
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
            gte(teams.authorize, least),
            or(
              gte(teams.authorize, AccessMode.Owner),
              eq(teams.includesAllRepositories, true),
              exists(qb.select({ one: teamRepos.id }).from(teamRepos).where(and(eq(teamRepos.teamId, teams.id), eq(teamRepos.repoId, repo.id)))),
            ),
          ),
        ),
    ),
  )!
}
