import { and, eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { repositories } from '../../db/schema'
import { accessLevel, AccessMode } from '../../auth/access'
import type { UserRow } from '../../auth/caller'
import { gitOfRow, type RepoContext } from '../../auth/repo-context'
import { fetchCommitOf, readRef } from '../../git/merge'
import { isSafeRefName } from '../../git/ref-name'
import { badRequest, conflict, notFound } from '../../lib/errors'
import { usersByIds } from '../../convert/people'
import { bringIn } from '../pulls/update'

/**
 * POST /repos/{o}/{r}/merge-upstream (Gitea's MergeUpstream): the fork's `branch` brought up to
 * its parent's branch of the same name: a fast-forward when the fork's branch is behind, else a
 * merge commit (Gitea merges too, as a pull request's update does). The parent's objects are
 * copied in first (no ref written), the branch then moves through the one push path, so the
 * fork's branch protection applies. 400 for a repository that is no fork, 404 for a branch
 * missing on either side or a parent the caller may not read, 409 on a conflict.
 */
export async function mergeUpstream(deps: AppDeps, ctx: RepoContext, doer: UserRow, branch: string): Promise<'fast-forward' | 'merge'> {
  if (!ctx.repo.isFork || !ctx.repo.forkId) throw badRequest('repository is not a fork')
  if (!isSafeRefName(branch)) throw notFound(`branch does not exist [name: ${branch}]`)
  const parent = (await deps.db.select().from(repositories).where(and(eq(repositories.id, ctx.repo.forkId), eq(repositories.status, 'ready'))))[0]
  const parentOwner = parent && (await usersByIds(deps, [parent.ownerId])).get(parent.ownerId)
  if (!parent || !parentOwner || (await accessLevel(deps.db, doer, parent, parentOwner)) < AccessMode.Read)
    throw notFound('the parent repository does not exist')
  const forkGit = gitOfRow(deps, ctx.repo)
  const parentGit = gitOfRow(deps, parent)
  const ref = `refs/heads/${branch}`
  const upstream = await readRef(parentGit, ref)
  if (!upstream) throw notFound(`branch does not exist in the parent repository [name: ${branch}]`)
  const mine = await readRef(forkGit, ref)
  if (!mine) throw notFound(`branch does not exist [name: ${branch}]`)
  if (!(await fetchCommitOf(forkGit, parentGit.gitDir, branch, upstream))) throw conflict('the parent branch moved meanwhile; try again')
  const made = await bringIn(deps, { repo: ctx.repo, owner: ctx.owner }, doer, { ref, sha: mine, branch }, { sha: upstream, branch: `${parentOwner.name}/${parent.name}:${branch}` }, 'merge', undefined, true)
  // A branch holding its parent's already: nothing moved, as Gitea's push of an equal ref ("fast-forward").
  return made === 'merge' ? 'merge' : 'fast-forward'
}
