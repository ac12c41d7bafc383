import { and, eq, inArray, or, sql } from 'drizzle-orm'
import { afterCommit, type Db } from '../db/client'
import { issues, pullRequests } from '../db/schema'
import { batchesOf } from '../lib/batches'

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
 * Queues every open pull request that one of `moved` (`refs/heads/<branch>` of `repoId`) is the
 * base or the head of (inside the transaction recording that the branches moved). `actorId`: who
 * moved it (the `synchronized` event's actor). One statement for each IN list of branches moved
 * by one actor: a push or a mirror's sync moving thousands of branches made one each, all on the
 * event loop.
 */
export async function queueChecksForBranches(db: Db, repoId: number, moved: readonly { branch: string; actorId: number | null }[]): Promise<number> {
  const byActor = new Map<number | null, Set<string>>()
  for (const { branch, actorId } of moved) {
    let branches = byActor.get(actorId)
    if (!branches) byActor.set(actorId, (branches = new Set()))
    branches.add(branch)
  }
  let n = 0
  for (const [actorId, branches] of byActor)
    for (const batch of batchesOf([...branches])) {
      const touched = or(
        and(eq(pullRequests.baseRepoId, repoId), inArray(pullRequests.baseBranch, batch)),
        and(eq(pullRequests.headRepoId, repoId), inArray(pullRequests.headBranch, batch)),
      )
      n += (await db.update(pullRequests).set(queued(actorId)).where(and(touched, isOpen)).returning({ id: pullRequests.id })).length
    }
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
