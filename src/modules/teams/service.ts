import { and, asc, count, eq, inArray, or, sql, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { repositories, teamRepos, teams, teamUnits, teamUsers, users, type TeamRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode, accessLevel, accessModeFromName, teamCoversAll, type RepoRow } from '../../auth/access'
import { teamCoversSql } from '../../auth/visibility'
import { ApiError, forbidden, notFound, unprocessable } from '../../lib/errors'
import { containsText } from '../../db/sql'
import type { RepoContext } from '../../auth/repo-context'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { batchesOf } from '../../lib/batches'
import { nowUnix } from '../../lib/time'
import { ALPHA_DASH_DOT, charCount } from '../../lib/validate'
import { usersPage, type PeopleList } from '../users/service'
import { findReadableRepo, listReadableReposOf } from '../repos/queries'
import { everyUnitMode, TEAM_UNITS } from './model'
import { ensureMembership, lastOwnerMessage, ownersCount } from '../orgs/service'
import type { OrgContext, OrgRow } from '../../auth/org-context'
import type { TeamContext } from '../../auth/team-context'
import { refuseBlocked } from '../../auth/blocking'
import { visibleOwnerCondition } from '../../auth/visibility'

const isOwnersTeam = (team: Pick<TeamRow, 'authorize'>) => team.authorize >= AccessMode.Owner

export async function listOrgTeams(deps: AppDeps, org: OrgRow, page: Page): Promise<Paged<TeamRow>> {
  return await selectPage(deps.db, teams, eq(teams.orgId, org.id), asc(teams.lowerName), page)
}

/**
 * Teams of an organisation whose name (and description, with `includeDescription`) holds `q`,
 * whatever its letter case (Gitea's team search), by name.
 */
export async function searchOrgTeams(deps: AppDeps, org: OrgRow, q: string, includeDescription: boolean, page: Page): Promise<Paged<TeamRow>> {
  const needle = q.trim()
  const folded = sql`lower(${needle})`
  const matches = needle
    ? or(containsText(teams.lowerName, folded), includeDescription ? containsText(sql`lower(${teams.description})`, folded) : undefined)
    : undefined
  return await selectPage(deps.db, teams, and(eq(teams.orgId, org.id), matches)!, asc(teams.lowerName), page)
}

/**
 * Every team `user` is in, across the organisations they may see (the visibility rule without
 * personal ties, as `GET /orgs/{org}` and loadTeam: a public-only token lists no team of a
 * private or limited organisation).
 */
export async function listUserTeams(deps: AppDeps, user: UserRow, page: Page): Promise<Paged<TeamRow>> {
  const where = and(eq(teamUsers.uid, user.id), visibleOwnerCondition(user, false))
  const total = (await deps.db
    .select({ n: count() })
    .from(teamUsers)
    .innerJoin(teams, eq(teams.id, teamUsers.teamId))
    .innerJoin(users, eq(users.id, teams.orgId))
    .where(where))[0]!.n
  const rows = await deps.db
    .select({ team: teams })
    .from(teamUsers)
    .innerJoin(teams, eq(teams.id, teamUsers.teamId))
    .innerJoin(users, eq(users.id, teams.orgId))
    .where(where)
    .orderBy(asc(teams.orgId), asc(teams.lowerName))
    .limit(page.limit)
    .offset(page.offset)
  return { rows: rows.map((r) => r.team), total }
}

export interface TeamFields {
  name?: string
  description?: string
  permission?: string
  units?: string[]
  units_map?: Partial<Record<string, string>>
  includes_all_repositories?: boolean
  can_create_org_repo?: boolean
}

function checkTeamName(name: string | undefined): void {
  if (name === undefined) return
  if (!name) throw unprocessable('Required', 'Name')
  if (!ALPHA_DASH_DOT.test(name)) throw unprocessable('must be valid alpha or numeric or dash(-_) or dot characters', 'Name')
  if (charCount(name) > 30) throw unprocessable('must be less than 30 characters', 'Name')
}

function checkTeamFields(input: TeamFields): { authorize?: number } {
  checkTeamName(input.name)
  if (input.description !== undefined && charCount(input.description) > 255)
    throw unprocessable('must be less than 255 characters', 'Description')
  if (input.permission === undefined) return {}
  const mode = accessModeFromName(input.permission)
  if (mode === undefined || mode >= AccessMode.Owner)
    throw unprocessable(`must be one of read, write, admin [permission: ${input.permission}]`, 'Permission')
  return { authorize: mode }
}

/** A team's units with their modes, as they are kept (`team_units`). */
type UnitModes = Map<string, number>

const UNIT_MODE: Record<string, number> = { none: AccessMode.None, read: AccessMode.Read, write: AccessMode.Write, admin: AccessMode.Admin }

/** The `units_map` sent (Gitea's convertUnitsMap), or undefined when it names no unit (Gitea's len check). */
function unitsMapOf(input: TeamFields): UnitModes | undefined {
  const entries = Object.entries(input.units_map ?? {}).filter(([, v]) => v !== undefined)
  const unknown = entries.find(([unit]) => !(TEAM_UNITS as readonly string[]).includes(unit))
  if (unknown) throw unprocessable(`unknown unit [${unknown[0]}]; units are ${TEAM_UNITS.join(', ')}`, 'UnitsMap')
  return entries.length ? new Map(entries.map(([unit, mode]) => [unit, UNIT_MODE[mode!] ?? AccessMode.None])) : undefined
}

/**
 * The least mode above none of a units map, the external tracker and wiki left out (Gitea's
 * MinUnitAccessMode): a team's permission when it is given one.
 */
function leastUnitMode(units: UnitModes): number {
  let least: number = AccessMode.None
  for (const [unit, mode] of units) {
    if (unit === 'repo.ext_issues' || unit === 'repo.ext_wiki') continue
    if (mode > AccessMode.None && (least === AccessMode.None || mode < least)) least = mode
  }
  return least
}

const everyUnitAt = (mode: number): UnitModes => new Map(everyUnitMode(mode))

/**
 * The units a team gets (Gitea's attachTeamUnitsMap / attachTeamUnits / attachAdminTeamUnits):
 * an admin team every unit at its mode whatever was sent; otherwise the units map when one is
 * sent, or each unit of `units` at the team's mode; undefined when neither is sent.
 */
function unitsFor(authorize: number, input: TeamFields): UnitModes | undefined {
  if (authorize >= AccessMode.Admin) return everyUnitAt(authorize)
  const map = unitsMapOf(input)
  if (map) return map
  if (input.units?.length) return new Map(input.units.map((u) => [u, authorize]))
  return undefined
}

/** Replaces a team's units with `units` (in the caller's transaction). */
async function writeTeamUnits(deps: AppDeps, team: Pick<TeamRow, 'id' | 'orgId'>, units: UnitModes): Promise<void> {
  await deps.db.delete(teamUnits).where(eq(teamUnits.teamId, team.id))
  const rows = [...units].map(([type, accessMode]) => ({ orgId: team.orgId, teamId: team.id, type, accessMode }))
  if (rows.length) await deps.db.insert(teamUnits).values(rows)
}

async function assertTeamNameFree(deps: AppDeps, orgId: number, name: string, exceptId = 0): Promise<void> {
  const taken = (await deps.db
    .select({ id: teams.id })
    .from(teams)
    .where(and(eq(teams.orgId, orgId), eq(teams.lowerName, name.toLowerCase()))))[0]
  if (taken && taken.id !== exceptId) throw unprocessable(`team already exists [name: ${name}]`, 'Name')
}

/**
 * Creates a team (the route lets organisation owners only); permission defaults to read, units to
 * all. Below admin, a units map sets each unit's mode and the team's permission becomes the least
 * of them above none (as Gitea's CreateTeam reports it).
 */
export async function createTeam(deps: AppDeps, ctx: OrgContext, input: TeamFields & { name: string }): Promise<TeamRow> {
  if (input.name === undefined) throw unprocessable('Required', 'Name')
  let { authorize = AccessMode.Read } = checkTeamFields(input)
  const map = unitsMapOf(input)
  if (authorize < AccessMode.Admin && map) authorize = leastUnitMode(map)
  const units = unitsFor(authorize, input) ?? everyUnitAt(authorize)
  return await writeTransaction(deps.db, async () => {
    await assertTeamNameFree(deps, ctx.org.id, input.name)
    const now = nowUnix()
    const team = (await deps.db
      .insert(teams)
      .values({
        orgId: ctx.org.id,
        name: input.name,
        lowerName: input.name.toLowerCase(),
        description: input.description ?? '',
        authorize,
        includesAllRepositories: input.includes_all_repositories ?? false,
        canCreateOrgRepo: input.can_create_org_repo ?? false,
        createdUnix: now,
        updatedUnix: now,
      })
      .returning())[0]!
    await writeTeamUnits(deps, team, units)
    await deps.db.update(users).set({ numTeams: sql`${users.numTeams} + 1` }).where(eq(users.id, ctx.org.id))
    return team
  })
}

/**
 * Applies an EditTeamOption (absent = unchanged). The Owners team keeps its name and permission.
 * A permission below admin sent with a units map becomes the least of its modes above none (Gitea's
 * EditTeam); the units map, else `units`, replaces the team's units. A permission changed alone
 * moves every unit the team has (those above none) to it, so a team without per-unit settings
 * keeps one mode for all its units (Gitea keeps the old modes of the units then).
 */
export async function editTeam(deps: AppDeps, ctx: TeamContext, input: TeamFields): Promise<TeamRow> {
  const team = ctx.team
  if (isOwnersTeam(team)) {
    if (input.permission !== undefined && input.permission !== 'owner')
      throw forbidden('The permission of the Owners team cannot be changed')
    if (input.name !== undefined && input.name.toLowerCase() !== team.lowerName) throw forbidden('The Owners team cannot be renamed')
    input = { ...input, permission: undefined, name: undefined, includes_all_repositories: undefined, can_create_org_repo: undefined }
  }
  let { authorize } = checkTeamFields(input)
  const map = unitsMapOf(input)
  if (authorize !== undefined && authorize < AccessMode.Admin && map) authorize = leastUnitMode(map)
  const set: Partial<typeof teams.$inferInsert> = {}
  if (input.name !== undefined) Object.assign(set, { name: input.name, lowerName: input.name.toLowerCase() })
  if (input.description !== undefined) set.description = input.description
  if (authorize !== undefined && authorize !== team.authorize) set.authorize = authorize
  const mode = authorize ?? team.authorize
  // The Owners team's units stay every unit at owner.
  const units = isOwnersTeam(team) ? undefined : (unitsFor(mode, input) ?? (set.authorize !== undefined ? 'moved' : undefined))
  if (input.includes_all_repositories !== undefined) set.includesAllRepositories = input.includes_all_repositories
  if (input.can_create_org_repo !== undefined) set.canCreateOrgRepo = input.can_create_org_repo
  if (Object.keys(set).length === 0 && units === undefined) return team
  return await writeTransaction(deps.db, async () => {
    if (input.name !== undefined) await assertTeamNameFree(deps, team.orgId, input.name, team.id)
    if (units === 'moved') {
      // Every unit the team has moves to its new mode; those at none stay.
      const had = await deps.db.select({ type: teamUnits.type, accessMode: teamUnits.accessMode }).from(teamUnits).where(eq(teamUnits.teamId, team.id))
      await writeTeamUnits(deps, team, new Map(had.map((u) => [u.type, u.accessMode > AccessMode.None ? mode : AccessMode.None])))
    } else if (units) await writeTeamUnits(deps, team, units)
    return (await deps.db
      .update(teams)
      .set({ ...set, updatedUnix: nowUnix() })
      .where(eq(teams.id, team.id))
      .returning())[0]!
  })
}

/** Deletes a team (not the Owners team); its members stay in the organisation. */
export async function deleteTeam(deps: AppDeps, ctx: TeamContext): Promise<void> {
  if (isOwnersTeam(ctx.team)) throw forbidden('The Owners team of an organization cannot be deleted')
  await writeTransaction(deps.db, async () => {
    await deps.db.delete(teams).where(eq(teams.id, ctx.team.id))
    await deps.db.update(users).set({ numTeams: sql`${users.numTeams} - 1` }).where(eq(users.id, ctx.team.orgId))
  })
}

const TEAM_MEMBERS: PeopleList = { name: 'team members', link: teamUsers, via: teamUsers.uid, where: (of) => eq(teamUsers.teamId, of) }

/** Members of a team whom `viewer` may see, by name. */
export async function listTeamMembers(deps: AppDeps, viewer: UserRow, team: TeamRow, page: Page): Promise<Paged<UserRow>> {
  return await usersPage(deps, viewer, TEAM_MEMBERS, team.id, page)
}

const teamMembership = async (deps: AppDeps, teamId: number, uid: number) =>
  (await deps.db
    .select({ id: teamUsers.id })
    .from(teamUsers)
    .where(and(eq(teamUsers.teamId, teamId), eq(teamUsers.uid, uid))))[0]

export async function isTeamMember(deps: AppDeps, team: TeamRow, user: UserRow): Promise<boolean> {
  return await teamMembership(deps, team.id, user.id) !== undefined
}

/** Adds a user to the team, and to the organisation when not yet a member (idempotent). */
export async function addTeamMember(deps: AppDeps, ctx: TeamContext, target: UserRow): Promise<void> {
  await writeTransaction(deps.db, async () => {
    if (await teamMembership(deps, ctx.team.id, target.id)) return
    // Gitea's AddTeamMember: one the organisation blocked cannot join it.
    await refuseBlocked(deps.db, target.id, [ctx.team.orgId])
    await ensureMembership(deps, ctx.team.orgId, target.id)
    await deps.db.insert(teamUsers).values({ orgId: ctx.team.orgId, teamId: ctx.team.id, uid: target.id })
    await deps.db.update(teams).set({ numMembers: sql`${teams.numMembers} + 1` }).where(eq(teams.id, ctx.team.id))
  })
}

/**
 * Removes a user from the team; they stay a member of the organisation (DELETE
 * /orgs/{org}/members/{username} removes them from it). The Owners team keeps at least one member.
 */
export async function removeTeamMember(deps: AppDeps, ctx: TeamContext, target: UserRow): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const membership = await teamMembership(deps, ctx.team.id, target.id)
    if (!membership) throw notFound(`${target.name} is not a member of team ${ctx.team.name}`)
    if (isOwnersTeam(ctx.team) && await ownersCount(deps, ctx.team.orgId) <= 1) throw unprocessable(lastOwnerMessage(ctx.org, target))
    await deps.db.delete(teamUsers).where(eq(teamUsers.id, membership.id))
    await deps.db.update(teams).set({ numMembers: sql`${teams.numMembers} - 1` }).where(eq(teams.id, ctx.team.id))
  })
}

