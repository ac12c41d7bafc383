import { and, asc, eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { deployKeys, publicKeys, type DeployKeyRow } from '../../db/schema'
import { notFound, unprocessable } from '../../lib/errors'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { checkSshKeyInput, KEY_USE_RECORD_INTERVAL } from '../keys/service'

/** One page of a repository's deploy keys, oldest first, optionally only `keyId` or `fingerprint`. */
export async function listDeployKeys(
  deps: AppDeps,
  repoId: number,
  page: Page,
  filter: { keyId?: number; fingerprint?: string } = {},
): Promise<Paged<DeployKeyRow>> {
  const where = and(
    eq(deployKeys.repoId, repoId),
    filter.keyId !== undefined ? eq(deployKeys.id, filter.keyId) : undefined,
    filter.fingerprint ? eq(deployKeys.fingerprint, filter.fingerprint) : undefined,
  )
  return await selectPage(deps.db, deployKeys, where, asc(deployKeys.id), page)
}

/** A deploy key of the repository by id: 404 when unknown or another repository's. */
export async function getDeployKey(deps: AppDeps, repoId: number, id: number): Promise<DeployKeyRow> {
  const key = Number.isSafeInteger(id)
    ? (await deps.db
        .select()
        .from(deployKeys)
        .where(and(eq(deployKeys.id, id), eq(deployKeys.repoId, repoId))))[0]
    : undefined
  if (!key) throw notFound(`deploy key does not exist [id: ${id}, repo: ${repoId}]`)
  return key
}

/**
 * Adds a deploy key (CreateKeyOption) to a repository, as Gitea does: 422 for unparsable
 * content, a key that is a user's key, a key or a title the repository already has. The same
 * key may open several repositories. Absent `read_only` means the key may push (Gitea ≥ 1.4).
 */
export async function addDeployKey(deps: AppDeps, repoId: number, input: { title: string; key: string; read_only?: boolean }): Promise<DeployKeyRow> {
  const { title, parsed } = checkSshKeyInput(input)
  return await writeTransaction(deps.db, async () => {
    const userKey = (await deps.db.select({ id: publicKeys.id }).from(publicKeys).where(eq(publicKeys.fingerprint, parsed.fingerprint)))[0]
    if (userKey) throw unprocessable('Key content has been used as non-deploy key', 'Key')
    const sameKey = (await deps.db
      .select({ id: deployKeys.id })
      .from(deployKeys)
      .where(and(eq(deployKeys.repoId, repoId), eq(deployKeys.fingerprint, parsed.fingerprint))))[0]
    if (sameKey) throw unprocessable('This key has already been added to this repository', 'Key')
    const sameTitle = (await deps.db
      .select({ id: deployKeys.id })
      .from(deployKeys)
      .where(and(eq(deployKeys.repoId, repoId), eq(deployKeys.title, title))))[0]
    if (sameTitle) throw unprocessable('Key title has been used', 'Title')
    const now = nowUnix()
    return (await deps.db
      .insert(deployKeys)
      .values({
        repoId,
        title,
        fingerprint: parsed.fingerprint,
        content: parsed.normalized,
        keyType: parsed.type,
        readOnly: input.read_only ?? false,
        createdUnix: now,
        updatedUnix: now,
      })
      .returning())[0]
  })
}

/** Removes a deploy key of the repository: 404 when unknown or another repository's. */
export async function deleteDeployKey(deps: AppDeps, repoId: number, id: number): Promise<void> {
  const key = await getDeployKey(deps, repoId, id)
  await deps.db.delete(deployKeys).where(eq(deployKeys.id, key.id))
}

/** What a deploy key opens: one repository, and whether the key may push to it. */
export interface DeployKeyGrant {
  keyId: number
  repoId: number
  readOnly: boolean
  /** When the key was added or last used (see recordDeployKeyUse). */
  updatedUnix: number
}

/**
 * For the SSH transport: every repository the key with this fingerprint opens as a deploy key,
 * and whether it may write there (empty when it is no deploy key). One indexed query.
 */
export async function deployKeysByFingerprint(deps: AppDeps, fingerprint: string): Promise<DeployKeyGrant[]> {
  return await deps.db
    .select({ keyId: deployKeys.id, repoId: deployKeys.repoId, readOnly: deployKeys.readOnly, updatedUnix: deployKeys.updatedUnix })
    .from(deployKeys)
    .where(eq(deployKeys.fingerprint, fingerprint))
    .orderBy(asc(deployKeys.id))
}

/** Records that a deploy key was used on its repository, at most once per KEY_USE_RECORD_INTERVAL (as user keys). */
export async function recordDeployKeyUse(deps: AppDeps, grant: DeployKeyGrant): Promise<void> {
  const now = nowUnix()
  if (now - grant.updatedUnix < KEY_USE_RECORD_INTERVAL) return
  await deps.db.update(deployKeys).set({ updatedUnix: now }).where(eq(deployKeys.id, grant.keyId))
}
