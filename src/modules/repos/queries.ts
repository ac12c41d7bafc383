import { and, asc, count, eq, inArray, ne, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { rowMapper, valueRows } from '../../db/row-mapper'
import { readerFor } from '../../db/read-thread'
import { containsPattern, notIndexed, queryBuilder } from '../../db/sql'
import { repoTopics, repositories, topics, type RepoRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { grantedRepoIds, readableRepoCondition, VIEWER_ID as VIEWER, viewerKind, viewerStandIn } from '../../auth/visibility'
import { resultCacheOf } from '../../convert/repo-page-cache'
import { keptCount } from '../../db/page-cache'
import { unprocessable } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { SEARCH_MODES } from './model'

/* Repository lookups and lists: pages prepared once per shape, kept while the database is unchanged. */

type Db = AppDeps['db']
const qb = queryBuilder()
const repoOrder = [asc(repositories.lowerName), asc(repositories.ownerName), asc(repositories.id)]
/** `byIds`: `where` names a list of ids (the trigram index's, a topic's, a person's stars) or a fork's parent, the selective term: `status` is then not looked up in an index (db/sql.ts notIndexed). */
const prepareRepoPage = (db: Db, where: SQL | undefined, byIds: boolean) => {
  const cond = and(byIds ? eq(notIndexed(repositories.status), 'ready') : eq(repositories.status, 'ready'), where)!
  // The page's ids come from the covering index alone; only those 50 rows are then read whole.
  const pageIds = db
    .select({ id: repositories.id })
    .from(repositories)
    .where(cond)
    .orderBy(...repoOrder)
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'))
  return {
    count: db.select({ n: count() }).from(repositories).where(cond).prepare(),
    page: db.select().from(repositories).where(inArray(repositories.id, pageIds)).orderBy(...repoOrder).prepare(),
  }
}
const repoPageStatements = new WeakMap<Db, Map<string, ReturnType<typeof prepareRepoPage>>>()

const repoRows = rowMapper<RepoRow>(repositories)

/** Placeholders the list conditions are written with, so that each shape of list is prepared once. */
const OWNER = sql.placeholder('owner')
const PATTERN = sql.placeholder('pattern')
const TRIGRAM_PATTERN = sql.placeholder('trigram')

/**
 * Whether SQLite's trigram index of names (drizzle/0019_repo_name_trigram.sql) can find the names
 * holding `q`: at least three characters (shorter ones it would read whole), none of them LIKE's
 * wildcards or escape (its LIKE takes no ESCAPE clause). Otherwise the LIKE reads every name.
 */
const usesTrigramIndex = (db: Db, q: string) => db.$runtime.dialect === 'sqlite' && [...q].length >= 3 && !/[\\%_]/.test(q)

/**
 * One page of ready repositories, sorted by name (then owner), with the total: one COUNT and one
 * page query, both prepared once per `shape` (`where()` builds the condition with placeholders
 * whose values are in `params`; `byIds`: see prepareRepoPage; `offThread`: read off the event loop).
 */
async function pageOfRepos(
  deps: AppDeps,
  shape: string,
  where: () => SQL | undefined,
  params: Record<string, unknown>,
  page: Page,
  opts: { byIds?: boolean; offThread?: boolean } = {},
): Promise<{ rows: RepoRow[]; total: number }> {
  const results = resultCacheOf(deps.db)
  const key = `${shape}|${JSON.stringify(params)}|${page.limit}|${page.offset}`
  const found = await results.getOrRead(key, async () => {
    // `offThread`: the list counts every repository the caller may read (db/read-thread.ts).
    const db = opts.offThread ? readerFor(deps.db) : deps.db
    let cache = repoPageStatements.get(db)
    if (!cache) repoPageStatements.set(db, (cache = new Map()))
    let statements = cache.get(shape)
    if (!statements) cache.set(shape, (statements = prepareRepoPage(db, where(), !!opts.byIds)))
    // The count is the whole cost of a list that tests every repository (the explore page): its
    // pages share it while the database is unchanged.
    const counted = statements.count
    const total = opts.offThread ? await keptCount(deps.db, 'repos', `${shape}|${JSON.stringify(params)}`, async () => (await counted.execute(params))[0]!.n) : (await counted.execute(params))[0]!.n
    const rows = total > page.offset ? (await valueRows(statements.page, { ...params, limit: page.limit, offset: page.offset })).map((v) => repoRows.map(v)) : []
    return { rows, total }
  })
  return found!
}

/**
 * The ids of the repositories user `userId` owns or has been given access to: from the owner's
 * index and grantedRepoIds, where a test of each repository read every one.
 */
const ownedAndGranted = (userId: Placeholder) =>
  qb.select({ id: repositories.id }).from(repositories).where(eq(repositories.ownerId, userId)).unionAll(grantedRepoIds(userId))

/**
 * The caller's own repositories plus those shared with them (collaborations, teams), of those
 * the visibility rule shows them (all of them, but to a public-only token).
 */
export async function listCallerRepos(deps: AppDeps, user: UserRow, page: Page) {
  return await pageOfRepos(
    deps,
    user.publicOnly ? 'caller:public' : 'caller',
    () => and(inArray(repositories.id, ownedAndGranted(VIEWER)), user.publicOnly ? readableRepoCondition(user) : undefined)!,
    { viewer: user.id },
    page,
    { byIds: true },
  )
}

/** Repositories owned by a user or organisation that `viewer` may read. */
export async function listOwnedRepos(deps: AppDeps, viewer: UserRow | null, owner: UserRow, page: Page) {
  return await pageOfRepos(
    deps,
    `owned:${viewerKind(viewer)}`,
    () => and(eq(repositories.ownerId, OWNER), readableRepoCondition(viewerStandIn(viewer))),
    { owner: owner.id, viewer: viewer?.id ?? 0 },
    page,
  )
}

/**
 * What `viewer` may read of the ready repositories `where` names (the visibility rule). `where` is
 * the selective term (a name, an id): `status` is not looked up in an index (notIndexed), where
 * SQLite read every ready, public repository to find 50 forks.
 */
const readableWhere = (viewer: UserRow | null, where: SQL) => and(where, eq(notIndexed(repositories.status), 'ready'), readableRepoCondition(viewer))

/** The first repository `where` names that `viewer` may read, or undefined (no count). */
export async function findReadableRepo(deps: AppDeps, viewer: UserRow | null, where: SQL): Promise<RepoRow | undefined> {
  return (await deps.db.select().from(repositories).where(readableWhere(viewer, where)).limit(1))[0]
}

/**
 * A page of the ready repositories that `viewer` may read among those `where` names, by name, for
 * lists of one person's or one repository's (`of`: a fork's parent, the person who starred): the
 * statements prepared once per `shape` and kind of viewer, `where` built with the placeholder
 * standing for `of`, and the page kept while the database is unchanged (pageOfRepos). `where` is
 * the selective term: `status` is not looked up in an index (prepareRepoPage's `byIds`).
 */
export async function listReadableReposOf(deps: AppDeps, viewer: UserRow | null, shape: string, where: (of: Placeholder) => SQL, of: number, page: Page): Promise<Paged<RepoRow>> {
  return await pageOfRepos(
    deps,
    `${shape}:${viewerKind(viewer)}`,
    () => and(where(OWNER), readableRepoCondition(viewerStandIn(viewer))),
    { owner: of, viewer: viewer?.id ?? 0 },
    page,
    { byIds: true },
  )
}

export interface RepoSearch {
  q?: string
  uid?: number
  exclusive?: boolean
  mode?: string
  /** Only archived repositories (true), none of them (false), or all (undefined). */
  archived?: boolean
  /** `q` names topics (comma-separated, any of them, whole names) instead of a part of the name. */
  topic?: boolean
}

/** Topic names one search may ask for at once. */
const MAX_SEARCH_TOPICS = 25


/**
 * GET /repos/search: name substring (case-insensitive), owner/collaborator `uid`, mode and
 * archived filters; only repositories the viewer may read; sorted by name.
 */
export async function searchRepositories(deps: AppDeps, viewer: UserRow | null, opts: RepoSearch, page: Page) {
  const mode = opts.mode ?? ''
  if (mode !== '' && !(SEARCH_MODES as readonly string[]).includes(mode)) throw unprocessable(`Invalid search mode: "${mode}"`)
  const q = (opts.q ?? '').trim().toLowerCase()
  // Gitea's TopicOnly search: the repositories carrying any of the comma-separated topics.
  const topicNames = opts.topic ? [...new Set(q.split(',').map((t) => t.trim()).filter((t) => t !== ''))].slice(0, MAX_SEARCH_TOPICS) : []
  const topicParams = Object.fromEntries(topicNames.map((name, i) => [`topic${i}`, name]))
  const uid = opts.uid !== undefined && opts.uid > 0 ? Math.floor(opts.uid) : 0
  const uidFilter = !uid ? 'none' : mode === 'collaborative' ? 'collaborating' : opts.exclusive ? 'owned' : 'either'
  const trigram = !opts.topic && usesTrigramIndex(deps.db, q)
  // A list of ids to start from (the names the trigram index finds, the topics' repositories, those
  // of `uid` and shared with them), or none: every repository checked (a text under three
  // characters, or none: the explore page).
  const byIds = trigram || topicNames.length > 0 || uidFilter !== 'none'
  const where = () => {
    const conds: SQL[] = []
    // Both sides lower-cased: the same on either database, whatever its LIKE does with case.
    if (q && !opts.topic) conds.push(sql`${repositories.lowerName} LIKE ${PATTERN} ESCAPE '\\'`)
    // SQLite: the names holding the text, found by the trigram index (drizzle/0019), so the LIKE
    // above reads only them (PostgreSQL's pg_trgm index serves that LIKE itself).
    if (trigram) conds.push(sql`${repositories.id} IN (SELECT rowid FROM repositories_name_trgm WHERE repositories_name_trgm.lower_name LIKE ${TRIGRAM_PATTERN})`)
    if (topicNames.length) {
      const named = topicNames.map((_, i) => sql.placeholder(`topic${i}`))
      const carrying = sql`SELECT ${repoTopics.repoId} FROM ${repoTopics} INNER JOIN ${topics} ON ${topics.id} = ${repoTopics.topicId} WHERE ${topics.name} IN (${sql.join(named, sql`, `)})`
      conds.push(sql`${repositories.id} IN (${carrying})`)
    }
    if (mode === 'source') conds.push(eq(repositories.isFork, false), eq(repositories.isMirror, false))
    if (mode === 'fork') conds.push(eq(repositories.isFork, true))
    if (mode === 'mirror') conds.push(eq(repositories.isMirror, true))
    if (mode === 'collaborative') conds.push(eq(repositories.isMirror, false))
    if (opts.archived !== undefined) conds.push(eq(repositories.isArchived, opts.archived))
    if (uidFilter === 'collaborating') conds.push(inArray(repositories.id, grantedRepoIds(OWNER)), ne(repositories.ownerId, OWNER))
    if (uidFilter === 'owned') conds.push(eq(repositories.ownerId, OWNER))
    if (uidFilter === 'either') conds.push(inArray(repositories.id, ownedAndGranted(OWNER)))
    return and(...conds, readableRepoCondition(viewerStandIn(viewer)))
  }
  return await pageOfRepos(
    deps,
    `search:${viewerKind(viewer)}:${opts.topic ? `topics${topicNames.length}` : q ? (trigram ? 'q3' : 'q') : ''}:${mode}:${uidFilter}:${opts.archived ?? ''}`,
    where,
    { viewer: viewer?.id ?? 0, owner: uid, pattern: containsPattern(q), ...(trigram ? { trigram: `%${q}%` } : {}), ...topicParams },
    page,
    { byIds, offThread: !byIds },
  )
}
