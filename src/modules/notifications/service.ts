import { and, count, desc, eq, exists, gte, inArray, lte, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { readableRepoCondition } from '../../auth/visibility'
import { writeTransaction } from '../../db/client'
import { queryBuilder } from '../../db/sql'
import { notifications, repositories, type NotificationRow } from '../../db/schema'
import { ApiError, badRequest, forbidden, notFound } from '../../lib/errors'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
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
 * `user`'s threads in repositories they may still read. The rule is checked per thread (a
 * correlated EXISTS: one primary-key read of its repository), not as `repo_id IN (every readable
 * repository)`, which built the list of the whole site's readable repositories on every list and
 * count (bench/scale.ts: 6× slower at 10k repositories than at 1k for the same threads).
 */
function ownReadable(user: UserRow): SQL {
  const readable = readableRepoCondition(user)
  return and(
    eq(notifications.userId, user.id),
    readable ? exists(qb.select({ one: repositories.id }).from(repositories).where(and(eq(repositories.id, notifications.repoId), readable))) : undefined,
  )!
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
  const where: (SQL | undefined)[] = [ownReadable(user), repoId === undefined ? undefined : eq(notifications.repoId, repoId)]
  if (!flag(filter.all)) {
    const statuses = statusesOf(filter['status-types'], ['unread', 'pinned'])
    if (statuses.length) where.push(inArray(notifications.status, statuses))
  }
  const sources = [...new Set((filter['subject-type'] ?? []).map((s) => SOURCE[s.toLowerCase() as keyof typeof SOURCE]).filter((s) => s !== undefined))]
  if (sources.length) where.push(inArray(notifications.source, sources))
  // Gitea's GetQueryBeforeSince: updated at or after `since`, at or before `before`.
  if (filter.since) where.push(gte(notifications.updatedUnix, parseTimestamp(filter.since, 'since')))
  if (filter.before) where.push(lte(notifications.updatedUnix, parseTimestamp(filter.before, 'before')))
  return await selectPage(deps.db, notifications, and(...where), [desc(notifications.updatedUnix), desc(notifications.id)], page)
}

/** GET /notifications/new: the unread threads. */
export async function countUnread(deps: AppDeps, user: UserRow): Promise<number> {
  return (await deps.db.select({ n: count() }).from(notifications).where(and(ownReadable(user), eq(notifications.status, STATUS.unread))))[0]!.n
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
  const readable = readableRepoCondition(user)
  const visible = (await deps.db.select({ id: repositories.id }).from(repositories).where(and(eq(repositories.id, row.repoId), readable)))[0]
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
