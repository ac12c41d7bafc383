/**
 * GET /repos/issues/search (Gitea's SearchIssues): issues and pull requests across every
 * repository the caller may read (the visibility rule's SQL form), filtered as Gitea filters them,
 * newest first (those of `priority_repo_id` before the rest).
 */
import { and, asc, count, desc, eq, exists, gte, inArray, lte, not, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { containsPattern, inJsonList, notIndexed, queryBuilder } from '../../db/sql'
import { issueTextCondition } from './text-search'
import { comments, issueAssignees, issueLabels, issues, issueWatches, labels, milestones, repositories, teamRepos, teams, watches, type IssueRow, type RepoRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode } from '../../auth/access'
import { orgRole } from '../../auth/org-context'
import { ownerVisibleTo, readableUnitsCondition } from '../../auth/visibility'
import { badRequest } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { parseTimestamp } from '../../lib/time'
import { splitFilter } from '../../lib/validate'
import { MENTION_BREAKS } from '../../lib/mentions'
import { findOwnerByName } from '../users/service'
import { PLAIN_COMMENT } from '../comments/service'

export interface IssueSearch {
  state?: string
  labels?: string
  milestones?: string
  q?: string
  priority_repo_id?: number
  type?: string
  since?: string
  before?: string
  assigned?: string
  created?: string
  mentioned?: string
  review_requested?: string
  reviewed?: string
  owner?: string
  team?: string
}

const qb = queryBuilder()

/** Go's strconv.ParseBool truths, as Gitea's FormBool reads a flag. */
const flag = (value: string | undefined) => ['1', 't', 'true'].includes((value ?? '').toLowerCase())

/** Matches no row: for filters on things Warren does not record (reviews). */
const NOTHING = sql`1 = 0`

/** `text` mentions `@login` (src/lib/mentions.ts: the text folded, then ` @login ` looked for). */
function mentions(text: SQLWrapper, login: string): SQL {
  let folded: SQL = sql`(' ' || lower(${text}) || ' ')`
  for (const piece of MENTION_BREAKS)
    folded = sql`replace(${folded}, ${piece}, ${' '.repeat(piece.length)})`
  return sql`${folded} LIKE ${containsPattern(` @${login.toLowerCase()} `)} ESCAPE '\\'`
}

/** The repositories searched: readable ones, of `owner` (and covered by `team`) when named; 400 as Gitea for an unknown owner or team. */
async function repoScope(deps: AppDeps, viewer: UserRow | null, search: IssueSearch): Promise<SQL[]> {
  // Never the repositories' index on `status` (every ready repository, then each one's issues):
  // SQLite took it over a search's own terms (db/sql.ts notIndexed).
  const conds: SQL[] = [eq(notIndexed(repositories.status), 'ready')]
  // Issues where the caller reads the issues unit, pull requests where they read the pull requests unit.
  const readable = readableUnitsCondition(viewer, [
    [eq(issues.isPull, false), 'repo.issues'],
    [eq(issues.isPull, true), 'repo.pulls'],
  ])
  if (readable) conds.push(readable)
  if (search.owner) {
    const owner = await findOwnerByName(deps, search.owner)
    // An owner the caller may not see is answered like an unknown one.
    if (!owner || !await ownerVisibleTo(deps.db, owner, viewer)) throw badRequest('Owner not found')
    conds.push(eq(repositories.ownerId, owner.id))
    if (search.team) {
      // A team is known to the members of its organisation only.
      const team = owner.type === 1 && (await orgRole(deps, owner, viewer)).member
        ? (await deps.db.select().from(teams).where(and(eq(teams.orgId, owner.id), eq(teams.lowerName, search.team.toLowerCase()))))[0]
        : undefined
      if (!team) throw badRequest('Team not found')
      if (!(team.includesAllRepositories || team.authorize >= AccessMode.Owner))
        conds.push(exists(qb.select({ one: teamRepos.id }).from(teamRepos).where(and(eq(teamRepos.teamId, team.id), eq(teamRepos.repoId, repositories.id)))))
    }
  } else if (search.team) throw badRequest('Owner organisation is required for filtering on team')
  return conds
}

/** Issues having any of the named labels (names no label has are discarded; none left: no filter, as Gitea). */
async function namedFilter(
  deps: AppDeps,
  table: typeof labels | typeof milestones,
  list: string[],
  on: (ids: ReturnType<typeof namedIds>) => SQL,
): Promise<SQL | undefined> {
  if (list.length === 0) return undefined
  // In the name index's order: PostgreSQL, taking a list's names for common ones, otherwise reads
  // the table from its start for one row, every row when no name is had.
  if ((await deps.db.select({ id: table.id }).from(table).where(inJsonList(table.name, list)).orderBy(asc(table.name)).limit(1)).length === 0) return undefined
  return on(namedIds(table, list))
}
const namedIds = (table: typeof labels | typeof milestones, list: string[]) => qb.select({ id: table.id }).from(table).where(inJsonList(table.name, list))

/**
 * The issues `userId` follows (Gitea's SubscriberID; the SQL form of subscriptions/service.ts
 * isFollowing): not unsubscribed, and subscribed, the poster, a watcher of the repository, a
 * commenter or an assignee.
 */
function followedBy(userId: number): SQL {
  const choice = (on: boolean) =>
    exists(qb.select({ one: issueWatches.id }).from(issueWatches).where(and(eq(issueWatches.issueId, issues.id), eq(issueWatches.userId, userId), eq(issueWatches.isWatching, on))))
  return and(
    not(choice(false)),
    or(
      choice(true),
      eq(issues.posterId, userId),
      exists(qb.select({ one: watches.id }).from(watches).where(and(eq(watches.repoId, issues.repoId), eq(watches.userId, userId)))),
      exists(qb.select({ one: comments.id }).from(comments).where(and(eq(comments.issueId, issues.id), eq(comments.posterId, userId), eq(comments.type, PLAIN_COMMENT)))),
      exists(qb.select({ one: issueAssignees.id }).from(issueAssignees).where(and(eq(issueAssignees.issueId, issues.id), eq(issueAssignees.assigneeId, userId)))),
    ),
  )!
}

/** Gitea's issue orders (`sort`); newest first otherwise. */
const ORDERS: Record<string, SQL[]> = {
  oldest: [asc(issues.createdUnix), asc(issues.id)],
  recentupdate: [desc(issues.updatedUnix), desc(issues.id)],
  leastupdate: [asc(issues.updatedUnix), asc(issues.id)],
  mostcomment: [desc(issues.numComments), desc(issues.id)],
  leastcomment: [asc(issues.numComments), asc(issues.id)],
}

/**
 * One page of the issues and pull requests found, with the total. `opts` are the web's own:
 * only those `viewer` follows (the subscriptions page), in Gitea's `sort` order.
 */
export async function searchIssues(deps: AppDeps, viewer: UserRow | null, search: IssueSearch, page: Page, opts: { followed?: boolean; sort?: string } = {}): Promise<Paged<IssueRow>> {
  const since = search.since ? parseTimestamp(search.since, 'since') : undefined
  const before = search.before ? parseTimestamp(search.before, 'before') : undefined
  const where: (SQL | undefined)[] = await repoScope(deps, viewer, search)
  // A kind of issue whose unit the repository has turned off is not searched.
  where.push(or(and(eq(issues.isPull, false), eq(repositories.hasIssues, true)), and(eq(issues.isPull, true), eq(repositories.hasPullRequests, true))))
  const state = search.state || 'open'
  if (state !== 'all') where.push(eq(issues.isClosed, state === 'closed'))
  if (search.type === 'issues' || search.type === 'pulls') where.push(eq(issues.isPull, search.type === 'pulls'))
  if (since !== undefined) where.push(gte(issues.updatedUnix, since))
  if (before !== undefined) where.push(lte(issues.updatedUnix, before))
  const q = (search.q ?? '').trim()
  if (q && !q.includes('\0')) where.push(issueTextCondition(deps.db, q, { inComments: true }))
  where.push(
    await namedFilter(deps, labels, splitFilter(search.labels, 'labels'), (ids) =>
      exists(qb.select({ one: issueLabels.id }).from(issueLabels).where(and(eq(issueLabels.issueId, issues.id), inArray(issueLabels.labelId, ids)))),
    ),
    await namedFilter(deps, milestones, splitFilter(search.milestones, 'milestones'), (ids) => inArray(issues.milestoneId, ids)),
  )
  // The caller's own filters, for a signed-in caller (ignored otherwise, as in Gitea).
  if (viewer) {
    if (flag(search.created)) where.push(eq(issues.posterId, viewer.id))
    if (flag(search.assigned))
      where.push(exists(qb.select({ one: issueAssignees.id }).from(issueAssignees).where(and(eq(issueAssignees.issueId, issues.id), eq(issueAssignees.assigneeId, viewer.id)))))
    if (flag(search.mentioned)) {
      const inComment = qb
        .select({ one: comments.id })
        .from(comments)
        .where(and(eq(comments.issueId, issues.id), eq(comments.type, PLAIN_COMMENT), mentions(comments.content, viewer.name)))
      where.push(or(mentions(issues.content, viewer.name), exists(inComment)))
    }
    // Warren records no review requests nor reviews yet: no pull request matches these.
    if (flag(search.review_requested) || flag(search.reviewed)) where.push(NOTHING)
    if (opts.followed) where.push(followedBy(viewer.id))
  }
  const condition = and(...where)
  const priority = search.priority_repo_id && Number.isSafeInteger(search.priority_repo_id) ? search.priority_repo_id : 0
  const total = (await deps.db.select({ n: count() }).from(issues).innerJoin(repositories, eq(repositories.id, issues.repoId)).where(condition))[0]!.n
  const rows = total > page.offset
    ? (await deps.db
        .select({ issue: issues })
        .from(issues)
        .innerJoin(repositories, eq(repositories.id, issues.repoId))
        .where(condition)
        .orderBy(...(priority ? [sql`case when ${issues.repoId} = ${priority} then 0 else 1 end`] : []), ...(ORDERS[opts.sort ?? ''] ?? [desc(issues.createdUnix), desc(issues.id)]))
        .limit(page.limit)
        .offset(page.offset)).map((r) => r.issue)
    : []
  return { rows, total }
}

/** The repositories of a page of issues, by id. */
export async function reposOfIssues(deps: AppDeps, rows: IssueRow[]): Promise<Map<number, RepoRow>> {
  const ids = [...new Set(rows.map((r) => r.repoId))]
  if (ids.length === 0) return new Map()
  return new Map((await deps.db.select().from(repositories).where(inArray(repositories.id, ids))).map((r) => [r.id, r]))
}
