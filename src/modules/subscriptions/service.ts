import { and, asc, eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { comments, issueAssignees, issueWatches, watches, type IssueRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { forbidden } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { usersPage, type PeopleList } from '../users/service'

/**
 * Issue subscriptions (Gitea's issue_watch, `/issues/{index}/subscriptions`): a person's explicit
 * choice to follow an issue or pull request, or not to. The notifier reads them
 * (src/notify/recipients.ts): subscribers are told of what happens as participants are, and an
 * explicit unsubscription silences even a participant or a watcher of the repository. Without a
 * choice, whoever watches the repository or takes part follows the issue (Gitea's CheckIssueWatch).
 */

/** Whether `user` follows `issue` now (Gitea's CheckIssueWatch). */
export async function isFollowing(deps: AppDeps, user: UserRow, issue: IssueRow): Promise<boolean> {
  const [choice] = await deps.db.select({ on: issueWatches.isWatching }).from(issueWatches).where(and(eq(issueWatches.userId, user.id), eq(issueWatches.issueId, issue.id)))
  if (choice) return choice.on
  if (issue.posterId === user.id) return true
  const [watching] = await deps.db.select({ id: watches.id }).from(watches).where(and(eq(watches.userId, user.id), eq(watches.repoId, issue.repoId))).limit(1)
  if (watching) return true
  const [commented] = await deps.db
    .select({ id: comments.id })
    .from(comments)
    .where(and(eq(comments.issueId, issue.id), eq(comments.posterId, user.id), eq(comments.type, 0)))
    .limit(1)
  if (commented) return true
  const [assigned] = await deps.db.select({ id: issueAssignees.issueId }).from(issueAssignees).where(and(eq(issueAssignees.issueId, issue.id), eq(issueAssignees.assigneeId, user.id))).limit(1)
  return !!assigned
}

/**
 * PUT / DELETE …/subscriptions/{user}: `who` follows `issue` or not, by `doer` (themselves, or a
 * site administrator: 403 otherwise). Answers whether anything changed (Gitea: 201 then, 200 when
 * the state was already so).
 */
export async function setFollowing(deps: AppDeps, doer: UserRow, who: UserRow, issue: IssueRow, on: boolean): Promise<boolean> {
  if (doer.id !== who.id && !doer.isAdmin) throw forbidden(`${doer.name} is not permitted to change subscriptions for ${who.name}`)
  if ((await isFollowing(deps, who, issue)) === on) return false
  const now = nowUnix()
  await writeTransaction(deps.db, async () => {
    await deps.db
      .insert(issueWatches)
      .values({ userId: who.id, issueId: issue.id, isWatching: on, createdUnix: now, updatedUnix: now })
      .onConflictDoUpdate({ target: [issueWatches.userId, issueWatches.issueId], set: { isWatching: on, updatedUnix: now } })
  })
  return true
}

const SUBSCRIBERS: PeopleList = {
  name: 'subscribers',
  link: issueWatches,
  via: issueWatches.userId,
  where: (of) => and(eq(issueWatches.issueId, of), eq(issueWatches.isWatching, true))!,
  order: asc(issueWatches.id),
}

/** GET …/subscriptions: the people who subscribed to the issue (Gitea's GetIssueWatchers: explicit subscriptions), those `viewer` may see. */
export async function listSubscribers(deps: AppDeps, viewer: UserRow | null, issue: IssueRow, page: Page): Promise<Paged<UserRow>> {
  return await usersPage(deps, viewer, SUBSCRIBERS, issue.id, page)
}
