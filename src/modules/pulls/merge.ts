import { and, eq, inArray, isNotNull } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { claimWork, repairAbandoned, writeTransaction } from '../../db/client'
import { pullRequests, repositories, type IssueRow, type PullRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import type { RepoRow } from '../../auth/access'
import type { RepoContext } from '../../auth/repo-context'
import { commitTree, conflictSummary, identNow, isAncestor, mergeTree, MAX_REBASE_COMMITS, readRef, replayOnto, type Ident } from '../../git/merge'
import { git, type GitRepo } from '../../git/run'
import { ApiError, conflict } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { errorFields, loggedFailures, loggerOf } from '../../lib/log'
import { gitIdentityOf } from '../../convert/user'
import { moveRefs, pullHeadRef } from '../../push'
import { mergeGate, mergeGateRefusal, type MergeBlocker } from './gates'
import { usersByIds } from '../../convert/people'
import { findPull, recordMerged, pullById } from './service'
import { syncPullHeadRef } from './mergeability'
import { gitOfRow } from '../../auth/repo-context'
import { MERGE_STYLES, type MergeStyle } from './model'
import type { PullItem } from '../../convert/pull'
import { isBlocked } from '../issues/state'

/**
 * Merging a pull request with git plumbing only, never a work tree:
 * 1. the head is brought into the base repository (refs/pull/<index>/head);
 * 2. the new commit(s) of the chosen style are written (merge-tree --write-tree, commit-tree);
 * 3. the merge's intent (the new commit, the base's old commit) is recorded on the pull request;
 * 4. the base branch moves through the one push path (moveRef: the push decision, then a
 *    compare-and-swap `update-ref` recorded as a push of the merger: push events, other pull
 *    requests re-checked); a push that landed meanwhile makes the swap fail: the merge answers
 *    409 (try again) and that push is kept;
 * 5. the pull request is marked merged and closed, with `pull.merged`.
 * A crash between 3 and 5 leaves the intent (and the pending push of 4): repairPullMerges marks
 * the pull request merged when the intended commit is on the base branch, and drops the intent
 * otherwise; the push is recorded by the push repairs. Both run at start and, while other
 * processes serve on PostgreSQL, in the one running the repairs once the merge's claim is gone.
 */

/** Whether the repository's settings allow a style (Gitea's IsMergeStyleAllowed; none with pull requests off). */
const MERGE_ALLOWED: Record<MergeStyle | 'fast-forward-only' | 'manually-merged', (repo: RepoRow) => boolean> = {
  merge: (r) => r.hasPullRequests && r.allowMergeCommits,
  rebase: (r) => r.hasPullRequests && r.allowRebase,
  'rebase-merge': (r) => r.hasPullRequests && r.allowRebaseExplicit,
  squash: (r) => r.hasPullRequests && r.allowSquashMerge,
  'fast-forward-only': (r) => r.hasPullRequests && r.allowFastForwardOnlyMerge,
  'manually-merged': (r) => r.hasPullRequests && r.allowManualMerge,
}

const notAllowed = (message: string) => new ApiError(405, message)

/** A user as git records them (gitIdentityOf), at `when`. */
export function identOf(deps: AppDeps, user: UserRow, when: number): Ident {
  const { name, email } = gitIdentityOf(deps.config, user)
  return identNow(name, email, when)
}

export interface MergeRequest {
  style: MergeStyle
  /** First line of the merge (or squash) commit; Gitea's default when empty. */
  title?: string
  /** Appended after a blank line. */
  message?: string
  /** Refuse unless the head is still this commit. */
  headCommitId?: string
  /** A repository admin merges past unmet protection rules (Gitea's force_merge). */
  force?: boolean
  /**
   * Asked inside the transaction that writes the merge's intent (a scheduled merge: is it still
   * scheduled?): false refuses the merge (409), so a cancel that came meanwhile is never merged past.
   */
  stillWanted?: () => Promise<boolean>
}

/** Gitea's default first line of the commit a style writes (rebase writes none of its own). */
function defaultTitle(pull: PullRow, title: string, headRepo: RepoRow | undefined, style: MergeStyle): string {
  if (style === 'squash') return `${title} (#${pull.index})`
  const from = pull.headRepoId === pull.baseRepoId || !headRepo ? pull.headBranch : `${headRepo.ownerName}/${headRepo.name}:${pull.headBranch}`
  return `Merge pull request '${title}' (#${pull.index}) from ${from} into ${pull.baseBranch}`
}

/**
 * The new tip of the base branch for `style`, written as objects (nothing references it yet).
 * 405 when the branches conflict.
 */
async function writeMerge(
  repo: GitRepo,
  style: MergeStyle,
  baseSha: string,
  headSha: string,
  message: string,
  doer: Ident,
  poster: Ident,
): Promise<string> {
  const conflicting = (paths: string[]) => notAllowed(`the pull request cannot be merged: it conflicts with the base branch (${conflictSummary(paths)})`)
  if (style === 'merge' || style === 'squash') {
    const merged = await mergeTree(repo, baseSha, headSha)
    if (merged.conflicts.length) throw conflicting(merged.conflicts)
    // Squash: one commit on the base, authored by the pull request's poster (as Gitea), committed by the merger.
    return style === 'merge' ? commitTree(repo, merged.tree, [baseSha, headSha], message, doer) : commitTree(repo, merged.tree, [baseSha], message, poster, doer)
  }
  if (style === 'fast-forward-only') {
    // The base moves to the head itself: only when the head already holds every base commit.
    if (!(await isAncestor(repo, baseSha, headSha))) throw notAllowed('the pull request cannot be fast-forwarded: the base branch has commits the head branch lacks (update the head branch first)')
    return headSha
  }
  // rebase / rebase-merge: the head's commits replayed onto the base (merges dropped, commits
  // that become empty skipped, as `git rebase`); none rewritten when the base has not moved.
  const replayed = await replayOnto(repo, baseSha, headSha, doer)
  if ('tooMany' in replayed) throw notAllowed(`a rebase replays at most ${MAX_REBASE_COMMITS} commits; merge or squash this pull request instead`)
  if ('conflicts' in replayed) throw conflicting(replayed.conflicts)
  const tip = replayed.tip
  if (style === 'rebase') return tip
  const tree = (await git(['rev-parse', '--verify', `${tip}^{tree}`], repo)).trim()
  return commitTree(repo, tree, [baseSha, tip], message, doer)
}

/** A pull request about to be merged: what mergePull checked and read before writing anything. */
export interface MergeCandidate {
  pull: PullRow
  issue: IssueRow
  repo: GitRepo
  baseRef: string
  baseSha: string
  headSha: string
}

/** Why the pull request's own state refuses a merge (405, or 409 while another merge runs), or null. */
function stateRefusal({ pull, issue }: PullItem): ApiError | null {
  if (pull.hasMerged) return notAllowed('the pull request has already been merged')
  if (issue.isClosed) return notAllowed('the pull request is closed')
  if (pull.mergeIntent) return conflict('the pull request is being merged; try again')
  if (pull.status === 'conflict') return notAllowed('the pull request cannot be merged: it conflicts with the base branch')
  return null
}

/** Gitea's ErrDependenciesLeft on a merge: the pull request depends on issues still open (405), or null. */
async function blockedRefusal(deps: AppDeps, issue: IssueRow): Promise<ApiError | null> {
  return (await isBlocked(deps, issue)) ? notAllowed('the pull request is blocked by open dependencies: close the issues it depends on first') : null
}

/** The merge styles the repository allows (Gitea's IsMergeStyleAllowed), in Gitea's order. */
export const allowedMergeStyles = (repo: RepoRow): MergeStyle[] => MERGE_STYLES.filter((style) => MERGE_ALLOWED[style](repo))

/**
 * What a merge by `doer` would meet now, without merging (the web's merge box): the styles
 * allowed, and the first refusal of the same checks mergePull makes (the pull request's state,
 * the branches, the base's protection through mergeGate), with whether force_merge would pass it.
 * The head is read as recorded, not fetched: the box is a reading.
 */
export async function mergeOutlook(deps: AppDeps, ctx: RepoContext, item: PullItem, doer: UserRow | null): Promise<{ styles: MergeStyle[]; blocker: MergeBlocker | null }> {
  const styles = allowedMergeStyles(ctx.repo)
  const refusal = stateRefusal(item) ?? (await blockedRefusal(deps, item.issue))
  if (refusal) return { styles, blocker: { message: refusal.message, forcible: false } }
  if (styles.length === 0) return { styles, blocker: { message: 'no merge style is allowed in this repository', forcible: false } }
  const repo = gitOfRow(deps, ctx.repo)
  const baseSha = await readRef(repo, `refs/heads/${item.pull.baseBranch}`)
  if (!baseSha) return { styles, blocker: { message: 'the base branch of the pull request does not exist any more', forcible: false } }
  const headSha = (await readRef(repo, pullHeadRef(item.pull.index))) ?? item.pull.headSha
  if (!headSha) return { styles, blocker: { message: 'the head branch of the pull request does not exist any more', forcible: false } }
  if (!doer) return { styles, blocker: null }
  return { styles, blocker: await mergeGate(deps, ctx, item.pull, doer, repo, { base: baseSha, head: headSha }) }
}

/**
 * What a merge (or a scheduled one) checks before the gates of the base branch's protection: 405
 * when it is closed, merged, conflicting, a branch is gone or the style is not allowed; 409 when
 * another merge of it is under way or the head is not `headCommitId`.
 */
export async function mergeCandidate(deps: AppDeps, ctx: RepoContext, index: number, req: Pick<MergeRequest, 'style' | 'headCommitId'>): Promise<MergeCandidate> {
  const { pull, issue } = await findPull(deps, ctx.repo.id, index)
  const refusal = stateRefusal({ pull, issue }) ?? (await blockedRefusal(deps, issue))
  if (refusal) throw refusal
  if (!MERGE_ALLOWED[req.style](ctx.repo)) throw notAllowed(`merge style "${req.style}" is not allowed in this repository`)
  const repo = gitOfRow(deps, ctx.repo)
  // The base is read first: whatever moves it from here on makes the compare-and-swap fail.
  const baseRef = `refs/heads/${pull.baseBranch}`
  const baseSha = await readRef(repo, baseRef)
  if (!baseSha) throw notAllowed('the base branch of the pull request does not exist any more')
  const headSha = await syncPullHeadRef(deps, pull, ctx.repo)
  if (!headSha) throw notAllowed('the head branch of the pull request does not exist any more')
  if (req.headCommitId && req.headCommitId !== headSha) throw conflict('the head branch moved: it is not at head_commit_id any more')
  return { pull, issue, repo, baseRef, baseSha, headSha }
}

/**
 * Merges a pull request (POST …/pulls/{index}/merge; the route checked write access): refused as
 * mergeCandidate says, then by the base branch's protection (405 with the reason); 409 when the
 * base moved during the merge (a concurrent push: try again). Answers the merged pull request.
 */
export async function mergePull(deps: AppDeps, ctx: RepoContext, index: number, doer: UserRow, req: MergeRequest): Promise<PullRow> {
  const { pull, issue, repo, baseRef, baseSha, headSha } = await mergeCandidate(deps, ctx, index, req)
  const base = ctx.repo
  // The protection's gate (its reads) and the writing of the new commit (git) are independent:
  // they run together. A refusal still comes first and moves nothing (the commit written for it
  // is referenced by nothing).
  const gated = mergeGateRefusal(deps, ctx, pull, doer, repo, { base: baseSha, head: headSha }, req.force ?? false)
  const written = (async () => {
    const now = nowUnix()
    const people = await usersByIds(deps, [issue.posterId])
    const headRepo = pull.headRepoId === base.id ? base : (await deps.db.select().from(repositories).where(eq(repositories.id, pull.headRepoId)))[0]
    const title = req.title?.trim() || defaultTitle(pull, issue.title, headRepo, req.style)
    const message = req.message?.trim() ? `${title}\n\n${req.message.trim()}` : title
    const doerIdent = identOf(deps, doer, now)
    const poster = people.get(issue.posterId)
    return { now, sha: await writeMerge(repo, req.style, baseSha, headSha, message, doerIdent, poster ? identOf(deps, poster, now) : doerIdent) }
  })()
  const [gate, merge] = await Promise.allSettled([gated, written])
  if (gate.status === 'rejected') throw gate.reason
  if (gate.value) throw gate.value
  if (merge.status === 'rejected') throw merge.reason
  const { now, sha } = merge.value
  // The claim before the intent: from the intent on, a crash is repaired (repairPullMerges), at
  // start or, while other processes serve, by the one running the repairs once the claim is gone.
  const claim = await claimWork(deps.db, 'merge', pull.id)
  let swapped = false
  try {
    await writeTransaction(deps.db, async () => {
      const current = (await pullById(deps, pull.id))!
      if (current.hasMerged) throw notAllowed('the pull request has already been merged')
      if (current.mergeIntent) throw conflict('the pull request is being merged; try again')
      if (req.stillWanted && !(await req.stillWanted())) throw conflict('the merge is not wanted any more (its schedule was cancelled)')
      await deps.db.update(pullRequests).set({ mergeIntent: JSON.stringify({ sha, old: baseSha, by: doer.id, style: req.style }) }).where(eq(pullRequests.id, pull.id))
    })
    // Whether or not the branch moved (or the move was refused), the pull request follows before
    // the move is recorded as the merger's push. Every style writes on top of the base (a merge
    // or squash commit whose first parent it is, commits replayed onto it, or a head that holds
    // it): a fast-forward, which protection's judge need not ask git about.
    swapped = await moveRefs(deps, { repo: base, owner: ctx.owner }, doer, [{ ref: baseRef, old: baseSha, new: sha, fastForward: true }], async (moved) => {
      await writeTransaction(deps.db, async () => {
        const current = (await pullById(deps, pull.id))!
        if (moved) await recordMerged(deps, { ...current, headSha }, sha, doer.id, now)
        else await deps.db.update(pullRequests).set({ mergeIntent: null }).where(eq(pullRequests.id, pull.id))
      })
    }, { merge: true })
  } finally {
    await claim.release().catch(() => {})
  }
  if (!swapped) throw conflict('the base branch moved while the pull request was being merged; try again')
  return { ...pull, headSha }
}

/**
 * Pull requests left with a merge intent by a process that died mid-merge are marked merged when
 * the intended commit is on the base branch (the branch moved; the database did not follow), and
 * have the intent dropped otherwise, so they can be merged again. At start (before serving, no
 * merge can be running) every intent is repaired; with `abandonedOnly` (beside running processes)
 * only those no running process claims (a merge still under way keeps its intent). Answers how
 * many were marked merged.
 */
export async function repairPullMerges(deps: AppDeps, opts: { abandonedOnly?: boolean; afterListing?: () => Promise<void> } = {}): Promise<number> {
  const intended = (ids?: number[]) =>
    deps.db
      .select()
      .from(pullRequests)
      .where(and(isNotNull(pullRequests.mergeIntent), eq(pullRequests.hasMerged, false), ids ? inArray(pullRequests.id, ids) : undefined))
  const pending = await intended()
  if (!opts.abandonedOnly) return await repairMerges(deps, pending)
  if (pending.length === 0) return 0
  // Each taken over and read again (repairAbandoned): a merge that ended between the reads
  // cleared its intent; one begun since waits for its claim until the repair is done.
  return await repairAbandoned(deps.db, 'merge', pending.map((p) => p.id), { reread: intended, repair: (pulls) => repairMerges(deps, pulls) }, opts.afterListing)
}

/**
 * repairPullMerges' repair of these pull requests' intents; answers how many were marked merged.
 * A try apiece: one that fails (an unreadable intent, git refusing) is logged and left for the
 * next repair; the others go on.
 */
async function repairMerges(deps: AppDeps, pending: PullRow[]): Promise<number> {
  let merged = 0
  for (const pull of pending) {
    const logged = failedMerges(deps)
    try {
      if (await repairMerge(deps, pull)) merged++
      logged.delete(pull.id)
    } catch (e) {
      if (logged.has(pull.id)) continue
      logged.add(pull.id)
      loggerOf(deps.config).error('repairing an interrupted merge failed; the next repairs try again (logged once)', { pull: pull.id, ...errorFields(e) })
    }
  }
  return merged
}

/** The pull requests whose merge repair failed, by server: logged the first time, not every round after. */
const failedMerges = loggedFailures()

/** One pull request's interrupted merge repaired: whether it was marked merged. */
async function repairMerge(deps: AppDeps, pull: PullRow): Promise<boolean> {
  const intent = JSON.parse(pull.mergeIntent!) as { sha: string; by: number }
  const base = (await deps.db.select().from(repositories).where(eq(repositories.id, pull.baseRepoId)))[0]
  let landed = false
  if (base) {
    const repo = gitOfRow(deps, base)
    const tip = await readRef(repo, `refs/heads/${pull.baseBranch}`)
    landed = !!tip && (await isAncestor(repo, intent.sha, tip).catch(() => false))
  }
  const repaired = await writeTransaction(deps.db, async () => {
    // Only the intent read above: the row may have changed since (nothing else clears an
    // abandoned intent, but a repair must never act on a newer one).
    const current = await pullById(deps, pull.id)
    if (!current || current.hasMerged || current.mergeIntent !== pull.mergeIntent) return false
    if (landed) await recordMerged(deps, current, intent.sha, intent.by)
    else await deps.db.update(pullRequests).set({ mergeIntent: null }).where(eq(pullRequests.id, pull.id))
    return true
  })
  return landed && repaired
}
