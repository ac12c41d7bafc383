import { and, eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { accessLevel, type RepoRow } from '../../auth/access'
import { repositories, users } from '../../db/schema'
import { notFound, unprocessable } from '../../lib/errors'
import { deleteRepository } from '../repos/edit'

/**
 * A ready repository by its id with its owner, for the site administrator's repository list: 404
 * when either is gone or the repository is not ready (being created, migrated or adopted), as
 * the API's lookups answer.
 */
export async function repoWithOwnerById(deps: AppDeps, id: number): Promise<{ repo: RepoRow; owner: UserRow }> {
  if (!Number.isSafeInteger(id) || id < 1) throw notFound('no such repository')
  const repo = (await deps.db.select().from(repositories).where(and(eq(repositories.id, id), eq(repositories.status, 'ready'))))[0]
  const owner = repo && (await deps.db.select().from(users).where(eq(users.id, repo.ownerId)))[0]
  if (!repo || !owner) throw notFound('no such repository')
  return { repo, owner }
}

/**
 * Deletes repository `id` from the site administration's list (Gitea's `/-/admin/repos/delete`):
 * only once `confirm` is its full name (any case), through the one repository deletion at the
 * access the rule gives the caller (a site administrator's: owner).
 */
export async function deleteRepositoryConfirmed(deps: AppDeps, admin: UserRow, id: number, confirm: string): Promise<RepoRow> {
  const { repo, owner } = await repoWithOwnerById(deps, id)
  const full = `${owner.name}/${repo.name}`
  if (confirm.trim().toLowerCase() !== full.toLowerCase()) throw unprocessable(`Type the repository's full name, ${full}, to delete it.`)
  await deleteRepository(deps, repo, await accessLevel(deps.db, admin, repo, owner), admin)
  return repo
}