/** The repositories a team covers: every one of its organisation's for the Owners team and teams with all of them, else those given it. */
function coveredBy(deps: AppDeps, team: TeamContext['team']): SQL {
  return (
    teamCoversAll(team)
      ? eq(repositories.ownerId, team.orgId)
      : and(
          eq(repositories.ownerId, team.orgId),
          inArray(repositories.id, deps.db.select({ id: teamRepos.repoId }).from(teamRepos).where(eq(teamRepos.teamId, team.id))),
        )
  )!
}

/**
 * Repositories the team covers (all of the organisation's for owners / all-repositories teams)
 * that the viewer may read: coveredBy's condition, written with the placeholder (prepared once per
 * shape, repos/queries.ts listReadableReposOf) for the organisation, or for the team and its
 * organisation read from it.
 */
export async function listTeamRepos(deps: AppDeps, ctx: TeamContext, page: Page): Promise<Paged<RepoRow>> {
  const { team } = ctx
  if (teamCoversAll(team))
    return await listReadableReposOf(deps, ctx.viewer, 'team:all', (org) => eq(repositories.ownerId, org), team.orgId, page)
  return await listReadableReposOf(
    deps,
    ctx.viewer,
    'team:given',
    (given) =>
      and(
        eq(repositories.ownerId, sql`(select ${teams.orgId} from ${teams} where ${teams.id} = ${given})`),
        inArray(repositories.id, deps.db.select({ id: teamRepos.repoId }).from(teamRepos).where(eq(teamRepos.teamId, given))),
      )!,
    team.id,
    page,
  )
}

