import { existsSync } from 'node:fs'
import { count, eq, sql, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { Config } from '../../config'
import { writeTransaction } from '../../db/client'
import { attachments, repositories, type AttachmentRow } from '../../db/schema'
import { disposition } from '../files/service'
import { ApiError, badRequest, notFound, unprocessable } from '../../lib/errors'
import { charCount } from '../../lib/validate'
import { multipartBoundary, MULTIPART_OVERHEAD, readMultipartFile } from '../../lib/multipart'
import { digestCheck, digestedStream } from '../../lib/body'
import { MAX_ATTACHMENT_NAME } from './model'
import { attachmentPath, createAttachmentFile, removeAttachmentFiles, removeRepositoryAttachments } from './storage'

/**
 * What every attachment shares, whatever holds it (a release, an issue, a comment): its name's
 * rule, the number one holder may have, the streamed upload (file first, then the row) and the
 * download. The holders' own rules (who may, which names clash, what is announced) are their
 * areas': releases/assets.ts and ./issue-assets.ts.
 */

/** Attachments one release, issue or comment may hold (each of their records lists them all). */
export const MAX_ATTACHMENTS_PER_HOLDER = 100

/**
 * An attachment name: at most MAX_ATTACHMENT_NAME characters, no path separators, control
 * characters or lone surrogates, not `.` or `..` (it is the last segment of a download URL), else 422.
 */
export function checkAttachmentName(name: string): string {
  if (name === '' || name === '.' || name === '..' || !name.isWellFormed() || charCount(name) > MAX_ATTACHMENT_NAME || /[/\\\x00-\x1f\x7f]/.test(name))
    throw unprocessable(`invalid attachment name [name: ${name.slice(0, MAX_ATTACHMENT_NAME).toWellFormed()}]`, 'name')
  return name
}

/**
 * Whether `name` is of a type `allowed` lists (Gitea's upload.Verify, by the name): its extension
 * (`.png`), or the MIME type its extension stands for (`image/png`, `image/*`); the wildcard of
 * every type allows all. 422 otherwise (Gitea's ErrFileTypeForbidden).
 */
export function checkAllowedType(allowed: readonly string[], name: string): void {
  if (allowed.length === 0 || allowed.includes('*/*')) return
  const dot = name.lastIndexOf('.')
  const extension = dot > 0 ? name.slice(dot).toLowerCase() : ''
  const mime = (Bun.file(name).type.split(';')[0] ?? '').trim().toLowerCase()
  const ok = allowed.some((entry) =>
    entry.startsWith('.') ? entry === extension : entry === mime || (entry.endsWith('/*') && mime.startsWith(entry.slice(0, -1))),
  )
  if (!ok) throw unprocessable(`This file cannot be uploaded or modified due to a forbidden file extension or type [name: ${name}]`, 'attachment')
}

/** 422 when the holder (`of`: its attachments) already holds MAX_ATTACHMENTS_PER_HOLDER. */
export async function checkRoomFor(deps: AppDeps, of: SQL | undefined, holder: string): Promise<void> {
  const held = (await deps.db.select({ n: count() }).from(attachments).where(of))[0]!.n
  if (held >= MAX_ATTACHMENTS_PER_HOLDER) throw unprocessable(`a ${holder} holds at most ${MAX_ATTACHMENTS_PER_HOLDER} attachments`)
}

/** Where an upload goes, and the holder's checks. */
export interface UploadTarget {
  repoId: number
  /** Checks the name the file will be stored under, before any of its bytes is kept (throws to refuse). */
  checkName: (name: string) => Promise<void> | void
  /** Writes the row of the file now in place, inside the upload's write transaction (checking again what may have changed meanwhile). */
  insert: (file: { uuid: string; name: string; size: number }) => Promise<AttachmentRow>
  /** Whether the holder is gone (deleted while the file arrived): the 404 to answer, else null. */
  holderGone: () => Promise<ApiError | null>
}

/**
 * Receives an upload: the multipart field `attachment`, stored as `name` (else the file's own
 * name), streamed to a temporary file (never held in memory) and renamed into place before its
 * row is written. 413 past `maxAttachmentSize`, 400 for a body that is not multipart with that
 * field, 422 for a bad name, the target's refusals, 404 when the holder (or its repository) was
 * deleted while the file arrived: nothing is kept in every case.
 */
export async function receiveAttachment(deps: AppDeps, request: Request, name: string | undefined, target: UploadTarget): Promise<AttachmentRow> {
  const boundary = multipartBoundary(request.headers.get('content-type'))
  if (!boundary) throw badRequest('The attachment must be sent as multipart/form-data in the field "attachment"')
  const limit = deps.config.maxAttachmentSize
  if (Number(request.headers.get('content-length') ?? 0) > limit + MULTIPART_OVERHEAD) throw new ApiError(413, `The attachment is larger than ${limit} bytes`)
  let stored = name ? checkAttachmentName(name) : ''
  if (stored) await target.checkName(stored)
  const uuid = crypto.randomUUID()
  let size = 0
  try {
    const file = await createAttachmentFile(deps, target.repoId, uuid)
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
          stored = checkAttachmentName(filename.slice(Math.max(filename.lastIndexOf('/'), filename.lastIndexOf('\\')) + 1))
          await target.checkName(stored)
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
    return await writeTransaction(deps.db, async () => await target.insert({ uuid, name: stored, size }))
  } catch (e) {
    removeAttachmentFiles(deps, target.repoId, [uuid])
    throw await uploadFailure(deps, target, e)
  }
}

/**
 * Stores a file a web form brought (already read, within the body parser's bound) as
 * `receiveAttachment` stores a streamed upload: the same size limit (413), name rule and target
 * checks, the file put in place before its row, nothing kept on a refusal. An empty file is 422.
 */
export async function storeAttachment(deps: AppDeps, file: Blob, name: string, target: UploadTarget): Promise<AttachmentRow> {
  checkAttachmentFile(deps.config, file, name)
  await target.checkName(name)
  const uuid = crypto.randomUUID()
  try {
    const writer = await createAttachmentFile(deps, target.repoId, uuid)
    try {
      const reader = file.stream().getReader()
      for (let part = await reader.read(); !part.done; part = await reader.read()) await writer.write(part.value)
      await writer.keep()
    } catch (e) {
      await writer.discard()
      throw e
    }
    return await writeTransaction(deps.db, async () => await target.insert({ uuid, name, size: file.size }))
  } catch (e) {
    removeAttachmentFiles(deps, target.repoId, [uuid])
    throw await uploadFailure(deps, target, e)
  }
}

/** What a form's file must be before anything of it is kept: a good name, not empty (422), at most `maxAttachmentSize` bytes (413). */
export function checkAttachmentFile(config: Config, file: Blob, name: string): void {
  checkAttachmentName(name)
  if (file.size === 0) throw unprocessable(`The file "${name}" is empty`, 'attachment')
  if (file.size > config.maxAttachmentSize) throw new ApiError(413, `The attachment "${name}" is larger than ${config.maxAttachmentSize} bytes`)
}

/**
 * What a failed upload answers, once its file is gone. When its holder went meanwhile (deleted,
 * or with its repository, which also removes the repository's folder of files while the upload
 * writes into it): 404, whatever the file steps threw; the folder a late upload made again for a
 * deleted repository is removed too, so nothing of it stays on disk.
 */
async function uploadFailure(deps: AppDeps, target: UploadTarget, e: unknown): Promise<unknown> {
  if (e instanceof ApiError && e.status !== 404) return e
  const repo = (await deps.db.select({ id: repositories.id }).from(repositories).where(eq(repositories.id, target.repoId)))[0]
  if (!repo) {
    removeRepositoryAttachments(deps, target.repoId)
    return notFound('the repository was deleted')
  }
  return (await target.holderGone()) ?? e
}

/**
 * The files of the attachments an issue or comment deletion is about to remove with its rows
 * (the schema's cascade), read inside that deletion's transaction; `removeFiles` then deletes
 * them once it committed. A crash in between leaves files no row accounts for, which the
 * repository sweep removes.
 */
export async function attachmentFilesOf(deps: AppDeps, of: { issueId: number } | { commentId: number }) {
  const rows = await deps.db
    .select({ repoId: attachments.repoId, uuid: attachments.uuid })
    .from(attachments)
    .where('issueId' in of ? eq(attachments.issueId, of.issueId) : eq(attachments.commentId, of.commentId))
  return { removeFiles: () => rows.forEach((r) => removeAttachmentFiles(deps, r.repoId, [r.uuid])) }
}

/** Deletes an attachment: its row, then its file. */
export async function deleteAttachment(deps: AppDeps, row: AttachmentRow): Promise<void> {
  await deps.db.delete(attachments).where(eq(attachments.id, row.id))
  removeAttachmentFiles(deps, row.repoId, [row.uuid])
}

/**
 * An attachment's bytes, streamed from disk with their length, a type from the name's extension
 * and an `attachment` disposition; counts the download. The attachment is the one the pipeline's
 * `attachment` need found for the caller, which decided they may download it.
 */
export async function downloadAttachment(deps: AppDeps, row: AttachmentRow): Promise<Response> {
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

/** The types an issue's or comment's attachment may have, as Gitea's settings show them. */
export const allowedTypesText = (config: Config): string => config.attachmentAllowedTypes.join(',')
