import { and, count, desc, eq, exists, gte, inArray, lte, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { readableUnitsCondition, VIEWER_ID, viewerKind, viewerStandIn } from '../../auth/visibility'
import { writeTransaction, type Db } from '../../db/client'
import { rowMapper, valueRows } from '../../db/row-mapper'
import { queryBuilder } from '../../db/sql'
import { notifications, repositories, type NotificationRow } from '../../db/schema'
import { ApiError, badRequest, forbidden, notFound } from '../../lib/errors'
import { totalOf, type Page, type Paged } from '../../lib/pagination'
import { pathNumber } from '../../lib/path-number'
import { nowUnix, parseTimestamp } from '../../lib/time'
import { SOURCE, STATUS } from '../../notify/recipients'

/*
 * A user's notification threads (Gitea's routers/api/v1/notify): lists, the unread count, marking
 * read, unread or pinned. The threads themselves are written by the outbox's notification
 * consumer (src/notify/). Every read goes through the visibility rule: a thread of a repository
 * the user may no longer read is neither listed, counted, shown nor changed.
 */

const qb = queryBuilder()

/** Gitea's FormBool. */
const flag = (value: string | undefined) => ['1', 't', 'true'].includes((value ?? '').toLowerCase())

const STATUS_OF: Record<string, number> = { unread: STATUS.unread, read: STATUS.read, pinned: STATUS.pinned }

/** Gitea's statusStringsToNotificationStatuses: the known names among `asked` (or `defaults` when none asked); empty: any status. */
function statusesOf(asked: string[] | undefined, defaults: string[]): number[] {
  const names = asked?.length ? asked : defaults
  return [...new Set(names.map((n) => STATUS_OF[n.toLowerCase()]).filter((s): s is number => s !== undefined))]
}

/** The status `to-status` names; read when absent or unknown, as Gitea. */
const targetStatus = (value: string | undefined): number => STATUS_OF[(value ?? '').toLowerCase()] ?? STATUS.read

/**
 * A thread the viewer may read: its issue's in a repository whose issues unit they read, a pull
 * request's where they read the pull requests unit, a commit's or repository's where they read
 * the code (a condition on `notifications` and its `repositories`).
 */
const threadReadable = (user: UserRow) =>
  readableUnitsCondition(user, [
    [eq(notifications.source, 1), 'repo.issues'],
    [eq(notifications.source, 2), 'repo.pulls'],
    [inArray(notifications.source, [3, 4]), 'repo.code'],
  ])

/**
 * `user`'s threads in repositories they may still read (the thread's unit). The rule is checked per thread (a
 * correlated EXISTS: one primary-key read of its repository), not as `repo_id IN (every readable
 * repository)`, which built the list of the whole site's readable repositories on every list and
 * count (bench/scale.ts: 6× slower at 10k repositories than at 1k for the same threads).
 */
function ownReadable(user: UserRow, userId: number | Placeholder = user.id): SQL {
  const readable = threadReadable(user)
  return and(
    eq(notifications.userId, userId),
    readable ? exists(qb.select({ one: repositories.id }).from(repositories).where(and(eq(repositories.id, notifications.repoId), readable))) : undefined,
  )!
}

/*
 * The list and the unread count are prepared once per shape (the kind of viewer, and how many
 * statuses and subject types a filter names, whether it has a repository, `since` or `before`),
 * their values bound as placeholders: building and planning them cost more than running them
 * (about 2.5 ms a list, even of one thread).
 */
// A public-only token's lists are an anonymous one's, but of its own threads (visibility.ts).
const ownReadableShape = (user: UserRow) => ownReadable(viewerStandIn(user), VIEWER_ID)

const threadOrder = [desc(notifications.updatedUnix), desc(notifications.id)]
const threadRows = rowMapper<NotificationRow>(notifications)

function prepareThreadList(db: Db, where: SQL) {
  return {
    count: db.select({ n: count() }).from(notifications).where(where).prepare(),
    page: db
      .select()
      .from(notifications)
      .where(where)
      .orderBy(...threadOrder)
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .prepare(),
  }
}

const listStatements = new WeakMap<Db, Map<string, ReturnType<typeof prepareThreadList>>>()
const countStatements = new WeakMap<Db, Map<string, PreparedCount>>()
type PreparedCount = { execute(params: Record<string, unknown>): Promise<{ n: number }[]> }

/** The statement of `shape` in `statements` for `db`, prepared on first use. */
function preparedOf<T>(statements: WeakMap<Db, Map<string, T>>, db: Db, shape: string, prepare: () => T): T {
  let cache = statements.get(db)
  if (!cache) statements.set(db, (cache = new Map()))
  let prepared = cache.get(shape)
  if (!prepared) cache.set(shape, (prepared = prepare()))
  return prepared
}

/** Placeholders `${name}0`…, one per value, and their values. */
function listed(name: string, values: number[]): { holders: Placeholder[]; params: Record<string, number> } {
  const params: Record<string, number> = {}
  values.forEach((v, i) => (params[`${name}${i}`] = v))
  return { holders: values.map((_, i) => sql.placeholder(`${name}${i}`)), params }
}

export interface ThreadFilter {
  all?: string
  'status-types'?: string[]
  'subject-type'?: string[]
  since?: string
  before?: string
}

/** GET /notifications (and a repository's): newest update first. */
export async function listThreads(deps: AppDeps, user: UserRow, filter: ThreadFilter, page: Page, repoId?: number): Promise<Paged<NotificationRow>> {
  const statuses = listed('status', flag(filter.all) ? [] : statusesOf(filter['status-types'], ['unread', 'pinned']))
  const sources = listed('source', [...new Set((filter['subject-type'] ?? []).map((s) => SOURCE[s.toLowerCase() as keyof typeof SOURCE]).filter((s) => s !== undefined))])
  // Gitea's GetQueryBeforeSince: updated at or after `since`, at or before `before`.
  const since = filter.since ? parseTimestamp(filter.since, 'since') : undefined
  const before = filter.before ? parseTimestamp(filter.before, 'before') : undefined
  const shape = `${viewerKind(user)}:${repoId === undefined ? '' : 'repo'}:${statuses.holders.length}:${sources.holders.length}:${since === undefined ? '' : 's'}:${before === undefined ? '' : 'b'}`
  const statements = preparedOf(listStatements, deps.db, shape, () =>
    prepareThreadList(
      deps.db,
      and(
        ownReadableShape(user),
        repoId === undefined ? undefined : eq(notifications.repoId, sql.placeholder('repo')),
        statuses.holders.length ? inArray(notifications.status, statuses.holders) : undefined,
        sources.holders.length ? inArray(notifications.source, sources.holders) : undefined,
        since === undefined ? undefined : gte(notifications.updatedUnix, sql.placeholder('since')),
        before === undefined ? undefined : lte(notifications.updatedUnix, sql.placeholder('before')),
      )!,
    ),
  )
  const params = { viewer: user.id, repo: repoId ?? 0, since: since ?? 0, before: before ?? 0, ...statuses.params, ...sources.params }
  const rows = (await valueRows(statements.page, { ...params, limit: page.limit, offset: page.offset })).map((v) => threadRows.map(v))
  return { rows, total: await totalOf(page, rows.length, async () => (await statements.count.execute(params))[0]!.n) }
}

/** GET /notifications/new: the unread threads. */
export async function countUnread(deps: AppDeps, user: UserRow): Promise<number> {
  const statement = preparedOf(countStatements, deps.db, viewerKind(user), () =>
    deps.db
      .select({ n: count() })
      .from(notifications)
      .where(and(ownReadableShape(user), eq(notifications.status, sql.placeholder('status'))))
      .prepare(),
  )
  return (await statement.execute({ viewer: user.id, status: STATUS.unread }))[0]!.n
}

export interface MarkOptions {
  last_read_at?: string
  all?: string
  'status-types'?: string[]
  'to-status'?: string
}

/** `last_read_at` in Unix seconds; 400 when it is not an RFC 3339 time, as Gitea answers it. */
function lastReadOf(value: string): number {
  try {
    return parseTimestamp(value, 'last_read_at')
  } catch (e) {
    throw e instanceof ApiError ? badRequest(e.message) : e
  }
}

/**
 * PUT /notifications (and a repository's): the threads of the statuses asked (unread by default;
 * any with `all`) updated at or before `last_read_at` take `to-status` (read by default). Answers
 * the threads as they are now.
 */
export async function markThreads(deps: AppDeps, user: UserRow, opts: MarkOptions, repoId?: number): Promise<NotificationRow[]> {
  // Gitea parses last_read_at before anything else: a malformed one changes nothing (400).
  const lastRead = opts.last_read_at?.trim() ? lastReadOf(opts.last_read_at) : 0
  const where: (SQL | undefined)[] = [ownReadable(user), repoId === undefined ? undefined : eq(notifications.repoId, repoId)]
  if (lastRead > 0) where.push(lte(notifications.updatedUnix, lastRead))
  if (!flag(opts.all)) {
    const statuses = statusesOf(opts['status-types'], ['unread'])
    if (statuses.length) where.push(inArray(notifications.status, statuses))
  }
  const status = targetStatus(opts['to-status'])
  return await writeTransaction(deps.db, async () => {
    const ids = (await deps.db.select({ id: notifications.id }).from(notifications).where(and(...where))).map((r) => r.id)
    if (ids.length === 0) return []
    return await deps.db
      .update(notifications)
      .set({ status, updatedUnix: nowUnix() })
      .where(inArray(notifications.id, ids))
      .returning()
  })
}

/**
 * One thread of the caller's (Gitea's getThread): 404 when unknown or its repository is hidden
 * from the caller, 403 when it is another user's (site administrators may read it).
 */
export async function findThread(deps: AppDeps, user: UserRow, idParam: string): Promise<NotificationRow> {
  const id = pathNumber(idParam)
  const row = Number.isNaN(id) ? undefined : (await deps.db.select().from(notifications).where(eq(notifications.id, id)))[0]
  if (!row) throw notFound()
  if (row.userId !== user.id && !user.isAdmin) throw forbidden(`only user itself and admin are allowed to read/change this thread ${row.id}`)
  const readable = threadReadable(user)
  const visible = (await deps.db.select({ id: repositories.id }).from(notifications).innerJoin(repositories, eq(repositories.id, notifications.repoId)).where(and(eq(notifications.id, row.id), readable)))[0]
  if (!visible) throw notFound()
  return row
}

/** PATCH /notifications/threads/{id}: the caller's own thread takes `to-status` (read by default). */
export async function markThread(deps: AppDeps, user: UserRow, idParam: string, toStatus: string | undefined): Promise<NotificationRow> {
  const row = await findThread(deps, user, idParam)
  // Gitea's SetNotificationStatus refuses another user's thread, an administrator's included.
  if (row.userId !== user.id) throw forbidden(`only user itself is allowed to change this thread ${row.id}`)
  return await writeTransaction(deps.db, async () =>
    (await deps.db.update(notifications).set({ status: targetStatus(toStatus), updatedUnix: nowUnix() }).where(eq(notifications.id, row.id)).returning())[0] ?? row,
  )
}
