import { and, asc, count, desc, eq, inArray, max, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { perConnection, perConnectionShape, writeTransaction } from '../../db/client'
import { inJsonList } from '../../db/sql'
import { commitStatuses, type StatusRow } from '../../db/schema'
import { recordEvent } from '../../events/outbox'
import { resolveCommitish, resolveRefPrefix } from '../../git/refs'
import { notFound, unprocessable } from '../../lib/errors'
import { preparedPage, type Page, type Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { STATUS_STATES, STATUS_SORTS, type StatusState } from './model'

type StatusSort = (typeof STATUS_SORTS)[number]
/** A status list's `sort` and `state` query values. */
export type StatusFilter = { sort?: StatusSort | ''; state?: StatusState | '' }

/** The commit a status is posted to: a hex commit id (4–40 digits) of the repository, else 422. */
export async function commitOfSha(deps: AppDeps, ctx: RepoContext, sha: string): Promise<string> {
  const found = /^[0-9a-f]{4,64}$/i.test(sha) ? await resolveRefPrefix(gitRepoOf(deps, ctx), [sha], ['commit']) : null
  if (!found) throw unprocessable(`No commit found for SHA: ${sha}`, 'sha')
  return found.sha
}

/** The commit a `{ref}` names (a branch, then a tag, then a hex commit id), else 404. */
export async function commitOfRef(deps: AppDeps, ctx: RepoContext, ref: string): Promise<string> {
  const sha = await resolveCommitish(gitRepoOf(deps, ctx), ref)
  if (!sha) throw notFound(`ref does not exist [ref: ${ref}]`)
  return sha
}

/**
 * Posts a status to a commit (its full id): the next per-commit index, and a `status` event in
 * the same transaction (Gitea's `status` webhook).
 */
export async function createStatus(
  deps: AppDeps,
  repoId: number,
  creator: UserRow,
  sha: string,
  input: { state: StatusState; target_url?: string; description?: string; context?: string },
): Promise<StatusRow> {
  return await writeTransaction(deps.db, async () => {
    const last = (await deps.db
      .select({ n: max(commitStatuses.index) })
      .from(commitStatuses)
      .where(and(eq(commitStatuses.repoId, repoId), eq(commitStatuses.sha, sha))))[0]
    const now = nowUnix()
    const row = (await deps.db
      .insert(commitStatuses)
      .values({
        repoId,
        sha,
        index: (last?.n ?? 0) + 1,
        state: input.state,
        targetUrl: (input.target_url ?? '').trim(),
        description: (input.description ?? '').trim(),
        context: (input.context ?? '').trim(),
        creatorId: creator.id,
        createdUnix: now,
        updatedUnix: now,
      })
      .returning())[0]
    await recordEvent(deps.db, {
      kind: 'status',
      repoId,
      actorId: creator.id,
      payload: { sha, statusId: row.id, index: row.index, state: row.state, context: row.context },
    })
    return row
  })
}

const SORT_ORDER: Record<StatusSort | '', SQL[]> = {
  '': [desc(commitStatuses.createdUnix), desc(commitStatuses.id)],
  oldest: [asc(commitStatuses.createdUnix), asc(commitStatuses.id)],
  recentupdate: [desc(commitStatuses.updatedUnix), desc(commitStatuses.id)],
  leastupdate: [asc(commitStatuses.updatedUnix), asc(commitStatuses.id)],
  leastindex: [asc(commitStatuses.index)],
  highestindex: [desc(commitStatuses.index)],
}

/** One page of a commit's statuses, newest first unless `sort` says otherwise, optionally of one state. */
export async function listStatuses(
  deps: AppDeps,
  repoId: number,
  sha: string,
  page: Page,
  filter: StatusFilter = {},
): Promise<Paged<StatusRow>> {
  // The query schema admits only these orders (anything else reads as the default).
  const sort: StatusSort | '' = filter.sort && Object.hasOwn(SORT_ORDER, filter.sort) ? filter.sort : ''
  const statements = statusListStatements(deps.db, `${sort} ${filter.state ? 'state' : 'any'}`, () => prepareStatusList(deps.db, sort, !!filter.state))
  return await preparedPage<StatusRow>(statements, { repo: repoId, sha, state: filter.state ?? '' }, page)
}

/** listStatuses' statements for one shape (the order, whether a state is asked), prepared when first asked: CI tools list a commit's statuses again and again. */
function prepareStatusList(db: AppDeps['db'], sort: StatusSort | '', byState: boolean) {
  const p = sql.placeholder
  const where = and(eq(commitStatuses.repoId, p('repo')), eq(commitStatuses.sha, p('sha')), byState ? eq(commitStatuses.state, p('state')) : undefined)
  return {
    rows: db.select().from(commitStatuses).where(where).orderBy(...SORT_ORDER[sort]).limit(p('limit')).offset(p('offset')).prepare(),
    count: db.select({ n: count() }).from(commitStatuses).where(where).prepare(),
  }
}
const statusListStatements = perConnectionShape<ReturnType<typeof prepareStatusList>>()

/** Worst first: error, failure, warning, pending, success; "" when none. */
export function combinedState(states: string[]): StatusState | '' {
  let worst = -1
  for (const s of states) worst = Math.max(worst, STATUS_STATES.indexOf(s as StatusState))
  return worst < 0 ? '' : STATUS_STATES[worst]!
}

/**
 * The id of the latest status of each context of each of the commits `shas` of a repository (a
 * subquery: `inArray(commitStatuses.id, latestStatusIds(...))`): the one rule of which status a
 * context's is, for the API's combined status, the pages' checks and the merge gates. The
 * repository and the commits may be placeholders (the repository's, and the name of one bound to
 * the commits' JSON list) for a prepared statement.
 */
export const latestStatusIds = (db: AppDeps['db'], repoId: number | Placeholder, shas: string[] | string) =>
  db
    .select({ id: max(commitStatuses.id) })
    .from(commitStatuses)
    .where(and(eq(commitStatuses.repoId, repoId), inJsonList(commitStatuses.sha, shas)))
    .groupBy(commitStatuses.sha, commitStatuses.context)

/**
 * latestStatuses' reads, prepared once per connection (CI tools and Renovate ask a commit's
 * combined status again and again): the latest status of each context (id and state), and the
 * rows of a page of them by id.
 */
const latestOfCommitReadsOf = perConnection((db: AppDeps['db']) => ({
  latest: db
    .select({ id: commitStatuses.id, state: commitStatuses.state })
    .from(commitStatuses)
    .where(inArray(commitStatuses.id, latestStatusIds(db, sql.placeholder('repo'), 'shas')))
    .orderBy(desc(commitStatuses.id))
    .prepare(),
  byIds: db.select().from(commitStatuses).where(inJsonList(commitStatuses.id, 'ids')).orderBy(desc(commitStatuses.id)).prepare(),
}))

/**
 * The latest status of each context of a commit (newest first, one page of them), with the
 * combined state over all contexts and their number.
 */
export async function latestStatuses(deps: AppDeps, repoId: number, sha: string, page: Page): Promise<Paged<StatusRow> & { state: StatusState | '' }> {
  const reads = latestOfCommitReadsOf(deps.db)
  const latest = await reads.latest.execute({ repo: repoId, shas: JSON.stringify([sha]) })
  const pageIds = latest.slice(page.offset, page.offset + page.limit).map((r) => r.id)
  const rows = pageIds.length ? await reads.byIds.execute({ ids: JSON.stringify(pageIds) }) : []
  return { rows, total: latest.length, state: combinedState(latest.map((r) => r.state)) }
}


/** Commits whose checks one page shows at most (a history page's), and contexts read per commit. */
const MAX_CHECKED_COMMITS = 100
const MAX_CONTEXTS_PER_COMMIT = 100

/** A commit's checks as the pages show them: the latest status of each context (by context name) and their combined state. */
export type CommitChecksRows = { rows: StatusRow[]; state: StatusState | '' }

/** latestStatusesOf's statement, prepared once per connection (the pages' checks of their commits read it). */
const latestOfCommitsOf = perConnection((db: AppDeps['db']) =>
  db
    .select()
    .from(commitStatuses)
    .where(inArray(commitStatuses.id, latestStatusIds(db, sql.placeholder('repo'), 'shas')))
    .orderBy(asc(commitStatuses.context), desc(commitStatuses.id))
    .limit(sql.placeholder('limit'))
    .prepare(),
)

/**
 * The latest status of each context of each of `shas` (full commit ids), read in one query for a
 * page's commits (Gitea's GetLatestCommitStatusForPairs): a commit with none is left out. At most
 * MAX_CHECKED_COMMITS commits, and about MAX_CONTEXTS_PER_COMMIT contexts each on average.
 */
export async function latestStatusesOf(deps: AppDeps, repoId: number, shas: string[]): Promise<Map<string, CommitChecksRows>> {
  const wanted = [...new Set(shas)].slice(0, MAX_CHECKED_COMMITS)
  const found = new Map<string, CommitChecksRows>()
  if (!wanted.length) return found
  const rows = await latestOfCommitsOf(deps.db).execute({ repo: repoId, shas: JSON.stringify(wanted), limit: wanted.length * MAX_CONTEXTS_PER_COMMIT })
  for (const row of rows) {
    const one = found.get(row.sha) ?? { rows: [], state: '' as const }
    one.rows.push(row)
    found.set(row.sha, one)
  }
  for (const one of found.values()) one.state = combinedState(one.rows.map((r) => r.state))
  return found
}
