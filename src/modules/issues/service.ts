import { eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { recordContentEdit } from '../content-history/service'
import { answerAfterCommit, writeTransaction } from '../../db/client'
import { attachmentFilesOf } from '../attachments/files'
import { inJsonList } from '../../db/sql'
import { issueAssignees, issues, labels, milestones, pullRequests, type IssueRow, type MilestoneRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { usersByIds } from '../../convert/people'
import { AccessMode } from '../../auth/access'
import { refuseBlocked } from '../../auth/blocking'
import type { RepoContext } from '../../auth/repo-context'
import { forbidden } from '../../lib/errors'
import { nowUnix, parseTimestamp } from '../../lib/time'
import { checkRequiredText, MAX_TITLE } from '../../lib/validate'
import { issueToApi, type IssueRelations } from '../../convert/issue'
import { pullsToApi } from '../../convert/pull'
import { gitOfRow } from '../../auth/repo-context'
import { readRef } from '../../git/merge'
import { ZERO_ID } from '../../events/push-events'
import { moveRefs, pullHeadRef } from '../../push'
import { recordIssueEvent, recordNewIssueEvent } from '../../events/issue-events'
import { insertComment } from '../comments/service'
import type { EditChanges } from '../../events/outbox'
import { findIssue, nextIssueIndex, statementsOf } from './queries'
import { addAssignees, addLabelLinks, bumpLabels, bumpMilestone, bumpRepoCounters, closePinGap, labelIdsOfIssue, linkLabels, repoLabelsByIds, repoMilestone, resolveAssignees, setAssignees, setClosed, setMilestone, unlinkLabels } from './state'

/** A deadline from a body: absent → undefined (unchanged), null or "" → 0 (none), else Unix seconds (422 if bad). */
export const parseDue = (value: string | null | undefined, field: string): number | undefined =>
  value === undefined ? undefined : value === null || value === '' ? 0 : parseTimestamp(value, field)

export interface NewIssue {
  title: string
  body?: string
  ref?: string
  assignee?: string
  assignees?: string[]
  milestone?: number
  labels?: number[]
  closed?: boolean
  due_date?: string | null
}

const requireTitle = (title: string) => checkRequiredText(title, MAX_TITLE, 'Title')

/**
 * What makes a new issue a pull request (the pulls service), both run in the issue's own
 * transaction: `check` first (it may refuse: nothing is written), then `attach` once the issue
 * row exists, which writes the pull request's row and its `pull.opened` event (the issue then
 * announces no `issue.opened`).
 */
export interface NewPullHook {
  check: () => Promise<void> | void
  attach: (issue: IssueRow) => Promise<void> | void
}

/**
 * Files an issue (or, with `pull`, a pull request). Assignees, milestone and labels are applied
 * only for writers (silently dropped otherwise, as Gitea). The index comes from the repository's
 * counter row, taken and bumped in the same write transaction: unique, gap-free, never reused.
 */
export async function createIssue(
  deps: AppDeps,
  ctx: RepoContext,
  poster: UserRow,
  opts: NewIssue,
  pull?: NewPullHook,
): Promise<{ row: IssueRow; rel: IssueRelations }> {
  requireTitle(opts.title)
  const writer = ctx.mode >= AccessMode.Write
  const assigneeNames = writer ? [...(opts.assignee ? [opts.assignee] : []), ...(opts.assignees ?? [])] : []
  const people = await resolveAssignees(deps, ctx.repo, assigneeNames)
  const deadline = writer ? (parseDue(opts.due_date, 'due_date') ?? 0) : 0
  const now = nowUnix()
  const closed = opts.closed === true
  const s = statementsOf(deps.db)
  const { sent, milestone, labelRows } = await writeTransaction(deps.db, async () => {
    // Gitea's NewIssue and NewPullRequest: refused to one the owner or an assignee blocked.
    await refuseBlocked(deps.db, poster.id, [ctx.repo.ownerId, ...people.map((p) => p.id)])
    await pull?.check()
    const [milestone, labelRows] = await Promise.all([
      writer && opts.milestone ? repoMilestone(deps, ctx.repo.id, opts.milestone) : null,
      writer && opts.labels?.length ? repoLabelsByIds(deps, ctx.repo, opts.labels) : [],
    ])
    // Sent together: the next index taken, the row that reads it back, the counters of the
    // repository and milestone. The first two are prepared statements, executed (and so sent, and
    // run) in the order they are called here. All settled before answering, so a failure is the
    // first in that order, not in time (Promise.all's): a repository deleted meanwhile fails the
    // index's upsert on its foreign key (404), not only the insert on the index it then finds
    // none of (SQLite's NOT NULL, which settled first).
    const sent: Promise<IssueRow> = answerAfterCommit(
      deps.db,
      Promise.allSettled([
        nextIssueIndex(deps, ctx.repo.id),
        s.insertIssue.execute({
          repo: ctx.repo.id,
          poster: poster.id,
          title: opts.title,
          content: opts.body ?? '',
          ref: pull ? '' : (opts.ref ?? ''),
          milestone: milestone?.id ?? 0,
          closed,
          pull: !!pull,
          deadline,
          now,
          closedUnix: closed ? now : 0,
        }),
        pull ? bumpRepoCounters(deps, ctx.repo.id, true, 1, closed ? 1 : 0) : s.countNewIssue.execute({ repo: ctx.repo.id, closedCount: closed ? 1 : 0 }),
        milestone ? bumpMilestone(deps, milestone.id, 1, closed ? 1 : 0) : null,
      ]).then((settled) => {
        const failed = settled.find((result) => result.status === 'rejected')
        if (failed) throw failed.reason
        return (settled[1] as PromiseFulfilledResult<IssueRow[]>).value[0]!
      }),
    )
    labelRows.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : x.id - y.id))
    // The new row's links need its id (and a milestone's bump is a query builder, sent a
    // microtask later than the prepared statements): then the transaction waits for them. A plain
    // issue awaits nothing, and its events follow the insert unanswered (on PostgreSQL only its
    // COMMIT waits under the write lock for answers to reach this process).
    if (pull || milestone || labelRows.length || people.length) {
      const row = await sent
      // Written behind, sent with COMMIT (labels and people are distinct: found by distinct ids and names).
      await Promise.all([addLabelLinks(deps, row, labelRows.map((l) => l.id)), addAssignees(deps, row.id, people)])
      await pull?.attach(row)
    }
    if (!pull) {
      await recordNewIssueEvent(deps.db, ctx.repo.id, poster.id, 'issue.opened')
      // Filed closed: Gitea changes its status right after creating it, which announces the close.
      if (closed) await recordNewIssueEvent(deps.db, ctx.repo.id, poster.id, 'issue.closed')
    }
    return { sent, milestone, labelRows }
  })
  const row = await sent
  if (milestone) {
    milestone.numIssues += 1
    milestone.numClosedIssues += closed ? 1 : 0
  }
  const rel: IssueRelations = { poster, labels: labelRows, milestone, assignees: people }
  return { row, rel: pull ? { ...rel, pull: { hasMerged: false, mergedUnix: 0 } } : rel }
}