/**
 * `{org}/{repo}` if the team covers it and the caller may read it (Gitea's GetTeamRepo); 404
 * otherwise, whether or not the repository exists.
 */
export async function getTeamRepo(deps: AppDeps, ctx: TeamContext, orgName: string, repoName: string): Promise<RepoRow> {
  const missing = () => notFound(`repository does not exist [${orgName}/${repoName}]`)
  if (orgName.toLowerCase() !== ctx.org.lowerName) throw missing()
  const named = and(coveredBy(deps, ctx.team), eq(repositories.lowerName, repoName.toLowerCase()))!
  const repo = await findReadableRepo(deps, ctx.viewer, named)
  if (!repo) throw missing()
  return repo
}

/**
 * The repository of the team's organisation that `which` names (its name, or its id: the web's
 * `repoid`) for a team-repository change: it must be visible to the caller (404 otherwise), and
 * the caller needs admin on it (403).
 */
async function repoForTeamChange(deps: AppDeps, ctx: TeamContext, which: { name: string } | { id: number }): Promise<RepoRow> {
  const label = 'name' in which ? `${ctx.org.name}/${which.name}` : `id: ${which.id}`
  const missing = () => notFound(`repository does not exist [${label}]`)
  const named = 'name' in which ? eq(repositories.lowerName, which.name.toLowerCase()) : eq(repositories.id, which.id)
  const repo = (await deps.db
    .select()
    .from(repositories)
    .where(and(eq(repositories.ownerId, ctx.org.id), named, eq(repositories.status, 'ready'))))[0]
  if (!repo) throw missing()
  const mode = await accessLevel(deps.db, ctx.viewer, repo, ctx.org)
  if (mode < AccessMode.Read) throw missing()
  if (mode < AccessMode.Admin) throw forbidden('You need admin access to the repository to change its teams')
  return repo
}

