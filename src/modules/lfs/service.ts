import { and, count, desc, eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { lfsMetaObjects, type LfsMetaObjectRow } from '../../db/schema'
import { inJsonList } from '../../db/sql'
import { nowUnix } from '../../lib/time'
import { notFound } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { lfsError, lfsJson, type LfsTarget } from './access'
import { heldOf, holds, objectStream, OID, receiveObject, removeObjectIfUnnamed, withObject } from './store'

/*
 * The Git LFS batch API and basic transfer (Gitea's services/lfs/server.go), for one repository
 * whose caller authorizeLfs let in. An object is readable through a repository only while the
 * repository has it (a meta object row, Gitea's LFSMetaObject), whoever uploaded it elsewhere.
 */

/** One object of a batch: its id and size as the client says. */
export interface Pointer {
  oid: string
  size: number
}

/** Gitea's Pointer.IsValid: a SHA-256 oid and a size that is no negative number. */
export const validPointer = (p: Pointer) => typeof p.oid === 'string' && OID.test(p.oid) && Number.isSafeInteger(p.size) && p.size >= 0

/** The repository's meta object of `oid`, or undefined. */
export async function metaObject(deps: AppDeps, repoId: number, oid: string) {
  const [row] = await deps.db.select().from(lfsMetaObjects).where(and(eq(lfsMetaObjects.repoId, repoId), eq(lfsMetaObjects.oid, oid))).limit(1)
  return row
}

/** The repository's meta objects of `oids`, by oid, in one query (a batch names up to MAX_BATCH_OBJECTS). */
async function metaObjectsOf(deps: AppDeps, repoId: number, oids: string[]) {
  if (oids.length === 0) return new Map<string, typeof lfsMetaObjects.$inferSelect>()
  const rows = await deps.db.select().from(lfsMetaObjects).where(and(eq(lfsMetaObjects.repoId, repoId), inJsonList(lfsMetaObjects.oid, [...new Set(oids)])))
  return new Map(rows.map((row) => [row.oid, row]))
}

/** A page of the repository's meta objects, newest first, with their number (the LFS settings page). */
export async function listMetaObjects(deps: AppDeps, repoId: number, page: Page): Promise<Paged<LfsMetaObjectRow>> {
  const [rows, [total]] = await Promise.all([
    deps.db.select().from(lfsMetaObjects).where(eq(lfsMetaObjects.repoId, repoId)).orderBy(desc(lfsMetaObjects.id)).limit(page.limit).offset(page.offset),
    deps.db.select({ n: count() }).from(lfsMetaObjects).where(eq(lfsMetaObjects.repoId, repoId)),
  ])
  return { rows, total: Number(total?.n ?? 0) }
}

/**
 * Takes object `oid` from the repository (Gitea's LFSDelete): its meta object goes, and the
 * stored file with it when no other repository has the object, in the object's turn (an upload
 * of it meanwhile keeps its file); 404 when the repository does not have it.
 */
export async function deleteMetaObject(deps: AppDeps, repoId: number, oid: string): Promise<void> {
  if (!OID.test(oid)) throw notFound('no such LFS object')
  await withObject(deps, oid, async () => {
    const gone = await writeTransaction(deps.db, () =>
      deps.db.delete(lfsMetaObjects).where(and(eq(lfsMetaObjects.repoId, repoId), eq(lfsMetaObjects.oid, oid))).returning({ id: lfsMetaObjects.id }),
    )
    if (gone.length === 0) throw notFound('no such LFS object')
    await removeObjectIfUnnamed(deps, oid)
  })
}

/** Where the repository's LFS endpoints are, by its current names. */
export const lfsBaseUrl = (deps: AppDeps, target: Pick<LfsTarget, 'repo'>) =>
  `${deps.config.baseUrl}${encodeURIComponent(target.repo.ownerName)}/${encodeURIComponent(target.repo.name)}.git/info/lfs`

type Action = { href: string; header?: Record<string, string> }

/**
 * `POST objects/batch`: for each object, what the client is to do (Gitea's BatchHandler). Download:
 * a `download` action when the repository has the object and the store holds it, else a 404 error
 * of the object. Upload: nothing when both are so; otherwise `upload` (`PUT objects/{oid}/{size}`)
 * and `verify` actions, or a 422 error of the object past WARREN_LFS_MAX_FILE_SIZE. An object the
 * store holds for other repositories only is uploaded again: its bytes prove the client has it,
 * and the upload links it here (Gitea links it at once when the caller can read one of those
 * repositories; uploading again is the proof that asks nothing of the others). A size unlike the
 * repository's record of the object, or an invalid oid or size, is a 422 error of the object. The
 * actions carry the request's own Authorization header (Gitea's; over SSH, the short-lived token).
 */
export async function batch(deps: AppDeps, target: LfsTarget, operation: 'upload' | 'download', objects: Pointer[]): Promise<Response> {
  const base = lfsBaseUrl(deps, target)
  const header: Record<string, string> = target.authorization ? { Authorization: target.authorization } : {}
  const action = (href: string, extra: Record<string, string> = {}): Action => {
    const all = { ...header, ...extra }
    return Object.keys(all).length ? { href, header: all } : { href }
  }
  const max = deps.config.lfsMaxFileSize
  const metas = await metaObjectsOf(deps, target.repo.id, objects.filter(validPointer).map((p) => p.oid))
  // Only an object the repository has can be stored for it.
  const held = await heldOf(deps, objects.filter((p) => validPointer(p) && metas.get(p.oid)?.size === p.size))
  const answers = []
  for (const p of objects) {
    const pointer = { oid: p.oid, size: p.size }
    if (!validPointer(p)) {
      answers.push({ ...pointer, error: { code: 422, message: 'Oid or size are invalid' } })
      continue
    }
    const meta = metas.get(p.oid)
    if (meta && meta.size !== p.size) {
      answers.push({ ...pointer, error: { code: 422, message: `Object ${p.oid} is not ${p.size} bytes` } })
      continue
    }
    const stored = held.has(p.oid)
    if (operation === 'download') {
      answers.push(meta && stored ? { ...pointer, actions: { download: action(`${base}/objects/${p.oid}`) } } : { ...pointer, error: { code: 404, message: 'Not Found' } })
    } else if (meta && stored) {
      answers.push(pointer)
    } else if (max > 0 && p.size > max) {
      answers.push({ ...pointer, error: { code: 422, message: `Size must be less than or equal to ${max}` } })
    } else {
      answers.push({
        ...pointer,
        actions: {
          upload: action(`${base}/objects/${p.oid}/${p.size}`),
          verify: action(`${base}/verify`, { Accept: 'application/vnd.git-lfs+json' }),
        },
      })
    }
  }
  return lfsJson({ transfer: 'basic', objects: answers })
}

const SIZE_TEXT = /^(0|[1-9][0-9]{0,15})$/

/**
 * `PUT objects/{oid}/{size}` (Gitea's UploadHandler): the body, streamed to a temporary file, must
 * be `size` bytes whose SHA-256 is `oid` (422 otherwise, nothing kept); then, in the object's turn,
 * the file takes its place in the store and the repository gets its meta object, in that order, so
 * no row names a missing file. Past WARREN_LFS_MAX_FILE_SIZE: 413 before a byte is read.
 */
export async function upload(deps: AppDeps, target: LfsTarget, oid: string, sizeText: string, body: ReadableStream<Uint8Array> | null): Promise<Response> {
  const size = SIZE_TEXT.test(sizeText) ? Number(sizeText) : NaN
  if (!validPointer({ oid, size })) return lfsError(deps, 422, 'Oid or size are invalid')
  const max = deps.config.lfsMaxFileSize
  if (max > 0 && size > max) return lfsError(deps, 413, `Size must be less than or equal to ${max}`)
  const meta = await metaObject(deps, target.repo.id, oid)
  if (meta && meta.size !== size) return lfsError(deps, 422, `Object ${oid} is not ${size} bytes`)
  const received = await receiveObject(deps, oid, size, body)
  if (received === 'size') return lfsError(deps, 422, 'content size does not match')
  if (received === 'hash') return lfsError(deps, 422, 'content hash does not match OID')
  await withObject(deps, oid, async () => {
    try {
      await received.keep()
    } catch (e) {
      await received.discard()
      throw e
    }
    await writeTransaction(deps.db, () =>
      deps.db.insert(lfsMetaObjects).values({ repoId: target.repo.id, oid, size, createdUnix: nowUnix() }).onConflictDoNothing(),
    )
  })
  return new Response(null, { status: 200 })
}

/** `POST verify` (Gitea's VerifyHandler): 200 when the repository has the object and the store holds it whole, else 404. */
export async function verify(deps: AppDeps, target: LfsTarget, p: Pointer): Promise<Response> {
  if (!validPointer(p)) return lfsError(deps, 422, 'Oid or size are invalid')
  const meta = await metaObject(deps, target.repo.id, p.oid)
  if (!meta || meta.size !== p.size || !(await holds(deps, p.oid, p.size))) return lfsError(deps, 404, 'Not Found')
  return lfsJson({ message: 'OK' })
}

/**
 * The object's bytes as an answer, `Range: bytes=a-b` as Gitea reads it (206 with Content-Range; a
 * start past the end 416), or null when the store lacks it.
 */
export async function objectResponse(deps: AppDeps, oid: string, size: number, range: string | null, headers: Record<string, string> = {}): Promise<Response | null> {
  let from = 0
  let to = size - 1
  let status = 200
  const all: Record<string, string> = { 'Content-Type': 'application/octet-stream', ...headers }
  const match = /^bytes=(\d{1,16})-(\d{0,16})/.exec(range ?? '')
  if (match) {
    from = Number(match[1])
    if (from >= size) return new Response(null, { status: 416, headers: { 'Content-Range': `bytes */${size}` } })
    if (match[2] !== '') {
      const end = Number(match[2])
      if (end >= from && end < to) to = end
    }
    status = 206
    all['Content-Range'] = `bytes ${from}-${to}/${size}`
    all['Access-Control-Expose-Headers'] = 'Content-Range'
  }
  const stream = size === 0 ? new Blob([]).stream() : await objectStream(deps, oid, from, to)
  if (!stream) return null
  all['Content-Length'] = String(size === 0 ? 0 : to + 1 - from)
  return new Response(stream, { status, headers: all })
}

/** `GET objects/{oid}` (Gitea's DownloadHandler): the object, when the repository has it; 404 otherwise. */
export async function download(deps: AppDeps, target: LfsTarget, oid: string, range: string | null): Promise<Response> {
  if (!OID.test(oid)) return lfsError(deps, 422, 'Oid or size are invalid')
  const meta = await metaObject(deps, target.repo.id, oid)
  return (meta && (await objectResponse(deps, oid, meta.size, range))) || lfsError(deps, 404, 'Not Found')
}
