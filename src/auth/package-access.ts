import { and, eq, max } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { teams, teamUsers } from '../db/schema'
import { forbidden, unauthorized } from '../lib/errors'
import { AccessMode } from './access-mode'
import type { UserRow } from './caller'
import { loadVisibleOwner } from './owner-context'

/*
 * Who may read and publish the packages of a user or organisation (Gitea's determineAccessMode of
 * services/context/package.go), for the package routes of the API and of the registry alike,
 * through the pipeline's `packageOwner` need:
 * - an owner the caller may not see (the visibility rule) is 404, as an unknown name;
 * - a user's packages: read for whoever sees the user, write for the user themself;
 * - an organisation's packages: read for whoever sees it, and for its members the highest
 *   permission among their teams in it (Gitea's GetOrgUserMaxAuthorizeLevel: the Owners team is
 *   owner, a write or admin team writes). Warren's teams carry one permission for every unit they
 *   have, so a team's permission is its packages permission too (Gitea 1.23 may give a team a
 *   packages permission of its own; Warren has no per-unit permission);
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

/** What `viewer` may do with the packages of `owner`, an owner they may see. */
export async function packageAccessMode(deps: AppDeps, owner: UserRow, viewer: UserRow | null): Promise<number> {
  if (!viewer) return AccessMode.Read
  if (viewer.isAdmin && !viewer.publicOnly) return AccessMode.Owner
  if (owner.type !== 1) return viewer.id === owner.id ? AccessMode.Owner : AccessMode.Read
  return Math.max(AccessMode.Read, await maxTeamMode(deps, owner.id, viewer.id))
}

/**
 * The owner named in a package route, as `viewer` may see it (else 404), once the caller holds
 * `need` on its packages: 401 for an anonymous caller below it, 403 for a signed-in one.
 */
export async function loadPackageOwner(deps: AppDeps, name: string, viewer: UserRow | null, need: PackageNeed): Promise<UserRow> {
  const owner = await loadVisibleOwner(deps, name, viewer)
  const wanted = need === 'write' ? AccessMode.Write : AccessMode.Read
  if ((await packageAccessMode(deps, owner, viewer)) < wanted) {
    if (!viewer) throw unauthorized()
    throw forbidden('user should have specific permission or be a site admin')
  }
  return owner
}
