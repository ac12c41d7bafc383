import { and, asc, desc, eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { issues, pullRequests } from '../../db/schema'
import { accessLevel, AccessMode } from '../../auth/access'
import { findRepoByName, type RepoContext } from '../../auth/repo-context'
import { notFound } from '../../lib/errors'
import type { PullItem } from '../../convert/pull'
import { findPull } from './service'

/**
 * The repository and branch a `{head}` path names (Gitea's GetPullRequestByBaseHead): `branch`
 * (this repository), `owner:branch` (owner's repository of this repository's name, a fork) or
 * `owner/name:branch`. 404 when that repository is unknown or hidden from the caller.
 */
async function headOfPath(deps: AppDeps, ctx: RepoContext, head: string): Promise<{ repoId: number; branch: string }> {
  const colon = head.indexOf(':')
  if (colon < 0) return { repoId: ctx.repo.id, branch: head }
  const named = head.slice(0, colon)
  const slash = named.indexOf('/')
  const [ownerName, repoName] = slash >= 0 ? [named.slice(0, slash), named.slice(slash + 1)] : [named, ctx.repo.name]
  const found = await findRepoByName(deps, ownerName, repoName)
  if (!found || (await accessLevel(deps.db, ctx.caller.user, found.repo, found.owner)) < AccessMode.Read)
    throw notFound(`head repository does not exist [${ownerName}/${repoName}]`)
  return { repoId: found.repo.id, branch: head.slice(colon + 1) }
}

/** Longest `{head}` read: `owner/repo:` and a branch name (at most 255). */
const MAX_HEAD = 512

/**
 * Characters no branch, owner or repository name holds (git check-ref-format refuses them in a
 * ref; PostgreSQL's text cannot even hold a NUL).
 */
const CONTROL = /[\x00-\x1f\x7f]/

/**
 * GET …/pulls/{base}/{head}: the pull request from `head` into branch `base` of this repository.
 * The open one when there is one (at most one is open), else the latest closed or merged one
 * (Gitea answers whichever it finds first); 404 when there is none. `rawHead` is still URL-encoded
 * (the edge's NUL check saw it escaped): a base or head holding a control character names no pull
 * request, 404 before any query.
 */
export async function findPullByBranches(deps: AppDeps, ctx: RepoContext, base: string, rawHead: string): Promise<PullItem> {
  let head: string
  try {
    head = decodeURIComponent(rawHead)
  } catch {
    throw notFound('the head is not a valid branch name')
  }
  if (head.length > MAX_HEAD) throw notFound(`the head is longer than ${MAX_HEAD} characters`)
  if (CONTROL.test(base) || CONTROL.test(head)) throw notFound('pull request does not exist')
  const end = await headOfPath(deps, ctx, head)
  const found = (await deps.db
    .select({ index: pullRequests.index })
    .from(pullRequests)
    .innerJoin(issues, eq(issues.id, pullRequests.issueId))
    .where(
      and(
        eq(pullRequests.baseRepoId, ctx.repo.id),
        eq(pullRequests.baseBranch, base),
        eq(pullRequests.headRepoId, end.repoId),
        eq(pullRequests.headBranch, end.branch),
      ),
    )
    .orderBy(asc(issues.isClosed), desc(pullRequests.index))
    .limit(1))[0]
  if (!found) throw notFound(`pull request does not exist [base: ${base}, head: ${head}]`)
  return findPull(deps, ctx.repo.id, found.index)
}
