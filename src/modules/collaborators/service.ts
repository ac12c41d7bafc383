import { and, asc, eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { collaborations, users } from '../../db/schema'
import { accessLevel, accessModeFromName, accessModeName, AccessMode, repoWritersCondition, type RepoRow } from '../../auth/access'
import { visibleOwnerCondition } from '../../auth/visibility'
import { refuseBlockedEitherWay } from '../../auth/blocking'
import { writeTransaction } from '../../db/client'
import type { UserRow } from '../../auth/caller'
import { forbidden, unprocessable } from '../../lib/errors'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { findOwnerByName, getVisibleUserByName, usersPage, type PeopleList } from '../users/service'
import { nowUnix } from '../../lib/time'

/** An individual user named in a collaborator path; 422 when there is none (Gitea's answer). */
export async function collaboratorUser(deps: AppDeps, name: string): Promise<UserRow> {
  const user = await findOwnerByName(deps, name)
  if (!user || user.type !== 0) throw unprocessable(`user does not exist [name: ${name}]`, 'Collaborator')
  return user
}

const COLLABORATORS: PeopleList = { name: 'collaborators', link: collaborations, via: collaborations.userId, where: (of) => eq(collaborations.repoId, of) }

/** One page of a repository's collaborators whom `viewer` may see (ordered by name), with the total. */
export async function listCollaborators(deps: AppDeps, viewer: UserRow | null, repo: RepoRow, page: Page): Promise<Paged<UserRow>> {
  return await usersPage(deps, viewer, COLLABORATORS, repo.id, page)
}

export async function isCollaborator(deps: AppDeps, repo: RepoRow, user: UserRow): Promise<boolean> {
  return !!(await deps.db
    .select({ id: collaborations.id })
    .from(collaborations)
    .where(and(eq(collaborations.repoId, repo.id), eq(collaborations.userId, user.id))))[0]
}

/**
 * Adds `user` as a collaborator with `permission` (read, write or admin; absent = write), or
 * changes the permission of an existing collaborator. The owner cannot be added.
 */
export async function addCollaborator(deps: AppDeps, repo: RepoRow, user: UserRow, permission: string | undefined): Promise<void> {
  const mode = permission === undefined || permission === '' ? AccessMode.Write : accessModeFromName(permission.toLowerCase())
  if (mode === undefined || mode > AccessMode.Admin)
    throw unprocessable(`permission must be one of read, write, admin [permission: ${permission}]`, 'Permission')
  if (user.id === repo.ownerId) throw unprocessable('the repository owner cannot be added as a collaborator', 'Collaborator')
  const now = nowUnix()
  await writeTransaction(deps.db, async () => {
    await refuseBlockedEitherWay(deps.db, user.id, repo.ownerId)
    await deps.db
      .insert(collaborations)
      .values({ repoId: repo.id, userId: user.id, mode, createdUnix: now, updatedUnix: now })
      .onConflictDoUpdate({ target: [collaborations.repoId, collaborations.userId], set: { mode, updatedUnix: now } })
  })
}

/** Removes a collaboration (nothing to do when there is none). */
export async function removeCollaborator(deps: AppDeps, repo: RepoRow, user: UserRow): Promise<void> {
  await deps.db.delete(collaborations).where(and(eq(collaborations.repoId, repo.id), eq(collaborations.userId, user.id)))
}

/**
 * The people an issue of `repo` may be assigned to (Gitea's GetRepoAssignees): active people with
 * write access given to them (repoWritersCondition), by name, those `viewer` may see; a page, or
 * all with `page` null.
 */
export async function listAssignees(deps: AppDeps, viewer: UserRow | null, repo: RepoRow, page: Page | null): Promise<Paged<UserRow>> {
  const where = and(eq(users.type, 0), eq(users.isActive, true), repoWritersCondition(repo), visibleOwnerCondition(viewer))
  return await selectPage(deps.db, users, where, asc(users.lowerName), page)
}

/**
 * What `name` may do in the repository (Gitea's GetRepoPermissions): asked by a site
 * administrator, a repository admin, or the person themself (403 otherwise); 404 for a person
 * the caller may not see.
 */
export async function collaboratorPermission(deps: AppDeps, ctx: { repo: RepoRow; mode: AccessMode }, caller: UserRow, name: string) {
  if (!caller.isAdmin && caller.lowerName !== name.toLowerCase() && ctx.mode < AccessMode.Admin)
    throw forbidden('Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own')
  const user = await getVisibleUserByName(deps, name, caller)
  const mode = await accessLevel(deps.db, user, ctx.repo)
  return { user, permission: accessModeName(mode) }
}

/** The access each of `userIds` has as a collaborator of the repository (one query; absent: none). */
export async function collaboratorModes(deps: AppDeps, repo: RepoRow, userIds: number[]): Promise<Map<number, AccessMode>> {
  if (userIds.length === 0) return new Map()
  const rows = await deps.db
    .select({ userId: collaborations.userId, mode: collaborations.mode })
    .from(collaborations)
    .where(and(eq(collaborations.repoId, repo.id), inArray(collaborations.userId, userIds)))
  return new Map(rows.map((r) => [r.userId, r.mode as AccessMode]))
}
