import { and, eq, max } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { teams, teamUsers } from '../../db/schema'
import { AccessMode } from '../../auth/access'
import type { UserRow } from '../../auth/caller'
import { orgRole, type OrgRow } from '../../auth/org-context'
import { ownerVisibleTo } from '../../auth/visibility'
import { notFound } from '../../lib/errors'
import { canCreateOrgRepo } from './service'

/**
 * What `user` may do in an organisation (Gitea's GetUserOrgsPermissions): read, write, admin and
 * owner from the highest access of their teams there (owners, and site administrators, who act
 * as owners in Warren: all four), and whether they may create repositories in it. 404 when the
 * organisation is hidden from `user` (Gitea's HasOrgOrUserVisible for the person asked about).
 */
export async function orgPermissionsOf(deps: AppDeps, org: OrgRow, user: UserRow) {
  if (!await ownerVisibleTo(deps.db, org, user)) throw notFound(`organization does not exist [name: ${org.name}]`)
  const role = await orgRole(deps, org, user)
  const best = role.owner
    ? AccessMode.Owner
    : role.member
      ? ((await deps.db
          .select({ level: max(teams.authorize) })
          .from(teamUsers)
          .innerJoin(teams, eq(teams.id, teamUsers.teamId))
          .where(and(eq(teamUsers.orgId, org.id), eq(teamUsers.uid, user.id))))[0]?.level ?? AccessMode.None)
      : AccessMode.None
  return {
    can_read: best > AccessMode.None,
    can_write: best > AccessMode.Read,
    is_admin: best > AccessMode.Write,
    is_owner: best > AccessMode.Admin,
    can_create_repository: await canCreateOrgRepo(deps, { org, viewer: user, ...role }),
  }
}
