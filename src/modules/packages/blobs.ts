import { mkdirSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { withLock } from '../../db/client'
import { packageFiles } from '../../db/schema'
import { batchesOf } from '../../lib/batches'
import { createDurableFile, syncFolder } from '../../lib/durable-file'
import { boundedStream } from '../../lib/body'
import { listing, removeStaleTemporaries, unchangedSince } from '../../lib/listing'
import { loggerOf } from '../../lib/log'
import { oneAtATime } from '../../lib/one-at-a-time'

/*
 * Where package files' bytes live: by content, {data}/packages/blobs/{sha256[0:2]}/{sha256[2:4]}/{sha256},
 * one file for every package file of the same content. An upload streams to
 * {data}/packages/tmp/{uuid}.part (synced, renamed to {uuid}: createDurableFile), is hashed as it
 * arrives, then renamed into its place by hash while holding that hash's turn (`withBlob`), and
 * its row is written in the same turn. A blob is removed in its hash's turn once no row names it.
 * So no row ever names a missing blob, and a crash leaves at most a temporary file or a blob no
 * row names, which the sweep after the next start removes (repairPackageBlobs).
 */

const rootOf = (deps: AppDeps) => join(deps.config.dataDir, 'packages')
const blobsOf = (deps: AppDeps) => join(rootOf(deps), 'blobs')
const tmpOf = (deps: AppDeps) => join(rootOf(deps), 'tmp')

/** The file of the blob of this content. */
export const blobPath = (deps: AppDeps, sha256: string) => join(blobsOf(deps), sha256.slice(0, 2), sha256.slice(2, 4), sha256)

const inTurn = oneAtATime<string>()

/** Runs `fn` as the one piece of work on this blob: in this process, and across processes sharing a PostgreSQL database. */
export const withBlob = <T>(deps: AppDeps, sha256: string, fn: () => Promise<T>): Promise<T> =>
  inTurn(deps.db, sha256, () => withLock(deps.db, `package-blob:${sha256}`, fn))

/** An upload received whole in a temporary file, with its size and hashes (lower-case hex). */
export interface ReceivedBlob {
  temp: string
  size: number
  md5: string
  sha1: string
  sha256: string
  sha512: string
}

/**
 * Streams `body` to a temporary file, never holding more than a chunk, hashing it on the way:
 * past `limit` bytes the read stops, the file is removed and 413 is thrown.
 */
export async function receiveBlob(deps: AppDeps, body: ReadableStream<Uint8Array> | null, limit: number): Promise<ReceivedBlob> {
  mkdirSync(tmpOf(deps), { recursive: true })
  const temp = join(tmpOf(deps), crypto.randomUUID())
  const file = await createDurableFile(temp)
  const hashers = { md5: new Bun.CryptoHasher('md5'), sha1: new Bun.CryptoHasher('sha1'), sha256: new Bun.CryptoHasher('sha256'), sha512: new Bun.CryptoHasher('sha512') }
  let size = 0
  try {
    if (body) {
      // Past `limit` the bounded stream errors with the 413, which the read throws.
      const reader = boundedStream(body as ReadableStream<Uint8Array<ArrayBuffer>>, limit).getReader()
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          size += value.byteLength
          for (const h of Object.values(hashers)) h.update(value)
          await file.write(value)
        }
      } catch (e) {
        await reader.cancel().catch(() => {})
        throw e
      }
    }
    await file.keep()
  } catch (e) {
    await file.discard()
    throw e
  }
  return {
    temp,
    size,
    md5: hashers.md5.digest('hex'),
    sha1: hashers.sha1.digest('hex'),
    sha256: hashers.sha256.digest('hex'),
    sha512: hashers.sha512.digest('hex'),
  }
}

/** Removes a received file that will not be kept. */
export const discardBlob = (blob: ReceivedBlob): void => rmSync(blob.temp, { force: true })

/** Moves a received file to its place by hash (in the hash's turn: `withBlob`); the same content already there is replaced by itself. */
export async function placeBlob(deps: AppDeps, blob: ReceivedBlob): Promise<void> {
  const path = blobPath(deps, blob.sha256)
  mkdirSync(join(path, '..'), { recursive: true })
  renameSync(blob.temp, path)
  // On disk before a row names it: a power loss must not keep the row and lose the rename.
  await syncFolder(join(path, '..'))
}

const named = async (deps: AppDeps, sha256: string): Promise<boolean> =>
  (await deps.db.select({ id: packageFiles.id }).from(packageFiles).where(eq(packageFiles.sha256, sha256)).limit(1)).length > 0

/** Removes the blob unless a row names it; the caller holds its turn. */
export async function removeBlobIfUnnamed(deps: AppDeps, sha256: string): Promise<boolean> {
  if (await named(deps, sha256)) return false
  rmSync(blobPath(deps, sha256), { force: true })
  return true
}

/** Removes each of these blobs no row names any more (after the rows naming them were deleted), each in its turn. */
export async function removeUnnamedBlobs(deps: AppDeps, hashes: Iterable<string>): Promise<void> {
  for (const sha256 of new Set(hashes)) await withBlob(deps, sha256, () => removeBlobIfUnnamed(deps, sha256))
}

/**
 * The repair of {data}/packages, made by the background sweep after a start
 * (jobs/repository-sweep.ts): temporary files, and blobs no row names, unchanged since `before`
 * (an upload running now is not a leftover), are removed, a folder of blobs at a time (`between`
 * after each: false stops the repair). Answers what it removed.
 */
export async function repairPackageBlobs(deps: AppDeps, opts: { before?: number; between?: () => Promise<boolean> } = {}): Promise<string[]> {
  const removed = removeStaleTemporaries(tmpOf(deps), opts.before)
  const unchanged = (path: string) => unchangedSince(path, opts.before)
  for (const outer of listing(blobsOf(deps))) {
    for (const inner of listing(join(blobsOf(deps), outer.name))) {
      const dir = join(blobsOf(deps), outer.name, inner.name)
      const files = listing(dir).map((f) => f.name)
      if (files.length === 0) continue
      const kept = new Set<string>()
      for (const batch of batchesOf(files))
        for (const r of await deps.db.selectDistinct({ sha256: packageFiles.sha256 }).from(packageFiles).where(inArray(packageFiles.sha256, batch))) kept.add(r.sha256)
      for (const name of files) {
        if (kept.has(name) || !unchanged(join(dir, name))) continue
        if (!/^[0-9a-f]{64}$/.test(name) || join(dir, name) !== blobPath(deps, name)) {
          rmSync(join(dir, name), { recursive: true, force: true })
          removed.push(name)
        } else if (await withBlob(deps, name, () => removeBlobIfUnnamed(deps, name))) removed.push(name)
      }
      if (opts.between && !(await opts.between())) return removed
    }
  }
  const log = loggerOf(deps.config)
  for (const name of removed) log.warn('removed a package file no package accounts for', { file: name })
  return removed
}
