import { and, asc, count, eq, inArray, sql } from 'drizzle-orm'
import { hooksChanged } from '../../webhooks/dispatcher'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { collaborations, orgUsers, repositories, teams, teamUnits, teamUsers, users } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode, accessLevel, type RepoRow } from '../../auth/access'
import { isOrgOwner, membershipOf, requireOrgMember, type OrgContext, type OrgRow } from '../../auth/org-context'
import { visibleOwnerCondition } from '../../auth/visibility'
import { forbidden, notFound, unprocessable } from '../../lib/errors'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { checkEmail, checkMaxSize, checkOwnerName, checkWebsite } from '../../lib/validate'
import { assertNameFree, checkVisibility, usersPage, type PeopleList } from '../users/service'
import { everyUnitMode } from '../teams/model'
import { ownerPackageBlobs } from '../packages/service'
import { createRepository, type NewRepo } from '../repos/create'
import { listOwnedRepos } from '../repos/queries'
import { removeAvatarFileIfUnused } from '../avatars/storage'

const OWNERS_TEAM_NAME = 'Owners'

export interface OrgFields {
  full_name?: string
  email?: string
  description?: string
  website?: string
  location?: string
  visibility?: string
  repo_admin_change_team_access?: boolean
}

/** Gitea's CreateOrgOption/EditOrgOption rules for the optional fields. */
function checkOrgFields(input: OrgFields): void {
  checkMaxSize(input.full_name, 100, 'FullName')
  checkMaxSize(input.description, 255, 'Description')
  checkWebsite(input.website)
  checkMaxSize(input.location, 50, 'Location')
  if (input.email) checkEmail(input.email, 'Email')
  checkVisibility(input.visibility)
}

function orgColumns(input: OrgFields) {
  const set: Partial<typeof users.$inferInsert> = {}
  if (input.full_name !== undefined) set.fullName = input.full_name
  if (input.email !== undefined) set.email = input.email
  if (input.description !== undefined) set.description = input.description
  if (input.website !== undefined) set.website = input.website
  if (input.location !== undefined) set.location = input.location
  if (input.visibility !== undefined) set.visibility = input.visibility
  if (input.repo_admin_change_team_access !== undefined) set.repoAdminChangeTeamAccess = input.repo_admin_change_team_access
  return set
}

/** 403 unless `user` may create organisations of their own (`allow_create_organization`, or a site administrator). */
export function requireMayCreateOrg(user: UserRow): void {
  if (!user.allowCreateOrganization && !user.isAdmin) throw forbidden('You are not allowed to create organizations')
}

/**
 * Creates an organisation owned by `creator`: the organisation row, its Owners team (owner
 * access to every repository) with the creator as its only member, and the membership.
 */
export async function createOrganization(deps: AppDeps, creator: UserRow, input: OrgFields & { username: string }): Promise<OrgRow> {
  checkOwnerName(input.username, 'UserName')
  checkOrgFields(input)
  return await writeTransaction(deps.db, async () => {
    await assertNameFree(deps, input.username)
    const now = nowUnix()
    const org = (await deps.db
      .insert(users)
      .values({
        ...orgColumns(input),
        name: input.username,
        lowerName: input.username.toLowerCase(),
        type: 1,
        numTeams: 1,
        numMembers: 1,
        createdUnix: now,
        updatedUnix: now,
      })
      .returning())[0]
    const owners = (await deps.db
      .insert(teams)
      .values({
        orgId: org.id,
        name: OWNERS_TEAM_NAME,
        lowerName: OWNERS_TEAM_NAME.toLowerCase(),
        authorize: AccessMode.Owner,
        includesAllRepositories: true,
        canCreateOrgRepo: true,
        numMembers: 1,
        createdUnix: now,
        updatedUnix: now,
      })
      .returning())[0]
    const ownerUnits = everyUnitMode(AccessMode.Owner).map(([type, accessMode]) => ({ orgId: org.id, teamId: owners.id, type, accessMode }))
    await deps.db.insert(teamUnits).values(ownerUnits)
    await deps.db.insert(teamUsers).values({ orgId: org.id, teamId: owners.id, uid: creator.id })
    await deps.db.insert(orgUsers).values({ orgId: org.id, uid: creator.id, isPublic: false, createdUnix: now })
    return org
  })
}

