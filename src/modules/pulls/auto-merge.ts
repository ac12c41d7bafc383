import { and, asc, eq, gt, inArray, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { perConnection, writeTransaction } from '../../db/client'
import { issues, pullAutoMerges, pullRequests, repositories, users, type PullAutoMergeRow, type PullRow } from '../../db/schema'
import { accessLevel, AccessMode } from '../../auth/access'
import type { UserRow } from '../../auth/caller'
import { modeIn, type RepoContext } from '../../auth/repo-context'
import { branchRulesOf, mayMergeInto, ruleFor } from '../../auth/protection'
import { claimEvents, markDone, recordEvent, type EventRecord } from '../../events/outbox'
import { ApiError, conflict, forbidden, notFound } from '../../lib/errors'
import { errorFields, loggerOf } from '../../lib/log'
import { nowUnix } from '../../lib/time'
import { usersByIds } from '../../convert/people'
import { insertComment } from '../comments/service'
import { deleteBranch } from '../branches/changes'
import { findPull, pullById } from './service'
import { mergeCandidate, mergePull, type MergeRequest } from './merge'
import { mergeGateRefusal, statusChecksPass } from './gates'
import { MERGE_STYLES, type MergeStyle } from './model'

/**
 * Scheduled merges (Gitea's "merge when checks succeed", pull_auto_merge) and deleting the head
 * branch after a merge.
 *
 * POST …/merge with `merge_when_checks_succeed` merges at once when the pull request is ready (its
 * status checks succeed and the base branch's protection lets the merger merge it); otherwise it
 * writes a schedule (201), with its timeline event and a `pull.merge_scheduled` event, in one
 * transaction. The merge itself is never made in a request: the auto-merge consumer of the outbox
 * (autoMergeRound, run by jobs/auto-merger.ts) tries the scheduled pull requests an event may have
 * made ready (a status on their head, an approval, a new head, the schedule itself) and merges
 * them as their scheduler, through the same mergePull (gates, one push path). A crash after an
 * event was marked done is covered by the job's start: every schedule is tried once
 * (retryScheduledMerges). A merge (by anyone) removes the schedule (recordMerged);
 * DELETE …/merge cancels it.
 */

/** Gitea's comment types of the timeline events written here. */
export const TIMELINE = { deleteBranch: 11, scheduledMerge: 34, cancelledScheduledMerge: 35 } as const

/** The consumer's name in the outbox's positions. */
export const AUTO_MERGE_CONSUMER = 'auto-merge'
const BATCH = 200
const LEASE_MS = 5 * 60_000

export interface MergeOrSchedule extends MergeRequest {
  /** Schedule the merge for when the checks succeed, unless ready now. */
  whenChecksSucceed?: boolean
  /** Delete the head branch once merged (Gitea's delete_branch_after_merge). */
  deleteBranchAfterMerge?: boolean
}

/**
 * POST …/pulls/{index}/merge: merges now (200), or schedules (201) when asked to wait for the
 * checks and they have not succeeded (or the protection's other rules are not met yet). 409 when
 * a merge is already scheduled.
 */
export async function mergeOrSchedule(deps: AppDeps, ctx: RepoContext, index: number, doer: UserRow, req: MergeOrSchedule): Promise<'merged' | 'scheduled'> {
  if (req.whenChecksSucceed) {
    const c = await mergeCandidate(deps, ctx, index, req)
    const rule = ruleFor(await branchRulesOf(deps.db, ctx.repo.id), c.pull.baseBranch)
    if (!(await mayMergeInto(deps.db, rule, doer, modeIn(ctx, 'repo.code')))) throw new ApiError(405, 'User not allowed to merge PR')
    const ready =
      (await statusChecksPass(deps, ctx.repo.id, c.pull.baseBranch, c.headSha)) &&
      !(await mergeGateRefusal(deps, ctx, c.pull, doer, c.repo, { base: c.baseSha, head: c.headSha }, req.force ?? false))
    if (!ready) {
      await schedule(deps, c.pull, doer, req)
      return 'scheduled'
    }
  }
  const merged = await mergePull(deps, ctx, index, doer, req)
  if (req.deleteBranchAfterMerge) await deleteHeadBranch(deps, merged, doer)
  return 'merged'
}

async function schedule(deps: AppDeps, pull: PullRow, doer: UserRow, req: MergeOrSchedule): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const [existing] = await deps.db.select({ id: pullAutoMerges.id }).from(pullAutoMerges).where(eq(pullAutoMerges.pullId, pull.id))
    if (existing) throw conflict('the pull request is already scheduled to be merged when its checks succeed')
    const issue = (await deps.db.select().from(issues).where(eq(issues.id, pull.issueId)))[0]!
    await deps.db.insert(pullAutoMerges).values({
      pullId: pull.id,
      doerId: doer.id,
      mergeStyle: req.style,
      title: req.title?.trim() ?? '',
      message: req.message?.trim() ?? '',
      deleteBranchAfterMerge: req.deleteBranchAfterMerge ?? false,
      createdUnix: nowUnix(),
    })
    await insertComment(deps, issue, doer, TIMELINE.scheduledMerge, '')
    await recordEvent(deps.db, { kind: 'pull.merge_scheduled', repoId: pull.baseRepoId, actorId: doer.id, issueId: pull.issueId, payload: { index: pull.index } })
  })
}

