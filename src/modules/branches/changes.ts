import { and, desc, eq, inArray, or } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { AccessMode } from '../../auth/access'
import { gitOfRow, type RepoContext } from '../../auth/repo-context'
import { writeTransaction } from '../../db/client'
import { events, issues, pullRequests, repositories } from '../../db/schema'
import { recordIssueEvent } from '../../events/issue-events'
import { ZERO_ID } from '../../events/push-events'
import { getBranchHead, type BranchHead } from '../../git/commits'
import { pushRefProblem } from '../../git/push-commands'
import { branchExists, refNameClash, resolveCommitish, setHeadBranch, tagCommit } from '../../git/refs'
import { moveRef, moveRefs } from '../../push'
import { conflict, forbidden, notFound, unprocessable } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { setClosed } from '../issues/state'

/**
 * Branches made, deleted and renamed through the API (Gitea's CreateBranch, DeleteBranch and
 * UpdateBranch with services/repository's rules), every ref move through the one push path
 * (moveRef / moveRefs: the push decision refuses what a git push could not do, the ref.created /
 * ref.deleted / push events name the caller, webhooks and pull request checks follow from them).
 * Gitea refuses these in an empty repository (404) and in a mirror (403), whose branches follow
 * their remote; archived repositories are refused by the pipeline (423).
 */

/** A branch name the API can serve (git's check-ref-format rules, no component starting with `-`), else 422. */
function checkBranchName(name: string, field: string): string {
  if (name === '') throw unprocessable('Required', field)
  if (!name.isWellFormed() || pushRefProblem(`refs/heads/${name}`)) throw unprocessable(`invalid branch name [name: ${name.toWellFormed()}]`, field)
  return name
}

/** What Gitea answers before any branch change: 404 in an empty repository, 403 in a mirror. */
function checkChangeable(ctx: RepoContext): void {
  if (ctx.repo.isEmpty) throw notFound('Git Repository is empty.')
  if (ctx.repo.isMirror) throw forbidden('Git Repository is a mirror.')
}


export interface BranchInput {
  new_branch_name: string
  old_branch_name?: string
  old_ref_name?: string
}

/** The commit a new branch starts from: `old_ref_name` (branch, tag or commit), else `old_branch_name`, else the default branch; 404 when none. */
async function sourceCommit(deps: AppDeps, ctx: RepoContext, input: BranchInput): Promise<string> {
  const repo = gitOfRow(deps, ctx.repo)
  if (input.old_ref_name) {
    const commit = await resolveCommitish(repo, input.old_ref_name)
    if (!commit) throw notFound(`The old ref does not exist [name: ${input.old_ref_name}]`)
    return commit
  }
  const head = await getBranchHead(repo, input.old_branch_name || ctx.repo.defaultBranch)
  if (!head) throw notFound('The old branch does not exist')
  return head.id
}

/**
 * Creates a branch (Gitea's CreateBranch): 422 for a name the API could not serve, 404 for an
 * unknown source, 409 when the branch exists, when a tag has its name, or when a branch stands
 * where it would go (`a` beside `a/b`). Answers the new branch's head.
 */
export async function createBranch(deps: AppDeps, ctx: RepoContext, actor: UserRow, input: BranchInput): Promise<BranchHead> {
  checkChangeable(ctx)
  const name = checkBranchName(input.new_branch_name, 'BranchName')
  const commit = await sourceCommit(deps, ctx, input)
  const repo = gitOfRow(deps, ctx.repo)
  if (await branchExists(repo, name)) throw conflict('The branch already exists.')
  if (await tagCommit(repo, name)) throw conflict('The branch with the same tag already exists.')
  if (await refNameClash(repo, 'heads', name)) throw conflict('The branch with the same name already exists.')
  if (!(await moveRef(deps, ctx, actor, { ref: `refs/heads/${name}`, old: ZERO_ID, new: commit }))) throw conflict('The branch already exists.')
  const head = await getBranchHead(repo, name)
  if (!head) throw conflict('The branch was deleted meanwhile.')
  return head
}

