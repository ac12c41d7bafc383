import { and, eq } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { perConnection, type Db } from '../db/client'
import { inJsonList } from '../db/sql'
import { AccessMode, issueUnitOf, repoGranteesCondition, type RepoUnitKey } from '../auth/access'
import { publicRepoOpen } from '../auth/visibility'
import { blocksAmong } from '../auth/blocking'
import { comments, issueAssignees, issueWatches, issues, orgUsers, repositories, users, watches, type IssueRow, type RepoRow } from '../db/schema'
import { maySignIn, type UserRow } from '../auth/caller'
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
    // plansOf's: the people mentioned, by name; the candidates and the repositories' owners; organisations' members among them.
    named: db
      .select({ id: users.id, lowerName: users.lowerName })
      .from(users)
      .where(and(inJsonList(users.lowerName, 'names'), eq(users.type, 0)))
      .prepare(),
    people: db.select().from(users).where(inJsonList(users.id, 'users')).prepare(),
    members: db
      .select({ orgId: orgUsers.orgId, id: orgUsers.uid })
      .from(orgUsers)
      .where(and(inJsonList(orgUsers.orgId, 'orgs'), inJsonList(orgUsers.uid, 'users')))
      .prepare(),
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

/** What one event notifies before its people's rights are checked (plansOf's first step). */
interface Draft {
  event: EventRecord & { actorId: number }
  issue: IssueRow
  repo: RepoRow
  /** Those it would tell, the mentioned not yet among them (they are once their names are found and their blocks checked). */
  wanted: Set<number>
  direct: Set<number>
  /** The names its new text mentions (lower case). */
  mentions: string[]
}

/** What `event` would notify, from its round's reads alone (null: nothing, or its issue or repository is gone). */
function draftOf(event: EventRecord, round: RoundReads): Draft | null {
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
  const text = rule.mentionsIn === 'issue' ? issue.content : rule.mentionsIn === 'comment' && event.commentId !== null ? round.commentTexts.get(event.commentId) : undefined
  return { event: event as Draft['event'], issue, repo, wanted, direct, mentions: text === undefined ? [] : mentionedNames(text) }
}

/** The key of a pair of ids (a repository and a person, an organisation and a member) in a set of pairs. */
const pairKey = (a: number, b: number) => `${a}:${b}`

/**
 * Who of each draft's wanted may read its issue or pull request: active people with read access
 * to its unit in the repository (repoAccesses' and unitMode's rule: site administrators, those
 * granted access to the unit (repoGranteesCondition: a team may give the code and not the
 * issues), and those a public repository is open to by its owner's visibility, organisation
 * members included) and its unit enabled. For the whole round: the people and the repositories'
 * owners in one read, the grants in one read a repository and unit, the organisations' members in
 * one.
 */
