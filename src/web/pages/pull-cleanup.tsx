/** @jsxImportSource warren-jsx */
import { and, eq, ne } from 'drizzle-orm'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { AccessMode } from '../../auth/access'
import { branchRulesOf, ruleFor } from '../../auth/protection'
import { gitOfRow, loadRepoContext, type RepoContext } from '../../auth/repo-context'
import type { ApiPull } from '../../convert/pull'
import { issues, pullRequests } from '../../db/schema'
import { getBranchHead, type BranchHead } from '../../git/commits'
import { createBranch, deleteBranch } from '../../modules/branches/changes'
import { ApiError, conflict, forbidden } from '../../lib/errors'
import type { WebContext } from '../context'
import { ButtonForm } from '../forms'

/** A head branch of a merged or closed pull request the reader may delete or restore: its repository's context and name. */
interface Leftover {
  headCtx: RepoContext
  branch: string
}

/**
 * The head repository of a merged or closed pull request when this request's caller may change
 * its branches (a writer there: the visibility rule and access level of `loadRepoContext`; not
 * archived), else the refusal: 409 while the pull request is open, 403 otherwise.
 */
async function headEndOf(deps: AppDeps, request: Request, pull: ApiPull): Promise<Leftover | ApiError> {
  if (!pull.merged && pull.state !== 'closed') return conflict('the pull request is still open')
  const head = pull.head.repo
  if (!head) return conflict('the head repository is gone')
  const headCtx = await loadRepoContext(deps, request, head.owner.login, head.name).catch(() => null)
  if (!headCtx || headCtx.mode < AccessMode.Write || !headCtx.caller.user) return forbidden('you may not change the head repository')
  if (headCtx.repo.isArchived) return conflict('the head repository is archived')
  return { headCtx, branch: pull.head.ref }
}

/** The head end of `pull` for this request's caller (headEndOf) and where its branch is now (null: gone). */
type HeadNow = { found: Leftover; at: BranchHead | null }
async function headNow(deps: AppDeps, request: Request, pull: ApiPull): Promise<HeadNow | ApiError> {
  const found = await headEndOf(deps, request, pull)
  if (found instanceof ApiError) return found
  return { found, at: await getBranchHead(gitOfRow(deps, found.headCtx.repo), found.branch) }
}

/**
 * Why the head branch of `pull` may not be deleted by this request's caller (Gitea's
 * CleanUpPullRequest), or the branch: headEndOf's rules, the branch not its repository's default
 * one nor protected (any protection rule matching it, as Gitea's IsBranchProtected: 403), still
 * at the pull request's head commit (nothing pushed since), and no other open pull request from
 * it. The push path's own protection checks apply at the deletion too.
 */
async function leftoverOf(deps: AppDeps, pull: ApiPull, now: HeadNow | ApiError): Promise<Leftover | ApiError> {
  if (now instanceof ApiError) return now
  const { found, at } = now
  const { headCtx, branch } = found
  if (branch === headCtx.repo.defaultBranch) return conflict("the head branch is its repository's default branch")
  if (ruleFor(await branchRulesOf(deps.db, headCtx.repo.id), branch)) return forbidden(`the head branch ${branch} is protected: it cannot be deleted`)
  if (!at) return conflict('the head branch is already deleted')
  if (at.id !== pull.head.sha) return conflict('the head branch has commits the pull request does not')
  const others = await deps.db
    .select({ id: pullRequests.id })
    .from(pullRequests)
    .innerJoin(issues, eq(issues.id, pullRequests.issueId))
    .where(and(eq(pullRequests.headRepoId, headCtx.repo.id), eq(pullRequests.headBranch, branch), eq(issues.isClosed, false), ne(pullRequests.id, pull.id)))
    .limit(1)
  if (others.length) return conflict('another open pull request uses the head branch')
  return found
}

/**
 * Why the head branch of `pull` may not be restored by this request's caller, or the branch:
 * headEndOf's rules, and no branch of that name there now (409). The branch comes back at the
 * pull request's head commit.
 */
function restorableOf(pull: ApiPull, now: HeadNow | ApiError): Leftover | ApiError {
  if (now instanceof ApiError) return now
  if (!pull.head.sha) return conflict('the head commit of the pull request is not known')
  if (now.at) return conflict(`a branch named ${now.found.branch} exists: there is nothing to restore`)
  return now.found
}

/** Which button the page shows under the merge box: "Delete branch", "Restore branch", or none (the head end and its branch read once). */
export async function headBranchAction(deps: AppDeps, request: Request, pull: ApiPull): Promise<'cleanup' | 'restore' | null> {
  if (!pull.merged && pull.state !== 'closed') return null
  const now = await headNow(deps, request, pull)
  if (!((await leftoverOf(deps, pull, now)) instanceof ApiError)) return 'cleanup'
  if (!(restorableOf(pull, now) instanceof ApiError)) return 'restore'
  return null
}

/** Deletes the head branch of a merged or closed pull request through the branches service (the one push path), or refuses saying why. */
export async function cleanUp(deps: AppDeps, request: Request, pull: ApiPull): Promise<void> {
  const found = await leftoverOf(deps, pull, await headNow(deps, request, pull))
  if (found instanceof ApiError) throw found
  await deleteBranch(deps, found.headCtx, found.headCtx.caller.user!, found.branch)
}

/**
 * Recreates the deleted head branch of a merged or closed pull request at its head commit through
 * the branches service's createBranch (the one push path: protection applies; 409 when the name is
 * taken meanwhile, 404 when the commit is gone), or refuses saying why.
 */
export async function restoreHead(deps: AppDeps, request: Request, pull: ApiPull): Promise<void> {
  const found = restorableOf(pull, await headNow(deps, request, pull))
  if (found instanceof ApiError) throw found
  await createBranch(deps, found.headCtx, found.headCtx.caller.user!, { new_branch_name: found.branch, old_ref_name: pull.head.sha })
}

/** The button under the merge box: the head branch deleted, or restored once it was. */
export const HeadBranchButton = (props: { ctx: WebContext; url: string; branch: string; action: 'cleanup' | 'restore' }): Html => (
  <section class="box cleanup-box" aria-label="Head branch">
    {props.action === 'cleanup' ? (
      <>
        <p>
          The branch <code>{props.branch}</code> can be deleted now.
        </p>
        <ButtonForm ctx={props.ctx} action={`${props.url}/cleanup`} label="Delete branch" danger />
      </>
    ) : (
      <>
        <p>
          The branch <code>{props.branch}</code> was deleted.
        </p>
        <ButtonForm ctx={props.ctx} action={`${props.url}/restore`} label="Restore branch" />
      </>
    )}
  </section>
)
