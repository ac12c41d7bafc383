import { mkdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { asc, eq, gt } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { attachments, repositories } from '../../db/schema'
import { createDurableFile, type DurableFileWriter } from '../../lib/durable-file'
import { listing } from '../../lib/listing'
import { loggerOf } from '../../lib/log'

/**
 * Where attachments (release assets, issues' and comments' files) live: {data}/attachments/{repo id}/{uuid}, one folder per repository so
 * that deleting a repository removes its files in one go (repository ids are never reused).
 * A file is written as {uuid}.part, synced, then renamed to {uuid} before its row is inserted;
 * rows are deleted before their files. So a crash can leave a file without a row (or a .part
 * file), never a row without a file: repairAttachments removes those in the background after the
 * next start.
 */

const rootOf = (deps: AppDeps) => join(deps.config.dataDir, 'attachments')
const folderOf = (deps: AppDeps, repoId: number) => join(rootOf(deps), String(repoId))

/** The file of an attachment. */
export const attachmentPath = (deps: AppDeps, repoId: number, uuid: string) => join(folderOf(deps, repoId), uuid)

/** An attachment file being written: bytes in order, then `keep` (synced and renamed into place) or `discard`. */
export type AttachmentWriter = DurableFileWriter

/** Starts writing the file of a new attachment under its temporary name. */
export async function createAttachmentFile(deps: AppDeps, repoId: number, uuid: string): Promise<AttachmentWriter> {
  mkdirSync(folderOf(deps, repoId), { recursive: true })
  return createDurableFile(attachmentPath(deps, repoId, uuid))
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
 * The repair of {data}/attachments against the rows, made by the background sweep after a start
 * (jobs/repository-sweep.ts), a folder at a time: the folder of a repository that no longer exists
 * (a crash between a row's deletion and its files') or anything else that is not a repository's
 * folder is removed; in a repository's folder, temporary files and files no row accounts for are
 * removed; rows whose file is missing (outside damage: their downloads answer 404 until the file
 * is put back) are reported. With `before`, only what is unchanged since then (its inode's change
 * time) is removed: an upload running now (its file renamed into place before its row is written)
 * is not a leftover. `between` runs after each folder (the sweep's pause); false stops the repair.
 */
export async function repairAttachments(
  deps: AppDeps,
  opts: { before?: number; between?: () => Promise<boolean> } = {},
): Promise<{ removed: string[]; missing: string[] }> {
  const root = rootOf(deps)
  const removed: string[] = []
  const missing: string[] = []
  const unchanged = (path: string) => opts.before === undefined || (statSync(path, { throwIfNoEntry: false })?.ctimeMs ?? Infinity) < opts.before
  const remove = (path: string, name: string) => {
    if (!unchanged(path)) return
    rmSync(path, { recursive: true, force: true })
    removed.push(name)
  }
  const folders = listing(root)
  const repoIds = new Set<number>()
  for (const dir of folders) {
    const path = join(root, dir.name)
    const repoId = /^\d{1,15}$/.test(dir.name) ? Number(dir.name) : NaN
    const exists = dir.isDirectory() && Number.isSafeInteger(repoId) && (await deps.db.select({ id: repositories.id }).from(repositories).where(eq(repositories.id, repoId))).length > 0
    if (!exists) remove(path, dir.name)
    else {
      repoIds.add(repoId)
      const uuids = new Set((await deps.db.select({ uuid: attachments.uuid }).from(attachments).where(eq(attachments.repoId, repoId))).map((r) => r.uuid))
      const files = new Set<string>()
      // A folder removed meanwhile (its repository deleted while the sweep runs) lists nothing.
      for (const { name: file } of listing(path)) {
        if (uuids.has(file)) files.add(file)
        else remove(join(path, file), `${dir.name}/${file}`)
      }
      for (const uuid of uuids) if (!files.has(uuid)) missing.push(`${repoId}/${uuid}`)
    }
    if (opts.between && !(await opts.between())) return { removed, missing }
  }
  // Rows of repositories that have no folder at all, a page of repositories at a time.
  for (let after = 0; ; ) {
    const page = await deps.db.selectDistinct({ repoId: attachments.repoId }).from(attachments).where(gt(attachments.repoId, after)).orderBy(asc(attachments.repoId)).limit(500)
    if (page.length === 0) break
    after = page.at(-1)!.repoId
    for (const { repoId } of page) {
      if (repoIds.has(repoId)) continue
      for (const row of await deps.db.select({ uuid: attachments.uuid }).from(attachments).where(eq(attachments.repoId, repoId))) missing.push(`${repoId}/${row.uuid}`)
    }
  }
  const log = loggerOf(deps.config)
  for (const name of removed) log.warn('removed an attachment file no attachment accounts for', { file: name })
  for (const name of missing) log.warn('an attachment has no file', { attachment: name })
  return { removed, missing }
}