/** Applies an EditOrgOption (absent = unchanged). */
export async function editOrganization(deps: AppDeps, org: OrgRow, input: OrgFields): Promise<OrgRow> {
  checkOrgFields(input)
  const set = orgColumns(input)
  if (Object.keys(set).length === 0) return org
  return (await deps.db
    .update(users)
    .set({ ...set, updatedUnix: nowUnix() })
    .where(eq(users.id, org.id))
    .returning())[0]!
}

/** Deletes an organisation with its teams, memberships and packages; refused while it owns repositories. */
export async function deleteOrganization(deps: AppDeps, org: OrgRow): Promise<void> {
  const blobs = await writeTransaction(deps.db, async () => {
    const repos = (await deps.db.select({ n: count() }).from(repositories).where(eq(repositories.ownerId, org.id)))[0]!.n
    if (repos > 0)
      throw unprocessable(
        `organization ${org.name} still owns ${repos} ${repos === 1 ? 'repository' : 'repositories'}; delete or transfer them first`,
      )
    // org_users, teams, team_users, team_repos and its packages go with it (ON DELETE CASCADE).
    const blobs = await ownerPackageBlobs(deps, org.id)
    await deps.db.delete(users).where(and(eq(users.id, org.id), eq(users.type, 1)))
    // Its hooks went with it (cascade): running delivery lanes learn it at the commit.
    hooksChanged(deps)
    return blobs
  })
  await blobs.removeFiles()
  if (org.avatar) await removeAvatarFileIfUnused(deps, 'user', org.avatar)
}

/**
 * Every organisation `viewer` may see, by name (the visibility rule without personal ties: an
 * organisation is seen by its members, never through a follower); all of them for site
 * administrators.
 */
export async function listAllOrgs(deps: AppDeps, viewer: UserRow | null, page: Page): Promise<Paged<OrgRow>> {
  return await selectPage(deps.db, users, and(eq(users.type, 1), visibleOwnerCondition(viewer, false))!, asc(users.lowerName), page)
}

/** The organisations a person belongs to (all of them, or those they made public), and an organisation's members. */
const ORGS_OF: Record<'all' | 'public', PeopleList> = {
  all: { name: 'organisations of', link: orgUsers, via: orgUsers.orgId, where: (of) => eq(orgUsers.uid, of) },
  public: { name: 'public organisations of', link: orgUsers, via: orgUsers.orgId, where: (of) => and(eq(orgUsers.uid, of), eq(orgUsers.isPublic, true))! },
}
const MEMBERS: Record<'all' | 'public', PeopleList> = {
  all: { name: 'members', link: orgUsers, via: orgUsers.uid, where: (of) => eq(orgUsers.orgId, of) },
  public: { name: 'public members', link: orgUsers, via: orgUsers.uid, where: (of) => and(eq(orgUsers.orgId, of), eq(orgUsers.isPublic, true))! },
}

/**
 * Organisations `user` belongs to that `viewer` may see, by name. Everyone sees the public
 * memberships; the user themself and site administrators see all of them.
 */
export async function listOrgsOfUser(deps: AppDeps, user: UserRow, viewer: UserRow | null, page: Page): Promise<Paged<OrgRow>> {
  const all = viewer !== null && (viewer.id === user.id || viewer.isAdmin)
  return await usersPage(deps, viewer, all ? ORGS_OF.all : ORGS_OF.public, user.id, page)
}

/** Members of an organisation whom `viewer` may see, by name; only public ones when `publicOnly`. */
export async function listMembers(deps: AppDeps, viewer: UserRow | null, org: OrgRow, publicOnly: boolean, page: Page): Promise<Paged<UserRow>> {
  return await usersPage(deps, viewer, publicOnly ? MEMBERS.public : MEMBERS.all, org.id, page)
}

/**
 * `GET /orgs/{org}/members/{username}`: 'member' when `target` is a member and the caller may
 * know it; 'ask-public' when the caller is an outsider, who only learns about public memberships
 * (Gitea redirects them to the public-membership check); 404 otherwise.
 */