/** `{org}/{repo}` for a team-repository change: the team's organisation (404 for another's). */
async function namedRepoForTeamChange(deps: AppDeps, ctx: TeamContext, orgName: string, repoName: string): Promise<RepoRow> {
  if (orgName.toLowerCase() !== ctx.org.lowerName) throw notFound(`repository does not exist [${orgName}/${repoName}]`)
  return await repoForTeamChange(deps, ctx, { name: repoName })
}

/** Gives `repo` to `team` (false when it had it already), keeping the team's count in step. */
async function giveTeamRepo(deps: AppDeps, team: TeamRow, repo: RepoRow): Promise<boolean> {
  return await writeTransaction(deps.db, async () => {
    const inserted = await deps.db
      .insert(teamRepos)
      .values({ orgId: team.orgId, teamId: team.id, repoId: repo.id })
      .onConflictDoNothing()
      .returning({ id: teamRepos.id })
    if (inserted.length) await deps.db.update(teams).set({ numRepos: sql`${teams.numRepos} + 1` }).where(eq(teams.id, team.id))
    return inserted.length > 0
  })
}

/** Takes `repo` back from `team` (false when it did not have it), keeping the team's count in step. */
async function takeTeamRepo(deps: AppDeps, team: TeamRow, repo: RepoRow): Promise<boolean> {
  return await writeTransaction(deps.db, async () => {
    const removed = await deps.db
      .delete(teamRepos)
      .where(and(eq(teamRepos.teamId, team.id), eq(teamRepos.repoId, repo.id)))
      .returning({ id: teamRepos.id })
    if (removed.length) await deps.db.update(teams).set({ numRepos: sql`${teams.numRepos} - 1` }).where(eq(teams.id, team.id))
    return removed.length > 0
  })
}

