import { posix } from 'node:path'
import { and, asc, count, eq, inArray } from 'drizzle-orm'
import { batchesOf } from '../../lib/batches'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { lfsLocks, users, type LfsLockRow } from '../../db/schema'
import { toLfsLock } from '../../convert/lfs-lock'
import { nowUnix } from '../../lib/time'
import type { Page, Paged } from '../../lib/pagination'
import { lfsError, lfsJson, type LfsTarget } from './access'

/*
 * The LFS locks API (Gitea's services/lfs/locks.go): a lock holds one path of a repository for
 * one user. Listing needs a signed-in reader, the rest a writer (authorizeLfs); anyone may see who
 * holds what. A lock is released by its holder, or by another writer with `force` (Gitea's
 * DeleteLFSLockByID: write access is all `force` asks).
 */

/** Longest lock path taken. */
const MAX_LOCK_PATH = 4096

/** A lock's path as stored: cleaned as Gitea's PathJoinRel cleans it (no leading slash, no `.` or `..` segment), or null when nothing is left. */
export function lockPath(path: string): string | null {
  if (path.length > MAX_LOCK_PATH || /[\x00-\x1f]/.test(path)) return null
  const cleaned = posix.normalize('/' + path.replace(/\\/g, '/')).replace(/^\/+/, '').replace(/\/+$/, '')
  return cleaned === '' || cleaned === '.' ? null : cleaned
}

async function withOwners(deps: AppDeps, rows: LfsLockRow[]) {
  const ids = [...new Set(rows.map((r) => r.ownerId))]
  const names = new Map<number, string>()
  for (const batch of batchesOf(ids)) for (const u of await deps.db.select({ id: users.id, name: users.name }).from(users).where(inArray(users.id, batch))) names.set(u.id, u.name)
  return rows.map((r) => toLfsLock(r, names.get(r.ownerId) ?? ''))
}

/** A page of the repository's locks, oldest first: `cursor` is the 1-based page (0 the first, as Gitea), `limit` at most WARREN_LFS_LOCKS_PAGING_NUM. */
async function lockPage(deps: AppDeps, repoId: number, cursor: number, limit: number) {
  // A cursor is a page number; any other (1e308, a fraction) is the first page, and pages are
  // bounded so the offset stays an integer (a 500 before: the database refused Infinity).
  const page = Number.isSafeInteger(cursor) && cursor > 1 ? Math.min(cursor, MAX_PAGE) : 1
  const rows = await deps.db.select().from(lfsLocks).where(eq(lfsLocks.repoId, repoId)).orderBy(asc(lfsLocks.id)).limit(limit).offset((page - 1) * limit)
  return { rows, next: rows.length === limit ? String(page + 1) : undefined }
}

/** The last page a cursor may name (past the locks' end, an empty page). */
const MAX_PAGE = 2 ** 31

/** `limit` as asked, bounded by WARREN_LFS_LOCKS_PAGING_NUM (0 or missing: that many). */
const pageLimit = (deps: AppDeps, limit: number | undefined) => (!limit || limit <= 0 ? deps.config.lfsLocksPagingNum : Math.min(limit, deps.config.lfsLocksPagingNum))

const signInFirst = (deps: AppDeps) => lfsError(deps, 401, 'You must sign in to use locks')

/** `GET locks` with `id`, `path`, or a page (`cursor`, `limit`): `{locks, next_cursor}`. */
export async function listLocks(deps: AppDeps, target: LfsTarget, query: { id?: string; path?: string; cursor?: number; limit?: number }): Promise<Response> {
  if (!target.user) return signInFirst(deps)
  if (query.id !== undefined && query.id !== '') {
    if (!/^[0-9]{1,15}$/.test(query.id)) return lfsError(deps, 400, `bad request : invalid id "${query.id.slice(0, 32)}"`)
    const rows = await deps.db.select().from(lfsLocks).where(and(eq(lfsLocks.repoId, target.repo.id), eq(lfsLocks.id, Number(query.id)))).limit(1)
    return lfsJson({ locks: await withOwners(deps, rows) })
  }
  if (query.path !== undefined && query.path !== '') {
    const path = lockPath(query.path)
    const rows = path ? await deps.db.select().from(lfsLocks).where(and(eq(lfsLocks.repoId, target.repo.id), eq(lfsLocks.path, path))).limit(1) : []
    return lfsJson({ locks: await withOwners(deps, rows) })
  }
  const { rows, next } = await lockPage(deps, target.repo.id, query.cursor ?? 0, pageLimit(deps, query.limit))
  return lfsJson({ locks: await withOwners(deps, rows), ...(next ? { next_cursor: next } : {}) })
}

