import { and, asc, count, eq, inArray, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { Config } from '../../config'
import { writeTransaction } from '../../db/client'
import { repositories, teamRepos, teams, teamUsers, users } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode, accessLevel, accessModeFromName, accessModeName, type RepoRow } from '../../auth/access'
import { forbidden, notFound, unauthorized, unprocessable } from '../../lib/errors'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { toApiOrg } from '../../lib/convert/user'
import { nowUnix } from '../../lib/time'
import { charCount } from '../../lib/validate'
import { pathNumber } from '../../lib/path-number'
import { usersByIds, usersPage } from '../users/service'
import { listReadableRepos } from '../repos/service'
import { TEAM_UNITS } from './model'
import {
  ensureMembership,
  lastOwnerMessage,
  orgRole,
  ownersCount,
  type OrgContext,
  type OrgRow,
} from '../orgs/service'

export type TeamRow = typeof teams.$inferSelect

/** A team named by id, with its organisation and the caller's role there. */
export interface TeamContext {
  team: TeamRow
  org: OrgRow
  viewer: UserRow
  member: boolean
  owner: boolean
}

const TEAM_NAME = /^[A-Za-z0-9_.-]+$/

const isOwnersTeam = (team: Pick<TeamRow, 'authorize'>) => team.authorize >= AccessMode.Owner

function parseUnits(units: string): string[] {
  try {
    const parsed = JSON.parse(units)
    return Array.isArray(parsed) ? parsed.map(String) : []
  } catch {
    return []
  }
}

