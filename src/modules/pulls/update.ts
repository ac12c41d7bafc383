import { and, eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { repositories, type IssueRow, type PullRow } from '../../db/schema'
import { accessLevel, AccessMode, type RepoRow } from '../../auth/access'
import type { UserRow } from '../../auth/caller'
import { gitOfRow, modeIn, type RepoContext } from '../../auth/repo-context'
import { commitTree, conflictSummary, fetchCommitOf, isAncestor, mergeBase, mergeTree, MAX_REBASE_COMMITS, readRef, replayOnto } from '../../git/merge'
import { conflict, forbidden, notFound, unprocessable } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { usersByIds } from '../../convert/people'
import { moveRef, pullHeadRef } from '../../push'
import { branchRulesOf, mayPushTo, ruleFor } from '../../auth/protection'
import { countBetweenRefs } from '../../git/compare'
import type { PullItem } from '../../convert/pull'
import { findPull } from './service'
import { identOf } from './merge'
import { allowsMaintainerEdit } from './settings'

/**
 * Updating a pull request (POST …/pulls/{index}/update, Gitea's UpdatePullRequest): the base
 * branch brought into the head branch, by a merge commit (`merge`, the default) or by replaying
 * the head's commits onto the base (`rebase`). Plumbing only, in the head repository (a fork is
 * sent the base's objects first, no ref written); the head branch then moves through the one
 * push path (moveRef: the push decision, a compare-and-swap, recorded as the updater's push,
 * which re-checks the pull requests it touches).
 */

export type UpdateStyle = 'merge' | 'rebase'

export interface HeadEnd {
  repo: RepoRow
  owner: UserRow
}

async function headOf(deps: AppDeps, ctx: RepoContext, pull: PullRow): Promise<HeadEnd> {
  if (pull.headRepoId === ctx.repo.id) return { repo: ctx.repo, owner: ctx.owner }
  const repo = (await deps.db.select().from(repositories).where(and(eq(repositories.id, pull.headRepoId), eq(repositories.status, 'ready'))))[0]
  const owner = repo && (await usersByIds(deps, [repo.ownerId])).get(repo.ownerId)
  if (!repo || !owner) throw notFound('the head repository of the pull request does not exist any more')
  return { repo, owner }
}

/**
 * Whose access the head branch moves on (Gitea's IsUserAllowedToUpdate): the updater's when
 * they may write to the head repository; else, when the poster allows maintainer edits and the
 * updater may merge into the base, the poster's (`accessOf`); null when neither, or when a
 * protection rule matches the head branch and does not let the updater push to it. `guarded`:
 * such a rule matches (a rebase, which rewrites the branch, is then not offered, as in Gitea).
 */
async function updateAccess(deps: AppDeps, ctx: RepoContext, pull: PullRow, issue: IssueRow, head: HeadEnd, doer: UserRow): Promise<{ accessOf?: UserRow; guarded: boolean } | null> {
  const [mode, rules] = await Promise.all([accessLevel(deps.db, doer, head.repo, head.owner), branchRulesOf(deps.db, head.repo.id)])
  const rule = ruleFor(rules, pull.headBranch)
  if (rule && !(await mayPushTo(deps.db, rule, { user: doer, deployKey: false, mode }))) return null
  if (mode >= AccessMode.Write) return { guarded: !!rule }
  // A maintainer writes the base repository's code (not only its pull requests unit, which `ctx` was
  // loaded for); the head branch's own rule was asked above (Gitea's IsUserAllowedToUpdate, which
  // asks the merge rule of the pull request turned around: the head's).
  if (!allowsMaintainerEdit(pull) || modeIn(ctx, 'repo.code') < AccessMode.Write) return null
  const poster = (await usersByIds(deps, [issue.posterId])).get(issue.posterId)
  if (!poster || (await accessLevel(deps.db, poster, head.repo, head.owner)) < AccessMode.Write) return null
  return { accessOf: poster, guarded: !!rule }
}

/**
 * updateAccess's answer for `style`, or its 403: a rebase also needs the base repository's
 * `allow_rebase_update` and a head branch no protection rule matches.
 */
async function accessForUpdate(deps: AppDeps, ctx: RepoContext, pull: PullRow, issue: IssueRow, head: HeadEnd, doer: UserRow, style: UpdateStyle): Promise<UserRow | undefined> {
  if (style === 'rebase' && !ctx.repo.allowRebaseUpdate) throw forbidden('updating a pull request by rebase is not allowed in this repository')
  const access = await updateAccess(deps, ctx, pull, issue, head, doer)
  if (!access) throw forbidden(`you may not push to the head branch of this pull request (${head.repo.ownerName}/${head.repo.name}:${pull.headBranch})`)
  if (style === 'rebase' && access.guarded) throw forbidden(`the head branch ${pull.headBranch} is protected: it cannot be rebased; update it by merge`)
  return access.accessOf
}

/**
 * What an open pull request's page offers about updating it (Gitea's merge box: "This branch is
 * out-of-date with the base branch"): how many commits of the base branch its head lacks, and
 * whether `doer` may update it by merge and by rebase (updatePull's rules, neither in an archived
 * repository); null when it is merged,
 * closed, not behind, or a branch is gone. Counted in the base repository, where the head commit is
 * (the head branch itself when it is here, else refs/pull/{index}/head).
 */
export async function updateOutlook(deps: AppDeps, ctx: RepoContext, item: PullItem, doer: UserRow | null): Promise<{ behind: number; merge: boolean; rebase: boolean } | null> {
  const { pull, issue } = item
  if (pull.hasMerged || issue.isClosed) return null
  // One git process: the base's commits the head lacks, by the refs' names (none when one is gone).
  const headRef = pull.headRepoId === ctx.repo.id ? `refs/heads/${pull.headBranch}` : pullHeadRef(pull.index)
  const behind = await countBetweenRefs(gitOfRow(deps, ctx.repo), headRef, `refs/heads/${pull.baseBranch}`)
  if (!behind) return null
  const head = doer ? await headOf(deps, ctx, pull).catch(() => null) : null
  // An archived repository takes no update (the route's 423; the push path's refusal in the head's).
  const access = head && doer && !ctx.repo.isArchived && !head.repo.isArchived ? await updateAccess(deps, ctx, pull, issue, head, doer) : null
  return { behind, merge: !!access, rebase: !!access && ctx.repo.allowRebaseUpdate && !access.guarded }
}

/**
 * Brings the base branch into the pull request's head branch. 422 when it is merged or closed;
 * 403 when the caller may not push there; 409 on a conflict (nothing moves) or when a branch
 * moved meanwhile (try again). A head already holding the base is left as it is (200).
 */
export async function updatePull(deps: AppDeps, ctx: RepoContext, index: number, doer: UserRow, style: UpdateStyle): Promise<void> {
  const { pull, issue } = await findPull(deps, ctx.repo.id, index)
  if (pull.hasMerged) throw unprocessable('the pull request has been merged: there is nothing to update')
  if (issue.isClosed) throw unprocessable('the pull request is closed: reopen it to update it')
  const head = await headOf(deps, ctx, pull)
  const accessOf = await accessForUpdate(deps, ctx, pull, issue, head, doer, style)
  const baseGit = gitOfRow(deps, ctx.repo)
  const headGit = gitOfRow(deps, head.repo)
  const baseSha = await readRef(baseGit, `refs/heads/${pull.baseBranch}`)
  if (!baseSha) throw notFound(`the base branch of the pull request does not exist any more (${pull.baseBranch})`)
  const headRef = `refs/heads/${pull.headBranch}`
  const headSha = await readRef(headGit, headRef)
  if (!headSha) throw notFound(`the head branch of the pull request does not exist any more (${pull.headBranch})`)
  if (head.repo.id !== ctx.repo.id && !(await fetchCommitOf(headGit, baseGit.gitDir, pull.baseBranch, baseSha)))
    throw conflict('the base branch moved while the pull request was being updated; try again')
  await bringIn(deps, head, doer, { ref: headRef, sha: headSha, branch: pull.headBranch }, { sha: baseSha, branch: pull.baseBranch }, style, accessOf)
}

/**
 * Brings commit `from.sha` (already in the head repository) into `into.ref`, whose tip was
 * `into.sha`: nothing when it holds it already ('none'), a fast-forward when `fastForward` and the
 * branch is behind, else a merge commit or the branch's commits replayed onto it (`style`). The
 * ref moves through the one push path (moveRef: protection rules apply), as `doer`'s push on
 * `accessOf`'s access. 409 on a conflict, no shared history, or a branch moved meanwhile.
 */
export async function bringIn(
  deps: AppDeps,
  head: HeadEnd,
  doer: UserRow,
  into: { ref: string; sha: string; branch: string },
  from: { sha: string; branch: string },
  style: UpdateStyle,
  accessOf?: UserRow,
  fastForward = false,
): Promise<'none' | 'fast-forward' | UpdateStyle> {
  const headGit = gitOfRow(deps, head.repo)
  if (await isAncestor(headGit, from.sha, into.sha)) return 'none'
  if (!(await mergeBase(headGit, into.sha, from.sha))) throw conflict('the head and base branches share no history: there is nothing to merge them on')
  let tip: string
  let made: 'fast-forward' | UpdateStyle = style
  if (fastForward && (await isAncestor(headGit, into.sha, from.sha))) {
    tip = from.sha
    made = 'fast-forward'
  } else if (style === 'rebase') {
    const replayed = await replayOnto(headGit, from.sha, into.sha, identOf(deps, doer, nowUnix()))
    if ('tooMany' in replayed) throw unprocessable(`a rebase replays at most ${MAX_REBASE_COMMITS} commits; update by merge instead`)
    if ('conflicts' in replayed) throw conflict(`rebase failed because of conflict (${conflictSummary(replayed.conflicts)})`)
    tip = replayed.tip
  } else {
    const merged = await mergeTree(headGit, into.sha, from.sha)
    if (merged.conflicts.length) throw conflict(`merge failed because of conflict (${conflictSummary(merged.conflicts)})`)
    tip = await commitTree(headGit, merged.tree, [into.sha, from.sha], `Merge branch '${from.branch}' into ${into.branch}`, identOf(deps, doer, nowUnix()))
  }
  const moved = await moveRef(deps, head, doer, { ref: into.ref, old: into.sha, new: tip }, undefined, accessOf)
  if (!moved) throw conflict('the branch moved while it was being updated; try again')
  return made
}