/**
 * Deletes a branch (Gitea's DeleteBranch): 403 for the default branch, 404 when there is none,
 * 409 when it moved while being deleted (that push is kept). Then, as Gitea after a branch's
 * deletion, the open pull requests it was the head or the base of are closed by the deleter.
 */
export async function deleteBranch(deps: AppDeps, ctx: RepoContext, actor: UserRow, name: string | null): Promise<void> {
  checkChangeable(ctx)
  if (name === ctx.repo.defaultBranch) throw forbidden('can not delete default branch')
  const head = name ? await getBranchHead(gitOfRow(deps, ctx.repo), name) : null
  if (!name || !head) throw notFound(`branch does not exist [name: ${name ?? ''}]`)
  if (!(await moveRef(deps, ctx, actor, { ref: `refs/heads/${name}`, old: head.id, new: ZERO_ID })))
    throw conflict(`branch ${name} changed while it was being deleted`)
  await closeBranchPulls(deps, ctx.repo.id, name, actor)
}

/** Closes the open, unmerged pull requests of `repoId` whose head or base is `branch` (Gitea's CloseBranchPulls), each with `issue.closed` by `actor`. */
async function closeBranchPulls(deps: AppDeps, repoId: number, branch: string, actor: UserRow): Promise<void> {
  const touched = or(
    and(eq(pullRequests.headRepoId, repoId), eq(pullRequests.headBranch, branch)),
    and(eq(pullRequests.baseRepoId, repoId), eq(pullRequests.baseBranch, branch)),
  )
  const pulls = await deps.db.select({ issueId: pullRequests.issueId }).from(pullRequests).where(and(touched, eq(pullRequests.hasMerged, false)))
  if (!pulls.length) return
  const now = nowUnix()
  await writeTransaction(deps.db, async () => {
    const open = await deps.db.select().from(issues).where(and(inArray(issues.id, pulls.map((p) => p.issueId)), eq(issues.isClosed, false)))
    for (const issue of open) {
      // One blocked by open dependencies stays open, as Gitea's CloseBranchPulls leaves it.
      if (!(await setClosed(deps, issue, true, now, 'skip'))) continue
      await deps.db.update(issues).set({ updatedUnix: now }).where(eq(issues.id, issue.id))
      await recordIssueEvent(deps.db, issue, actor.id, 'issue.closed')
    }
  })
}

/**
 * Renames a branch (Gitea's RenameBranch): 422 for a bad new name, or one that is the old name or
 * an existing branch; 404 when the branch does not exist; 403 for the default branch unless the
 * caller administers the repository. The old ref is deleted and the new one created in one push
 * (one git transaction, or one after the other for nested names); once they moved, in one transaction, the unmerged pull requests whose
 * head or base it was follow the new name, and so does the default branch (and HEAD).
 */