export interface IssueEdit {
  title?: string
  body?: string
  ref?: string
  assignee?: string | null
  assignees?: string[]
  milestone?: number | null
  state?: string
  due_date?: string | null
  unset_due_date?: boolean
}

/** Who may edit an issue or a pull request (its title, text, state): its poster or a writer of its unit. */
export const mayEditIssue = (ctx: Pick<RepoContext, 'mode'>, issue: Pick<IssueRow, 'posterId'>, caller: Pick<UserRow, 'id'>): boolean =>
  ctx.mode >= AccessMode.Write || issue.posterId === caller.id

/**
 * Edits an issue: the poster or a writer; assignees, milestone and deadline are for writers only.
 * `alsoInTransaction` (the pulls service: a pull request's own fields) runs first in the edit's
 * transaction, with the issue as it was; it may refuse (nothing is changed then).
 */
export async function editIssue(
  deps: AppDeps,
  ctx: RepoContext,
  index: number,
  caller: UserRow,
  opts: IssueEdit,
  alsoInTransaction?: (issue: IssueRow) => Promise<void> | void,
): Promise<IssueRow> {
  const issue = await findIssue(deps, ctx.repo.id, index)
  const writer = ctx.mode >= AccessMode.Write
  if (!mayEditIssue(ctx, issue, caller)) throw forbidden('Only the poster or a writer may edit this issue')
  if (opts.title !== undefined && opts.title !== '') requireTitle(opts.title)
  const assigneeNames = !writer
    ? undefined
    : opts.assignees !== undefined
      ? opts.assignees
      : opts.assignee !== undefined
        ? opts.assignee
          ? [opts.assignee]
          : []
        : undefined
  const people = assigneeNames ? await resolveAssignees(deps, ctx.repo, assigneeNames) : undefined
  const deadline = writer ? (opts.unset_due_date ? 0 : parseDue(opts.due_date, 'due_date')) : undefined
  const now = nowUnix()
  return await writeTransaction(deps.db, async () => {
    let current = await findIssue(deps, ctx.repo.id, index)
    const before = current
    // Gitea's ChangeTitle and ChangeContent: not by one the poster or the owner blocked, but for the repository's administrators.
    if (((opts.title && opts.title !== current.title) || opts.body !== undefined) && ctx.mode < AccessMode.Admin)
      await refuseBlocked(deps.db, caller.id, [current.posterId, ctx.repo.ownerId])
    await alsoInTransaction?.(current)
    if (writer && opts.milestone !== undefined) {
      const target = opts.milestone ? await repoMilestone(deps, ctx.repo.id, opts.milestone) : null
      await setMilestone(deps, current, target?.id ?? 0)
      current = { ...current, milestoneId: target?.id ?? 0 } // setClosed below counts on the new milestone
      await announceMilestone(deps, before, target, caller.id)
    }
    const set: Partial<IssueRow> = { updatedUnix: now }
    if (opts.title) set.title = opts.title
    if (opts.body !== undefined) set.content = opts.body
    if (deadline !== undefined) set.deadlineUnix = deadline
    // Gitea's ChangeIssueRef: an issue's (never a pull request's), by its poster or a writer.
    if (opts.ref !== undefined && !before.isPull) set.ref = opts.ref
    await deps.db.update(issues).set(set).where(eq(issues.id, current.id))
    if (deadline !== undefined) await recordDeadlineChange(deps, before, caller, deadline)
    if (set.ref !== undefined && set.ref !== before.ref) await recordIssueEvent(deps.db, before, caller.id, 'issue.ref_changed', { oldRef: before.ref, newRef: set.ref })
    const changes: EditChanges = {}
    if (set.title !== undefined && set.title !== before.title) changes.title = { from: before.title }
    if (set.content !== undefined && set.content !== before.content) {
      changes.body = { from: before.content }
      await recordContentEdit(deps.db, { issueId: before.id, commentId: null }, { content: before.content, posterId: before.posterId, createdUnix: before.createdUnix }, { content: set.content, editorId: caller.id, editedUnix: now })
    }
    if (changes.title || changes.body) await recordIssueEvent(deps.db, before, caller.id, 'issue.edited', { changes })
    if (people) {
      const previous = await deps.db.select({ id: issueAssignees.assigneeId }).from(issueAssignees).where(eq(issueAssignees.issueId, current.id))
      await setAssignees(deps, current.id, people)
      await announceAssignees(deps, before, previous.map((p) => p.id), people, caller.id)
    }
    if (opts.state !== undefined && (opts.state === 'closed') !== before.isClosed) {
      await setClosed(deps, current, opts.state === 'closed', now)
      await recordIssueEvent(deps.db, before, caller.id, opts.state === 'closed' ? 'issue.closed' : 'issue.reopened')
    }
    return await findIssue(deps, ctx.repo.id, index)
  })
}

