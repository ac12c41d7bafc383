import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { open, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { inArray } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { attachments, repositories } from '../../db/schema'
import { loggerOf } from '../../lib/log'

/**
 * Where release assets live: {data}/attachments/{repo id}/{uuid}, one folder per repository so
 * that deleting a repository removes its files in one go (repository ids are never reused).
 * A file is written as {uuid}.part, synced, then renamed to {uuid} before its row is inserted;
 * rows are deleted before their files. So a crash can leave a file without a row (or a .part
 * file), never a row without a file: repairAttachments removes those at start-up.
 */

const TEMP_SUFFIX = '.part'

const rootOf = (deps: AppDeps) => join(deps.config.dataDir, 'attachments')
const folderOf = (deps: AppDeps, repoId: number) => join(rootOf(deps), String(repoId))

/** The file of an attachment. */
export const attachmentPath = (deps: AppDeps, repoId: number, uuid: string) => join(folderOf(deps, repoId), uuid)

/** An attachment file being written: bytes in order, then `keep` (synced and renamed into place) or `discard`. */
export interface AttachmentWriter {
  write(chunk: Uint8Array): Promise<void>
  keep(): Promise<void>
  discard(): Promise<void>
}

/** Starts writing the file of a new attachment under its temporary name. */
export async function createAttachmentFile(deps: AppDeps, repoId: number, uuid: string): Promise<AttachmentWriter> {
  mkdirSync(folderOf(deps, repoId), { recursive: true })
  const final = attachmentPath(deps, repoId, uuid)
  const temp = final + TEMP_SUFFIX
  const handle = await open(temp, 'wx')
  let closed = false
  const close = async () => {
    if (!closed) {
      closed = true
      await handle.close()
    }
  }
  return {
    async write(chunk) {
      let done = 0
      while (done < chunk.byteLength) done += (await handle.write(chunk, done, chunk.byteLength - done)).bytesWritten
    },
    async keep() {
      try {
        await handle.sync()
        await close()
        await rename(temp, final)
      } catch (e) {
        await close().catch(() => {})
        await rm(temp, { force: true })
        throw e
      }
    },
    async discard() {
      await close().catch(() => {})
      await rm(temp, { force: true })
    },
  }
}

/** Removes attachment files (after their rows are gone); a file already missing is fine. */
export function removeAttachmentFiles(deps: AppDeps, repoId: number, uuids: string[]): void {
  for (const uuid of uuids) rmSync(attachmentPath(deps, repoId, uuid), { force: true })
}

/** Removes every attachment file of a repository (after its row is gone). */
export function removeRepositoryAttachments(deps: AppDeps, repoId: number): void {
  rmSync(folderOf(deps, repoId), { recursive: true, force: true })
}

/**
 * Start-up repair (before serving, so no upload is running): removes temporary files, files
 * without a row and the folders of repositories that no longer exist (a crash between a row's
 * deletion and its files'); reports rows whose file is missing (outside damage: their downloads
 * answer 404 until the file is put back).
 */
export async function repairAttachments(deps: AppDeps): Promise<{ removed: string[]; missing: string[] }> {
  const root = rootOf(deps)
  const removed: string[] = []
  const missing: string[] = []
  const rows = await deps.db.select({ uuid: attachments.uuid, repoId: attachments.repoId }).from(attachments)
  const known = new Map<number, Set<string>>()
  for (const row of rows) {
    let set = known.get(row.repoId)
    if (!set) known.set(row.repoId, (set = new Set()))
    set.add(row.uuid)
  }
  // What is on disk: one listing per repository folder (no stat per row), and the repositories
  // those folders name, read in one query.
  const folders = existsSync(root) ? readdirSync(root, { withFileTypes: true }) : []
  const named = folders.filter((dir) => dir.isDirectory() && /^\d{1,15}$/.test(dir.name)).map((dir) => Number(dir.name))
  const existing = new Set(named.length ? (await deps.db.select({ id: repositories.id }).from(repositories).where(inArray(repositories.id, named))).map((r) => r.id) : [])
  const present = new Map<number, Set<string>>()
  for (const dir of folders) {
    const path = join(root, dir.name)
    const repoId = /^\d{1,15}$/.test(dir.name) ? Number(dir.name) : NaN
    if (!dir.isDirectory() || !existing.has(repoId)) {
      rmSync(path, { recursive: true, force: true })
      removed.push(dir.name)
      continue
    }
    const uuids = known.get(repoId)
    const files = new Set<string>()
    present.set(repoId, files)
    for (const file of readdirSync(path)) {
      if (uuids?.has(file)) {
        files.add(file)
        continue
      }
      rmSync(join(path, file), { recursive: true, force: true })
      removed.push(`${dir.name}/${file}`)
    }
  }
  for (const [repoId, uuids] of known) for (const uuid of uuids) if (!present.get(repoId)?.has(uuid)) missing.push(`${repoId}/${uuid}`)
  const log = loggerOf(deps.config)
  for (const name of removed) log.warn('removed an attachment file no attachment accounts for', { file: name })
  for (const name of missing) log.warn('an attachment has no file', { attachment: name })
  return { removed, missing }
}
