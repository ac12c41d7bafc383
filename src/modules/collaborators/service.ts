import { and, eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { collaborations } from '../../db/schema'
import { accessModeFromName, AccessMode, type RepoRow } from '../../auth/access'
import type { UserRow } from '../../auth/caller'
import { unprocessable } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { findOwnerByName, usersPage } from '../users/service'
import { nowUnix } from '../../lib/time'

/** An individual user named in a collaborator path; 422 when there is none (Gitea's answer). */
export async function collaboratorUser(deps: AppDeps, name: string): Promise<UserRow> {
  const user = await findOwnerByName(deps, name)
  if (!user || user.type !== 0) throw unprocessable(`user does not exist [name: ${name}]`, 'Collaborator')
  return user
}

/** One page of a repository's collaborators whom `viewer` may see (ordered by name), with the total. */
export async function listCollaborators(deps: AppDeps, viewer: UserRow | null, repo: RepoRow, page: Page): Promise<Paged<UserRow>> {
  return await usersPage(deps, viewer, collaborations, collaborations.userId, eq(collaborations.repoId, repo.id), page)
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
  await deps.db
    .insert(collaborations)
    .values({ repoId: repo.id, userId: user.id, mode, createdUnix: now, updatedUnix: now })
    .onConflictDoUpdate({ target: [collaborations.repoId, collaborations.userId], set: { mode, updatedUnix: now } })
}

/** Removes a collaboration (nothing to do when there is none). */
export async function removeCollaborator(deps: AppDeps, repo: RepoRow, user: UserRow): Promise<void> {
  await deps.db.delete(collaborations).where(and(eq(collaborations.repoId, repo.id), eq(collaborations.userId, user.id)))
}