/** The milestoned/demilestoned events of a milestone change (nothing when it stays); inside the write transaction. */
async function announceMilestone(deps: AppDeps, issue: IssueRow, target: MilestoneRow | null, actorId: number): Promise<void> {
  if (issue.milestoneId === (target?.id ?? 0)) return
  if (issue.milestoneId > 0) {
    const old = (await deps.db.select({ id: milestones.id, title: milestones.name }).from(milestones).where(eq(milestones.id, issue.milestoneId)))[0]
    await recordIssueEvent(deps.db, issue, actorId, 'issue.demilestoned', { milestone: old ?? { id: issue.milestoneId, title: '' } })
  }
  if (target) await recordIssueEvent(deps.db, issue, actorId, 'issue.milestoned', { milestone: { id: target.id, title: target.name } })
}

/** One assigned/unassigned event per person added or removed; inside the write transaction. */
async function announceAssignees(deps: AppDeps, issue: IssueRow, previousIds: number[], people: UserRow[], actorId: number): Promise<void> {
  const nowIds = new Set(people.map((u) => u.id))
  const removedIds = previousIds.filter((id) => !nowIds.has(id))
  const removed = await usersByIds(deps, removedIds)
  for (const id of removedIds)
    await recordIssueEvent(deps.db, issue, actorId, 'issue.unassigned', { assignee: { id, login: removed.get(id)?.name ?? '' } })
  for (const u of people)
    if (!previousIds.includes(u.id)) await recordIssueEvent(deps.db, issue, actorId, 'issue.assigned', { assignee: { id: u.id, login: u.name } })
}

