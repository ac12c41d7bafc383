/**
 * GET /repos/issues/search (Gitea's SearchIssues): issues and pull requests across every
 * repository the caller may read (the visibility rule's SQL form), filtered as Gitea filters them,
 * newest first (those of `priority_repo_id` before the rest).
 */
import { and, asc, count, desc, eq, exists, gte, inArray, lte, not, or, sql, type Placeholder, type SQL, type SQLWrapper } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { containsPattern, containsText, inJsonList, notIndexed, queryBuilder } from '../../db/sql'
import { issueTextConditionShape, textCandidatesShape, textSearchParams, textSearchUsesIndex, type TextSearchShape } from './text-search'
import { perConnection, type Db } from '../../db/client'
import { readerFor } from '../../db/read-thread'
import { keptCount } from '../../db/page-cache'
import { WeightedCache } from '../../lib/weighted-cache'
import { comments, issueAssignees, issueLabels, issues, issueWatches, labels, milestones, repositories, teamRepos, teams, watches, type IssueRow, type RepoRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { teamCoversAll } from '../../auth/access'
import { orgRole } from '../../auth/org-context'
import { ownerVisibleTo, readableUnitsCondition, VIEWER_ID, viewerKind, viewerStandIn } from '../../auth/visibility'
import { badRequest } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { parseTimestamp } from '../../lib/time'
import { splitFilter } from '../../lib/validate'
import { MENTION_BREAKS } from '../../lib/mentions'
import { findOwnerByName } from '../users/service'
import { PLAIN_COMMENT } from '../comments/types'
import { reposByIds } from '../../convert/repo'

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

/**
 * `text` mentions `@login` (src/lib/mentions.ts: the text folded, then ` @login ` looked for). The
 * folding only makes spaces of some characters, so a text it finds ` @login ` in holds `@login`
 * once lower-cased: that cheap test first, the folding (a replace() a break) only for the texts
 * that pass it (at 100,000 issues without one: 326 against 29 ms).
 */
function mentions(text: SQLWrapper, pattern: Placeholder, login: Placeholder): SQL {
  let folded: SQL = sql`(' ' || lower(${text}) || ' ')`
  for (const piece of MENTION_BREAKS)
    folded = sql`replace(${folded}, ${piece}, ${' '.repeat(piece.length)})`
  return and(containsText(sql`lower(${text})`, login), sql`${folded} LIKE ${pattern} ESCAPE '\\'`)!
}

/** Placeholders of the search's statements, prepared once per shape (see searchIssues). */
const OWNER = sql.placeholder('owner')
const TEAM = sql.placeholder('team')
const CLOSED = sql.placeholder('closed')
const PULL = sql.placeholder('pull')
const SINCE = sql.placeholder('since')
const BEFORE = sql.placeholder('before')
const MENTION = sql.placeholder('mention')
const MENTION_AT = sql.placeholder('mentionAt')
const MENTION_PATTERN = sql.placeholder('mentionPattern')
const MENTION_MATCH = sql.placeholder('mentionMatch')
const PRIORITY = sql.placeholder('priority')

/**
 * The repositories searched, readable ones, of `owner` (and covered by `team`) when named (400 as
 * Gitea for an unknown owner or team): what the shape and the values need, `owner` and `team`.
 */
async function repoScope(deps: AppDeps, viewer: UserRow | null, search: IssueSearch): Promise<{ owner?: number; team?: number }> {
  if (!search.owner) {
    if (search.team) throw badRequest('Owner organisation is required for filtering on team')
    return {}
  }
  const owner = await findOwnerByName(deps, search.owner)
  // An owner the caller may not see is answered like an unknown one.
  if (!owner || !await ownerVisibleTo(deps.db, owner, viewer)) throw badRequest('Owner not found')
  if (!search.team) return { owner: owner.id }
  // A team is known to the members of its organisation only.
  const team = owner.type === 1 && (await orgRole(deps, owner, viewer)).member
    ? (await deps.db.select().from(teams).where(and(eq(teams.orgId, owner.id), eq(teams.lowerName, search.team.toLowerCase()))))[0]
    : undefined
  if (!team) throw badRequest('Team not found')
  // A team given every repository of its organisation narrows nothing more than the owner.
  return teamCoversAll(team) ? { owner: owner.id } : { owner: owner.id, team: team.id }
}

/** Whether any of `table`'s rows is named in `list` (none: the filter is dropped, as Gitea's). */
async function anyNamed(deps: AppDeps, table: typeof labels | typeof milestones, list: string[]): Promise<boolean> {
  if (list.length === 0) return false
  // In the name index's order: PostgreSQL, taking a list's names for common ones, otherwise reads
  // the table from its start for one row, every row when no name is had.
  return (await deps.db.select({ id: table.id }).from(table).where(inJsonList(table.name, list)).orderBy(asc(table.name)).limit(1)).length > 0
}
/** The ids of `table`'s rows named in the JSON list bound to `placeholder`. */
const namedIds = (table: typeof labels | typeof milestones, placeholder: string) => qb.select({ id: table.id }).from(table).where(inJsonList(table.name, placeholder))

/**
 * The issues `userId` follows (Gitea's SubscriberID; the SQL form of subscriptions/service.ts
 * isFollowing): not unsubscribed, and subscribed, the poster, a watcher of the repository, a
 * commenter or an assignee.
 */
function followedBy(userId: number | Placeholder): SQL {
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
const NEWEST_FIRST = [desc(issues.createdUnix), desc(issues.id)]

/** What decides a search's SQL: each filter given or not (their values bound apart), the viewer's kind, the order. */
interface SearchShape {
  viewer: ReturnType<typeof viewerKind>
  /** Signed in (a public-only token too: it sees what anonymous callers see, but its own filters are its own). */
  signedIn: boolean
  owner: boolean
  team: boolean
  state: boolean
  type: boolean
  since: boolean
  before: boolean
  text?: TextSearchShape
  labels: boolean
  milestones: boolean
  created: boolean
  assigned: boolean
  /** `indexed`: its candidates (the texts holding `@login`) found in the trigram indexes first. */
  mentioned: false | TextSearchShape
  reviews: boolean
  followed: boolean
  priority: boolean
  order: string
}

/**
 * The condition of a search of `shape` on issues joined to their repositories, its values as
 * placeholders, in two parts: `ofRepository`, on the repository and the issue's kind alone
 * (`issues.is_pull`), and `ofIssue`, on the issue's own columns and rows (never the repository's).
 */
function searchCondition(db: Db, viewer: UserRow | null, shape: SearchShape): { ofRepository: SQL; ofIssue: SQL | undefined } {
  const ofRepository = and(
    // Never the repositories' index on `status` (every ready repository, then each one's issues):
    // SQLite took it over a search's own terms (db/sql.ts notIndexed).
    eq(notIndexed(repositories.status), 'ready'),
    // Issues where the caller reads the issues unit, pull requests where they read the pull requests unit.
    readableUnitsCondition(viewerStandIn(viewer), [
      [eq(issues.isPull, false), 'repo.issues'],
      [eq(issues.isPull, true), 'repo.pulls'],
    ]),
    shape.owner ? eq(repositories.ownerId, OWNER) : undefined,
    shape.team ? exists(qb.select({ one: teamRepos.id }).from(teamRepos).where(and(eq(teamRepos.teamId, TEAM), eq(teamRepos.repoId, repositories.id)))) : undefined,
    // A kind of issue whose unit the repository has turned off is not searched.
    or(and(eq(issues.isPull, false), eq(repositories.hasIssues, true)), and(eq(issues.isPull, true), eq(repositories.hasPullRequests, true))),
  )!
  return { ofRepository, ofIssue: issueCondition(db, shape) }
}

/** The part of a search's condition on the issue's own columns and rows (searchCondition). */
function issueCondition(db: Db, shape: SearchShape): SQL | undefined {
  const signedIn = shape.signedIn
  return and(
    shape.state ? eq(issues.isClosed, CLOSED) : undefined,
    shape.type ? eq(issues.isPull, PULL) : undefined,
    shape.since ? gte(issues.updatedUnix, SINCE) : undefined,
    shape.before ? lte(issues.updatedUnix, BEFORE) : undefined,
    shape.text ? issueTextConditionShape(db, shape.text, { inComments: true }) : undefined,
    shape.labels
      ? exists(qb.select({ one: issueLabels.id }).from(issueLabels).where(and(eq(issueLabels.issueId, issues.id), inArray(issueLabels.labelId, namedIds(labels, 'labelNames')))))
      : undefined,
    shape.milestones ? inArray(issues.milestoneId, namedIds(milestones, 'milestoneNames')) : undefined,
    // The caller's own filters, for a signed-in caller (ignored otherwise, as in Gitea).
    signedIn && shape.created ? eq(issues.posterId, VIEWER_ID) : undefined,
    signedIn && shape.assigned
      ? exists(qb.select({ one: issueAssignees.id }).from(issueAssignees).where(and(eq(issueAssignees.issueId, issues.id), eq(issueAssignees.assigneeId, VIEWER_ID))))
      : undefined,
    signedIn && shape.mentioned
      ? and(
          shape.mentioned === 'indexed' ? textCandidatesShape(db, MENTION_PATTERN, MENTION_MATCH) : undefined,
          or(
            mentions(issues.content, MENTION, MENTION_AT),
            exists(qb.select({ one: comments.id }).from(comments).where(and(eq(comments.issueId, issues.id), eq(comments.type, PLAIN_COMMENT), mentions(comments.content, MENTION, MENTION_AT)))),
          ),
        )
      : undefined,
    // Warren records no review requests nor reviews yet: no pull request matches these.
    signedIn && shape.reviews ? NOTHING : undefined,
    signedIn && shape.followed ? followedBy(VIEWER_ID) : undefined,
  )
}

function prepareSearch(db: Db, viewer: UserRow | null, shape: SearchShape) {
  const { ofRepository, ofIssue } = searchCondition(db, viewer, shape)
  const condition = and(ofRepository, ofIssue)
  const page = db
    .select({ issue: issues })
    .from(issues)
    .innerJoin(repositories, eq(repositories.id, issues.repoId))
    .where(condition)
    .orderBy(...(shape.priority ? [sql`case when ${issues.repoId} = ${PRIORITY} then 0 else 1 end`] : []), ...(ORDERS[shape.order] ?? NEWEST_FIRST))
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'))
    .prepare()
  // The count: the issues the filters on issues let through counted per repository and kind first,
  // then the repository's part of the rule tested once a repository and kind, not once an issue
  // (the visibility rule's subqueries; PostgreSQL hashed every repository to join each issue: at
  // 100,000 repositories and 200,000 issues 73-97 against 24 ms). The groups are named `issues`,
  // so the repository's part reads their `is_pull` as it reads an issue's. A text's few candidates
  // (the trigram indexes') are counted as they are, each joined to its repository: grouped, SQLite
  // read every issue. So are a mention's.
  if (shape.text || shape.mentioned === 'indexed') {
    const counted = db.select({ n: count() }).from(issues).innerJoin(repositories, eq(repositories.id, issues.repoId)).where(condition).prepare()
    return { count: counted, page }
  }
  const groups = qb
    .select({ repoId: issues.repoId, isPull: issues.isPull, n: sql<number>`count(*)`.as('n') })
    .from(issues)
    .where(ofIssue)
    .groupBy(issues.repoId, issues.isPull)
    .as('issues')
  return {
    count: db
      .select({ n: sql<number>`coalesce(sum(${groups.n}), 0)` })
      .from(groups)
      .innerJoin(repositories, eq(repositories.id, groups.repoId))
      .where(ofRepository)
      .prepare(),
    page,
  }
}

/**
 * The search's statements by shape, per connection: building the condition (the visibility rule's
 * subqueries, every filter's) cost Drizzle more than the statements cost SQLite. At most
 * SHAPES_KEPT shapes, the least recently used dropped first (a caller may combine filters freely).
 */
const SHAPES_KEPT = 64
const searchStatements = perConnection(() => new WeightedCache<ReturnType<typeof prepareSearch>>(SHAPES_KEPT, () => 1))

/**
 * One page of the issues and pull requests found, with the total. `opts` are the web's own:
 * only those `viewer` follows (the subscriptions page), in Gitea's `sort` order.
 */
export async function searchIssues(deps: AppDeps, viewer: UserRow | null, search: IssueSearch, page: Page, opts: { followed?: boolean; sort?: string } = {}): Promise<Paged<IssueRow>> {
  const since = search.since ? parseTimestamp(search.since, 'since') : undefined
  const before = search.before ? parseTimestamp(search.before, 'before') : undefined
  const scope = await repoScope(deps, viewer, search)
  const state = search.state || 'open'
  const type = search.type === 'issues' || search.type === 'pulls' ? search.type : undefined
  const q = (search.q ?? '').trim()
  const text = q && !q.includes('\0') ? q : undefined
  const labelNames = splitFilter(search.labels, 'labels')
  const milestoneNames = splitFilter(search.milestones, 'milestones')
  const priority = search.priority_repo_id && Number.isSafeInteger(search.priority_repo_id) ? search.priority_repo_id : 0
  // A mention of the caller holds `@login` (mentions): the texts holding it are its candidates.
  const mentionAt = `@${(viewer?.name ?? '').toLowerCase()}`
  const mentionText = textSearchParams(mentionAt)
  const shape: SearchShape = {
    viewer: viewerKind(viewer),
    signedIn: viewer !== null,
    owner: scope.owner !== undefined,
    team: scope.team !== undefined,
    state: state !== 'all',
    type: type !== undefined,
    since: since !== undefined,
    before: before !== undefined,
    text: text === undefined ? undefined : textSearchUsesIndex(deps.db, text) ? 'indexed' : 'scanned',
    labels: await anyNamed(deps, labels, labelNames),
    milestones: await anyNamed(deps, milestones, milestoneNames),
    created: flag(search.created),
    assigned: flag(search.assigned),
    mentioned: flag(search.mentioned) && (textSearchUsesIndex(deps.db, mentionAt) ? 'indexed' : 'scanned'),
    reviews: flag(search.review_requested) || flag(search.reviewed),
    followed: !!opts.followed,
    priority: priority !== 0,
    order: opts.sort && ORDERS[opts.sort] ? opts.sort : '',
  }
  const params = {
    viewer: viewer?.id ?? 0,
    owner: scope.owner ?? 0,
    team: scope.team ?? 0,
    closed: state === 'closed',
    pull: type === 'pulls',
    since: since ?? 0,
    before: before ?? 0,
    ...(text === undefined ? {} : textSearchParams(text)),
    labelNames: JSON.stringify(labelNames),
    milestoneNames: JSON.stringify(milestoneNames),
    mention: containsPattern(` ${mentionAt} `),
    mentionAt,
    mentionPattern: mentionText.textPattern,
    mentionMatch: mentionText.textMatch,
    priority,
  }
  const key = JSON.stringify(shape)
  // Both statements read every issue the filters let through (a count of every visible one):
  // off the event loop (db/read-thread.ts).
  const reader = readerFor(deps.db)
  const kept = searchStatements(reader)
  let statements = kept.get(key)
  if (!statements) kept.set(key, (statements = prepareSearch(reader, viewer, shape)))
  // The count is the search's whole cost where its page stops early (newest first): the pages of
  // one search share it while the database is unchanged (any write empties the page cache). The
  // statement's shape and values are everything it depends on.
  const counted = statements.count
  const total = await keptCount(deps.db, 'issue-search', JSON.stringify([key, params]), async () => Number((await counted.execute(params))[0]!.n))
  const rows = total > page.offset ? (await statements.page.execute({ ...params, limit: page.limit, offset: page.offset })).map((r) => r.issue) : []
  return { rows, total }
}

/** The repositories of a page of issues, by id. */
export async function reposOfIssues(deps: AppDeps, rows: IssueRow[]): Promise<Map<number, RepoRow>> {
  const ids = [...new Set(rows.map((r) => r.repoId))]
  if (ids.length === 0) return new Map()
  return new Map((await reposByIds(deps, ids)).map((r) => [r.id, r]))
}