/** `POST locks` `{path}`: 201 with the new lock, or 409 with the lock that holds the path already. */
export async function createLock(deps: AppDeps, target: LfsTarget, rawPath: string): Promise<Response> {
  const user = target.user
  if (!user) return signInFirst(deps)
  const path = lockPath(rawPath)
  if (!path) return lfsError(deps, 422, 'the lock needs a path within the repository')
  const made = await writeTransaction(deps.db, async () => {
    const [row] = await deps.db.insert(lfsLocks).values({ repoId: target.repo.id, ownerId: user.id, path, createdUnix: nowUnix() }).onConflictDoNothing().returning()
    if (row) return { row, fresh: true }
    const [held] = await deps.db.select().from(lfsLocks).where(and(eq(lfsLocks.repoId, target.repo.id), eq(lfsLocks.path, path))).limit(1)
    return { row: held!, fresh: false }
  })
  const [lock] = await withOwners(deps, [made.row])
  return made.fresh ? lfsJson({ lock }, 201) : lfsJson({ lock, message: 'already created lock' }, 409)
}

/** `POST locks/verify` `{cursor, limit}`: a page of the repository's locks split into the caller's (`ours`) and the others' (`theirs`). */
export async function verifyLocks(deps: AppDeps, target: LfsTarget, body: { cursor?: string | number; limit?: number }): Promise<Response> {
  const user = target.user
  if (!user) return signInFirst(deps)
  const cursor = Number(body.cursor ?? 0)
  const { rows, next } = await lockPage(deps, target.repo.id, cursor, pageLimit(deps, body.limit))
  const locks = await withOwners(deps, rows)
  return lfsJson({
    ours: locks.filter((_, i) => rows[i]!.ownerId === user.id),
    theirs: locks.filter((_, i) => rows[i]!.ownerId !== user.id),
    ...(next ? { next_cursor: next } : {}),
  })
}

/** `POST locks/{id}/unlock` `{force}`: the lock released, by its holder, or by another writer with `force` (403 without). */
export async function unlock(deps: AppDeps, target: LfsTarget, idText: string, force: boolean): Promise<Response> {
  const user = target.user
  if (!user) return signInFirst(deps)
  const released = await releaseLock(deps, target.repo.id, user.id, idText, force)
  if (typeof released === 'string') return lfsError(deps, released === 'not found' ? 404 : 403, released === 'not found' ? 'lock not found' : "user doesn't own lock and force flag is not set")
  const [lock] = await withOwners(deps, [released])
  return lfsJson({ lock })
}

/**
 * Releases lock `idText` of the repository for `userId` (Gitea's DeleteLFSLockByID): its holder,
 * or anyone with `force` (the caller checked they write to the repository); the released lock, or
 * why not. The LFS API and the settings page share it.
 */
export async function releaseLock(deps: AppDeps, repoId: number, userId: number, idText: string, force: boolean): Promise<LfsLockRow | 'not found' | 'not yours'> {
  if (!/^[0-9]{1,15}$/.test(idText)) return 'not found'
  const where = and(eq(lfsLocks.repoId, repoId), eq(lfsLocks.id, Number(idText)))
  return await writeTransaction(deps.db, async () => {
    const [row] = await deps.db.select().from(lfsLocks).where(where).limit(1)
    if (!row) return 'not found' as const
    if (row.ownerId !== userId && !force) return 'not yours' as const
    await deps.db.delete(lfsLocks).where(where)
    return row
  })
}

/** A page of the repository's locks, oldest first, with their holders' names and their number (the LFS settings page). */
export async function listLockRows(deps: AppDeps, repoId: number, page: Page): Promise<Paged<{ lock: LfsLockRow; owner: string }>> {
  const [rows, [total]] = await Promise.all([
    deps.db.select().from(lfsLocks).where(eq(lfsLocks.repoId, repoId)).orderBy(asc(lfsLocks.id)).limit(page.limit).offset(page.offset),
    deps.db.select({ n: count() }).from(lfsLocks).where(eq(lfsLocks.repoId, repoId)),
  ])
  const named = await withOwners(deps, rows)
  return { rows: rows.map((lock, i) => ({ lock, owner: named[i]!.owner.name })), total: Number(total?.n ?? 0) }
}
