import { eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { claimWork, repairAbandoned, writeTransaction, type HeldLock } from '../db/client'
import { pendingPushes, repoGitStates, repositories } from '../db/schema'
import { readBranchAndTagRefs } from '../git/ref-state'
import type { PushCommand } from '../git/push-commands'
import { nowUnix } from '../lib/time'
import { errorFields, loggerOf } from '../lib/log'
import { syncRepositoryWithGit, type SyncResult } from './sync'
import { gitOfRow } from '../auth/repo-context'

/**
 * The recorder of what moved: a pending push (who pushes, which commands) is written before the
 * refs may move, and once the work is over, whatever happened, the repository is synced with
 * git (./sync.ts), which writes the ref changes as that push's events and re-checks the pull
 * requests of the branches that moved. A process that dies in between leaves the pending push,
 * which the repairs settle: at start (reconcileRepositories) and, while other processes serve on
 * PostgreSQL, settleAbandonedPushes for the pushes no running process claims.
 */

/** This process's claims on its pending pushes (claimWork), by push id, until finishPush. */
const pushClaims = new Map<number, HeldLock>()

/**
 * Before a push reaches git: makes sure the database has a record of the refs to diff against
 * (repositories made before this record existed get one from git now), and writes the pending
 * push (pusher and command list). Answers its id, for finishPush.
 */
export async function beginPush(deps: AppDeps, repoId: number, pusherId: number, commands: PushCommand[] | null): Promise<number> {
  const known = (await deps.db.select({ id: repoGitStates.repoId }).from(repoGitStates).where(eq(repoGitStates.repoId, repoId)))[0]
  if (!known) {
    const row = (await deps.db.select().from(repositories).where(eq(repositories.id, repoId)))[0]
    const refs = row ? await readBranchAndTagRefs(gitOfRow(deps, row)) : null
    if (refs)
      await deps.db.insert(repoGitStates).values({ repoId, refs: JSON.stringify(refs), updatedUnix: nowUnix() }).onConflictDoNothing()
  }
  // Claimed before the row commits, so no other process ever sees it unclaimed while git runs.
  let claim: HeldLock | undefined
  try {
    return await writeTransaction(deps.db, async () => {
      const id = (await deps.db
        .insert(pendingPushes)
        .values({ repoId, pusherId, commands: commands ? JSON.stringify(commands) : null, createdUnix: nowUnix() })
        .returning({ id: pendingPushes.id }))[0]!.id
      claim = await claimWork(deps.db, 'push', id)
      pushClaims.set(id, claim)
      return id
    })
  } catch (e) {
    for (const [id, held] of pushClaims) if (held === claim) pushClaims.delete(id)
    await claim?.release().catch(() => {})
    throw e
  }
}

/** After `git receive-pack` exited (any exit code): records what it changed, then forgets the pending push. */
export async function finishPush(deps: AppDeps, repoId: number, pushId: number): Promise<SyncResult> {
  try {
    return await syncRepositoryWithGit(deps, repoId, { pushId })
  } finally {
    // Released after the row is gone; if recording failed, the row stays and, unclaimed now, is
    // settled by the next repair (settleAbandonedPushes).
    const claim = pushClaims.get(pushId)
    pushClaims.delete(pushId)
    await claim?.release().catch(() => {})
  }
}

/**
 * Settles the pending pushes no running process claims (a process died while git received them,
 * or before it recorded them): each repository concerned is synced with git, the ref changes
 * recorded as those pushes' (push events, pull requests re-checked), and the rows removed.
 * Pushes other processes are running are left to them; each one settled is taken over and read
 * again first (repairAbandoned: a push recorded between the reads is gone). Answers how many were
 * settled.
 */
export async function settleAbandonedPushes(deps: AppDeps, opts: { afterListing?: () => Promise<void> } = {}): Promise<number> {
  const rows = await deps.db.select({ id: pendingPushes.id }).from(pendingPushes)
  if (rows.length === 0) return 0
  const reread = (ids: number[]) => deps.db.select({ id: pendingPushes.id, repoId: pendingPushes.repoId }).from(pendingPushes).where(inArray(pendingPushes.id, ids))
  return await repairAbandoned(deps.db, 'push', rows.map((r) => r.id), { reread, repair: (abandoned) => settle(deps, abandoned) }, opts.afterListing)
}

/** Syncs the repositories of these abandoned pending pushes, settling them; answers how many were. */
async function settle(deps: AppDeps, rows: { id: number; repoId: number }[]): Promise<number> {
  const byRepo = new Map<number, number[]>()
  for (const row of rows) byRepo.set(row.repoId, [...(byRepo.get(row.repoId) ?? []), row.id])
  let settled = 0
  for (const [repoId, ids] of byRepo) {
    try {
      await syncRepositoryWithGit(deps, repoId, { settle: ids })
      settled += ids.length
    } catch (e) {
      loggerOf(deps.config).error('settling an abandoned push failed', { repoId, ...errorFields(e) })
    }
  }
  return settled
}

/** Wraps the server's own steps of a push (taking the decision, writing the pending push), for a transport's idle watch. */
export type ServerWork = <T>(work: Promise<T>) => Promise<T>

/**
 * Runs `run` (the work that moves refs: receive-pack, an update-ref, a mirror's fetch) as a push
 * by `pusherId` of `commands` (null: not known beforehand, as a mirror's fetch), and records
 * whatever it changed once it is over, whether it succeeded or not. Answers what `run` answered;
 * a failure to record is thrown (the pending push then stays for the repairs).
 */
export async function recordPush<T>(
  deps: AppDeps,
  repoId: number,
  pusherId: number,
  commands: PushCommand[] | null,
  run: () => Promise<T>,
  serverWork: ServerWork = (work) => work,
): Promise<T> {
  const pushId = await serverWork(beginPush(deps, repoId, pusherId, commands))
  try {
    return await run()
  } finally {
    await finishPush(deps, repoId, pushId)
  }
}
