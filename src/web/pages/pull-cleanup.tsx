/** @jsxImportSource warren-jsx */
import { and, eq, ne } from 'drizzle-orm'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { AccessMode } from '../../auth/access'
import { gitOfRow, loadRepoContext, type RepoContext } from '../../auth/repo-context'
import type { ApiPull } from '../../convert/pull'
import { issues, pullRequests } from '../../db/schema'
import { getBranchHead } from '../../git/commits'
import { deleteBranch } from '../../modules/branches/changes'
import { conflict, forbidden } from '../../lib/errors'
import type { WebContext } from '../context'
import { ButtonForm } from '../forms'

/** A head branch a merged or closed pull request leaves, the reader may delete: its repository's context and name. */
interface Leftover {
  headCtx: RepoContext
  branch: string
}

/**
 * Why the head branch of `pull` may not be deleted by this request's caller (Gitea's
 * CleanUpPullRequest), or the branch: the pull request merged or closed, the head repository
 * writable by them (the visibility rule and access level of `loadRepoContext`) and not archived,
 * the branch not its default one, still at the pull request's head commit (nothing pushed since),
 * and no other open pull request from it. Protection is the push path's, at the deletion.
 */
async function leftoverOf(deps: AppDeps, request: Request, pull: ApiPull): Promise<Leftover | string> {
  if (!pull.merged && pull.state !== 'closed') return 'the pull request is still open'
  const head = pull.head.repo
  if (!head) return 'the head repository is gone'
  const headCtx = await loadRepoContext(deps, request, head.owner.login, head.name).catch(() => null)
  if (!headCtx || headCtx.mode < AccessMode.Write || !headCtx.caller.user) return 'you may not change the head repository'
  if (headCtx.repo.isArchived) return 'the head repository is archived'
  const branch = pull.head.ref
  if (branch === headCtx.repo.defaultBranch) return 'the head branch is its repository\'s default branch'
  const at = await getBranchHead(gitOfRow(deps, headCtx.repo), branch)
  if (!at) return 'the head branch is already deleted'
  if (at.id !== pull.head.sha) return 'the head branch has commits the pull request does not'
  const others = await deps.db
    .select({ id: pullRequests.id })
    .from(pullRequests)
    .innerJoin(issues, eq(issues.id, pullRequests.issueId))
    .where(and(eq(pullRequests.headRepoId, headCtx.repo.id), eq(pullRequests.headBranch, branch), eq(issues.isClosed, false), ne(pullRequests.id, pull.id)))
    .limit(1)
  if (others.length) return 'another open pull request uses the head branch'
  return { headCtx, branch }
}

/** Whether the "Delete branch" button shows (the caller may delete the head branch now). */
export async function mayCleanUp(deps: AppDeps, request: Request, pull: ApiPull): Promise<boolean> {
  return typeof (await leftoverOf(deps, request, pull)) !== 'string'
}

/** Deletes the head branch of a merged or closed pull request through the branches service (the one push path), or refuses saying why. */
export async function cleanUp(deps: AppDeps, request: Request, pull: ApiPull): Promise<void> {
  const found = await leftoverOf(deps, request, pull)
  if (typeof found === 'string') throw found.startsWith('you may not') ? forbidden(found) : conflict(found)
  await deleteBranch(deps, found.headCtx, found.headCtx.caller.user!, found.branch)
}

/** The button under the merge box. */
export const CleanUpButton = (props: { ctx: WebContext; action: string; branch: string }): Html => (
  <section class="box cleanup-box" aria-label="Head branch">
    <p>
      The branch <code>{props.branch}</code> can be deleted now.
    </p>
    <ButtonForm ctx={props.ctx} action={props.action} label="Delete branch" danger />
  </section>
)
