import { and, asc, eq, ne } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import type { RepoContext } from '../../auth/repo-context'
import { writeTransaction } from '../../db/client'
import { attachments, releases, type AttachmentRow } from '../../db/schema'
import { conflict, notFound, unprocessable } from '../../lib/errors'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { pathNumber } from '../../lib/path-number'
import { nowUnix } from '../../lib/time'
import { checkAttachmentFile, checkAttachmentName, checkRoomFor, deleteAttachment, MAX_ATTACHMENTS_PER_HOLDER, receiveAttachment, storeAttachment, type UploadTarget } from '../attachments/files'
import { getRelease } from './service'

/**
 * Release assets: the files attached to a release, stored as src/modules/attachments/storage.ts
 * says (their downloads: ../attachments/files.ts).
 */

/** The assets of a release the caller may see, oldest first. */
export async function listAssets(deps: AppDeps, ctx: RepoContext, rawId: string, page: Page | null): Promise<Paged<AttachmentRow>> {
  const release = await getRelease(deps, ctx, rawId)
  return await selectPage(deps.db, attachments, eq(attachments.releaseId, release.id), asc(attachments.id), page)
}

/** An asset of a release (the path's `{asset}`), else 404. */
export const getAsset = async (deps: AppDeps, ctx: RepoContext, rawId: string, rawAsset: string): Promise<AttachmentRow> =>
  await assetOf(deps, (await getRelease(deps, ctx, rawId)).id, rawAsset)

async function assetOf(deps: AppDeps, releaseId: number, rawAsset: string): Promise<AttachmentRow> {
  const id = pathNumber(rawAsset)
  const row = Number.isNaN(id)
    ? undefined
    : (await deps.db.select().from(attachments).where(and(eq(attachments.releaseId, releaseId), eq(attachments.id, id))))[0]
  if (!row) throw notFound('attachment does not exist')
  return row
}

/** 422 when the release already holds MAX_ASSETS_PER_RELEASE assets. */
const checkRoomForAsset = async (deps: AppDeps, releaseId: number) => await checkRoomFor(deps, eq(attachments.releaseId, releaseId), 'release')

/** 409 when the release already has an asset of this name (its download URL would be ambiguous). */
async function checkNameFree(deps: AppDeps, releaseId: number, name: string, except = 0): Promise<void> {
  const other = (await deps.db
    .select({ id: attachments.id })
    .from(attachments)
    .where(and(eq(attachments.releaseId, releaseId), eq(attachments.name, name), ne(attachments.id, except))))[0]
  if (other) throw conflict(`the release already has an attachment named "${name}"`)
}

/**
 * Uploads an asset (Gitea's CreateReleaseAttachment), streamed as ../attachments/files.ts
 * receives every attachment; 409 for a name the release has, 404 when the release was deleted
 * while the file arrived.
 */
export async function uploadAsset(deps: AppDeps, ctx: RepoContext, actor: UserRow, rawId: string, request: Request, name: string | undefined): Promise<AttachmentRow> {
  const release = await getRelease(deps, ctx, rawId)
  await checkRoomForAsset(deps, release.id)
  return await receiveAttachment(deps, request, name, assetTarget(deps, ctx, actor, release.id))
}

/**
 * Adds the files of a web form to a release (Gitea's `files` of the new and edit forms): each
 * checked first (name, size, emptiness, names clashing among them or with the release's, room
 * for them all), so a refusal keeps none; then stored as `uploadAsset` stores one.
 */
export async function addAssetFiles(deps: AppDeps, ctx: RepoContext, actor: UserRow, releaseId: number, files: File[]): Promise<AttachmentRow[]> {
  checkAssetFiles(deps, files)
  const held = (await deps.db.select({ name: attachments.name }).from(attachments).where(eq(attachments.releaseId, releaseId))).map((r) => r.name)
  if (held.length + files.length > MAX_ATTACHMENTS_PER_HOLDER) throw unprocessable(`a release holds at most ${MAX_ATTACHMENTS_PER_HOLDER} attachments`)
  const clash = files.find((f) => held.includes(f.name))
  if (clash) throw conflict(`the release already has an attachment named "${clash.name}"`)
  const target = assetTarget(deps, ctx, actor, releaseId)
  const stored: AttachmentRow[] = []
  for (const file of files) stored.push(await storeAttachment(deps, file, file.name, target))
  return stored
}

/** The checks of a form's files that need no release: each file's own, and no name twice among them (else 422, 413). */
export function checkAssetFiles(deps: AppDeps, files: File[]): void {
  if (files.length > MAX_ATTACHMENTS_PER_HOLDER) throw unprocessable(`a release holds at most ${MAX_ATTACHMENTS_PER_HOLDER} attachments`)
  const names = new Set<string>()
  for (const file of files) {
    checkAttachmentFile(deps.config, file, file.name)
    if (names.has(file.name)) throw conflict(`two files are named "${file.name}"`)
    names.add(file.name)
  }
}

/** Where a release's asset goes: its name free in the release, the release still there, room for it. */
function assetTarget(deps: AppDeps, ctx: RepoContext, actor: UserRow, releaseId: number): UploadTarget {
  const releaseGone = async () => !(await deps.db.select({ id: releases.id }).from(releases).where(eq(releases.id, releaseId)))[0]
  return {
    repoId: ctx.repo.id,
    checkName: (stored) => checkNameFree(deps, releaseId, stored),
    insert: async ({ uuid, name: stored, size }) => {
      if (await releaseGone()) throw notFound('release does not exist')
      // Again here: uploads running side by side all passed the first check.
      await checkRoomForAsset(deps, releaseId)
      await checkNameFree(deps, releaseId, stored)
      return (await deps.db
        .insert(attachments)
        .values({ uuid, repoId: ctx.repo.id, releaseId, uploaderId: actor.id, name: stored, size, createdUnix: nowUnix() })
        .returning())[0]!
    },
    holderGone: async () => ((await releaseGone()) ? notFound('release does not exist') : null),
  }
}

/** Renames an asset (an empty or absent name changes nothing, as Gitea). */
export async function editAsset(deps: AppDeps, ctx: RepoContext, rawId: string, rawAsset: string, name: string | undefined): Promise<AttachmentRow> {
  const release = await getRelease(deps, ctx, rawId)
  const row = await assetOf(deps, release.id, rawAsset)
  if (!name || name === row.name) return row
  checkAttachmentName(name)
  return await writeTransaction(deps.db, async () => {
    await checkNameFree(deps, release.id, name, row.id)
    const updated = (await deps.db.update(attachments).set({ name }).where(eq(attachments.id, row.id)).returning())[0]
    if (!updated) throw notFound('attachment does not exist')
    return updated
  })
}

/** Deletes an asset: its row, then its file. */
export async function deleteAsset(deps: AppDeps, ctx: RepoContext, rawId: string, rawAsset: string): Promise<void> {
  await deleteAttachment(deps, await getAsset(deps, ctx, rawId, rawAsset))
}
