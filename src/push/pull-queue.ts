import { and, eq, or, sql } from 'drizzle-orm'
import { afterCommit, type Db } from '../db/client'
import { issues, pullRequests } from '../db/schema'

/**
 * The mergeability queue. A pull request is queued by bumping its `check_seq` (and showing
 * status 'checking') in the same transaction as whatever moved one of its branches (a push's
 * record, a new base, a reopening); the pull-checker job (src/jobs/pull-checker.ts) checks every
 * pull request whose `check_seq` is past its `checked_seq`. Being rows, queued checks survive a
 * crash and are taken up again at start.
 */

/** The job's wake-up, one per database (registered while the job runs). */
const wakers = new WeakMap<Db, () => void>()

export function onPullsQueued(db: Db, wake: (() => void) | null): void {
  if (wake) wakers.set(db, wake)
  else wakers.delete(db)
}

/** Tells the job (when it runs) that checks were queued; it looks once the current transaction is over. */
export function wakePullChecker(db: Db): void {
  const wake = wakers.get(db)
  if (wake) afterCommit(db, wake)
}

/** Only open, unmerged pull requests are checked (booleans as the FALSE keyword, which both databases read). */
const isOpen = sql`${pullRequests.hasMerged} = false and exists (select 1 from ${issues} where ${issues.id} = ${pullRequests.issueId} and ${issues.isClosed} = false)`

const queued = (actorId: number | null) => ({
  status: 'checking',
  checkSeq: sql`${pullRequests.checkSeq} + 1`,
  checkActorId: actorId ?? 0,
})

/**
 * Queues every open pull request that `refs/heads/<branch>` of `repoId` is the base or the head
 * of (inside the transaction recording that the branch moved). `actorId`: who moved it (the
 * `synchronized` event's actor).
 */
export async function queueChecksForBranch(db: Db, repoId: number, branch: string, actorId: number | null): Promise<number> {
  const touched = or(
    and(eq(pullRequests.baseRepoId, repoId), eq(pullRequests.baseBranch, branch)),
    and(eq(pullRequests.headRepoId, repoId), eq(pullRequests.headBranch, branch)),
  )
  const n = (await db.update(pullRequests).set(queued(actorId)).where(and(touched, isOpen)).returning({ id: pullRequests.id })).length
  if (n) wakePullChecker(db)
  return n
}

/** Queues one pull request (created, reopened, new base); inside the change's transaction. */
export async function queueCheck(db: Db, pullId: number, actorId: number | null): Promise<void> {
  await db.update(pullRequests).set(queued(actorId)).where(eq(pullRequests.id, pullId))
  wakePullChecker(db)
}

/** Ids of open pull requests waiting for a check, oldest queued first. */
export async function queuedPullIds(db: Db, limit: number): Promise<number[]> {
  return (await db
    .select({ id: pullRequests.id })
    .from(pullRequests)
    .where(and(sql`${pullRequests.checkSeq} > ${pullRequests.checkedSeq}`, isOpen))
    .orderBy(pullRequests.id)
    .limit(limit))
    .map((r) => r.id)
}
