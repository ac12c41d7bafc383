import type { AppDeps } from '../deps'
import type { Config } from '../config'
import type { TeamRow } from '../db/schema'
import type { UserRow } from '../auth/caller'
import { accessModeName } from '../auth/access'
import { usersByIds } from './people'
import { toApiOrg } from './user'

/** A team's units as stored (a JSON list of names); anything else reads as none. */
function parseUnits(units: string): string[] {
  try {
    const parsed = JSON.parse(units)
    return Array.isArray(parsed) ? parsed.map(String) : []
  } catch {
    return []
  }
}

/** The Team record, as `viewer` may see it (its organisation's e-mail is viewer-dependent). */
export function toApiTeam(config: Config, team: TeamRow, org: UserRow | null, viewer: UserRow | null) {
  return {
    id: team.id,
    name: team.name,
    description: team.description,
    permission: accessModeName(team.authorize),
    organization: org ? toApiOrg(config, org, viewer) : null,
    units: parseUnits(team.units),
    includes_all_repositories: team.includesAllRepositories,
    can_create_org_repo: team.canCreateOrgRepo,
  }
}

/** Team records for a list, with their organisations fetched in one query. */
export async function teamsToApi(deps: AppDeps, rows: TeamRow[], viewer: UserRow | null) {
  if (rows.length === 0) return []
  const orgs = await usersByIds(deps, rows.map((r) => r.orgId))
  return rows.map((r) => toApiTeam(deps.config, r, orgs.get(r.orgId) ?? null, viewer))
}