/**
 * DELETE …/pulls/{index}/merge (Gitea's CancelScheduledAutoMerge): 404 when no merge is
 * scheduled; 403 unless the caller scheduled it or administers the repository.
 */
export async function cancelScheduledMerge(deps: AppDeps, ctx: RepoContext, index: number, doer: UserRow): Promise<void> {
  const { pull, issue } = await findPull(deps, ctx.repo.id, index)
  await writeTransaction(deps.db, async () => {
    const [row] = await deps.db.select().from(pullAutoMerges).where(eq(pullAutoMerges.pullId, pull.id))
    if (!row) throw notFound('the pull request has no scheduled merge')
    if (row.doerId !== doer.id && ctx.mode < AccessMode.Admin) throw forbidden('user has no permission to cancel the scheduled merge')
    // Its merge already under way (the intent is written): too late to cancel.
    if ((await pullById(deps, pull.id))?.mergeIntent) throw conflict('the scheduled merge is under way and cannot be cancelled')
    await deps.db.delete(pullAutoMerges).where(eq(pullAutoMerges.id, row.id))
    await insertComment(deps, issue, doer, TIMELINE.cancelledScheduledMerge, '')
  })
}

/** scheduledMergeOf's statement, prepared once per connection (every pull request page reads it). */
const scheduledMergeStatement = perConnection((db: AppDeps['db']) => db.select().from(pullAutoMerges).where(eq(pullAutoMerges.pullId, sql.placeholder('pull'))).prepare())

/** The scheduled merge of a pull request, if any (for its record and tests). */
export async function scheduledMergeOf(deps: AppDeps, pullId: number): Promise<PullAutoMergeRow | undefined> {
  return (await scheduledMergeStatement(deps.db).execute({ pull: pullId }))[0]
}

/**
 * Deletes a merged pull request's head branch (Gitea's delete_branch_after_merge) as `doer`,
 * through the one push path (deleteBranch: protection, the default branch, a moved branch refuse
 * it). Left as it is while another unmerged pull request comes from it.
 */
export async function deleteHeadBranch(deps: AppDeps, pull: PullRow, doer: UserRow): Promise<void> {
  const others = await deps.db
    .select({ id: pullRequests.id })
    .from(pullRequests)
    .where(and(eq(pullRequests.headRepoId, pull.headRepoId), eq(pullRequests.headBranch, pull.headBranch), eq(pullRequests.hasMerged, false)))
    .limit(1)
  if (others.length) return
  const [head] = await deps.db.select().from(repositories).where(and(eq(repositories.id, pull.headRepoId), eq(repositories.status, 'ready')))
  const owner = head && (await usersByIds(deps, [head.ownerId])).get(head.ownerId)
  if (!head || !owner) throw notFound('the head repository of the pull request does not exist any more')
  const mode = await accessLevel(deps.db, doer, head, owner)
  if (mode < AccessMode.Write) throw forbidden(`you may not delete the head branch of this pull request (${head.ownerName}/${head.name}:${pull.headBranch})`)
  const headCtx: RepoContext = { repo: head, owner, mode, caller: { user: doer, method: null, signedInAs: doer, scope: null } }
  await deleteBranch(deps, headCtx, doer, pull.headBranch)
  await writeTransaction(deps.db, async () => {
    const [issue] = await deps.db.select().from(issues).where(eq(issues.id, pull.issueId))
    if (issue) await insertComment(deps, issue, doer, TIMELINE.deleteBranch, pull.headBranch)
  })
}

/**
 * Tries one scheduled merge: made when the schedule is still there, the pull request open, its
 * head's status checks successful and the protection's gates met for its scheduler; left
 * scheduled otherwise (a later event tries again). A scheduler who lost write access leaves it
 * scheduled too (as Gitea), until someone cancels it. Answers whether it merged.
 */