/** The Team record, as `viewer` may see it (its organisation's e-mail is viewer-dependent). */
export function toApiTeam(config: Config, team: TeamRow, org: OrgRow | null, viewer: UserRow | null) {
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
export function teamsToApi(deps: AppDeps, rows: TeamRow[], viewer: UserRow | null) {
  if (rows.length === 0) return []
  const orgs = usersByIds(deps, rows.map((r) => r.orgId))
  return rows.map((r) => toApiTeam(deps.config, r, orgs.get(r.orgId) ?? null, viewer))
}

/**
 * `/teams/{id}`: needs a signed-in caller (401) who is a member of the team's organisation
 * (or a site administrator); everyone else gets 404.
 */
export function loadTeam(deps: AppDeps, id: number | string, viewer: UserRow | null): TeamContext {
  if (!viewer) throw unauthorized()
  const n = typeof id === 'string' ? pathNumber(id) : id
  const row = Number.isSafeInteger(n)
    ? deps.db.select({ team: teams, org: users }).from(teams).innerJoin(users, eq(users.id, teams.orgId)).where(eq(teams.id, n)).get()
    : undefined
  if (!row) throw notFound(`team does not exist [id: ${id}]`)
  const role = orgRole(deps, row.org, viewer)
  if (!role.member) throw notFound(`team does not exist [id: ${id}]`)
  return { team: row.team, org: row.org, viewer, ...role }
}

/** Owner-only team routes answer 404 to other members (Gitea's check knows only the team). */
export function requireTeamOwner(ctx: TeamContext): void {
  if (!ctx.owner) throw notFound(`team does not exist [id: ${ctx.team.id}]`)
}

export function listOrgTeams(deps: AppDeps, org: OrgRow, page: Page): Paged<TeamRow> {
  return selectPage(deps.db, teams, eq(teams.orgId, org.id), asc(teams.lowerName), page)
}

/** Every team `user` is in, across organisations. */
export function listUserTeams(deps: AppDeps, user: UserRow, page: Page): Paged<TeamRow> {
  const where = eq(teamUsers.uid, user.id)
  const total = deps.db.select({ n: count() }).from(teamUsers).where(where).get()!.n
  const rows = deps.db
    .select({ team: teams })
    .from(teamUsers)
    .innerJoin(teams, eq(teams.id, teamUsers.teamId))
    .where(where)
    .orderBy(asc(teams.orgId), asc(teams.lowerName))
    .limit(page.limit)
    .offset(page.offset)
    .all()
  return { rows: rows.map((r) => r.team), total }
}

export interface TeamFields {
  name?: string
  description?: string
  permission?: string
  units?: string[]
  includes_all_repositories?: boolean
  can_create_org_repo?: boolean
}

function checkTeamName(name: string | undefined): void {
  if (name === undefined) return
  if (!name) throw unprocessable('Required', 'Name')
  if (!TEAM_NAME.test(name)) throw unprocessable('must be valid alpha or numeric or dash(-_) or dot characters', 'Name')
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

/** The units a team gets: admin teams may use every unit whatever was sent (as in Gitea). */
const unitsFor = (authorize: number, units: string[] | undefined): string[] | undefined =>
  authorize >= AccessMode.Admin ? [...TEAM_UNITS] : units

function assertTeamNameFree(deps: AppDeps, orgId: number, name: string, exceptId = 0): void {
  const taken = deps.db
    .select({ id: teams.id })
    .from(teams)
    .where(and(eq(teams.orgId, orgId), eq(teams.lowerName, name.toLowerCase())))
    .get()
  if (taken && taken.id !== exceptId) throw unprocessable(`team already exists [name: ${name}]`, 'Name')
}

/** Creates a team (the route lets organisation owners only); permission defaults to read, units to all. */
export function createTeam(deps: AppDeps, ctx: OrgContext, input: TeamFields & { name: string }): TeamRow {
  if (input.name === undefined) throw unprocessable('Required', 'Name')
  const { authorize = AccessMode.Read } = checkTeamFields(input)
  return writeTransaction(deps.db, () => {
    assertTeamNameFree(deps, ctx.org.id, input.name)
    const now = nowUnix()
    const team = deps.db
      .insert(teams)
      .values({
        orgId: ctx.org.id,
        name: input.name,
        lowerName: input.name.toLowerCase(),
        description: input.description ?? '',
        authorize,
        units: JSON.stringify(unitsFor(authorize, input.units) ?? TEAM_UNITS),
        includesAllRepositories: input.includes_all_repositories ?? false,
        canCreateOrgRepo: input.can_create_org_repo ?? false,
        createdUnix: now,
        updatedUnix: now,
      })
      .returning()
      .get()
    deps.db.update(users).set({ numTeams: sql`${users.numTeams} + 1` }).where(eq(users.id, ctx.org.id)).run()
    return team
  })
}

/** Applies an EditTeamOption (absent = unchanged). The Owners team keeps its name and permission. */
export function editTeam(deps: AppDeps, ctx: TeamContext, input: TeamFields): TeamRow {
  const team = ctx.team
  if (isOwnersTeam(team)) {
    if (input.permission !== undefined && input.permission !== 'owner')
      throw forbidden('The permission of the Owners team cannot be changed')
    if (input.name !== undefined && input.name.toLowerCase() !== team.lowerName) throw forbidden('The Owners team cannot be renamed')
    input = { ...input, permission: undefined, name: undefined, includes_all_repositories: undefined, can_create_org_repo: undefined }
  }
  const { authorize } = checkTeamFields(input)
  const set: Partial<typeof teams.$inferInsert> = {}
  if (input.name !== undefined) Object.assign(set, { name: input.name, lowerName: input.name.toLowerCase() })
  if (input.description !== undefined) set.description = input.description
  if (authorize !== undefined) set.authorize = authorize
  const units = unitsFor(authorize ?? team.authorize, input.units)
  if (units !== undefined && (input.units !== undefined || authorize !== undefined)) set.units = JSON.stringify(units)
  if (input.includes_all_repositories !== undefined) set.includesAllRepositories = input.includes_all_repositories
  if (input.can_create_org_repo !== undefined) set.canCreateOrgRepo = input.can_create_org_repo
  if (Object.keys(set).length === 0) return team
  return writeTransaction(deps.db, () => {
    if (input.name !== undefined) assertTeamNameFree(deps, team.orgId, input.name, team.id)
    return deps.db
      .update(teams)
      .set({ ...set, updatedUnix: nowUnix() })
      .where(eq(teams.id, team.id))
      .returning()
      .get()!
  })
}

/** Deletes a team (not the Owners team); its members stay in the organisation. */
export function deleteTeam(deps: AppDeps, ctx: TeamContext): void {
  if (isOwnersTeam(ctx.team)) throw forbidden('The Owners team of an organization cannot be deleted')
  writeTransaction(deps.db, () => {
    deps.db.delete(teams).where(eq(teams.id, ctx.team.id)).run()
    deps.db.update(users).set({ numTeams: sql`${users.numTeams} - 1` }).where(eq(users.id, ctx.team.orgId)).run()
  })
}

/** Members of a team whom `viewer` may see, by name. */
export function listTeamMembers(deps: AppDeps, viewer: UserRow, team: TeamRow, page: Page): Paged<UserRow> {
  return usersPage(deps, viewer, teamUsers, teamUsers.uid, eq(teamUsers.teamId, team.id), page)
}

const teamMembership = (deps: AppDeps, teamId: number, uid: number) =>
  deps.db
    .select({ id: teamUsers.id })
    .from(teamUsers)
    .where(and(eq(teamUsers.teamId, teamId), eq(teamUsers.uid, uid)))
    .get()

export function isTeamMember(deps: AppDeps, team: TeamRow, user: UserRow): boolean {
  return teamMembership(deps, team.id, user.id) !== undefined
}

/** Adds a user to the team, and to the organisation when not yet a member (idempotent). */
export function addTeamMember(deps: AppDeps, ctx: TeamContext, target: UserRow): void {
  writeTransaction(deps.db, () => {
    if (teamMembership(deps, ctx.team.id, target.id)) return
    ensureMembership(deps, ctx.team.orgId, target.id)
    deps.db.insert(teamUsers).values({ orgId: ctx.team.orgId, teamId: ctx.team.id, uid: target.id }).run()
    deps.db.update(teams).set({ numMembers: sql`${teams.numMembers} + 1` }).where(eq(teams.id, ctx.team.id)).run()
  })
}

/**
 * Removes a user from the team; they stay a member of the organisation (DELETE
 * /orgs/{org}/members/{username} removes them from it). The Owners team keeps at least one member.
 */
export function removeTeamMember(deps: AppDeps, ctx: TeamContext, target: UserRow): void {
  writeTransaction(deps.db, () => {
    const membership = teamMembership(deps, ctx.team.id, target.id)
    if (!membership) throw notFound(`${target.name} is not a member of team ${ctx.team.name}`)
    if (isOwnersTeam(ctx.team) && ownersCount(deps, ctx.team.orgId) <= 1) throw unprocessable(lastOwnerMessage(ctx.org, target))
    deps.db.delete(teamUsers).where(eq(teamUsers.id, membership.id)).run()
    deps.db.update(teams).set({ numMembers: sql`${teams.numMembers} - 1` }).where(eq(teams.id, ctx.team.id)).run()
  })
}

/** Repositories the team covers (all of the organisation's for owners / all-repositories teams) that the viewer may read. */
export function listTeamRepos(deps: AppDeps, ctx: TeamContext, page: Page): Paged<RepoRow> {
  const team = ctx.team
  const covered =
    isOwnersTeam(team) || team.includesAllRepositories
      ? eq(repositories.ownerId, team.orgId)
      : and(
          eq(repositories.ownerId, team.orgId),
          inArray(repositories.id, deps.db.select({ id: teamRepos.repoId }).from(teamRepos).where(eq(teamRepos.teamId, team.id))),
        )
  return listReadableRepos(deps, ctx.viewer, covered!, page)
}

/**
 * The repository `{org}/{repo}` for a team-repository change: it must belong to the team's
 * organisation and be visible to the caller (404 otherwise), and the caller needs admin on it (403).
 */
function repoForTeamChange(deps: AppDeps, ctx: TeamContext, orgName: string, repoName: string): RepoRow {
  const missing = () => notFound(`repository does not exist [${orgName}/${repoName}]`)
  if (orgName.toLowerCase() !== ctx.org.lowerName) throw missing()
  const repo = deps.db
    .select()
    .from(repositories)
    .where(
      and(eq(repositories.ownerId, ctx.org.id), eq(repositories.lowerName, repoName.toLowerCase()), eq(repositories.status, 'ready')),
    )
    .get()
  if (!repo) throw missing()
  const mode = accessLevel(deps.db, ctx.viewer, repo, ctx.org)
  if (mode < AccessMode.Read) throw missing()
  if (mode < AccessMode.Admin) throw forbidden('You need admin access to the repository to change its teams')
  return repo
}

export function addTeamRepo(deps: AppDeps, ctx: TeamContext, orgName: string, repoName: string): void {
  const repo = repoForTeamChange(deps, ctx, orgName, repoName)
  writeTransaction(deps.db, () => {
    const inserted = deps.db
      .insert(teamRepos)
      .values({ orgId: ctx.team.orgId, teamId: ctx.team.id, repoId: repo.id })
      .onConflictDoNothing()
      .returning({ id: teamRepos.id })
      .all()
    if (inserted.length) deps.db.update(teams).set({ numRepos: sql`${teams.numRepos} + 1` }).where(eq(teams.id, ctx.team.id)).run()
  })
}

export function removeTeamRepo(deps: AppDeps, ctx: TeamContext, orgName: string, repoName: string): void {
  const repo = repoForTeamChange(deps, ctx, orgName, repoName)
  writeTransaction(deps.db, () => {
    const removed = deps.db
      .delete(teamRepos)
      .where(and(eq(teamRepos.teamId, ctx.team.id), eq(teamRepos.repoId, repo.id)))
      .returning({ id: teamRepos.id })
      .all()
    if (removed.length) deps.db.update(teams).set({ numRepos: sql`${teams.numRepos} - 1` }).where(eq(teams.id, ctx.team.id)).run()
  })
}