export async function checkMembership(deps: AppDeps, ctx: OrgContext, viewer: UserRow, target: UserRow): Promise<'member' | 'ask-public'> {
  if (!ctx.member) {
    if (target.id === viewer.id) throw notFound(`${target.name} is not a member of ${ctx.org.name}`)
    return 'ask-public'
  }
  if (!await membershipOf(deps, ctx.org.id, target.id)) throw notFound(`${target.name} is not a member of ${ctx.org.name}`)
  return 'member'
}

/** 404 unless `target` is a public member of the organisation. */
export async function requirePublicMember(deps: AppDeps, ctx: OrgContext, target: UserRow): Promise<void> {
  if (!(await membershipOf(deps, ctx.org.id, target.id))?.isPublic) throw notFound(`${target.name} is not a public member of ${ctx.org.name}`)
}

/**
 * Publicize (`isPublic`) or conceal a membership. A member may change only their own;
 * owners (and site administrators) may also conceal anyone's.
 */
export async function setMemberVisibility(deps: AppDeps, ctx: OrgContext, target: UserRow, isPublic: boolean): Promise<void> {
  const caller = requireOrgMember(ctx)
  if (caller.id !== target.id && (isPublic || !ctx.owner))
    throw forbidden(isPublic ? 'Cannot publicize another member' : 'Cannot conceal another member')
  const membership = await membershipOf(deps, ctx.org.id, target.id)
  if (!membership) throw notFound(`${target.name} is not a member of ${ctx.org.name}`)
  await deps.db.update(orgUsers).set({ isPublic }).where(eq(orgUsers.id, membership.id))
}

/** Message for removing the last member of an Owners team. */
export const lastOwnerMessage = (org: OrgRow, user: UserRow) =>
  `${user.name} is the last owner of organization ${org.name} and cannot be removed; add another owner first`

/**
 * Number of members of the Owners team of `orgId` (read inside the caller's transaction).
 */
export async function ownersCount(deps: AppDeps, orgId: number): Promise<number> {
  return (await deps.db
    .select({ n: count() })
    .from(teamUsers)
    .innerJoin(teams, eq(teams.id, teamUsers.teamId))
    // By the team's organisation (teams_org_name_uq), then each owners' team's members
    // (team_users_pair_uq): team_users.org_id has no index, and SQLite read every membership.
    .where(and(eq(teams.orgId, orgId), sql`${teams.authorize} >= ${AccessMode.Owner}`)))[0]!.n
}

/**
 * Removes `target` from the organisation and from every one of its teams. Owners only: the route
 * declares `org: 'owner'`.
 */
export async function removeMember(deps: AppDeps, ctx: OrgContext, target: UserRow): Promise<void> {
  await removeFromOrg(deps, ctx.org, target)
}

/**
 * Takes `target` out of the organisation and its teams (removeMember's work, and a purged user's
 * memberships, `modules/admin`): 404 when not a member, 422 for its last owner.
 */
export async function removeFromOrg(deps: AppDeps, org: OrgRow, target: UserRow): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const membership = await membershipOf(deps, org.id, target.id)
    if (!membership) throw notFound(`${target.name} is not a member of ${org.name}`)
    if (await isOrgOwner(deps, org.id, target.id) && await ownersCount(deps, org.id) <= 1) throw unprocessable(lastOwnerMessage(org, target))
    const teamIds = (await deps.db
      .select({ id: teamUsers.teamId })
      .from(teamUsers)
      .where(and(eq(teamUsers.orgId, org.id), eq(teamUsers.uid, target.id))))
      .map((r) => r.id)
    if (teamIds.length) {
      await deps.db.update(teams).set({ numMembers: sql`${teams.numMembers} - 1` }).where(inArray(teams.id, teamIds))
      await deps.db.delete(teamUsers).where(and(eq(teamUsers.orgId, org.id), eq(teamUsers.uid, target.id)))
    }
    await deps.db.delete(orgUsers).where(eq(orgUsers.id, membership.id))
    await deps.db.update(users).set({ numMembers: sql`${users.numMembers} - 1` }).where(eq(users.id, org.id))
  })
}

