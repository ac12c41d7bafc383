import { and, eq, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { withLock, writeTransaction, type Db } from '../../db/client'
import { issues, pullRequests, repositories, type PullRow } from '../../db/schema'
import type { RepoRow } from '../../auth/access'
import { recordEvent } from '../../events/outbox'
import { fetchBranchInto, mergeBase, mergeTree, readRef, setRef } from '../../git/merge'
import { GitError } from '../../git/run'
import { pathOfRepo } from '../repos/service'
import { gitOfRow } from '../../auth/repo-context'
import { errorFields, loggerOf } from '../../lib/log'
import { oneAtATime } from '../../lib/one-at-a-time'
import { pullHeadRef } from '../../push'
import { markOutdated, outdatedComments } from '../reviews/line-comments'
import { dismissStaleApprovals } from '../reviews/gate'
import { branchRulesOf, ruleFor } from '../../auth/protection'
import { nowUnix } from '../../lib/time'

/**
 * Mergeability: what `git merge-tree --write-tree` says of a pull request's head and base, and
 * `refs/pull/<index>/head` kept in the base repository. Run by the pull-checker job for queued
 * pull requests (queue.ts), and once when a pull request is opened; never on a list's path.
 */

/** The git repository of a repository row. */


const readyRepo = async (db: Db, id: number): Promise<RepoRow | undefined> =>
  (await db.select().from(repositories).where(and(eq(repositories.id, id), eq(repositories.status, 'ready'))))[0]

/**
 * Brings `refs/pull/<index>/head` of the base repository to the head branch's commit (fetching
 * it from the fork when the head lives there) and answers that commit; null when the head branch
 * (or its repository) is gone.
 */
export async function syncPullHeadRef(deps: AppDeps, pull: PullRow, base: RepoRow): Promise<string | null> {
  const baseGit = gitOfRow(deps, base)
  const ref = pullHeadRef(pull.index)
  if (pull.headRepoId !== base.id) {
    const head = await readyRepo(deps.db, pull.headRepoId)
    return head ? fetchBranchInto(baseGit, pathOfRepo(deps, head.ownerName, head), pull.headBranch, ref) : null
  }
  const sha = await readRef(baseGit, `refs/heads/${pull.headBranch}`)
  if (sha && (await readRef(baseGit, ref)) !== sha) await setRef(baseGit, ref, sha)
  return sha
}

/**
 * The head branch's commit now, read only (null when the branch is gone): what the pull request's
 * page offers to merge (the recorded head waits for the next check, so a page drawn right after the
 * head moved, an update of the branch, would offer an old one the merge refuses as moved).
 */
export async function currentPullHead(deps: AppDeps, pull: PullRow, base: RepoRow): Promise<string | null> {
  const head = pull.headRepoId === base.id ? base : await readyRepo(deps.db, pull.headRepoId)
  return head ? readRef(gitOfRow(deps, head), `refs/heads/${pull.headBranch}`) : null
}

/** One check at a time per pull request (per database): a later one waits for the earlier. */
const checkInTurn = oneAtATime<number>()

/**
 * Checks one pull request: head and base commits, merge base, and whether they merge cleanly
 * (with the conflicting paths when not). Writes them in one transaction with `pull.synchronized`
 * when the head moved since the last record. The status is written only when no newer queueing
 * overtook this check (the job checks again then). A merged, closed or merging pull request is
 * left as it is.
 */
export function checkPull(deps: AppDeps, pullId: number): Promise<void> {
  // One at a time per pull request: in this process (checkInTurn), and across processes (withLock).
  return checkInTurn(deps.db, pullId, () => withLock(deps.db, `pull-check:${pullId}`, () => checkOnce(deps, pullId)))
}

interface CheckResult {
  headSha: string | null
  baseSha: string | null
  mergeBase: string
  status: 'mergeable' | 'conflict' | 'error'
  conflicts: string[]
}

async function inspect(deps: AppDeps, pull: PullRow, base: RepoRow): Promise<CheckResult> {
  const headSha = await syncPullHeadRef(deps, pull, base)
  const baseGit = gitOfRow(deps, base)
  const baseSha = await readRef(baseGit, `refs/heads/${pull.baseBranch}`)
  if (!headSha || !baseSha) return { headSha, baseSha, mergeBase: '', status: 'error', conflicts: [] }
  const mb = await mergeBase(baseGit, baseSha, headSha)
  if (!mb) return { headSha, baseSha, mergeBase: '', status: 'error', conflicts: [] }
  const merged = await mergeTree(baseGit, baseSha, headSha)
  return { headSha, baseSha, mergeBase: mb, status: merged.conflicts.length ? 'conflict' : 'mergeable', conflicts: merged.conflicts }
}

async function checkOnce(deps: AppDeps, pullId: number): Promise<void> {
  const db = deps.db
  const pull = (await db.select().from(pullRequests).where(eq(pullRequests.id, pullId)))[0]
  if (!pull) return
  const issue = (await db.select({ isClosed: issues.isClosed }).from(issues).where(eq(issues.id, pull.issueId)))[0]
  const base = await readyRepo(db, pull.baseRepoId)
  const seq = pull.checkSeq
  const settle = async () => await db.update(pullRequests).set({ checkedSeq: seq }).where(and(eq(pullRequests.id, pullId), sql`${pullRequests.checkedSeq} < ${seq}`))
  if (!issue || issue.isClosed || pull.hasMerged || pull.mergeIntent || !base) {
    await settle()
    return
  }
  let result: CheckResult
  let outdated: number[] = []
  try {
    result = await inspect(deps, pull, base)
  } catch (e) {
    if (!(e instanceof GitError)) throw e
    // Git could not tell (a timeout, a broken repository): shown as not mergeable until the next check.
    loggerOf(deps.config).warn('a mergeability check failed', { pullId, ...errorFields(e) })
    result = { headSha: null, baseSha: null, mergeBase: pull.mergeBase, status: 'error', conflicts: [] }
  }
  // Line comments whose lines the new head changed (git reads, before the transaction); left as they are when git cannot tell.
  if (result.headSha && pull.headSha && result.headSha !== pull.headSha)
    outdated = await outdatedComments(deps, base, pull, result.headSha, result.mergeBase || pull.mergeBase).catch((e) => {
      if (!(e instanceof GitError)) throw e
      return []
    })
  await writeTransaction(db, async () => {
    const now = (await db.select().from(pullRequests).where(eq(pullRequests.id, pullId)))[0]
    if (!now || now.hasMerged || now.mergeIntent) return
    const set: Partial<PullRow> = { checkedSeq: Math.max(now.checkedSeq, seq) }
    if (result.headSha && result.headSha !== now.headSha) {
      set.headSha = result.headSha
      await markOutdated(db, outdated)
      if (now.headSha && ruleFor(await branchRulesOf(db, now.baseRepoId), now.baseBranch)?.dismissStaleApprovals)
        await dismissStaleApprovals(db, now.issueId, result.headSha, nowUnix())
      if (now.headSha)
        await recordEvent(db, {
          kind: 'pull.synchronized',
          repoId: now.baseRepoId,
          actorId: now.checkActorId || null,
          issueId: now.issueId,
          payload: { index: now.index, before: now.headSha, after: result.headSha },
        })
    }
    if (result.baseSha) set.baseSha = result.baseSha
    if (result.mergeBase) set.mergeBase = result.mergeBase
    // A queueing that came after this check started wants a newer answer: the status stays 'checking'.
    if (now.checkSeq === seq) {
      set.status = result.status
      set.conflictedFiles = JSON.stringify(result.conflicts)
    }
    await db.update(pullRequests).set(set).where(eq(pullRequests.id, pullId))
  })
}
