import { and, eq, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { teams, users, type TeamRow } from '../db/schema'
import { notFound, unauthorized } from '../lib/errors'
import { pathNumber } from '../lib/path-number'
import type { UserRow } from './caller'
import { orgRole, type OrgRow } from './org-context'
import { ownerVisible } from './visibility'

/*
 * A team named in a path (`/teams/{id}`), beside org-context.ts: loading it for a caller who may
 * see it (members of its organisation) and the owner check, which the pipeline's `team` need runs.
 */

export type { TeamRow }

/** A team named by id, with its organisation and the caller's role there. */
export interface TeamContext {
  team: TeamRow
  org: OrgRow
  viewer: UserRow
  member: boolean
  owner: boolean
}

/**
 * `/teams/{id}`: needs a signed-in caller (401) who is a member of the team's organisation
 * (or a site administrator) and may see the organisation as `GET /orgs/{org}` decides (loadOrg:
 * the visibility rule without personal ties, so a public-only token sees no team of a private or
 * limited organisation); everyone else gets 404.
 */
export async function loadTeam(deps: AppDeps, id: number | string, viewer: UserRow | null, orgName?: string): Promise<TeamContext> {
  if (!viewer) throw unauthorized()
  const n = typeof id === 'string' ? pathNumber(id) : id
  const found = (where: SQL) => deps.db.select({ team: teams, org: users }).from(teams).innerJoin(users, eq(users.id, teams.orgId)).where(where)
  // The web's `/org/{org}/teams/{name}` names a team by its organisation and its name.
  const row =
    orgName !== undefined
      ? (await found(and(eq(users.lowerName, orgName.toLowerCase()), eq(users.type, 1), eq(teams.lowerName, String(id).toLowerCase()))!))[0]
      : Number.isSafeInteger(n)
        ? (await found(eq(teams.id, n)))[0]
        : undefined
  if (!row) throw notFound(`team does not exist [id: ${id}]`)
  const role = await orgRole(deps, row.org, viewer)
  if (!role.member || !ownerVisible(row.org, viewer, { member: role.member, personal: false })) throw notFound(`team does not exist [id: ${id}]`)
  return { team: row.team, org: row.org, viewer, ...role }
}

/** Owner-only team routes answer 404 to other members (Gitea's check knows only the team). */
export function requireTeamOwner(ctx: TeamContext): void {
  if (!ctx.owner) throw notFound(`team does not exist [id: ${ctx.team.id}]`)
}
