import { asc, inArray } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import type { Config } from '../config'
import { teams, teamUnits, type TeamRow } from '../db/schema'
import type { UserRow } from '../auth/caller'
import { AccessMode, accessModeName, REPO_UNITS } from '../auth/access'
import { usersByIds } from './people'
import { toApiOrg } from './user'

/** A team's mode in one unit, as kept (`team_units`). */
export type TeamUnitMode = { type: string; accessMode: number }

/** A team's row with its units' modes: what the Team record is made of. */
export type TeamWithUnits = TeamRow & { unitModes: readonly TeamUnitMode[] }

/** The units' modes of teams, by team id, in one query (Gitea's order of the units). */
export async function unitModesOf(deps: AppDeps, teamIds: number[]): Promise<Map<number, TeamUnitMode[]>> {
  const result = new Map<number, TeamUnitMode[]>()
  if (teamIds.length === 0) return result
  const rows = await deps.db
    .select({ teamId: teamUnits.teamId, type: teamUnits.type, accessMode: teamUnits.accessMode })
    .from(teamUnits)
    .where(inArray(teamUnits.teamId, [...new Set(teamIds)]))
    .orderBy(asc(teamUnits.id))
  const order = (type: string) => (REPO_UNITS as readonly string[]).indexOf(type)
  for (const r of rows.sort((a, b) => order(a.type) - order(b.type))) {
    let list = result.get(r.teamId)
    if (!list) result.set(r.teamId, (list = []))
    list.push({ type: r.type, accessMode: r.accessMode })
  }
  return result
}

/** Team rows with their units' modes. */
export async function withUnitModes(deps: AppDeps, rows: TeamRow[]): Promise<TeamWithUnits[]> {
  const modes = await unitModesOf(deps, rows.map((r) => r.id))
  return rows.map((r) => ({ ...r, unitModes: modes.get(r.id) ?? [] }))
}

/** Teams by id with their units' modes, in two queries (those that exist). */
export async function teamsByIds(deps: AppDeps, ids: number[]): Promise<Map<number, TeamWithUnits>> {
  if (ids.length === 0) return new Map()
  const rows = await deps.db.select().from(teams).where(inArray(teams.id, [...new Set(ids)]))
  return new Map((await withUnitModes(deps, rows)).map((t) => [t.id, t]))
}

/**
 * The Team record's `units` and `units_map` (Gitea's GetUnitNames / GetUnitsMap): a team of admin
 * or above has every unit at its own mode; any other lists its units, each with its mode (those at
 * none too, as Gitea keeps them).
 */
export function teamUnitsView(team: Pick<TeamWithUnits, 'authorize' | 'unitModes'>): { units: string[]; units_map: Record<string, string> } {
  if (team.authorize >= AccessMode.Admin) {
    const mode = accessModeName(team.authorize)
    return { units: [...REPO_UNITS], units_map: Object.fromEntries(REPO_UNITS.map((u) => [u, mode])) }
  }
  return {
    units: team.unitModes.map((u) => u.type),
    units_map: Object.fromEntries(team.unitModes.map((u) => [u.type, accessModeName(u.accessMode)])),
  }
}

/** The Team record, as `viewer` may see it (its organisation's e-mail is viewer-dependent). */
export function toApiTeam(config: Config, team: TeamWithUnits, org: UserRow | null, viewer: UserRow | null) {
  return {
    id: team.id,
    name: team.name,
    description: team.description,
    permission: accessModeName(team.authorize),
    organization: org ? toApiOrg(config, org, viewer) : null,
    ...teamUnitsView(team),
    includes_all_repositories: team.includesAllRepositories,
    can_create_org_repo: team.canCreateOrgRepo,
  }
}

/** The Team record of one team row (its units read). */
export async function teamToApi(deps: AppDeps, team: TeamRow, org: UserRow | null, viewer: UserRow | null) {
  return toApiTeam(deps.config, (await withUnitModes(deps, [team]))[0]!, org, viewer)
}

/** Team records for a list, with their organisations (unless all of `org`) and units fetched in one query each. */
export async function teamsToApi(deps: AppDeps, rows: TeamRow[], viewer: UserRow | null, org?: UserRow) {
  if (rows.length === 0) return []
  const [orgs, full] = await Promise.all([org ? new Map([[org.id, org]]) : usersByIds(deps, rows.map((r) => r.orgId)), withUnitModes(deps, rows)])
  return full.map((r) => toApiTeam(deps.config, r, orgs.get(r.orgId) ?? null, viewer))
}
