import { mkdirSync, rmSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { inArray } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { withLock } from '../../db/client'
import { lfsMetaObjects } from '../../db/schema'
import { batchesOf, mapInBatches } from '../../lib/batches'
import { createDurableFile } from '../../lib/durable-file'
import { listing, removeStaleTemporaries, unchangedSince } from '../../lib/listing'
import { loggerOf } from '../../lib/log'
import { oneAtATime } from '../../lib/one-at-a-time'

/*
 * Where LFS objects' bytes live: by content, as Gitea's content store lays them out,
 * {data}/lfs/{oid[0:2]}/{oid[2:4]}/{oid[4:]}, one file for every repository that has the object.
 * An upload streams to {data}/lfs/tmp/{uuid}.part, hashed and counted as it arrives; only when
 * its SHA-256 is the oid and its size the declared one is it synced and renamed into place
 * (createDurableFile), in the oid's turn (`withObject`) with the meta object's row written in the
 * same turn. So a crash never leaves half an object under its name: at most a temporary file, or
 * an object no row names, which the sweep after the next start removes (repairLfsObjects).
 */

/** An LFS object id: a SHA-256 in lower-case hex (Gitea's Pointer.IsValid). */
export const OID = /^[0-9a-f]{64}$/

const rootOf = (deps: AppDeps) => join(deps.config.dataDir, 'lfs')
const tmpOf = (deps: AppDeps) => join(rootOf(deps), 'tmp')

/** The file of the object `oid`. */
export const objectPath = (deps: AppDeps, oid: string) => join(rootOf(deps), oid.slice(0, 2), oid.slice(2, 4), oid.slice(4))

/** The object's size on disk, or null when the store lacks it (read off the event loop). */
export async function storedSize(deps: AppDeps, oid: string): Promise<number | null> {
  try {
    const found = await stat(objectPath(deps, oid))
    return found.isFile() ? found.size : null
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return null
    throw e
  }
}

/** Whether the store holds `oid` whole at `size` bytes. */
export const holds = async (deps: AppDeps, oid: string, size: number) => (await storedSize(deps, oid)) === size

/** Objects whose files a batch looks at together (a batch names up to 1,000). */
const STATS_AT_ONCE = 32

/** Which of `oids` the store holds whole at their sizes: STATS_AT_ONCE files looked at together. */
export async function heldOf(deps: AppDeps, objects: { oid: string; size: number }[]): Promise<Set<string>> {
  const sizes = await mapInBatches(objects, STATS_AT_ONCE, (o) => storedSize(deps, o.oid))
  return new Set(objects.filter((o, i) => sizes[i] === o.size).map((o) => o.oid))
}

const inTurn = oneAtATime<string>()

/** Runs `fn` as the one piece of work on this object: in this process, and across processes sharing a PostgreSQL database. */
export const withObject = <T>(deps: AppDeps, oid: string, fn: () => Promise<T>): Promise<T> =>
  inTurn(deps.db, oid, () => withLock(deps.db, `lfs-object:${oid}`, fn))

/** Why an upload was not kept (Gitea's ErrSizeMismatch, ErrHashMismatch): the client's 422. */
export type UploadProblem = 'size' | 'hash'

/**
 * Streams `body` to a temporary file, never holding more than a chunk, and checks it is the object
 * `oid` of `size` bytes: reading stops past `size` bytes. Answers a writer to keep in the object's
 * turn (`keep`: synced and renamed into place), or why it is not the object (the file removed).
 */
export async function receiveObject(
  deps: AppDeps,
  oid: string,
  size: number,
  body: ReadableStream<Uint8Array> | null,
): Promise<{ keep: () => Promise<void>; discard: () => Promise<void> } | UploadProblem> {
  mkdirSync(tmpOf(deps), { recursive: true })
  const final = objectPath(deps, oid)
  const file = await createDurableFile(final, join(tmpOf(deps), `${crypto.randomUUID()}.part`))
  const hasher = new Bun.CryptoHasher('sha256')
  let received = 0
  try {
    if (body) {
      const reader = body.getReader()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        received += value.byteLength
        if (received > size) {
          await reader.cancel().catch(() => {})
          break
        }
        hasher.update(value)
        await file.write(value)
      }
    }
  } catch (e) {
    await file.discard()
    throw e
  }
  const problem: UploadProblem | null = received !== size ? 'size' : hasher.digest('hex') !== oid ? 'hash' : null
  if (problem) {
    await file.discard()
    return problem
  }
  return {
    keep: async () => {
      mkdirSync(join(final, '..'), { recursive: true })
      await file.keep()
    },
    discard: () => file.discard(),
  }
}

/**
 * Bytes `from`..`to` (inclusive) of a stored object, streamed from disk; null when the store lacks it.
 */
export async function objectStream(deps: AppDeps, oid: string, from: number, to: number): Promise<ReadableStream<Uint8Array> | null> {
  const path = objectPath(deps, oid)
  if ((await storedSize(deps, oid)) === null) return null
  return Bun.file(path).slice(from, to + 1).stream()
}

/** Removes the object unless some repository still has it; the caller holds its turn. */
export async function removeObjectIfUnnamed(deps: AppDeps, oid: string): Promise<boolean> {
  const named = await deps.db.select({ id: lfsMetaObjects.id }).from(lfsMetaObjects).where(inArray(lfsMetaObjects.oid, [oid])).limit(1)
  if (named.length) return false
  rmSync(objectPath(deps, oid), { force: true })
  return true
}

/**
 * The repair of {data}/lfs, made by the background sweep after a start (jobs/repository-sweep.ts):
 * temporary files, and objects no repository has any more (their repositories deleted), unchanged
 * since `before` (an upload running now is not a leftover), are removed, a folder at a time
 * (`between` after each: false stops the repair). Answers what it removed. Gitea leaves these to
 * its `gc_lfs` task; here the sweep does it.
 */
export async function repairLfsObjects(deps: AppDeps, opts: { before?: number; between?: () => Promise<boolean> } = {}): Promise<string[]> {
  const removed = removeStaleTemporaries(tmpOf(deps), opts.before)
  const root = rootOf(deps)
  const unchanged = (path: string) => unchangedSince(path, opts.before)
  for (const outer of listing(root)) {
    if (!/^[0-9a-f]{2}$/.test(outer.name)) continue
    for (const inner of listing(join(root, outer.name))) {
      const dir = join(root, outer.name, inner.name)
      const oids = listing(dir).map((f) => outer.name + inner.name + f.name)
      if (oids.length === 0) continue
      const kept = new Set<string>()
      for (const batch of batchesOf(oids.filter((o) => OID.test(o))))
        for (const r of await deps.db.selectDistinct({ oid: lfsMetaObjects.oid }).from(lfsMetaObjects).where(inArray(lfsMetaObjects.oid, batch))) kept.add(r.oid)
      for (const oid of oids) {
        if (kept.has(oid) || !unchanged(join(dir, oid.slice(4)))) continue
        if (!OID.test(oid)) continue
        if (await withObject(deps, oid, () => removeObjectIfUnnamed(deps, oid))) removed.push(oid)
      }
      if (opts.between && !(await opts.between())) return removed
    }
  }
  const log = loggerOf(deps.config)
  for (const name of removed) log.warn('removed an LFS object no repository has', { object: name })
  return removed
}