async function readersOf(deps: AppDeps, drafts: Draft[]): Promise<Map<Draft, number[]>> {
  const asking = drafts.filter((d) => d.wanted.size > 0 && (d.issue.isPull ? d.repo.hasPullRequests : d.repo.hasIssues))
  const found = new Map<Draft, number[]>()
  if (asking.length === 0) return found
  const reads = planReadsOf(deps.db)
  const candidates = new Set<number>()
  const byRepoUnit = new Map<string, { repo: RepoRow; unit: RepoUnitKey; ids: Set<number> }>()
  for (const d of asking) {
    const unit = issueUnitOf(d.issue)
    let of = byRepoUnit.get(`${d.repo.id} ${unit}`)
    if (!of) byRepoUnit.set(`${d.repo.id} ${unit}`, (of = { repo: d.repo, unit, ids: new Set() }))
    for (const id of d.wanted) candidates.add(id), of.ids.add(id)
  }
  const peopleAndOwners = JSON.stringify([...new Set([...candidates, ...asking.map((d) => d.repo.ownerId)])])
  const rows = (await reads.people.execute({ users: peopleAndOwners })) as UserRow[]
  const byId = new Map(rows.map((u) => [u.id, u]))
  // An organisation's members may read its public repositories it lets members see (publicRepoOpen).
  const orgs = [...new Set(asking.filter((d) => !d.repo.isPrivate && byId.get(d.repo.ownerId)?.type === 1).map((d) => d.repo.ownerId))]
  const [granted, members] = await Promise.all([
    Promise.all(
      [...byRepoUnit.values()].map(async ({ repo, unit, ids }) => {
        const rows = await deps.db
          .select({ id: users.id })
          .from(users)
          .where(and(inJsonList(users.id, [...ids]), repoGranteesCondition(repo, AccessMode.Read, unit)))
        return rows.map((u) => `${pairKey(repo.id, u.id)} ${unit}`)
      }),
    ).then((lists) => new Set(lists.flat())),
    orgs.length
      ? reads.members.execute({ orgs: JSON.stringify(orgs), users: JSON.stringify([...candidates]) }).then((rows) => new Set(rows.map((m) => pairKey(m.orgId, m.id))))
      : new Set<string>(),
  ])
  for (const d of asking) {
    const owner = byId.get(d.repo.ownerId)
    if (!owner) continue
    const readers: number[] = []
    for (const id of d.wanted) {
      const p = byId.get(id)
      if (!p || p.type !== 0 || !maySignIn(p)) continue
      if (p.isAdmin || granted.has(`${pairKey(d.repo.id, id)} ${issueUnitOf(d.issue)}`) || publicRepoOpen(d.repo, owner, p, members.has(pairKey(owner.id, id)))) readers.push(id)
    }
    found.set(d, readers)
  }
  return found
}

/**
 * What each of a round's events notifies (`round`: roundReads of those events), in its order;
 * those that notify nobody, or whose issue or repository is gone, are left out. The reads this
 * needs beyond the round's (the people mentioned, by name; their blocks of the actor; the
 * candidates' rights) are made for all the events at once: a few statements a round, not a few an
 * event. An event that cannot be worked out is reported to `failed` and left out.
 */
export async function plansOf(
  deps: AppDeps,
  events: EventRecord[],
  round: RoundReads,
  failed: (event: EventRecord, error: unknown) => void,
): Promise<{ event: EventRecord; plan: NotificationPlan }[]> {
  const drafts: Draft[] = []
  for (const event of events) {
    try {
      const draft = draftOf(event, round)
      if (draft) drafts.push(draft)
    } catch (e) {
      failed(event, e)
    }
  }
  const reads = planReadsOf(deps.db)
  const names = [...new Set(drafts.flatMap((d) => d.mentions))]
  // The people (not organisations) mentioned.
  const named = names.length ? new Map((await reads.named.execute({ names: JSON.stringify(names) })).map((u) => [u.lowerName, u.id])) : new Map<string, number>()
  if (named.size) {
    // A mention by someone a person blocked does not notify them.
    const blocks = await blocksAmong(
      deps.db,
      drafts.filter((d) => d.mentions.length).map((d) => d.event.actorId),
      [...named.values()],
    )
    for (const d of drafts)
      for (const name of d.mentions) {
        const id = named.get(name)
        if (id !== undefined && !blocks.get(d.event.actorId)?.has(id)) d.wanted.add(id), d.direct.add(id)
      }
  }
  for (const d of drafts) d.wanted.delete(d.event.actorId)
  const readers = await readersOf(deps, drafts)
  const plans: { event: EventRecord; plan: NotificationPlan }[] = []
  for (const d of drafts) {
    const receivers = readers.get(d) ?? []
    if (receivers.length)
      plans.push({
        event: d.event,
        plan: { issue: d.issue, repo: d.repo, commentId: d.event.commentId ?? 0, actorId: d.event.actorId, receivers, direct: receivers.filter((id) => d.direct.has(id)) },
      })
  }
  return plans
}