export async function addTeamRepo(deps: AppDeps, ctx: TeamContext, orgName: string, repoName: string): Promise<void> {
  await giveTeamRepo(deps, ctx.team, await namedRepoForTeamChange(deps, ctx, orgName, repoName))
}

export async function removeTeamRepo(deps: AppDeps, ctx: TeamContext, orgName: string, repoName: string): Promise<void> {
  await takeTeamRepo(deps, ctx.team, await namedRepoForTeamChange(deps, ctx, orgName, repoName))
}

/** Takes the repository of id `repoId` back from the team (the web's `repoid`), under the same rules. */
export async function removeTeamRepoById(deps: AppDeps, ctx: TeamContext, repoId: number): Promise<void> {
  await takeTeamRepo(deps, ctx.team, await repoForTeamChange(deps, ctx, { id: repoId }))
}

/**
 * Gives the team every repository of its organisation it has not yet (Gitea's
 * AddAllRepositoriesToTeam), or takes back every one it was given (RemoveAllRepositoriesFromTeam:
 * nothing for a team with all repositories). An owner's change (403 otherwise): owners administer
 * every repository of the organisation, which one at a time each change asks.
 */
export async function changeAllTeamRepos(deps: AppDeps, ctx: TeamContext, add: boolean): Promise<void> {
  if (!ctx.owner) throw forbidden('You must be an owner of this organization')
  const team = ctx.team
  if (!add && team.includesAllRepositories) return
  await writeTransaction(deps.db, async () => {
    let changed = 0
    if (add) {
      const ids = await deps.db
        .select({ id: repositories.id })
        .from(repositories)
        .where(and(eq(repositories.ownerId, team.orgId), eq(repositories.status, 'ready')))
        .orderBy(asc(repositories.id))
      for (const some of batchesOf(ids, 100)) {
        const rows = some.map((r) => ({ orgId: team.orgId, teamId: team.id, repoId: r.id }))
        changed += (await deps.db.insert(teamRepos).values(rows).onConflictDoNothing().returning({ id: teamRepos.id })).length
      }
    } else {
      changed = (await deps.db.delete(teamRepos).where(eq(teamRepos.teamId, team.id)).returning({ id: teamRepos.id })).length
    }
    if (changed === 0) return
    const delta = add ? changed : -changed
    await deps.db.update(teams).set({ numRepos: sql`${teams.numRepos} + ${delta}` }).where(eq(teams.id, team.id))
  })
}