export async function runScheduledMerge(deps: AppDeps, pullId: number): Promise<boolean> {
  const log = loggerOf(deps.config)
  const [row] = await deps.db.select().from(pullAutoMerges).where(eq(pullAutoMerges.pullId, pullId))
  if (!row) return false
  const [pull] = await deps.db.select().from(pullRequests).where(eq(pullRequests.id, pullId))
  const [base] = pull ? await deps.db.select().from(repositories).where(and(eq(repositories.id, pull.baseRepoId), eq(repositories.status, 'ready'))) : []
  const people = await deps.db.select().from(users).where(inArray(users.id, base ? [row.doerId, base.ownerId] : [row.doerId]))
  const doer = people.find((u) => u.id === row.doerId)
  const owner = base && people.find((u) => u.id === base.ownerId)
  if (!pull || !base || !owner || !doer || pull.hasMerged) return false
  const mode = await accessLevel(deps.db, doer, base, owner)
  if (mode < AccessMode.Write) {
    log.info('a scheduled merge waits: its scheduler may not write to the repository', { pullId })
    return false
  }
  const ctx: RepoContext = { repo: base, owner, mode, caller: { user: doer, method: null, signedInAs: doer, scope: null } }
  const style = (MERGE_STYLES as readonly string[]).includes(row.mergeStyle) ? (row.mergeStyle as MergeStyle) : 'merge'
  try {
    const c = await mergeCandidate(deps, ctx, pull.index, { style })
    if (!(await statusChecksPass(deps, base.id, pull.baseBranch, c.headSha))) return false
    // Still scheduled when the merge is written: a cancel that came while the checks were read wins.
    const stillWanted = async () => (await deps.db.select({ id: pullAutoMerges.id }).from(pullAutoMerges).where(eq(pullAutoMerges.id, row.id)))[0] !== undefined
    const merged = await mergePull(deps, ctx, pull.index, doer, { style, title: row.title, message: row.message, headCommitId: c.headSha, stillWanted })
    if (row.deleteBranchAfterMerge)
      await deleteHeadBranch(deps, merged, doer).catch((e) => log.warn('deleting the head branch after a scheduled merge failed', { pullId, ...errorFields(e) }))
    return true
  } catch (e) {
    // Not ready (a gate, a conflict, a branch gone, a concurrent push): it stays scheduled.
    if (e instanceof ApiError && e.status < 500) {
      log.info('a scheduled merge waits', { pullId, reason: e.message })
      return false
    }
    throw e
  }
}

/** The scheduled pull requests an event may have made ready. */
async function candidatesOf(deps: AppDeps, event: EventRecord): Promise<number[]> {
  // Built only for the events that may name one (most events, a new issue's, name none).
  const scheduled = () => deps.db.select({ id: pullAutoMerges.pullId }).from(pullAutoMerges)
  if (event.kind === 'status' && event.repoId !== null && typeof event.payload.sha === 'string')
    return (await deps.db
      .select({ id: pullRequests.id })
      .from(pullRequests)
      .where(and(eq(pullRequests.baseRepoId, event.repoId), eq(pullRequests.headSha, event.payload.sha), eq(pullRequests.hasMerged, false), inArray(pullRequests.id, scheduled())))
      .limit(BATCH)).map((r) => r.id)
  const byIssue = event.kind === 'pull.synchronized' || event.kind === 'pull.merge_scheduled' || (event.kind === 'review.submitted' && event.payload.type === 'approved')
  if (!byIssue || event.issueId === null) return []
  return (await deps.db.select({ id: pullRequests.id }).from(pullRequests).where(and(eq(pullRequests.issueId, event.issueId), inArray(pullRequests.id, scheduled())))).map((r) => r.id)
}

/**
 * One round of the auto-merge consumer: the events of a batch name the scheduled pull requests to
 * try; the batch is marked done, then each is tried (a crash in between: the job's start tries
 * every schedule). Answers how many events were handled.
 */
export async function autoMergeRound(deps: AppDeps): Promise<number> {
  const events = await claimEvents(deps.db, AUTO_MERGE_CONSUMER, BATCH, LEASE_MS)
  if (!events.length) return 0
  const pullIds = new Set<number>()
  for (const event of events) for (const id of await candidatesOf(deps, event)) pullIds.add(id)
  await markDone(deps.db, AUTO_MERGE_CONSUMER, events[events.length - 1]!.id)
  await tryEach(deps, [...pullIds])
  return events.length
}

async function tryEach(deps: AppDeps, pullIds: number[]): Promise<number> {
  let merged = 0
  for (const id of pullIds)
    try {
      if (await runScheduledMerge(deps, id)) merged++
    } catch (e) {
      loggerOf(deps.config).error('a scheduled merge failed', { pullId: id, ...errorFields(e) })
    }
  return merged
}

/**
 * Tries every scheduled merge, in batches by id: at the job's start, for the schedules whose
 * checks succeeded while no consumer ran or whose event was done before a crash let it merge.
 * Answers how many merged.
 */
export async function retryScheduledMerges(deps: AppDeps): Promise<number> {
  let merged = 0
  for (let after = 0; ; ) {
    const rows = await deps.db.select({ id: pullAutoMerges.id, pullId: pullAutoMerges.pullId }).from(pullAutoMerges).where(gt(pullAutoMerges.id, after)).orderBy(asc(pullAutoMerges.id)).limit(BATCH)
    if (!rows.length) return merged
    merged += await tryEach(deps, rows.map((r) => r.pullId))
    after = rows[rows.length - 1]!.id
  }
}
