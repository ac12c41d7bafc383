import { and, asc, count, desc, eq, or, sql, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { Db } from '../../db/client'
import { rowMapper, valueRows } from '../../db/row-mapper'
import { writeTransaction } from '../../db/client'
import { containsPattern, everyJsonGroup, inJsonList, likeIgnoringCase } from '../../db/sql'
import { issueAssignees, issueIndexes, issueLabels, issues, labels, milestones, pullRequests, repositories, users } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { getVisibleUserByName, usersByIds } from '../users/service'
import { AccessMode, accessLevel, type RepoRow } from '../../auth/access'
import type { RepoContext } from '../../auth/repo-context'
import { forbidden, notFound, unprocessable } from '../../lib/errors'
import type { Page } from '../../lib/pagination'
import { nowUnix, parseTimestamp } from '../../lib/time'
import { checkRequiredText, MAX_TITLE, splitFilter } from '../../lib/validate'
import {
  toApiIssue,
  type IssueRelations,
  type IssueRow,
  type LabelRow,
  type MilestoneRow,
} from '../../lib/convert/issue'
import { userConverter } from '../../lib/convert/user'
import { recordIssueEvent } from '../../events/issue-events'
import type { EditChanges } from '../../events/outbox'


/** Prepared statements of the issue area, built once per database. */
function prepareStatements(db: Db) {
  return {
    issueByIndex: db
      .select()
      .from(issues)
      .where(and(eq(issues.repoId, sql.placeholder('repo')), eq(issues.index, sql.placeholder('index'))))
      .prepare(),
    pageByState: db
      .select()
      .from(issues)
      .where(and(eq(issues.repoId, sql.placeholder('repo')), eq(issues.isClosed, sql.placeholder('closed'))))
      .orderBy(desc(issues.createdUnix), desc(issues.id))
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .prepare(),
    insertIssue: db
      .insert(issues)
      .values({
        repoId: sql.placeholder('repo'),
        index: sql.placeholder('index'),
        posterId: sql.placeholder('poster'),
        title: sql.placeholder('title'),
        content: sql.placeholder('content'),
        milestoneId: sql.placeholder('milestone'),
        isClosed: sql.placeholder('closed'),
        isPull: sql.placeholder('pull'),
        deadlineUnix: sql.placeholder('deadline'),
        createdUnix: sql.placeholder('now'),
        updatedUnix: sql.placeholder('now'),
        closedUnix: sql.placeholder('closedUnix'),
      })
      .returning()
      .prepare(),
    countNewIssue: db
      .update(repositories)
      .set({
        numIssues: sql`${repositories.numIssues} + 1`,
        // 1 for an issue filed closed: a number of its own (PostgreSQL adds no booleans).
        numClosedIssues: sql`${repositories.numClosedIssues} + ${sql.placeholder('closedCount')}`,
      })
      .where(eq(repositories.id, sql.placeholder('repo')))
      .prepare(),
    assigneesOf: db
      .select({ issueId: issueAssignees.issueId, userId: issueAssignees.assigneeId })
      .from(issueAssignees)
      .where(inJsonList(issueAssignees.issueId, 'ids'))
      .orderBy(asc(issueAssignees.id))
      .prepare(),
    labelLinksOf: db
      .select({ issueId: issueLabels.issueId, labelId: issueLabels.labelId })
      .from(issueLabels)
      .where(inJsonList(issueLabels.issueId, 'ids'))
      .prepare(),
    labelsByIds: db.select().from(labels).where(inJsonList(labels.id, 'ids')).orderBy(asc(labels.name), asc(labels.id)).prepare(),
    milestonesByIds: db.select().from(milestones).where(inJsonList(milestones.id, 'ids')).prepare(),
    pullStatesOf: db
      .select({ issueId: pullRequests.issueId, hasMerged: pullRequests.hasMerged, mergedUnix: pullRequests.mergedUnix })
      .from(pullRequests)
      .where(inJsonList(pullRequests.issueId, 'ids'))
      .prepare(),
    nextIndex: db
      .insert(issueIndexes)
      .values({ repoId: sql.placeholder('repo'), maxIndex: 1 })
      .onConflictDoUpdate({ target: issueIndexes.repoId, set: { maxIndex: sql`${issueIndexes.maxIndex} + 1` } })
      .returning({ index: issueIndexes.maxIndex })
      .prepare(),
  }
}
// Raw-values mappers for the statements of the issue list (Drizzle's generic mapping costs as much as the queries).
const issueRows = rowMapper<IssueRow>(issues)
const labelRows = rowMapper<LabelRow>(labels)

const statementCache = new WeakMap<Db, ReturnType<typeof prepareStatements>>()
export function statementsOf(db: Db) {
  let s = statementCache.get(db)
  if (!s) statementCache.set(db, (s = prepareStatements(db)))
  return s
}

/**
 * The next index of a repository's issues and pull requests (one sequence, never reused).
 * Call it inside writeTransaction, in the transaction that inserts the issue row.
 */
export async function nextIssueIndex(deps: AppDeps, repoId: number): Promise<number> {
  return (await statementsOf(deps.db).nextIndex.execute({ repo: repoId }))[0]!.index
}

/** An issue (or pull request) by its per-repository index; 404 when there is none. */
export async function findIssue(deps: AppDeps, repoId: number, index: number): Promise<IssueRow> {
  const row = Number.isSafeInteger(index) ? (await statementsOf(deps.db).issueByIndex.execute({ repo: repoId, index }))[0] : undefined
  if (!row) throw notFound(`issue does not exist [repo_id: ${repoId}, index: ${index}]`)
  return row
}

/** Labels of each issue (by name), in two queries whatever the number of issues. */
async function labelsOfIssues(deps: AppDeps, issueIds: number[]): Promise<Map<number, LabelRow[]>> {
  const s = statementsOf(deps.db)
  const result = new Map<number, LabelRow[]>(issueIds.map((id) => [id, []]))
  const links = await s.labelLinksOf.execute({ ids: JSON.stringify(issueIds) })
  if (links.length === 0) return result
  const labelIds = [...new Set(links.map((l) => l.labelId))]
  const issuesOfLabel = new Map<number, number[]>()
  for (const l of links) {
    const list = issuesOfLabel.get(l.labelId)
    if (list) list.push(l.issueId)
    else issuesOfLabel.set(l.labelId, [l.issueId])
  }
  // Labels come back in name order, so each issue's list is in name order too.
  for (const values of await valueRows(s.labelsByIds, { ids: JSON.stringify(labelIds) })) {
    const label = labelRows.map(values)
    for (const issueId of issuesOfLabel.get(label.id)!) result.get(issueId)!.push(label)
  }
  return result
}

/** Everything the Issue records of `rows` refer to, in five queries whatever their number. */
export async function issueRelations(deps: AppDeps, rows: IssueRow[]): Promise<Map<number, IssueRelations>> {
  const result = new Map<number, IssueRelations>()
  if (rows.length === 0) return result
  const s = statementsOf(deps.db)
  const issueIds = rows.map((r) => r.id)
  const assigneeLinks = await s.assigneesOf.execute({ ids: JSON.stringify(issueIds) })
  const labelsOf = await labelsOfIssues(deps, issueIds)
  const milestoneIds = [...new Set(rows.map((r) => r.milestoneId).filter((id) => id > 0))]
  const milestoneById = new Map<number, MilestoneRow>(
    milestoneIds.length ? (await s.milestonesByIds.execute({ ids: JSON.stringify(milestoneIds) })).map((m) => [m.id, m]) : [],
  )
  const people = await usersByIds(deps, [...rows.map((r) => r.posterId), ...assigneeLinks.map((a) => a.userId)])
  for (const r of rows)
    result.set(r.id, { poster: people.get(r.posterId), labels: labelsOf.get(r.id)!, milestone: milestoneById.get(r.milestoneId) ?? null, assignees: [] })
  for (const a of assigneeLinks) {
    const u = people.get(a.userId)
    if (u) result.get(a.issueId)!.assignees.push(u)
  }
  const pullIds = rows.filter((r) => r.isPull).map((r) => r.id)
  if (pullIds.length)
    for (const p of await s.pullStatesOf.execute({ ids: JSON.stringify(pullIds) })) result.get(p.issueId)!.pull = { hasMerged: p.hasMerged, mergedUnix: p.mergedUnix }
  return result
}

/** Issue records for a page of rows (fixed number of queries). */
export async function issuesToApi(deps: AppDeps, repo: RepoRow, rows: IssueRow[], viewer: UserRow | null) {
  const rel = await issueRelations(deps, rows)
  const userToApi = userConverter(deps.config, viewer)
  return rows.map((r) => toApiIssue(deps.config, repo, r, rel.get(r.id)!, viewer, userToApi))
}

export const issueToApi = async (deps: AppDeps, repo: RepoRow, row: IssueRow, viewer: UserRow | null) =>
  (await issuesToApi(deps, repo, [row], viewer))[0]!

export interface IssueFilter {
  state?: string
  labels?: string
  q?: string
  milestones?: string
  type?: string
  /** User names (Gitea 1.15+): the poster, or one of the assignees; an unknown name is a 404. */
  created_by?: string
  assigned_by?: string
}

/**
 * Label or milestone ids for each entry of a comma-separated list of ids or names: a name stands
 * for every row of that name in the repository; an unknown name for none ([-1] matches nothing).
 */
async function idsByIdOrName(deps: AppDeps, table: typeof labels | typeof milestones, repoId: number, list: string[]): Promise<number[][]> {
  const names = list.filter((x) => !/^\d+$/.test(x))
  const found = names.length
    ? await deps.db
        .select({ id: table.id, name: table.name })
        .from(table)
        .where(and(eq(table.repoId, repoId), inJsonList(table.name, names)))
    : []
  return list.map((x) => {
    // An id past 2^53 names nothing (and PostgreSQL's bigint could not be asked for it).
    if (/^\d+$/.test(x)) return [Number.isSafeInteger(Number(x)) ? Number(x) : -1]
    const ids = found.filter((f) => f.name === x).map((f) => f.id)
    return ids.length ? ids : [-1]
  })
}

/** Issues of a repository, newest first, filtered; with the total for the page headers. */
export async function listIssues(deps: AppDeps, repo: RepoRow, viewer: UserRow | null, filter: IssueFilter, page: Page): Promise<{ rows: IssueRow[]; total: number }> {
  // The query schema (ListIssuesQuery) admits only known states and types.
  const state = filter.state || 'open'
  // Gitea's clients send `type=all` (as its own tests do): the same as no type at all.
  const type = filter.type === 'all' ? undefined : filter.type
  // A user the caller may not see answers like an unknown one (404), not with an empty list.
  const poster = filter.created_by ? await getVisibleUserByName(deps, filter.created_by, viewer) : undefined
  const assignee = filter.assigned_by ? await getVisibleUserByName(deps, filter.assigned_by, viewer) : undefined
  const s = statementsOf(deps.db)
  const plain = state !== 'all' && !filter.labels && !filter.q && !filter.milestones && !type && !poster && !assignee
  if (plain) {
    const closed = state === 'closed'
    const rows = (await valueRows(s.pageByState, { repo: repo.id, closed, limit: page.limit, offset: page.offset }))
      .map((v) => issueRows.map(v))
    // The repository's counters (kept exact in every write transaction) spare a count over the index.
    const closedTotal = repo.numClosedIssues + repo.numClosedPulls
    const total = closed ? closedTotal : repo.numIssues + repo.numPulls - closedTotal
    return { rows, total }
  }
  const where: (SQL | undefined)[] = [eq(issues.repoId, repo.id)]
  if (state !== 'all') where.push(eq(issues.isClosed, state === 'closed'))
  if (type) where.push(eq(issues.isPull, type === 'pulls'))
  if (poster) where.push(eq(issues.posterId, poster.id))
  if (assignee)
    where.push(
      sql`exists (select 1 from ${issueAssignees} where ${issueAssignees.issueId} = ${issues.id} and ${issueAssignees.assigneeId} = ${assignee.id})`,
    )
  if (filter.q) {
    const pattern = containsPattern(filter.q)
    where.push(or(likeIgnoringCase(issues.title, pattern), likeIgnoringCase(issues.content, pattern)))
  }
  // Every label named must be on the issue; any of the milestones named will do. Each filter is one
  // JSON value whatever its length: every entry of the label list (an array of ids each) must have
  // one of its labels on the issue.
  const labelSets = await idsByIdOrName(deps, labels, repo.id, splitFilter(filter.labels, 'labels'))
  if (labelSets.length)
    where.push(
      everyJsonGroup(
        labelSets,
        (set) => sql`exists (select 1 from ${issueLabels} where ${issueLabels.issueId} = ${issues.id} and ${inJsonList(issueLabels.labelId, set)})`,
      ),
    )
  const milestoneIds = (await idsByIdOrName(deps, milestones, repo.id, splitFilter(filter.milestones, 'milestones'))).flat()
  if (milestoneIds.length) where.push(inJsonList(issues.milestoneId, milestoneIds))
  const condition = and(...where)
  const rows = await deps.db
    .select()
    .from(issues)
    .where(condition)
    .orderBy(desc(issues.createdUnix), desc(issues.id))
    .limit(page.limit)
    .offset(page.offset)
  const total = (await deps.db.select({ n: count() }).from(issues).where(condition))[0]!.n
  return { rows, total }
}

/**
 * Users named as assignees of an issue of `repo`; 422 for an unknown name and for a user who
 * cannot write to the repository (Gitea's CanBeAssigned).
 */
async function resolveAssignees(deps: AppDeps, repo: RepoRow, names: string[]): Promise<UserRow[]> {
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

/** Labels of this repository with the given ids; 422 when one is unknown or belongs to another repository. */
export async function repoLabelsByIds(deps: AppDeps, repoId: number, ids: number[]): Promise<LabelRow[]> {
  const unique = [...new Set(ids)]
  if (unique.length === 0) return []
  const found = await deps.db
    .select()
    .from(labels)
    .where(and(eq(labels.repoId, repoId), inJsonList(labels.id, unique)))
  if (found.length !== unique.length) {
    const missing = unique.filter((id) => !found.some((l) => l.id === id))
    throw unprocessable(`label does not exist in this repository [id: ${missing.join(', ')}]`, 'Labels')
  }
  return found
}

/** A milestone of this repository; 422 when unknown. */
async function repoMilestone(deps: AppDeps, repoId: number, id: number): Promise<MilestoneRow> {
  const m = (await deps.db
    .select()
    .from(milestones)
    .where(and(eq(milestones.repoId, repoId), eq(milestones.id, id))))[0]
  if (!m) throw unprocessable(`milestone does not exist [id: ${id}]`, 'Milestone')
  return m
}

/** A deadline from a body: absent → undefined (unchanged), null or "" → 0 (none), else Unix seconds (422 if bad). */
export const parseDue = (value: string | null | undefined, field: string): number | undefined =>
  value === undefined ? undefined : value === null || value === '' ? 0 : parseTimestamp(value, field)

/** The repository's open/closed counters for the kind of `issue` (issues or pull requests). */
async function bumpRepoCounters(deps: AppDeps, repoId: number, isPull: boolean, total: number, closed: number) {
  const [all, shut] = isPull ? [repositories.numPulls, repositories.numClosedPulls] : [repositories.numIssues, repositories.numClosedIssues]
  const key = isPull ? (['numPulls', 'numClosedPulls'] as const) : (['numIssues', 'numClosedIssues'] as const)
  await deps.db
    .update(repositories)
    .set({ [key[0]]: sql`${all} + ${total}`, [key[1]]: sql`${shut} + ${closed}` })
    .where(eq(repositories.id, repoId))
}

async function bumpMilestone(deps: AppDeps, milestoneId: number, total: number, closed: number) {
  if (milestoneId <= 0) return
  await deps.db
    .update(milestones)
    .set({ numIssues: sql`${milestones.numIssues} + ${total}`, numClosedIssues: sql`${milestones.numClosedIssues} + ${closed}` })
    .where(eq(milestones.id, milestoneId))
}

async function bumpLabels(deps: AppDeps, labelIds: number[], total: number, closed: number) {
  if (labelIds.length === 0) return
  await deps.db
    .update(labels)
    .set({ numIssues: sql`${labels.numIssues} + ${total}`, numClosedIssues: sql`${labels.numClosedIssues} + ${closed}` })
    .where(inJsonList(labels.id, labelIds))
}

const labelIdsOfIssue = async (deps: AppDeps, issueId: number) =>
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
  const added = [...new Set(labelIds)].filter((id) => !current.has(id))
  if (added.length === 0) return
  await deps.db
    .insert(issueLabels)
    .values(added.map((labelId) => ({ issueId: issue.id, labelId })))
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
async function setAssignees(deps: AppDeps, issueId: number, people: UserRow[]): Promise<void> {
  await deps.db.delete(issueAssignees).where(eq(issueAssignees.issueId, issueId))
  if (people.length) await deps.db.insert(issueAssignees).values(people.map((u) => ({ issueId, assigneeId: u.id })))
}

/** Opens or closes an issue and moves every counter that follows it; inside a write transaction. */
export async function setClosed(deps: AppDeps, issue: IssueRow, closed: boolean, now: number): Promise<void> {
  if (issue.isClosed === closed) return
  const d = closed ? 1 : -1
  await deps.db
    .update(issues)
    .set({ isClosed: closed, closedUnix: closed ? now : 0 })
    .where(eq(issues.id, issue.id))
  await bumpRepoCounters(deps, issue.repoId, issue.isPull, 0, d)
  await bumpMilestone(deps, issue.milestoneId, 0, d)
  await bumpLabels(deps, await labelIdsOfIssue(deps, issue.id), 0, d)
}

/** Moves an issue to another milestone (0 = none) with the counters of both; inside a write transaction. */
async function setMilestone(deps: AppDeps, issue: IssueRow, milestoneId: number): Promise<void> {
  if (issue.milestoneId === milestoneId) return
  const closed = issue.isClosed ? 1 : 0
  await bumpMilestone(deps, issue.milestoneId, -1, -closed)
  await bumpMilestone(deps, milestoneId, 1, closed)
  await deps.db.update(issues).set({ milestoneId }).where(eq(issues.id, issue.id))
}

export interface NewIssue {
  title: string
  body?: string
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
 * counter row, taken and bumped in the same BEGIN IMMEDIATE transaction: unique, gap-free, never
 * reused.
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
  return await writeTransaction(deps.db, async () => {
    await pull?.check()
    const milestone = writer && opts.milestone ? await repoMilestone(deps, ctx.repo.id, opts.milestone) : null
    const labelRows = writer && opts.labels?.length ? await repoLabelsByIds(deps, ctx.repo.id, opts.labels) : []
    const index = await nextIssueIndex(deps, ctx.repo.id)
    const row = (await s.insertIssue.execute({
      repo: ctx.repo.id,
      index,
      poster: poster.id,
      title: opts.title,
      content: opts.body ?? '',
      milestone: milestone?.id ?? 0,
      closed,
      pull: !!pull,
      deadline,
      now,
      closedUnix: closed ? now : 0,
    }))[0]!
    if (pull) await bumpRepoCounters(deps, ctx.repo.id, true, 1, closed ? 1 : 0)
    else await s.countNewIssue.execute({ repo: ctx.repo.id, closedCount: closed ? 1 : 0 })
    if (milestone) {
      await bumpMilestone(deps, milestone.id, 1, closed ? 1 : 0)
      milestone.numIssues += 1
      milestone.numClosedIssues += closed ? 1 : 0
    }
    if (labelRows.length) {
      await linkLabels(deps, row, labelRows.map((l) => l.id))
      labelRows.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : x.id - y.id))
    }
    if (people.length) await setAssignees(deps, row.id, people)
    if (pull) {
      await pull.attach(row)
      return { row, rel: { poster, labels: labelRows, milestone, assignees: people, pull: { hasMerged: false, mergedUnix: 0 } } }
    }
    await recordIssueEvent(deps.db, row, poster.id, 'issue.opened')
    // Filed closed: Gitea changes its status right after creating it, which announces the close.
    if (closed) await recordIssueEvent(deps.db, row, poster.id, 'issue.closed')
    return { row, rel: { poster, labels: labelRows, milestone, assignees: people } }
  })
}

