import { existsSync } from 'node:fs'
import { and, asc, count, eq, ne, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import type { RepoContext } from '../../auth/repo-context'
import { writeTransaction } from '../../db/client'
import { attachments, releases, repositories, type AttachmentRow } from '../../db/schema'
import { disposition } from '../files/service'
import { ApiError, badRequest, conflict, notFound, unprocessable } from '../../lib/errors'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { pathNumber } from '../../lib/path-number'
import { charCount } from '../../lib/validate'
import { nowUnix } from '../../lib/time'
import { multipartBoundary, MULTIPART_OVERHEAD, readMultipartFile } from '../../lib/multipart'
import { digestCheck, digestedStream } from '../../lib/body'
import { MAX_ASSET_NAME } from './model'
import { getRelease, MAX_ASSETS_PER_RELEASE } from './service'
import { attachmentPath, createAttachmentFile, removeAttachmentFiles, removeRepositoryAttachments } from './storage'

/**
 * Release assets: the files attached to a release, stored as src/modules/releases/storage.ts
 * says, and their downloads.
 */

/** The assets of a release the caller may see, oldest first. */
export async function listAssets(deps: AppDeps, ctx: RepoContext, rawId: string, page: Page | null): Promise<Paged<AttachmentRow>> {
  const release = await getRelease(deps, ctx, rawId)
  return await selectPage(deps.db, attachments, eq(attachments.releaseId, release.id), asc(attachments.id), page)
}

/** An asset of a release (the path's `{asset}`), else 404. */
export async function getAsset(deps: AppDeps, ctx: RepoContext, rawId: string, rawAsset: string): Promise<AttachmentRow> {
  const release = await getRelease(deps, ctx, rawId)
  const id = pathNumber(rawAsset)
  const row = Number.isNaN(id)
    ? undefined
    : (await deps.db.select().from(attachments).where(and(eq(attachments.releaseId, release.id), eq(attachments.id, id))))[0]
  if (!row) throw notFound('attachment does not exist')
  return row
}

/**
 * An asset name: at most MAX_ASSET_NAME characters, no path separators, control characters or
 * lone surrogates, not `.` or `..` (it is the last segment of its download URL), else 422.
 */
function checkAssetName(name: string): string {
  if (name === '' || name === '.' || name === '..' || !name.isWellFormed() || charCount(name) > MAX_ASSET_NAME || /[/\\\x00-\x1f\x7f]/.test(name))
    throw unprocessable(`invalid attachment name [name: ${name.slice(0, MAX_ASSET_NAME).toWellFormed()}]`, 'name')
  return name
}

/** 422 when the release already holds MAX_ASSETS_PER_RELEASE assets. */
async function checkRoomForAsset(deps: AppDeps, releaseId: number): Promise<void> {
  const held = (await deps.db.select({ n: count() }).from(attachments).where(eq(attachments.releaseId, releaseId)))[0]!.n
  if (held >= MAX_ASSETS_PER_RELEASE) throw unprocessable(`a release holds at most ${MAX_ASSETS_PER_RELEASE} attachments`)
}

/** 409 when the release already has an asset of this name (its download URL would be ambiguous). */
async function checkNameFree(deps: AppDeps, releaseId: number, name: string, except = 0): Promise<void> {
  const other = (await deps.db
    .select({ id: attachments.id })
    .from(attachments)
    .where(and(eq(attachments.releaseId, releaseId), eq(attachments.name, name), ne(attachments.id, except))))[0]
  if (other) throw conflict(`the release already has an attachment named "${name}"`)
}

/**
 * Uploads an asset (Gitea's CreateReleaseAttachment): the multipart field `attachment`, stored
 * as `name` (else the file's own name), streamed to a temporary file (never held in memory) and
 * renamed into place before its row is written. 413 past `maxAttachmentSize`, 400 for a body
 * that is not multipart with that field, 422 for a bad name, 409 for a name the release has,
 * 404 when the release (or its repository) was deleted while the file arrived: nothing is kept
 * in every case.
 */
export async function uploadAsset(deps: AppDeps, ctx: RepoContext, actor: UserRow, rawId: string, request: Request, name: string | undefined): Promise<AttachmentRow> {
  const release = await getRelease(deps, ctx, rawId)
  await checkRoomForAsset(deps, release.id)
  const boundary = multipartBoundary(request.headers.get('content-type'))
  if (!boundary) throw badRequest('The attachment must be sent as multipart/form-data in the field "attachment"')
  const limit = deps.config.maxAttachmentSize
  if (Number(request.headers.get('content-length') ?? 0) > limit + MULTIPART_OVERHEAD) throw new ApiError(413, `The attachment is larger than ${limit} bytes`)
  let stored = name ? checkAssetName(name) : ''
  if (stored) await checkNameFree(deps, release.id, stored)
  const uuid = crypto.randomUUID()
  let size = 0
  try {
    const file = await createAttachmentFile(deps, ctx.repo.id, uuid)
    try {
      // A Digest (which a signed upload must send) is checked over the whole body as it streams.
      const digest = digestCheck(request)
      const body = digest && request.body ? digestedStream(request.body, digest) : request.body
      ;({ size } = await readMultipartFile(body, boundary, {
        readToEnd: !!digest,
        field: 'attachment',
        maxFileBytes: limit,
        accept: async (filename) => {
          if (stored) return
          stored = checkAssetName(filename.slice(Math.max(filename.lastIndexOf('/'), filename.lastIndexOf('\\')) + 1))
          await checkNameFree(deps, release.id, stored)
        },
        write: (chunk) => file.write(chunk),
      }))
      digest?.verify()
      await file.keep()
    } catch (e) {
      await file.discard()
      if (e instanceof ApiError && e.status === 413) throw new ApiError(413, `The attachment is larger than ${limit} bytes`)
      throw e
    }
    return await writeTransaction(deps.db, async () => {
      if (!(await deps.db.select({ id: releases.id }).from(releases).where(eq(releases.id, release.id)))[0]) throw notFound('release does not exist')
      // Again here: uploads running side by side all passed the first check.
      await checkRoomForAsset(deps, release.id)
      await checkNameFree(deps, release.id, stored)
      return (await deps.db
        .insert(attachments)
        .values({ uuid, repoId: ctx.repo.id, releaseId: release.id, uploaderId: actor.id, name: stored, size, createdUnix: nowUnix() })
        .returning())[0]!
    })
  } catch (e) {
    removeAttachmentFiles(deps, ctx.repo.id, [uuid])
    throw await uploadFailure(deps, ctx.repo.id, release.id, e)
  }
}

/**
 * What a failed upload answers, once its file is gone. When its release went meanwhile (deleted,
 * or with its repository, which also removes the repository's folder of files while the upload
 * writes into it): 404, whatever the file steps threw; the folder a late upload made again for a
 * deleted repository is removed too, so nothing of it stays on disk.
 */
async function uploadFailure(deps: AppDeps, repoId: number, releaseId: number, e: unknown): Promise<unknown> {
  if (e instanceof ApiError && e.status !== 404) return e
  const repo = (await deps.db.select({ id: repositories.id }).from(repositories).where(eq(repositories.id, repoId)))[0]
  if (!repo) {
    removeRepositoryAttachments(deps, repoId)
    return notFound('the repository was deleted')
  }
  if (!(await deps.db.select({ id: releases.id }).from(releases).where(eq(releases.id, releaseId)))[0]) return notFound('release does not exist')
  return e
}

/** Renames an asset (an empty or absent name changes nothing, as Gitea). */
export async function editAsset(deps: AppDeps, ctx: RepoContext, rawId: string, rawAsset: string, name: string | undefined): Promise<AttachmentRow> {
  const row = await getAsset(deps, ctx, rawId, rawAsset)
  if (!name || name === row.name) return row
  checkAssetName(name)
  return await writeTransaction(deps.db, async () => {
    await checkNameFree(deps, row.releaseId, name, row.id)
    const updated = (await deps.db.update(attachments).set({ name }).where(eq(attachments.id, row.id)).returning())[0]
    if (!updated) throw notFound('attachment does not exist')
    return updated
  })
}

/** Deletes an asset: its row, then its file. */
export async function deleteAsset(deps: AppDeps, ctx: RepoContext, rawId: string, rawAsset: string): Promise<void> {
  const row = await getAsset(deps, ctx, rawId, rawAsset)
  await deps.db.delete(attachments).where(eq(attachments.id, row.id))
  removeAttachmentFiles(deps, row.repoId, [row.uuid])
}

// ---- downloads ------------------------------------------------------------------------------

/**
 * An asset's bytes, streamed from disk with their length, a type from the name's extension and
 * an `attachment` disposition; counts the download. The asset is the one the pipeline's
 * `attachment` need found for the caller (`/attachments/{uuid}` and
 * `/{owner}/{repo}/releases/download/{tag}/{name}`), which decided they may download it.
 */
export async function downloadAsset(deps: AppDeps, row: AttachmentRow): Promise<Response> {
  const path = attachmentPath(deps, row.repoId, row.uuid)
  if (!existsSync(path)) throw notFound('the attachment file is missing')
  await deps.db
    .update(attachments)
    .set({ downloadCount: sql`${attachments.downloadCount} + 1` })
    .where(eq(attachments.id, row.id))
  return new Response(Bun.file(path), {
    headers: {
      'Content-Type': Bun.file(row.name).type,
      'Content-Disposition': disposition('attachment', row.name),
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'private, max-age=0',
    },
  })
}
