import type { AppDeps } from '../../deps'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { notFound } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { getBranchHead, listBranchHeads, type BranchHead } from '../../git/commits'

/** A page of the repository's branch heads, by name, with their number (one `git for-each-ref`, read as it arrives). */
export async function branchHeads(deps: AppDeps, ctx: RepoContext, page: Page): Promise<Paged<BranchHead>> {
  const { heads, total } = await listBranchHeads(gitRepoOf(deps, ctx), page)
  // The heads are shared kept records (read only); the page's list is the caller's own.
  return { rows: [...heads], total }
}

/** A branch's head by name (the path's decoded wildcard); 404 when there is no such branch. */
export async function getBranch(deps: AppDeps, ctx: RepoContext, name: string | null) {
  const head = name ? await getBranchHead(gitRepoOf(deps, ctx), name) : null
  if (!head) throw notFound(`branch does not exist [name: ${name ?? ''}]`)
  return head
}
