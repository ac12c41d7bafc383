/** Reading issues: prepared statements, lookups by index, the filtered list and the records of a page. */
import { and, asc, count, desc, eq, or, sql, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { Db } from '../../db/client'
import { rowMapper, valueRows } from '../../db/row-mapper'
import { containsPattern, everyJsonGroup, inJsonList, likeIgnoringCase } from '../../db/sql'
import { issueAssignees, issueIndexes, issueLabels, issues, labels, milestones, pullRequests, repositories, type IssueRow, type LabelRow, type MilestoneRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { usersByIds } from '../../convert/people'
import { getVisibleUserByName } from '../users/service'
import { type RepoRow } from '../../auth/access'
import { notFound } from '../../lib/errors'
import type { Page } from '../../lib/pagination'
import { splitFilter } from '../../lib/validate'
import { toApiIssue, type IssueRelations } from '../../convert/issue'
import { userConverter } from '../../convert/user'

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

/** The labels of an issue, by name. */
export async function labelsOfIssue(deps: AppDeps, issueId: number): Promise<LabelRow[]> {
  return (await labelsOfIssues(deps, [issueId])).get(issueId)!
}
