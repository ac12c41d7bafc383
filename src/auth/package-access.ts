import { and, eq, max } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { teams, teamUnits, teamUsers } from '../db/schema'
import type { RepoUnitKey } from './access-mode'
import { forbidden, notFound, unauthorized } from '../lib/errors'
import { AccessMode, teamUnitMode } from './access-mode'
import type { UserRow } from './caller'
import { findOwnerByName } from './owner-context'
import { NO_TIES, ownerVisible, tiesTo } from './visibility'

/*
 * Who may read and publish the packages of a user or organisation (Gitea's determineAccessMode of
 * services/context/package.go), for the package routes of the API and of the registry alike,
 * through the pipeline's `packageOwner` need:
 * - an owner whose content the caller may not see (ownerContentVisible: the visibility rule
 *   without personal ties) is 404, as an unknown name;
 * - a user's packages: read for whoever sees the user's content, write for the user themself (a
 *   private person's: theirs and the site administrators' only, as in Gitea);
 * - an organisation's packages: read for whoever sees it, and for its members the highest
 *   permission among their teams in it (Gitea's GetOrgUserMaxAuthorizeLevel: the Owners team is
 *   owner, a write or admin team writes), or a team's own packages unit where it gives more (a
 *   read team whose `units_map` gives `repo.packages: write` publishes, as in Gitea 1.23);
 * - site administrators may do everything.
 */

export type PackageNeed = 'read' | 'write'

/** The highest permission `uid` holds through the teams of `orgId` (None outside every team). */
async function maxTeamMode(deps: AppDeps, orgId: number, uid: number): Promise<number> {
  const [row] = await deps.db
    .select({ mode: max(teams.authorize) })
    .from(teamUsers)
    .innerJoin(teams, eq(teams.id, teamUsers.teamId))
    .where(and(eq(teamUsers.orgId, orgId), eq(teamUsers.uid, uid)))
  return Number(row?.mode ?? AccessMode.None)
}

/**
 * The highest mode `uid` holds in `unit` through the teams of `orgId` (Gitea's
 * Organization.UnitPermission): each team's teamUnitMode.
 */
export async function orgUnitMode(deps: AppDeps, orgId: number, uid: number, unit: RepoUnitKey): Promise<number> {
  const rows = await deps.db
    .select({ authorize: teams.authorize, mode: teamUnits.accessMode })
    .from(teamUsers)
    .innerJoin(teams, eq(teams.id, teamUsers.teamId))
    .leftJoin(teamUnits, and(eq(teamUnits.teamId, teams.id), eq(teamUnits.type, unit)))
    .where(and(eq(teamUsers.orgId, orgId), eq(teamUsers.uid, uid)))
  return rows.reduce<number>((best, r) => Math.max(best, teamUnitMode(r.authorize, r.mode)), AccessMode.None)
}

/**
 * Whether `viewer` may see the content of `owner` (its packages, its projects): the owner rule
 * without personal ties, as for its repositories (publicRepoOpen): following a private person or
 * sharing an organisation with them shows their profile, not their content (Gitea's
 * determineAccessMode and individualPermsChecker: a private person's are theirs and the site
 * administrators'); a private organisation's are its members'.
 */
export async function ownerContentVisible(deps: AppDeps, owner: UserRow, viewer: UserRow | null): Promise<boolean> {
  if (ownerVisible(owner, viewer, NO_TIES)) return true
  if (!viewer || owner.type !== 1) return false
  return ownerVisible(owner, viewer, { member: (await tiesTo(deps.db, viewer, owner.id)).member, personal: false })
}

/**
 * What `viewer` may do with the packages or the projects of `owner`, an owner whose content they
 * may see (ownerContentVisible): read, or for site administrators and a person themself
 * everything; in an organisation, its members' team mode for the unit (orgUnitMode), and for the
 * packages also the highest permission among their teams (Gitea's determineAccessMode; the
 * projects' is the unit's alone, CanWriteUnit).
 */
export async function ownerUnitMode(deps: AppDeps, owner: UserRow, viewer: UserRow | null, unit: 'repo.packages' | 'repo.projects'): Promise<number> {
  if (!viewer) return AccessMode.Read
  if (viewer.isAdmin && !viewer.publicOnly) return AccessMode.Owner
  if (owner.type !== 1) return viewer.id === owner.id ? AccessMode.Owner : AccessMode.Read
  const [unitGrant, teamMax] = await Promise.all([
    orgUnitMode(deps, owner.id, viewer.id, unit),
    unit === 'repo.packages' ? maxTeamMode(deps, owner.id, viewer.id) : AccessMode.None,
  ])
  return Math.max(AccessMode.Read, unitGrant, teamMax)
}

/** What `viewer` may do with the packages of `owner` (ownerUnitMode). */
export const packageAccessMode = (deps: AppDeps, owner: UserRow, viewer: UserRow | null): Promise<number> => ownerUnitMode(deps, owner, viewer, 'repo.packages')

/**
 * The owner named in a package route, when `viewer` may see its content (ownerContentVisible;
 * else 404, as for an unknown name), once the caller holds `need` on its packages: 401 for an
 * anonymous caller below it, 403 for a signed-in one.
 */
export async function loadPackageOwner(deps: AppDeps, name: string, viewer: UserRow | null, need: PackageNeed): Promise<UserRow> {
  const owner = await findOwnerByName(deps, name)
  if (!owner || !(await ownerContentVisible(deps, owner, viewer))) throw notFound(`user does not exist [name: ${name}]`)
  const wanted = need === 'write' ? AccessMode.Write : AccessMode.Read
  if ((await packageAccessMode(deps, owner, viewer)) < wanted) {
    if (!viewer) throw unauthorized()
    throw forbidden('user should have specific permission or be a site admin')
  }
  return owner
}