export interface IssueEdit {
  title?: string
  body?: string
  assignee?: string | null
  assignees?: string[]
  milestone?: number | null
  state?: string
  due_date?: string | null
  unset_due_date?: boolean
}

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
  if (!writer && issue.posterId !== caller.id) throw forbidden('Only the poster or a writer may edit this issue')
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
    await deps.db.update(issues).set(set).where(eq(issues.id, current.id))
    const changes: EditChanges = {}
    if (set.title !== undefined && set.title !== before.title) changes.title = { from: before.title }
    if (set.content !== undefined && set.content !== before.content) changes.body = { from: before.content }
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

/** Sets or clears (null) an issue's deadline; writers only. Answers the stored value. */
export async function setIssueDeadline(deps: AppDeps, ctx: RepoContext, index: number, due: string | null): Promise<number> {
  const issue = await findIssue(deps, ctx.repo.id, index)
  const deadline = parseDue(due, 'due_date') ?? 0
  await deps.db.update(issues).set({ deadlineUnix: deadline, updatedUnix: nowUnix() }).where(eq(issues.id, issue.id))
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
    const wanted = (await repoLabelsByIds(deps, ctx.repo.id, labelIds)).map((l) => l.id)
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

/** The labels of an issue, by name. */
export async function labelsOfIssue(deps: AppDeps, issueId: number): Promise<LabelRow[]> {
  return (await labelsOfIssues(deps, [issueId])).get(issueId)!
}