/** Gitea's comment types of a due date added, changed and removed. */
export const DEADLINE_EVENTS = { added: 16, modified: 17, removed: 18 } as const
const dayOf = (unix: number) => new Date(unix * 1000).toISOString().slice(0, 10)

/**
 * The timeline row of a deadline change (Gitea's createDeadlineComment: the new day, "new|old",
 * or the old day, as YYYY-MM-DD); nothing when it stays. Inside the write transaction.
 */
async function recordDeadlineChange(deps: AppDeps, issue: IssueRow, doer: UserRow, deadline: number): Promise<void> {
  const old = issue.deadlineUnix
  if (old === deadline) return
  if (!old) await insertComment(deps, issue, doer, DEADLINE_EVENTS.added, dayOf(deadline))
  else if (!deadline) await insertComment(deps, issue, doer, DEADLINE_EVENTS.removed, dayOf(old))
  else await insertComment(deps, issue, doer, DEADLINE_EVENTS.modified, `${dayOf(deadline)}|${dayOf(old)}`)
}

/** Sets or clears (null) an issue's deadline; writers only (the route checked). Answers the stored value. */
export async function setIssueDeadline(deps: AppDeps, ctx: RepoContext, index: number, due: string | null): Promise<number> {
  const deadline = parseDue(due, 'due_date') ?? 0
  await writeTransaction(deps.db, async () => {
    const issue = await findIssue(deps, ctx.repo.id, index)
    await deps.db.update(issues).set({ deadlineUnix: deadline, updatedUnix: nowUnix() }).where(eq(issues.id, issue.id))
    if (ctx.caller.user) await recordDeadlineChange(deps, issue, ctx.caller.user, deadline)
  })
  return deadline
}

/** Replaces, adds, removes or clears labels of an issue (writers; the caller checked). */
export async function changeIssueLabels(
  deps: AppDeps,
  ctx: RepoContext,
  index: number,
  action: 'add' | 'replace' | 'clear' | 'remove',
  labelIds: number[],
): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const issue = await findIssue(deps, ctx.repo.id, index)
    const wanted = (await repoLabelsByIds(deps, ctx.repo, labelIds)).map((l) => l.id)
    const before = await labelIdsOfIssue(deps, issue.id)
    if (action === 'replace') {
      await unlinkLabels(deps, issue, before.filter((id) => !wanted.includes(id)))
      await linkLabels(deps, issue, wanted)
    } else if (action === 'add') await linkLabels(deps, issue, wanted)
    else if (action === 'remove') await unlinkLabels(deps, issue, wanted)
    else await unlinkLabels(deps, issue, null)
    await deps.db.update(issues).set({ updatedUnix: nowUnix() }).where(eq(issues.id, issue.id))
    await announceLabels(deps, issue, before, await labelIdsOfIssue(deps, issue.id), ctx.caller.user?.id ?? 0)
  })
}

