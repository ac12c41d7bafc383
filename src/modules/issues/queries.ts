/** Reading issues: prepared statements, lookups by index, the filtered list and the records of a page. */
import { onProject } from '../projects/service'
import { and, count, desc, eq, inArray, sql, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { Db } from '../../db/client'
import { readerFor } from '../../db/read-thread'
import { rowMapper, valueRows } from '../../db/row-mapper'
import { everyJsonGroup, inJsonList, jsonElement, notIndexed, queryBuilder, type JsonGroups } from '../../db/sql'
import { issueTextCondition, textSearchUsesIndex } from './text-search'
import { issueAssignees, issueIndexes, issueLabels, issues, labels, milestones, repositories, type IssueRow, type LabelRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { getVisibleUserByName } from '../users/service'
import { type RepoRow } from '../../auth/access'
import { notFound } from '../../lib/errors'
import { labelsOfIssues } from '../../convert/issue-relations'
import type { Page } from '../../lib/pagination'
import { splitFilter } from '../../lib/validate'

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
    // Issues or pull requests only, open or closed (the web's lists): issues_repo_kind_state_idx's order.
    pageByKindAndState: db
      .select()
      .from(issues)
      .where(and(eq(issues.repoId, sql.placeholder('repo')), eq(issues.isClosed, sql.placeholder('closed')), eq(issues.isPull, sql.placeholder('pull'))))
      .orderBy(desc(issues.createdUnix), desc(issues.id))
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .prepare(),
    // The index is the one nextIndex (run before it in the transaction) took, read back in the
    // insert: both can be sent at once (on PostgreSQL, one round trip under the write lock).
    insertIssue: db
      .insert(issues)
      .values({
        repoId: sql.placeholder('repo'),
        index: sql`(select ${issueIndexes.maxIndex} from ${issueIndexes} where ${issueIndexes.repoId} = ${sql.placeholder('repo')})`,
        posterId: sql.placeholder('poster'),
        title: sql.placeholder('title'),
        content: sql.placeholder('content'),
        ref: sql.placeholder('ref'),
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
    nextIndex: db
      .insert(issueIndexes)
      .values({ repoId: sql.placeholder('repo'), maxIndex: 1 })
      .onConflictDoUpdate({ target: issueIndexes.repoId, set: { maxIndex: sql`${issueIndexes.maxIndex} + 1` } })
      .returning({ index: issueIndexes.maxIndex })
      .prepare(),
  }
}
const qb = queryBuilder()
// Raw-values mappers for the statements of the issue list (Drizzle's generic mapping costs as much as the queries).
const issueRows = rowMapper<IssueRow>(issues)

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


export interface IssueFilter {
  state?: string
  labels?: string
  q?: string
  milestones?: string
  /** The web's `?project=`: issues on that project (an id), or with -1 those on none. */
  project?: number
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

/**
 * The rule of the issue and pull request lists' label filter: an issue carries every label named,
 * that is a label of each group (the ids of one name, or one id) of `groups` (bound as one JSON
 * value: the groups, or a placeholder's name bound to their JSON text, as in a prepared list), of
 * which there are `size`. Spelled two ways, each where it is fastest:
 * - `page` tests each issue read, for a page read in an index's order and stopping at its end;
 * - `count` reads each group's issues from the labels' index (issue_labels_label_idx), for a count
 *   over all of a repository's issues, where testing each one reads the JSON again for every one
 *   (SQLite, 100,000 issues, a third labelled: 88 against 16 ms).
 */
export function carriesEveryLabelGroup(groups: JsonGroups, size: number): { page: SQL; count: SQL } {
  const group = (i: number) => (typeof groups === 'string' ? jsonElement(groups, i) : groups[i]!)
  return {
    page: everyJsonGroup(groups, (set) => sql`exists (select 1 from ${issueLabels} where ${issueLabels.issueId} = ${issues.id} and ${inJsonList(issueLabels.labelId, set)})`),
    count: and(...Array.from({ length: size }, (_, i) => inArray(issues.id, qb.select({ id: issueLabels.issueId }).from(issueLabels).where(inJsonList(issueLabels.labelId, group(i))))))!,
  }
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
  // Nothing asked but a state and a type: the repository's counters say how many (countedOf).
  const onlyStateAndType = !filter.labels && !filter.q && !filter.milestones && !filter.project && !poster && !assignee
  // Open or closed, of one kind or both, and nothing else asked (the web's lists): a prepared page
  // in the order of issues_repo_state_idx or issues_repo_kind_state_idx.
  if (state !== 'all' && onlyStateAndType) {
    const params = { repo: repo.id, closed: state === 'closed', pull: type === 'pulls', limit: page.limit, offset: page.offset }
    const rows = (await valueRows(type ? s.pageByKindAndState : s.pageByState, params)).map((v) => issueRows.map(v))
    return { rows, total: countedOf(repo, type, state) }
  }
  // A text the trigram index finds: its candidates are read first (textSearchUsesIndex).
  const byText = !!filter.q && textSearchUsesIndex(deps.db, filter.q)
  const where: (SQL | undefined)[] = [byText ? eq(notIndexed(issues.repoId), repo.id) : eq(issues.repoId, repo.id)]
  if (state !== 'all') where.push(eq(issues.isClosed, state === 'closed'))
  if (type) where.push(eq(issues.isPull, type === 'pulls'))
  if (poster) where.push(eq(issues.posterId, poster.id))
  if (assignee)
    where.push(
      sql`exists (select 1 from ${issueAssignees} where ${issueAssignees.issueId} = ${issues.id} and ${issueAssignees.assigneeId} = ${assignee.id})`,
    )
  if (filter.q) where.push(issueTextCondition(deps.db, filter.q, { inComments: false }))
  // Every label named must be on the issue.
  const labelSets = await idsByIdOrName(deps, labels, repo.id, splitFilter(filter.labels, 'labels'))
  const labelled = labelSets.length ? carriesEveryLabelGroup(labelSets, labelSets.length) : undefined
  // Any of the milestones named will do (one JSON value whatever its length).
  const milestoneIds = (await idsByIdOrName(deps, milestones, repo.id, splitFilter(filter.milestones, 'milestones'))).flat()
  if (milestoneIds.length) where.push(inJsonList(issues.milestoneId, milestoneIds))
  if (filter.project) where.push(onProject(filter.project))
  const condition = and(...where)
  // Issues, or pull requests, or both, in every state, and nothing else asked (Gitea's
  // `state=all`): the page read in the order of an index (issues_repo_kind_idx,
  // issues_repo_created_idx), stopping at its end. Any other filter is checked on each of the
  // repository's issues (a text under three characters, labels, a poster) to count them: off the
  // event loop (db/read-thread.ts).
  const reader = onlyStateAndType ? deps.db : readerFor(deps.db)
  const rows = await reader
    .select()
    .from(issues)
    .where(and(condition, labelled?.page))
    .orderBy(desc(issues.createdUnix), desc(issues.id))
    .limit(page.limit)
    .offset(page.offset)
  const total = onlyStateAndType ? countedOf(repo, type, state) : (await reader.select({ n: count() }).from(issues).where(and(condition, labelled?.count)))[0]!.n
  return { rows, total }
}

/**
 * How many of a repository's issues, or pull requests, or both (`type` undefined) are in `state`
 * (open, closed, all), from its counters (kept exact in every write transaction), where a count
 * would read every one of them.
 */
export function countedOf(repo: RepoRow, type: string | undefined, state: string): number {
  const kinds: [number, number][] = []
  if (type !== 'pulls') kinds.push([repo.numIssues, repo.numClosedIssues])
  if (type !== 'issues') kinds.push([repo.numPulls, repo.numClosedPulls])
  return kinds.reduce((sum, [all, closed]) => sum + (state === 'all' ? all : state === 'closed' ? closed : all - closed), 0)
}

/** The labels of an issue, by name. */
export async function labelsOfIssue(deps: AppDeps, issueId: number): Promise<LabelRow[]> {
  return (await labelsOfIssues(deps, [issueId])).get(issueId)!
}
