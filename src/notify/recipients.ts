import { and, eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { perConnection, type Db } from '../db/client'
import { inJsonList } from '../db/sql'
import { AccessMode, repoGranteesCondition } from '../auth/access'
import { publicRepoOpen } from '../auth/visibility'
import { blockersOf } from '../auth/blocking'
import { comments, issueAssignees, issueWatches, issues, orgUsers, repositories, users, watches, type IssueRow, type RepoRow } from '../db/schema'
import type { UserRow } from '../auth/caller'
import type { EventRecord } from '../events/outbox'
import { mentionedNames } from '../lib/mentions'

/*
 * Who an outbox event notifies, after Gitea's uinotification service and its
 * createOrUpdateIssueNotifications:
 * - an issue or pull request opened, commented on, closed, reopened, merged or pushed to: the
 *   repository's watchers (not for a work-in-progress pull request), the people taking part
 *   (poster, commenters, assignees), those subscribed to it, and the people mentioned in the new
 *   text (but those who blocked the actor); those who unsubscribed from it are left out (but for a
 *   mention);
 * - a review submitted: the same people; an assignment: the assignee; a review request: the
 *   person asked (a team's request is one event per member);
 * never the actor, and only people who may still read the issue or pull request (the repository
 * and its unit). Threads are about issues and pull requests only.
 */

/** Gitea's NotificationSource values Warren writes or filters on. */
export const SOURCE = { issue: 1, pull: 2, commit: 3, repository: 4 } as const
/** Gitea's NotificationStatus values. */
export const STATUS = { unread: 1, read: 2, pinned: 3 } as const

/** The comment type of a plain comment (the comments area's PLAIN_COMMENT: participants are their posters). */
const PLAIN_COMMENT = 0

/** Gitea's default work-in-progress title prefixes ([repository.pull-request] WORK_IN_PROGRESS_PREFIXES). */
const WIP_PREFIXES = ['wip:', '[wip]']

/** What one event asks for: the issue it is about, the comment, who acted, and who is told. */
export interface NotificationPlan {
  issue: IssueRow
  repo: RepoRow
  commentId: number
  actorId: number
  receivers: number[]
  /** Those of the receivers told directly: mentioned, assigned, asked to review (an `onmention` mail preference's). */
  direct: number[]
}

type Audience = 'everyone' | 'assignee' | 'reviewer'

/** The events that notify, and whom; the text whose mentions count (the issue's body, the comment's). */
const AUDIENCE: Partial<Record<EventRecord['kind'], { audience: Audience; mentionsIn?: 'issue' | 'comment' }>> = {
  'issue.opened': { audience: 'everyone', mentionsIn: 'issue' },
  'pull.opened': { audience: 'everyone', mentionsIn: 'issue' },
  'comment.created': { audience: 'everyone', mentionsIn: 'comment' },
  'issue.closed': { audience: 'everyone' },
  'issue.reopened': { audience: 'everyone' },
  'pull.merged': { audience: 'everyone' },
  'pull.synchronized': { audience: 'everyone' },
  'issue.assigned': { audience: 'assignee' },
  'review.submitted': { audience: 'everyone' },
  'review.requested': { audience: 'reviewer' },
}

const isWorkInProgress = (title: string) => WIP_PREFIXES.some((p) => title.trimStart().toLowerCase().startsWith(p))

/**
 * The reads every notifying event needs (its issue and repository, the repository's watchers, the
 * issue's people, the text of a new comment, whose mentions notify), made for all the events of a
 * notifier round at once (roundReads): seven statements a round instead of seven an event, each
 * prepared once per database (the list of ids
 * is one JSON parameter), so the notifier costs the database and Warren a few statements a round
 * of up to 100 events, not one round trip each (bench/postgres.ts, POST issue).
 */
function preparePlanReads(db: Db) {
  const issueIds = inJsonList(issues.id, 'issues')
  return {
    issues: db.select().from(issues).where(issueIds).prepare(),
    repos: db.select().from(repositories).where(inJsonList(repositories.id, 'repos')).prepare(),
    watchers: db.select({ repoId: watches.repoId, id: watches.userId }).from(watches).where(inJsonList(watches.repoId, 'repos')).prepare(),
    commenters: db
      .selectDistinct({ issueId: comments.issueId, id: comments.posterId })
      .from(comments)
      .where(and(inJsonList(comments.issueId, 'issues'), eq(comments.type, PLAIN_COMMENT)))
      .prepare(),
    assignees: db.select({ issueId: issueAssignees.issueId, id: issueAssignees.assigneeId }).from(issueAssignees).where(inJsonList(issueAssignees.issueId, 'issues')).prepare(),
    subscriptions: db
      .select({ issueId: issueWatches.issueId, id: issueWatches.userId, on: issueWatches.isWatching })
      .from(issueWatches)
      .where(inJsonList(issueWatches.issueId, 'issues'))
      .prepare(),
    commentTexts: db.select({ id: comments.id, content: comments.content }).from(comments).where(inJsonList(comments.id, 'comments')).prepare(),
  }
}

const planReadsOf = perConnection(preparePlanReads)

/** What a round's events need read, by id (roundReads); what is absent is gone (or was not asked for). */
export interface RoundReads {
  issues: Map<number, IssueRow>
  repos: Map<number, RepoRow>
  watchers: Map<number, number[]>
  commenters: Map<number, number[]>
  assignees: Map<number, number[]>
  subscriptions: Map<number, { id: number; on: boolean }[]>
  /** The texts of the comments whose mentions notify (AUDIENCE's `mentionsIn: 'comment'`), by comment id. */
  commentTexts: Map<number, string>
}

/** Rows grouped by a key, each mapped. */
function groupBy<R, V>(rows: R[], key: (r: R) => number, value: (r: R) => V): Map<number, V[]> {
  const groups = new Map<number, V[]>()
  for (const r of rows) {
    const k = key(r)
    const list = groups.get(k)
    if (list) list.push(value(r))
    else groups.set(k, [value(r)])
  }
  return groups
}

/**
 * The reads of planOf for every event of a round at once (the issues and repositories they are
 * about; the watchers and people of those that notify everyone; the texts of new comments): as
 * each event's own reads would find them now, in two round trips of statements side by side.
 */
export async function roundReads(deps: AppDeps, events: EventRecord[]): Promise<RoundReads> {
  const notifying = events.filter((e) => AUDIENCE[e.kind] && e.issueId !== null && e.actorId !== null)
  const ids = (list: number[]) => JSON.stringify([...new Set(list)])
  const all = ids(notifying.map((e) => e.issueId!))
  const everyone = ids(notifying.filter((e) => AUDIENCE[e.kind]!.audience === 'everyone').map((e) => e.issueId!))
  const commented = ids(notifying.filter((e) => AUDIENCE[e.kind]!.mentionsIn === 'comment' && e.commentId !== null).map((e) => e.commentId!))
  const reads = planReadsOf(deps.db)
  const byIssue = <R extends { issueId: number; id: number }>(rows: R[]) => groupBy(rows, (r) => r.issueId, (r) => r.id)
  const [issueRows, commenters, assignees, subscriptions, commentTexts] = await Promise.all([
    notifying.length ? reads.issues.execute({ issues: all }) : [],
    everyone !== '[]' ? reads.commenters.execute({ issues: everyone }).then(byIssue) : new Map<number, number[]>(),
    everyone !== '[]' ? reads.assignees.execute({ issues: everyone }).then(byIssue) : new Map<number, number[]>(),
    everyone !== '[]' ? reads.subscriptions.execute({ issues: everyone }) : [],
    commented !== '[]' ? reads.commentTexts.execute({ comments: commented }).then((rows) => new Map(rows.map((c) => [c.id, c.content]))) : new Map<number, string>(),
  ])
  const repoIds = ids(issueRows.map((i) => i.repoId))
  const [repoRows, watchers] = await Promise.all([
    issueRows.length ? reads.repos.execute({ repos: repoIds }) : [],
    everyone !== '[]' && issueRows.length ? reads.watchers.execute({ repos: repoIds }).then((rows) => groupBy(rows, (r) => r.repoId, (r) => r.id)) : new Map<number, number[]>(),
  ])
  return {
    issues: new Map(issueRows.map((i) => [i.id, i])),
    repos: new Map(repoRows.map((r) => [r.id, r])),
    watchers,
    commenters,
    assignees,
    subscriptions: groupBy(subscriptions, (w) => w.issueId, (w) => ({ id: w.id, on: w.on })),
    commentTexts,
  }
}

/** The repository's watchers and the issue's participants (poster, plain commenters, assignees). */
function everyone(round: RoundReads, issue: IssueRow): number[] {
  const ids = new Set<number>([issue.posterId])
  if (!(issue.isPull && isWorkInProgress(issue.title))) for (const id of round.watchers.get(issue.repoId) ?? []) ids.add(id)
  for (const id of round.commenters.get(issue.id) ?? []) ids.add(id)
  for (const id of round.assignees.get(issue.id) ?? []) ids.add(id)
  // Explicit subscriptions (Gitea's issue_watch): subscribers in, those who unsubscribed out.
  for (const w of round.subscriptions.get(issue.id) ?? [])
    if (w.on) ids.add(w.id)
    else ids.delete(w.id)
  return [...ids]
}

/** The people (not organisations) `text` mentions. */
async function mentioned(deps: AppDeps, text: string): Promise<number[]> {
  const names = mentionedNames(text)
  if (names.length === 0) return []
  return (await deps.db.select({ id: users.id }).from(users).where(and(inArray(users.lowerName, names), eq(users.type, 0)))).map((u) => u.id)
}

/**
 * Who of `ids` may read the issue or pull request: active people with read access to the
 * repository (accessLevel's rule, read for all candidates at once: site administrators, those
 * granted access (repoGranteesCondition), and those a public repository is open to by its owner's
 * visibility, organisation members included) and its unit enabled. Three queries, whatever the
 * number of candidates.
 */
async function readers(deps: AppDeps, repo: RepoRow, issue: IssueRow, ids: number[]): Promise<number[]> {
  if (ids.length === 0 || !(issue.isPull ? repo.hasPullRequests : repo.hasIssues)) return []
  const people = (await deps.db.select().from(users).where(inArray(users.id, ids))) as UserRow[]
  const owner = (await deps.db.select().from(users).where(eq(users.id, repo.ownerId)))[0]
  if (!owner) return []
  const granted = new Set(
    (await deps.db.select({ id: users.id }).from(users).where(and(inArray(users.id, ids), repoGranteesCondition(repo, AccessMode.Read)))).map((u) => u.id),
  )
  const members =
    owner.type === 1 && !repo.isPrivate
      ? new Set((await deps.db.select({ id: orgUsers.uid }).from(orgUsers).where(and(eq(orgUsers.orgId, owner.id), inArray(orgUsers.uid, ids)))).map((m) => m.id))
      : new Set<number>()
  return people
    .filter((p) => p.type === 0 && p.isActive && !p.prohibitLogin)
    .filter((p) => p.isAdmin || granted.has(p.id) || publicRepoOpen(repo, owner, p, members.has(p.id)))
    .map((p) => p.id)
}

/** What `event` notifies (null: nothing, or its issue or repository is gone); `round`: roundReads of its round's events. */
export async function planOf(deps: AppDeps, event: EventRecord, round: RoundReads): Promise<NotificationPlan | null> {
  const rule = AUDIENCE[event.kind]
  if (!rule || event.issueId === null || event.actorId === null) return null
  const issue = round.issues.get(event.issueId)
  const repo = issue && round.repos.get(issue.repoId)
  if (!issue || !repo || repo.status !== 'ready') return null
  const wanted = new Set<number>()
  const direct = new Set<number>()
  if (rule.audience === 'assignee') {
    const assignee = (event.payload.assignee as { id?: unknown } | undefined)?.id
    if (typeof assignee === 'number') wanted.add(assignee), direct.add(assignee)
  } else if (rule.audience === 'reviewer') {
    if (typeof event.payload.reviewerId === 'number') wanted.add(event.payload.reviewerId), direct.add(event.payload.reviewerId)
  } else for (const id of everyone(round, issue)) wanted.add(id)
  const mentions = rule.mentionsIn === 'issue' ? await mentioned(deps, issue.content) : []
  if (rule.mentionsIn === 'comment' && event.commentId !== null) {
    const text = round.commentTexts.get(event.commentId)
    if (text !== undefined) mentions.push(...(await mentioned(deps, text)))
  }
  // A mention by someone a person blocked does not notify them.
  const blockers = new Set(await blockersOf(deps.db, event.actorId, mentions))
  for (const id of mentions) if (!blockers.has(id)) wanted.add(id), direct.add(id)
  wanted.delete(event.actorId)
  const receivers = await readers(deps, repo, issue, [...wanted])
  return receivers.length ? { issue, repo, commentId: event.commentId ?? 0, actorId: event.actorId, receivers, direct: receivers.filter((id) => direct.has(id)) } : null
}
