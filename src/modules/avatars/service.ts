import { eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { repositories, users } from '../../db/schema'
import { notFound } from '../../lib/errors'
import { oneAtATime } from '../../lib/one-at-a-time'
import { nowUnix } from '../../lib/time'
import { checkAvatarImage } from './image'
import { avatarHash, removeAvatarFileIfUnused, storeAvatarFile, type AvatarKind } from './storage'

/** One change of a row's avatar at a time (in this process), so an old file is never removed under a newer change. */
const serially = oneAtATime<string>()

/** Sets the row's avatar column and answers the one it replaced (404 when the row is gone). */
async function swapAvatar(deps: AppDeps, kind: AvatarKind, id: number, hash: string): Promise<string> {
  return writeTransaction(deps.db, async () => {
    const [row] =
      kind === 'user'
        ? await deps.db.select({ avatar: users.avatar }).from(users).where(eq(users.id, id))
        : await deps.db.select({ avatar: repositories.avatar }).from(repositories).where(eq(repositories.id, id))
    if (!row) throw notFound()
    if (row.avatar !== hash) {
      if (kind === 'user') await deps.db.update(users).set({ avatar: hash, updatedUnix: nowUnix() }).where(eq(users.id, id))
      else await deps.db.update(repositories).set({ avatar: hash, updatedUnix: nowUnix() }).where(eq(repositories.id, id))
    }
    return row.avatar
  })
}

/**
 * Changes the avatar of a user or organisation (`user`) or of a repository (`repo`): `image` is
 * the uploaded file's bytes (checked by ./image.ts), null to go back to the default. The new file
 * is in place before the row names it; the old one is removed after, when no row names it.
 */
export function changeAvatar(deps: AppDeps, kind: AvatarKind, id: number, image: Uint8Array | null): Promise<void> {
  const bytes = image === null ? null : checkAvatarImage(image).bytes
  return serially(deps.db, `${kind}:${id}`, async () => {
    const hash = bytes ? avatarHash(id, bytes) : ''
    if (bytes) await storeAvatarFile(deps, kind, hash, bytes)
    let old: string
    try {
      old = await swapAvatar(deps, kind, id, hash)
    } catch (e) {
      if (hash) await removeAvatarFileIfUnused(deps, kind, hash)
      throw e
    }
    if (old && old !== hash) await removeAvatarFileIfUnused(deps, kind, old)
  })
}