/** Adds `uid` to the organisation if not yet a member (inside the caller's transaction). */
export async function ensureMembership(deps: AppDeps, orgId: number, uid: number): Promise<void> {
  if (await membershipOf(deps, orgId, uid)) return
  await deps.db.insert(orgUsers).values({ orgId, uid, isPublic: false, createdUnix: nowUnix() })
  await deps.db.update(users).set({ numMembers: sql`${users.numMembers} + 1` }).where(eq(users.id, orgId))
}

/** Repositories of the organisation the viewer may read, by name. */
export async function listOrgRepos(deps: AppDeps, org: OrgRow, viewer: UserRow | null, page: Page): Promise<Paged<RepoRow>> {
  return await listOwnedRepos(deps, viewer, org, page)
}

/** May the viewer create repositories in the organisation (owner, or a team allowed to)? */
export async function canCreateOrgRepo(deps: AppDeps, ctx: OrgContext): Promise<boolean> {
  if (!ctx.viewer || !ctx.member) return false
  if (ctx.owner) return true
  return (
    (await deps.db
      .select({ id: teams.id })
      .from(teamUsers)
      .innerJoin(teams, eq(teams.id, teamUsers.teamId))
      .where(and(eq(teamUsers.orgId, ctx.org.id), eq(teamUsers.uid, ctx.viewer.id), eq(teams.canCreateOrgRepo, true))))[0] !== undefined
  )
}

/**
 * The caller who may create repositories in the organisation (created or forked there): 401
 * anonymous, 403 for non-members and members without the right (owner, or a team that may).
 */
export async function requireOrgRepoCreator(deps: AppDeps, ctx: OrgContext): Promise<UserRow> {
  const creator = requireOrgMember(ctx)
  if (!await canCreateOrgRepo(deps, ctx)) throw forbidden('You may not create repositories in this organization')
  return creator
}

/**
 * After `creator` made `repo` in the organisation: one who gets less than admin access through
 * their teams becomes an admin collaborator of it (as in Gitea). Answers the creator's access.
 */
export async function grantOrgRepoCreator(deps: AppDeps, org: OrgRow, creator: UserRow, repo: RepoRow): Promise<AccessMode> {
  const mode = await accessLevel(deps.db, creator, repo, org)
  if (mode >= AccessMode.Admin) return mode
  const now = nowUnix()
  await deps.db
    .insert(collaborations)
    .values({ repoId: repo.id, userId: creator.id, mode: AccessMode.Admin, createdUnix: now, updatedUnix: now })
    .onConflictDoUpdate({ target: [collaborations.repoId, collaborations.userId], set: { mode: AccessMode.Admin, updatedUnix: now } })
  return AccessMode.Admin
}

/** Creates a repository owned by the organisation (see requireOrgRepoCreator, grantOrgRepoCreator). */
export async function createOrgRepo(deps: AppDeps, ctx: OrgContext, opts: NewRepo): Promise<{ repo: RepoRow; mode: AccessMode }> {
  const creator = await requireOrgRepoCreator(deps, ctx)
  const repo = await createRepository(deps, ctx.org, opts)
  return { repo, mode: await grantOrgRepoCreator(deps, ctx.org, creator, repo) }
}

/**
 * Why `userId` may not be deleted as far as organisations are concerned: a clear message when
 * they are the only member of some organisation's Owners team, else null.
 */
export async function userOrgBlockers(deps: AppDeps, userId: number): Promise<string | null> {
  const soleOwnerOf = (await deps.db
    .select({ name: users.name })
    .from(teamUsers)
    .innerJoin(teams, eq(teams.id, teamUsers.teamId))
    .innerJoin(users, eq(users.id, teams.orgId))
    .where(
      and(
        eq(teamUsers.uid, userId),
        sql`${teams.authorize} >= ${AccessMode.Owner}`,
        sql`NOT EXISTS (SELECT 1 FROM team_users o WHERE o.team_id = ${teams.id} AND o.uid != ${userId})`,
      ),
    )
    .orderBy(asc(users.lowerName)))
    .map((r) => r.name)
  if (soleOwnerOf.length === 0) return null
  const list = soleOwnerOf.join(', ')
  return `user is the only owner of organization${soleOwnerOf.length > 1 ? 's' : ''} ${list}; add another owner or delete ${soleOwnerOf.length > 1 ? 'them' : 'it'} first`
}
