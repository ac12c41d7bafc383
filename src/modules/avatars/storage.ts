import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { and, asc, eq, gt, ne } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { repositories, users } from '../../db/schema'
import { createDurableFile } from '../../lib/durable-file'
import { listing } from '../../lib/listing'
import { loggerOf } from '../../lib/log'

/**
 * Where uploaded avatars live: {data}/avatars/{hash} (users' and organisations') and
 * {data}/repo-avatars/{hash} (repositories'), the folders Gitea's URLs name. The hash is
 * SHA-256 of `{id}-` and the bytes (Gitea's avatar.HashAvatar), so no two rows share a file and
 * the same image uploaded again by the same owner is the same file. A file is written under a
 * temporary name, synced and renamed into place before the row names it; a row's old file is
 * removed after the row no longer names it. So a crash leaves at most a file no row names (or a
 * temporary one), never a row without its file: repairAvatars removes those in the background
 * after the next start.
 */

export type AvatarKind = 'user' | 'repo'

const FOLDERS: Record<AvatarKind, string> = { user: 'avatars', repo: 'repo-avatars' }

const folderOf = (deps: AppDeps, kind: AvatarKind) => join(deps.config.dataDir, FOLDERS[kind])

/** The name of an avatar file: 64 lower-case hex digits. */
export const isAvatarHash = (name: string): boolean => /^[0-9a-f]{64}$/.test(name)

/** The file of an avatar. */
export const avatarPath = (deps: AppDeps, kind: AvatarKind, hash: string) => join(folderOf(deps, kind), hash)

/** The file name of `bytes` as the avatar of row `id` (Gitea's avatar.HashAvatar). */
export const avatarHash = (id: number, bytes: Uint8Array): string => new Bun.CryptoHasher('sha256').update(`${id}-`).update(bytes).digest('hex')

/** Writes an avatar's file durably (nothing to do when the same file is already there). */
export async function storeAvatarFile(deps: AppDeps, kind: AvatarKind, hash: string, bytes: Uint8Array): Promise<void> {
  const path = avatarPath(deps, kind, hash)
  if (existsSync(path)) return
  mkdirSync(folderOf(deps, kind), { recursive: true })
  // A temporary name of its own: the same image sent twice at once writes two, renamed in turn.
  const file = await createDurableFile(path, `${path}.${randomUUID()}.part`)
  try {
    await file.write(bytes)
  } catch (e) {
    await file.discard()
    throw e
  }
  await file.keep()
}

/** Whether a row names `hash` as its avatar. */
async function isNamed(deps: AppDeps, kind: AvatarKind, hash: string): Promise<boolean> {
  const rows =
    kind === 'user'
      ? await deps.db.select({ id: users.id }).from(users).where(eq(users.avatar, hash)).limit(1)
      : await deps.db.select({ id: repositories.id }).from(repositories).where(eq(repositories.avatar, hash)).limit(1)
  return rows.length > 0
}

/** Removes an avatar's file once no row names it (after the transaction that changed the row). */
export async function removeAvatarFileIfUnused(deps: AppDeps, kind: AvatarKind, hash: string): Promise<void> {
  if (!isAvatarHash(hash) || (await isNamed(deps, kind, hash))) return
  rmSync(avatarPath(deps, kind, hash), { force: true })
}

/** Every avatar the rows of `kind` name, a page of rows at a time. */
async function namedAvatars(deps: AppDeps, kind: AvatarKind): Promise<Set<string>> {
  const named = new Set<string>()
  for (let after = 0; ; ) {
    const page =
      kind === 'user'
        ? await deps.db.select({ id: users.id, avatar: users.avatar }).from(users).where(and(gt(users.id, after), ne(users.avatar, ''))).orderBy(asc(users.id)).limit(1000)
        : await deps.db
            .select({ id: repositories.id, avatar: repositories.avatar })
            .from(repositories)
            .where(and(gt(repositories.id, after), ne(repositories.avatar, '')))
            .orderBy(asc(repositories.id))
            .limit(1000)
    if (page.length === 0) return named
    after = page.at(-1)!.id
    for (const row of page) named.add(row.avatar)
  }
}

/**
 * The repair of the avatar folders against the rows, made by the background sweep after a start
 * (jobs/repository-sweep.ts) and by `warren doctor`: files no row names (a crash between a file's
 * rename and its row, or between a row's change and its old file's removal) and temporary files
 * are removed (`keep`: only listed, as the doctor without --fix does); rows whose file is missing
 * are reported (their URLs answer 404). With `before`, only what is unchanged since then is
 * touched: an upload running now has its file in place before its row names it. `between` runs
 * after each folder; false stops the repair.
 */
export async function repairAvatars(
  deps: AppDeps,
  opts: { before?: number; between?: () => Promise<boolean>; keep?: boolean } = {},
): Promise<{ unnamed: string[]; missing: string[] }> {
  const unnamed: string[] = []
  const missing: string[] = []
  for (const kind of ['user', 'repo'] as const) {
    const folder = folderOf(deps, kind)
    const named = await namedAvatars(deps, kind)
    const present = new Set<string>()
    for (const entry of listing(folder)) {
      const path = join(folder, entry.name)
      if (entry.isFile() && named.has(entry.name)) {
        present.add(entry.name)
        continue
      }
      if (opts.before !== undefined && (statSync(path, { throwIfNoEntry: false })?.ctimeMs ?? Infinity) >= opts.before) continue
      if (!opts.keep) rmSync(path, { recursive: true, force: true })
      unnamed.push(`${FOLDERS[kind]}/${entry.name}`)
    }
    for (const hash of named) if (!present.has(hash)) missing.push(`${FOLDERS[kind]}/${hash}`)
    if (opts.between && !(await opts.between())) break
  }
  if (!opts.keep) {
    const log = loggerOf(deps.config)
    for (const name of unnamed) log.warn('removed an avatar file no row names', { file: name })
    for (const name of missing) log.warn('an avatar has no file', { avatar: name })
  }
  return { unnamed, missing }
}