/**
 * The label event of a label change: `label_cleared` when the issue lost all its labels, else
 * `label_updated`; both carry the labels added and removed (id and name: a label may be deleted later).
 */
async function announceLabels(deps: AppDeps, issue: IssueRow, before: number[], after: number[], actorId: number): Promise<void> {
  const added = after.filter((id) => !before.includes(id))
  const removed = before.filter((id) => !after.includes(id))
  if (added.length === 0 && removed.length === 0) return
  const names = new Map(
    (await deps.db.select({ id: labels.id, name: labels.name }).from(labels).where(inJsonList(labels.id, [...added, ...removed]))).map((l) => [l.id, l.name]),
  )
  const named = (ids: number[]) => ids.map((id) => ({ id, name: names.get(id) ?? '' }))
  const kind = after.length === 0 ? 'issue.label_cleared' : 'issue.label_updated'
  await recordIssueEvent(deps.db, issue, actorId, kind, { added: named(added), removed: named(removed) })
}

/**
 * Deletes an issue or pull request (Gitea's DeleteIssue: repository admins, the site admin among
 * them). Its comments, reviews, reactions, label links, assignees, tracked times, subscriptions,
 * notification threads, dependencies (both ways), attachments and pull request row go with it (the
 * schema's cascades; the attachments' files after the commit, or by the repository sweep after a
 * crash); the pinned issues after it move up a place; the counters of
 * the repository, its milestone and its labels follow. The outbox keeps its Issue record as it was
 * (`issue.deleted`: Gitea's `issues` hook with action `deleted`; for a pull request, its
 * PullRequest record too, for the `pull_request` hook). A pull request's `refs/pull/N/head` goes
 * through the one push path as the server's own move, the rows deleted once it is swapped: the
 * recorder's pending push is the intent, and its settling (src/push/sync.ts) makes the ref agree
 * with the rows whatever failed or crashed in between.
 */
export async function deleteIssue(deps: AppDeps, ctx: RepoContext, index: number, caller: UserRow): Promise<void> {
  const issue = await findIssue(deps, ctx.repo.id, index)
  const ref = pullHeadRef(issue.index)
  const head = issue.isPull ? await readRef(gitOfRow(deps, ctx.repo), ref) : null
  if (!head) return await deleteIssueRows(deps, ctx, index, caller)
  await moveRefs(deps, ctx, caller, [{ ref, old: head, new: ZERO_ID }], () => deleteIssueRows(deps, ctx, index, caller), { serverRefs: true })
}

async function deleteIssueRows(deps: AppDeps, ctx: RepoContext, index: number, caller: UserRow): Promise<void> {
  const files = await writeTransaction(deps.db, async () => {
    const issue = await findIssue(deps, ctx.repo.id, index)
    const record = await issueToApi(deps, ctx.repo, issue, null)
    const pull = issue.isPull ? await pullOfIssue(deps, issue) : undefined
    const pullRecord = pull ? (await pullsToApi(deps, ctx.repo, ctx.owner, [{ pull, issue }], null))[0] : undefined
    const closed = issue.isClosed ? 1 : 0
    await bumpRepoCounters(deps, issue.repoId, issue.isPull, -1, -closed)
    await bumpMilestone(deps, issue.milestoneId, -1, -closed)
    await bumpLabels(deps, await labelIdsOfIssue(deps, issue.id), -1, -closed)
    await recordIssueEvent(deps.db, issue, caller.id, 'issue.deleted', { issue: record, ...(pullRecord ? { pull_request: pullRecord } : {}) })
    // Its attachments' rows (its comments' too) go by the cascade; their files once it committed.
    const files = await attachmentFilesOf(deps, { issueId: issue.id })
    await deps.db.delete(issues).where(eq(issues.id, issue.id))
    await closePinGap(deps, issue)
    return files
  })
  files.removeFiles()
}

const pullOfIssue = async (deps: AppDeps, issue: IssueRow) => (await deps.db.select().from(pullRequests).where(eq(pullRequests.issueId, issue.id)))[0]
