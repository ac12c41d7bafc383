/**
 * The pieces of an issue's state that move together inside a write transaction: labels, assignees,
 * milestone and open/closed with every counter that follows them, and the checks of what a body names.
 */
import { and, eq, gt, or, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { inJsonList } from '../../db/sql'
import { perConnection, writeBehind } from '../../db/client'
import { issueAssignees, issueDependencies, issueLabels, issues, labels, milestones, repositories, users, type IssueRow, type LabelRow, type MilestoneRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode, accessLevel, type RepoRow } from '../../auth/access'
import { ApiError, unprocessable } from '../../lib/errors'

/**
 * Users named as assignees of an issue of `repo`; 422 for an unknown name and for a user who
 * cannot write to the repository (Gitea's CanBeAssigned).
 */
export async function resolveAssignees(deps: AppDeps, repo: RepoRow, names: string[]): Promise<UserRow[]> {
  const wanted = [...new Set(names.filter(Boolean).map((n) => n.toLowerCase()))]
  if (wanted.length === 0) return []
  const found = await deps.db.select().from(users).where(and(inJsonList(users.lowerName, wanted), eq(users.type, 0)))
  const assignees: UserRow[] = []
  for (const n of wanted) {
    const u = found.find((f) => f.lowerName === n)
    if (!u) throw unprocessable(`Assignee does not exist: [name: ${n}]`, 'Assignee')
    // As Gitea's CanBeAssigned: only people who may write to the repository can be assigned.
    if ((await accessLevel(deps.db, u, repo)) < AccessMode.Write)
      throw unprocessable(`user cannot be assigned: no write access to the repository [user_id: ${u.id}, repo_name: ${repo.name}]`, 'Assignee')
    assignees.push(u)
  }
  return assignees
}

/**
 * Labels an issue of `repo` may carry with the given ids: the repository's own and its owning
 * organisation's; 422 when one is unknown or belongs to another repository or organisation.
 */
export async function repoLabelsByIds(deps: AppDeps, repo: Pick<RepoRow, 'id' | 'ownerId'>, ids: number[]): Promise<LabelRow[]> {
  const unique = [...new Set(ids)]
  if (unique.length === 0) return []
  const found = await deps.db
    .select()
    .from(labels)
    .where(and(or(eq(labels.repoId, repo.id), eq(labels.orgId, repo.ownerId)), inJsonList(labels.id, unique)))
  if (found.length !== unique.length) {
    const missing = unique.filter((id) => !found.some((l) => l.id === id))
    throw unprocessable(`label does not exist in this repository [id: ${missing.join(', ')}]`, 'Labels')
  }
  return found
}

/** A milestone of this repository; 422 when unknown. */
export async function repoMilestone(deps: AppDeps, repoId: number, id: number): Promise<MilestoneRow> {
  const m = (await deps.db
    .select()
    .from(milestones)
    .where(and(eq(milestones.repoId, repoId), eq(milestones.id, id))))[0]
  if (!m) throw unprocessable(`milestone does not exist [id: ${id}]`, 'Milestone')
  return m
}

/** The repository's open/closed counters for the kind of `issue` (issues or pull requests). */
export async function bumpRepoCounters(deps: AppDeps, repoId: number, isPull: boolean, total: number, closed: number) {
  const [all, shut] = isPull ? [repositories.numPulls, repositories.numClosedPulls] : [repositories.numIssues, repositories.numClosedIssues]
  const key = isPull ? (['numPulls', 'numClosedPulls'] as const) : (['numIssues', 'numClosedIssues'] as const)
  await deps.db
    .update(repositories)
    .set({ [key[0]]: sql`${all} + ${total}`, [key[1]]: sql`${shut} + ${closed}` })
    .where(eq(repositories.id, repoId))
}

export async function bumpMilestone(deps: AppDeps, milestoneId: number, total: number, closed: number) {
  if (milestoneId <= 0) return
  await deps.db
    .update(milestones)
    .set({ numIssues: sql`${milestones.numIssues} + ${total}`, numClosedIssues: sql`${milestones.numClosedIssues} + ${closed}` })
    .where(eq(milestones.id, milestoneId))
}

/** Moves the labels' counts (written behind: nobody reads the answer); inside a write transaction. */
export async function bumpLabels(deps: AppDeps, labelIds: number[], total: number, closed: number) {
  if (labelIds.length === 0) return
  await writeBehind(
    deps.db,
    deps.db
      .update(labels)
      .set({ numIssues: sql`${labels.numIssues} + ${total}`, numClosedIssues: sql`${labels.numClosedIssues} + ${closed}` })
      .where(inJsonList(labels.id, labelIds)),
  )
}

export const labelIdsOfIssue = async (deps: AppDeps, issueId: number) =>
  (await deps.db
    .select({ id: issueLabels.labelId })
    .from(issueLabels)
    .where(eq(issueLabels.issueId, issueId)))
    .map((r) => r.id)

/**
 * Links labels to an issue (those already linked are skipped) and counts them; call inside a
 * write transaction. `issue` must be the current row.
 */
export async function linkLabels(deps: AppDeps, issue: IssueRow, labelIds: number[]): Promise<void> {
  const current = new Set(await labelIdsOfIssue(deps, issue.id))
  await addLabelLinks(deps, issue, [...new Set(labelIds)].filter((id) => !current.has(id)))
}

/**
 * Links labels the issue does not carry yet (distinct ids) and counts them; inside a write
 * transaction. Both written behind (writeBehind): nothing reads their answers.
 */
export async function addLabelLinks(deps: AppDeps, issue: IssueRow, added: number[]): Promise<void> {
  if (added.length === 0) return
  await writeBehind(deps.db, deps.db.insert(issueLabels).values(added.map((labelId) => ({ issueId: issue.id, labelId }))))
  await bumpLabels(deps, added, 1, issue.isClosed ? 1 : 0)
}

/** Unlinks labels from an issue (all when `labelIds` is null) and counts them; inside a write transaction. */
export async function unlinkLabels(deps: AppDeps, issue: IssueRow, labelIds: number[] | null): Promise<void> {
  const current = await labelIdsOfIssue(deps, issue.id)
  const removed = labelIds === null ? current : current.filter((id) => labelIds.includes(id))
  if (removed.length === 0) return
  await deps.db
    .delete(issueLabels)
    .where(and(eq(issueLabels.issueId, issue.id), inJsonList(issueLabels.labelId, removed)))
  await bumpLabels(deps, removed, -1, issue.isClosed ? -1 : 0)
}

/** Replaces the assignees of an issue; inside a write transaction. */
export async function setAssignees(deps: AppDeps, issueId: number, people: UserRow[]): Promise<void> {
  await deps.db.delete(issueAssignees).where(eq(issueAssignees.issueId, issueId))
  await addAssignees(deps, issueId, people)
}

/** Assigns people (distinct) to an issue that has none of them yet; inside a write transaction. */
export async function addAssignees(deps: AppDeps, issueId: number, people: UserRow[]): Promise<void> {
  if (people.length) await writeBehind(deps.db, deps.db.insert(issueAssignees).values(people.map((u) => ({ issueId, assigneeId: u.id }))))
}

/**
 * Whether an issue is blocked (Gitea's IssueNoDependenciesLeft, negated): its repository keeps
 * dependencies and one of the issues it depends on, in any repository, is still open.
 */
export async function isBlocked(deps: AppDeps, issue: Pick<IssueRow, 'id' | 'repoId'>): Promise<boolean> {
  return (await openBlockerOf(deps.db).execute({ issue: issue.id, repo: issue.repoId })).length > 0
}
/** isBlocked's statement, prepared once per connection (every issue and pull request page asks it). */
const openBlockerOf = perConnection((db: AppDeps['db']) =>
  db
    .select({ id: issueDependencies.id })
    .from(issueDependencies)
    .innerJoin(issues, and(eq(issues.id, issueDependencies.dependencyId), eq(issues.isClosed, false)))
    .innerJoin(repositories, and(eq(repositories.id, sql.placeholder('repo')), eq(repositories.enableIssueDependencies, true)))
    .where(eq(issueDependencies.issueId, sql.placeholder('issue')))
    .limit(1)
    .prepare(),
)

/**
 * What closing a blocked issue does: `refuse` (412, Gitea's ErrDependenciesLeft: an edit, the web's
 * close button), `skip` (it stays open: a deleted branch's pull requests, as Gitea's
 * CloseBranchPulls), `ignore` (a merge, whose gate checked it before the branch moved).
 */
export type WhenBlocked = 'refuse' | 'skip' | 'ignore'

/**
 * Opens or closes an issue and moves every counter that follows it; inside a write transaction.
 * The one place an issue is closed, so the one place its open dependencies stop it (`whenBlocked`).
 * Answers whether its state changed.
 */
export async function setClosed(deps: AppDeps, issue: IssueRow, closed: boolean, now: number, whenBlocked: WhenBlocked = 'refuse'): Promise<boolean> {
  if (issue.isClosed === closed) return false
  if (closed && whenBlocked !== 'ignore' && (await isBlocked(deps, issue))) {
    if (whenBlocked === 'skip') return false
    throw new ApiError(412, `cannot close this ${issue.isPull ? 'pull request' : 'issue'} because it still has open dependencies`)
  }
  const d = closed ? 1 : -1
  await deps.db
    .update(issues)
    .set({ isClosed: closed, closedUnix: closed ? now : 0 })
    .where(eq(issues.id, issue.id))
  await bumpRepoCounters(deps, issue.repoId, issue.isPull, 0, d)
  await bumpMilestone(deps, issue.milestoneId, 0, d)
  await bumpLabels(deps, await labelIdsOfIssue(deps, issue.id), 0, d)
  return true
}

/**
 * Closes the gap an issue leaves among its repository's pinned issues (or pull requests) when it
 * is unpinned or deleted: those after it move up one place. Inside a write transaction.
 */
export async function closePinGap(deps: AppDeps, issue: Pick<IssueRow, 'repoId' | 'isPull' | 'pinOrder'>): Promise<void> {
  if (issue.pinOrder <= 0) return
  await deps.db
    .update(issues)
    .set({ pinOrder: sql`${issues.pinOrder} - 1` })
    .where(and(eq(issues.repoId, issue.repoId), eq(issues.isPull, issue.isPull), gt(issues.pinOrder, issue.pinOrder)))
}

/** Moves an issue to another milestone (0 = none) with the counters of both; inside a write transaction. */
export async function setMilestone(deps: AppDeps, issue: IssueRow, milestoneId: number): Promise<void> {
  if (issue.milestoneId === milestoneId) return
  const closed = issue.isClosed ? 1 : 0
  await bumpMilestone(deps, issue.milestoneId, -1, -closed)
  await bumpMilestone(deps, milestoneId, 1, closed)
  await deps.db.update(issues).set({ milestoneId }).where(eq(issues.id, issue.id))
}