export async function renameBranch(deps: AppDeps, ctx: RepoContext, actor: UserRow, from: string | null, rawTo: string): Promise<void> {
  checkChangeable(ctx)
  const to = checkBranchName(rawTo, 'Name')
  const repo = gitOfRow(deps, ctx.repo)
  if (from === to || (await branchExists(repo, to)))
    throw unprocessable('Cannot rename a branch using the same name or rename to a branch that already exists.')
  const head = from ? await getBranchHead(repo, from) : null
  if (!from || !head) throw notFound("Branch doesn't exist.")
  const isDefault = from === ctx.repo.defaultBranch
  if (isDefault && ctx.mode < AccessMode.Admin) throw forbidden('User must be a repo or site admin to rename default or protected branches.')
  const create = { ref: `refs/heads/${to}`, old: ZERO_ID, new: head.id }
  const remove = { ref: `refs/heads/${from}`, old: head.id, new: ZERO_ID }
  // A name below or above the old one (`a` and `a/b`) cannot be made while the other exists:
  // git's one transaction refuses it, so the old ref goes first (put back if the new one fails).
  const nested = to.startsWith(from + '/') || from.startsWith(to + '/')
  const moved = await moveRefs(deps, ctx, actor, nested ? [remove, create] : [create, remove], async (done) => {
    if (!done) return
    // Before the move is recorded: the pull requests are re-checked under their new branch name.
    await writeTransaction(deps.db, async () => {
      await deps.db
        .update(pullRequests)
        .set({ baseBranch: to })
        .where(and(eq(pullRequests.baseRepoId, ctx.repo.id), eq(pullRequests.baseBranch, from), eq(pullRequests.hasMerged, false)))
      await deps.db
        .update(pullRequests)
        .set({ headBranch: to })
        .where(and(eq(pullRequests.headRepoId, ctx.repo.id), eq(pullRequests.headBranch, from), eq(pullRequests.hasMerged, false)))
      if (isDefault) await deps.db.update(repositories).set({ defaultBranch: to }).where(eq(repositories.id, ctx.repo.id))
    })
    if (isDefault) await setHeadBranch(repo, to)
  }, { inTurn: nested })
  // Not moved: the branch moved meanwhile, or git refused the new name beside the other branches.
  if (!moved) throw conflict(`branch ${from} could not be renamed to ${to}: it changed meanwhile, or a branch stands in the way`)
}

/**
 * Deleted branches, for their restoring (Gitea's deleted branches, `branch_id`): the outbox's
 * `ref.deleted` event of a branch is the record, whichever way it went (a push, the API, the
 * web), with its name and last commit; event ids are never reused and events are kept.
 */
export interface DeletedBranch {
  id: number
  name: string
  commit: string
}

const deletionOf = (row: { id: number; payload: string }): DeletedBranch | null => {
  const p = JSON.parse(row.payload) as { ref?: unknown; refType?: unknown; sha?: unknown }
  return p.refType === 'branch' && typeof p.ref === 'string' && typeof p.sha === 'string' ? { id: row.id, name: p.ref, commit: p.sha } : null
}

/** The deletion `id` recorded of a branch of this repository, else null. */
export async function deletedBranch(deps: AppDeps, ctx: RepoContext, id: number): Promise<DeletedBranch | null> {
  if (!Number.isSafeInteger(id) || id < 1) return null
  const [row] = await deps.db
    .select({ id: events.id, payload: events.payload })
    .from(events)
    .where(and(eq(events.id, id), eq(events.repoId, ctx.repo.id), eq(events.kind, 'ref.deleted')))
  return row ? deletionOf(row) : null
}

/** The latest recorded deletion of branch `name` by `actor` (just made: among their latest few), else null. */
export async function latestDeletion(deps: AppDeps, ctx: RepoContext, actor: UserRow, name: string): Promise<DeletedBranch | null> {
  const rows = await deps.db
    .select({ id: events.id, payload: events.payload })
    .from(events)
    .where(and(eq(events.repoId, ctx.repo.id), eq(events.kind, 'ref.deleted'), eq(events.actorId, actor.id)))
    // The actor's latest events first, through events_actor_idx (actor_id, created_unix): by id
    // alone PostgreSQL walked the primary key from the site's newest event, every event of the
    // site when the actor had fewer than five deletions here.
    .orderBy(desc(events.createdUnix), desc(events.id))
    .limit(5)
  return rows.map(deletionOf).find((d) => d?.name === name) ?? null
}

/**
 * Restores a deleted branch at its last commit (Gitea's RestoreBranchPost) as createBranch makes
 * one: 404 when no such deletion was recorded here or its commit is gone, 409 when a branch of
 * that name exists again. Answers the branch's name.
 */
export async function restoreBranch(deps: AppDeps, ctx: RepoContext, actor: UserRow, id: number): Promise<string> {
  const gone = await deletedBranch(deps, ctx, id)
  if (!gone) throw notFound('The deleted branch does not exist.')
  await createBranch(deps, ctx, actor, { new_branch_name: gone.name, old_ref_name: gone.commit })
  return gone.name
}
