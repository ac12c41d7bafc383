/**
 * Locking a conversation (Gitea 1.23's LockIssue / UnlockIssue, its web routes `/issues/{i}/lock`
 * and `/unlock`: Gitea 1.23's API has none): writers of the issue's unit only; a locked
 * conversation takes comments, reviews and reactions from writers alone (the comments, reviews
 * and reactions services ask `isLocked`). The change and its timeline event (`issue.locked`,
 * `issue.unlocked`: announced to no hook, as Gitea's notifier has no lock event) in one transaction.
 */
import { eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { issues } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode } from '../../auth/access'
import type { RepoContext } from '../../auth/repo-context'
import { badRequest, forbidden } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { recordIssueEvent } from '../../events/issue-events'
import { findIssue } from './queries'

/** The reasons a lock may give (Gitea's `[repository.issue] LOCK_REASONS` default); none is allowed too. */
export const LOCK_REASONS = ['Too heated', 'Off-topic', 'Resolved', 'Spam'] as const

/**
 * Locks (`reason`: one of LOCK_REASONS or '') or unlocks issue `index`. 403 below write access;
 * 400 for an unknown reason, a lock of a locked conversation or an unlock of an unlocked one
 * (Gitea's lock_duplicate and unlock_error); nothing changes then.
 */
export async function setIssueLock(deps: AppDeps, ctx: RepoContext, index: number, caller: UserRow, lock: boolean, reason = ''): Promise<void> {
  if (ctx.mode < AccessMode.Write) throw forbidden('Only collaborators with write access may lock or unlock a conversation')
  if (lock && reason !== '' && !(LOCK_REASONS as readonly string[]).includes(reason)) throw badRequest(`Unknown lock reason: choose one of ${LOCK_REASONS.join(', ')}`)
  await writeTransaction(deps.db, async () => {
    const issue = await findIssue(deps, ctx.repo.id, index)
    if (issue.isLocked === lock) throw badRequest(lock ? 'This conversation is already locked' : 'This conversation is not locked')
    await deps.db.update(issues).set({ isLocked: lock, updatedUnix: nowUnix() }).where(eq(issues.id, issue.id))
    await recordIssueEvent(deps.db, issue, caller.id, lock ? 'issue.locked' : 'issue.unlocked', lock ? { reason } : {})
  })
}
