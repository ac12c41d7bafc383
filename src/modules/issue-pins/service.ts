/**
 * Pinned issues and pull requests (Gitea's issue pins): each kind of a repository has at most
 * MAX_PINNED pinned, at places 1..n (`issues.pin_order`; 0 = not pinned), kept without gaps by
 * every pin, unpin, move and deletion (`closePinGap`, issues/state.ts), all in write transactions.
 */
import { and, asc, count, eq, gt, gte, inArray, lt, lte, sql, type Placeholder } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { perConnection, writeTransaction } from '../../db/client'
import { issues, pullRequests, type IssueRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import type { RepoContext } from '../../auth/repo-context'
import type { PullItem } from '../../convert/pull'
import { ApiError, unprocessable } from '../../lib/errors'
import { recordIssueEvent } from '../../events/issue-events'
import { findIssue } from '../issues/queries'
import { closePinGap } from '../issues/state'

/** Most issues (and, apart, most pull requests) a repository pins: Gitea's [repository.issue] MAX_PINNED default. */
export const MAX_PINNED = 3

const pinnedOf = (repoId: number | Placeholder, isPull: boolean | Placeholder) => and(eq(issues.repoId, repoId), eq(issues.isPull, isPull), gt(issues.pinOrder, 0))

/** pinnedRows' statement, prepared once per connection (every issue and pull request list page reads it). */
const pinnedRowsOf = perConnection((db: AppDeps['db']) =>
  db.select().from(issues).where(pinnedOf(sql.placeholder('repo'), sql.placeholder('pull'))).orderBy(asc(issues.pinOrder)).prepare(),
)

async function pinnedCount(deps: AppDeps, repoId: number, isPull: boolean): Promise<number> {
  return (await deps.db.select({ n: count() }).from(issues).where(pinnedOf(repoId, isPull)))[0]!.n
}

/** Pins an issue or pull request at the last place (nothing when pinned already); 400 when its kind has MAX_PINNED pinned. */
export async function pinIssue(deps: AppDeps, ctx: RepoContext, index: number, caller: UserRow): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const issue = await findIssue(deps, ctx.repo.id, index)
    if (issue.pinOrder > 0) return
    const pinned = await pinnedCount(deps, issue.repoId, issue.isPull)
    if (pinned >= MAX_PINNED) throw new ApiError(400, `the max number of pinned ${issue.isPull ? 'pull requests' : 'issues'} has been reached (${MAX_PINNED})`)
    await deps.db.update(issues).set({ pinOrder: pinned + 1 }).where(eq(issues.id, issue.id))
    await recordIssueEvent(deps.db, issue, caller.id, 'issue.pinned')
  })
}

/** Unpins an issue or pull request (nothing when it is not pinned); those after it move up. */
export async function unpinIssue(deps: AppDeps, ctx: RepoContext, index: number, caller: UserRow): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const issue = await findIssue(deps, ctx.repo.id, index)
    if (issue.pinOrder <= 0) return
    await deps.db.update(issues).set({ pinOrder: 0 }).where(eq(issues.id, issue.id))
    await closePinGap(deps, issue)
    await recordIssueEvent(deps.db, issue, caller.id, 'issue.unpinned')
  })
}

/**
 * Moves a pinned issue to `position` (1-based; past the last place it goes last), those between
 * shifting by one; nothing for an issue not pinned (as Gitea); 422 for a position below 1.
 */
export async function movePin(deps: AppDeps, ctx: RepoContext, index: number, position: number): Promise<void> {
  if (!Number.isSafeInteger(position) || position < 1) throw unprocessable('the position must be 1 or more', 'position')
  await writeTransaction(deps.db, async () => {
    const issue = await findIssue(deps, ctx.repo.id, index)
    if (issue.pinOrder <= 0) return
    const to = Math.min(position, await pinnedCount(deps, issue.repoId, issue.isPull))
    const from = issue.pinOrder
    if (to === from) return
    const kind = and(eq(issues.repoId, issue.repoId), eq(issues.isPull, issue.isPull))
    if (to < from)
      await deps.db.update(issues).set({ pinOrder: sql`${issues.pinOrder} + 1` }).where(and(kind, gte(issues.pinOrder, to), lt(issues.pinOrder, from)))
    else await deps.db.update(issues).set({ pinOrder: sql`${issues.pinOrder} - 1` }).where(and(kind, gt(issues.pinOrder, from), lte(issues.pinOrder, to)))
    await deps.db.update(issues).set({ pinOrder: to }).where(eq(issues.id, issue.id))
  })
}

/** The repository's pinned issues, in their order (at most MAX_PINNED). */
export async function pinnedIssues(deps: AppDeps, repoId: number): Promise<IssueRow[]> {
  return await pinnedRows(deps, repoId, false)
}

/** The repository's pinned issues (`isPull` false) or pull requests, in their order, as rows. */
export async function pinnedRows(deps: AppDeps, repoId: number, isPull: boolean): Promise<IssueRow[]> {
  return await pinnedRowsOf(deps.db).execute({ repo: repoId, pull: isPull })
}

/** The repository's pinned pull requests, in their order. */
export async function pinnedPulls(deps: AppDeps, repoId: number): Promise<PullItem[]> {
  const rows = await pinnedRows(deps, repoId, true)
  if (rows.length === 0) return []
  const pulls = new Map((await deps.db.select().from(pullRequests).where(inArray(pullRequests.issueId, rows.map((r) => r.id)))).map((p) => [p.issueId, p]))
  return rows.flatMap((issue) => {
    const pull = pulls.get(issue.id)
    return pull ? [{ pull, issue }] : []
  })
}

/** Whether one more issue, and one more pull request, may be pinned (Gitea's NewIssuePinsAllowed). */
export async function newPinsAllowed(deps: AppDeps, repoId: number): Promise<{ issues: boolean; pull_requests: boolean }> {
  return {
    issues: (await pinnedCount(deps, repoId, false)) < MAX_PINNED,
    pull_requests: (await pinnedCount(deps, repoId, true)) < MAX_PINNED,
  }
}
