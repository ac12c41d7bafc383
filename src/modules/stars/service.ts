import { and, asc, eq, inArray, sql, type SQLWrapper } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import type { RepoRow } from '../../auth/access'
import { writeTransaction } from '../../db/client'
import { refuseBlocked } from '../../auth/blocking'
import { repositories, stars, users, watches } from '../../db/schema'
import { batchesOf } from '../../lib/batches'
import type { Page, Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { listReadableReposOf } from '../repos/queries'
import { usersPage, type PeopleList } from '../users/service'

/*
 * Stars and watches (Gitea's star.go and watch.go): a row per (user, repository) pair, and the
 * counters beside them (repositories.num_stars / num_watches, users.num_stars for stars) changed
 * in the same transaction, only when a row was really inserted or deleted, so that they stay
 * exact however many toggles race. The rows go with their repository or user (ON DELETE
 * CASCADE); the counters of the other side are fixed by deleteRepository and deleteUser.
 */

/** What a user can mark a repository with. */
export type Mark = 'star' | 'watch'

/** Both tables have the same columns (user_id, repo_id, created_unix): one shape serves both. */
const TABLES: Record<Mark, typeof stars> = { star: stars, watch: watches as unknown as typeof stars }
const REPO_COUNTERS = { star: 'numStars', watch: 'numWatches' } as const

/** The people who marked a repository, in marking order. */
const MARKERS: Record<Mark, PeopleList> = {
  star: { name: 'stargazers', link: stars, via: stars.userId, where: (of) => eq(stars.repoId, of), order: asc(stars.id) },
  watch: { name: 'watchers', link: watches, via: watches.userId, where: (of) => eq(watches.repoId, of), order: asc(watches.id) },
}

/** Users who marked the repository whom `viewer` may see, in marking order. */
export async function listMarkers(deps: AppDeps, mark: Mark, viewer: UserRow | null, repoId: number, page: Page): Promise<Paged<UserRow>> {
  return await usersPage(deps, viewer, MARKERS[mark], repoId, page)
}

/**
 * Repositories marked by `userId` that `viewer` may read (those the viewer lost access to drop
 * out); another user's private ones never show (Gitea: IncludePrivate only for the user itself),
 * since what someone stars or watches in private is theirs to know. `viewer` null: an anonymous
 * visitor of the profile page.
 */
export async function listMarkedRepos(deps: AppDeps, mark: Mark, viewer: UserRow | null, userId: number, page: Page): Promise<Paged<RepoRow>> {
  const table = TABLES[mark]
  const own = viewer?.id === userId
  return await listReadableReposOf(
    deps,
    viewer,
    `marked:${mark}:${own ? 'own' : 'others'}`,
    (marker) => and(inArray(repositories.id, deps.db.select({ id: table.repoId }).from(table).where(eq(table.userId, marker))), own ? undefined : eq(repositories.isPrivate, false))!,
    userId,
    page,
  )
}

export async function hasMarked(deps: AppDeps, mark: Mark, userId: number, repoId: number): Promise<boolean> {
  const table = TABLES[mark]
  return !!(await deps.db.select({ id: table.id }).from(table).where(and(eq(table.userId, userId), eq(table.repoId, repoId))))[0]
}

/**
 * Adds (`on`) or removes the mark and moves the counters when a row really changed; to be called
 * inside a writeTransaction. Repository creation uses it to make the creator watch (Gitea's
 * AutoWatchNewRepos, on by default).
 */
export async function changeMarkRow(deps: AppDeps, mark: Mark, userId: number, repoId: number, on: boolean): Promise<void> {
  const table = TABLES[mark]
  const changed = on
    ? (await deps.db.insert(table).values({ userId, repoId, createdUnix: nowUnix() }).onConflictDoNothing().returning({ id: table.id }))[0]
    : (await deps.db.delete(table).where(and(eq(table.userId, userId), eq(table.repoId, repoId))).returning({ id: table.id }))[0]
  if (changed) await moveCounters(deps, mark, userId, [repoId], on ? 1 : -1)
}

/**
 * changeMarkRow's removal for many repositories at once (blocking, modules/blocks): takes
 * `userId`'s marks off the repositories `repoIds` selects (a subquery of ids) in one statement,
 * then moves the counters of the rows it really deleted (a toggle racing it counts once), a
 * batch of repositories a statement. Inside a writeTransaction.
 */
export async function unmarkRepos(deps: AppDeps, mark: Mark, userId: number, repoIds: SQLWrapper): Promise<void> {
  const table = TABLES[mark]
  const gone = await deps.db.delete(table).where(and(eq(table.userId, userId), inArray(table.repoId, repoIds))).returning({ repoId: table.repoId })
  if (gone.length) await moveCounters(deps, mark, userId, gone.map((r) => r.repoId), -1)
}

/** Moves the counters of `repoIds` (each marked or unmarked once by `userId`) and, for stars, the user's, by `step` each. */
async function moveCounters(deps: AppDeps, mark: Mark, userId: number, repoIds: number[], step: 1 | -1): Promise<void> {
  const column = REPO_COUNTERS[mark]
  for (const ids of batchesOf(repoIds)) await deps.db.update(repositories).set({ [column]: sql`${repositories[column]} + ${step}` }).where(inArray(repositories.id, ids))
  if (mark === 'star') await deps.db.update(users).set({ numStars: sql`${users.numStars} + ${step * repoIds.length}` }).where(eq(users.id, userId))
}

/**
 * Marks (`on`) or unmarks the repository for `user` (idempotent); one its owner blocked may not
 * mark it (403, Gitea's StarRepo and WatchRepo), but may still unmark it.
 */
export async function setMark(deps: AppDeps, mark: Mark, user: UserRow, repo: Pick<RepoRow, 'id' | 'ownerId'>, on: boolean): Promise<void> {
  await writeTransaction(deps.db, async () => {
    if (on) await refuseBlocked(deps.db, user.id, [repo.ownerId])
    await changeMarkRow(deps, mark, user.id, repo.id, on)
  })
}