// ---- the teams of a repository (`/repos/{owner}/{repo}/teams`) ----

/** Teams only exist in organisations: Gitea answers 405 for a user's repository. */
function requireOrgRepo(ctx: RepoContext): void {
  if (ctx.owner.type !== 1) throw new ApiError(405, 'repo is not owned by an organization')
}

/**
 * The teams of the repository's organisation that cover it: the Owners team and teams with every
 * repository, and those given it (the rule `listTeamRepos` reads the other way round).
 */
function teamsCovering(deps: AppDeps, repo: RepoRow): SQL {
  return and(
    eq(teams.orgId, repo.ownerId),
    teamCoversSql(teams, inArray(teams.id, deps.db.select({ id: teamRepos.teamId }).from(teamRepos).where(eq(teamRepos.repoId, repo.id)))),
  )!
}

/** Every team with access to the repository, by name (unpaged, as Gitea: an organisation's teams are few). */
export async function listRepoTeams(deps: AppDeps, ctx: RepoContext): Promise<TeamRow[]> {
  requireOrgRepo(ctx)
  return await deps.db.select().from(teams).where(teamsCovering(deps, ctx.repo)).orderBy(asc(teams.lowerName)).limit(1000)
}

/** The organisation's team named `name` (or of id `id`: the web's form); 404 when there is none. */
async function orgTeamByName(deps: AppDeps, orgId: number, which: string | { id: number }): Promise<TeamRow> {
  const named = typeof which === 'string' ? eq(teams.lowerName, which.toLowerCase()) : eq(teams.id, which.id)
  const team = (await deps.db.select().from(teams).where(and(eq(teams.orgId, orgId), named)))[0]
  if (!team) throw notFound(`team does not exist [org_id: ${orgId}, ${typeof which === 'string' ? `name: ${which}` : `id: ${which.id}`}]`)
  return team
}

/** The team named `name` when it has access to the repository; 404 otherwise. */
export async function repoTeam(deps: AppDeps, ctx: RepoContext, name: string): Promise<TeamRow> {
  requireOrgRepo(ctx)
  const team = await orgTeamByName(deps, ctx.repo.ownerId, name)
  const covering = (await deps.db.select({ id: teams.id }).from(teams).where(and(eq(teams.id, team.id), teamsCovering(deps, ctx.repo))))[0]
  if (!covering) throw notFound(`team ${team.name} has no access to the repository`)
  return team
}

/**
 * Gives the repository to the team named `name`, or takes it back (the route asks for repository
 * admin). As Gitea: only an owner of the organisation unless it lets repository admins change
 * team access; 422 when there is nothing to change (a team covering every repository included).
 */
export async function changeRepoTeam(deps: AppDeps, ctx: RepoContext, which: string | { id: number }, add: boolean): Promise<void> {
  requireOrgRepo(ctx)
  if (!ctx.owner.repoAdminChangeTeamAccess && ctx.mode < AccessMode.Owner) throw forbidden('user is nor repo admin nor owner')
  const team = await orgTeamByName(deps, ctx.repo.ownerId, which)
  if (teamCoversAll(team))
    throw unprocessable(`team '${team.name}' has access to every repository of the organization`)
  const changed = add ? await giveTeamRepo(deps, team, ctx.repo) : await takeTeamRepo(deps, team, ctx.repo)
  if (!changed) throw unprocessable(add ? `team '${team.name}' is already added to repo` : `team '${team.name}' was not added to repo`)
}
