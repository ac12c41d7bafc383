import { asc, gt } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { repositories } from '../db/schema'
import { errorFields, loggerOf } from '../lib/log'
import { jobBoardOf } from '../lib/job-board'
import type { BackgroundJob } from '../ops/shutdown'
import { checkRepositoryFolder, emptyDeletedFolders, ownerFolders, unaccountedIn } from '../modules/repos/repair'
import { syncChangedRepositories } from '../push'
import { repairAttachments } from '../modules/attachments/storage'
import { repairPackageBlobs } from '../modules/packages/blobs'
import { repairAvatars } from '../modules/avatars/storage'
import { repairLfsObjects } from '../modules/lfs/store'

/** Repositories read and checked per step of the sweep. */
export const SWEEP_BATCH = 200

/** Pause between two steps, so the sweep takes a small share of the process whatever the data's size. */
export const SWEEP_PAUSE_MS = 20

/** How long after the start the sweep begins: the first requests (and the routes' compilation) go first. */
export const SWEEP_DELAY_MS = 5_000

/**
 * The part of the start-up repairs that reads every repository, run once in the background after
 * the server listens (started by `warren serve` when it made the start-up repairs, i.e. no other
 * process served the data): a batch of repositories at a time (by id, so memory stays one batch),
 * each folder checked (a missing one reported; what killed git processes left before this process
 * started removed) and, where git's refs changed since they were recorded (their fingerprint), the
 * repository synced with git (its ref changes recorded as events, pull requests re-checked); then
 * the folders of deleted repositories a crash left are removed, those moved there before the
 * start only (emptyDeletedFolders); then an owner folder at a time, the folders no repository
 * accounts for are counted and logged, left where they are (unadopted, as Gitea: /admin/unadopted);
 * then the release assets' folders, one at a time, files no row accounts for removed
 * (repairAttachments, the same way); then the avatar folders, files no row names removed
 * (repairAvatars, the same way); then the package blobs, temporary files and blobs no package file
 * names removed (repairPackageBlobs, the same way); then the LFS objects, temporary files and
 * objects no repository has removed (repairLfsObjects, the same way).
 *
 * Nothing a request relies on waits for it: pending pushes are settled before serving
 * (reconcilePendingPushes), unfinished repositories are removed before serving (repairAtStart),
 * a folder without a row is never adopted by accident (creating or renaming a repository onto it is
 * refused: an administrator adopts it), and a file without a row is never served (downloads find files by their rows). The sweep catches what changed outside Warren while it was stopped (git run by hand in
 * a repository) and reclaims disk; a stop mid-sweep leaves nothing half done (each repository's
 * sync is one transaction) and the next start sweeps again.
 */
export function startRepositorySweep(
  deps: AppDeps,
  opts: { startedAt: number; batch?: number; pauseMs?: number; delayMs?: number; onDone?: (r: SweepResult) => void },
): BackgroundJob {
  const log = loggerOf(deps.config)
  const batch = opts.batch ?? SWEEP_BATCH
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let wake: (() => void) | undefined
  const emptyResult = (): SweepResult => ({ checked: 0, updated: 0, missing: 0, leftovers: 0, deleted: 0, unadopted: 0, attachmentsRemoved: 0, attachmentsMissing: 0, avatarsRemoved: 0, packageFilesRemoved: 0, lfsObjectsRemoved: 0 })
  const result = emptyResult()
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve
      timer = setTimeout(resolve, ms)
    })
  const run = async (delayMs: number) => {
    let after = 0
    await pause(delayMs)
    if (stopped) return
    listed.round()
    listed.plan(null)
    Object.assign(result, emptyResult())
    while (!stopped) {
      // The next batch by id alone, the ready ones kept here: with `status = ?` in the statement
      // SQLite (no statistics) chose the status index, every repository, and sorted what was left
      // at each batch, where the id's range reads the batch.
      const batchRows = await deps.db
        .select({ id: repositories.id, ownerName: repositories.ownerName, name: repositories.name, status: repositories.status })
        .from(repositories)
        .where(gt(repositories.id, after))
        .orderBy(asc(repositories.id))
        .limit(batch)
      if (batchRows.length === 0) break
      after = batchRows.at(-1)!.id
      const rows = batchRows.filter((row) => row.status === 'ready')
      const present: typeof rows = []
      for (const row of rows) {
        const folder = checkRepositoryFolder(deps, row, opts.startedAt)
        result.leftovers += folder.leftovers
        if (folder.missing) result.missing++
        else present.push(row)
      }
      const synced = await syncChangedRepositories(deps, present)
      result.checked += rows.length
      result.updated += synced.updated
      if (stopped) break
      await pause(opts.pauseMs ?? SWEEP_PAUSE_MS)
    }
    if (!stopped) result.deleted = (await emptyDeletedFolders(deps, opts.startedAt)).length
    const between = async () => {
      if (!stopped) await pause(opts.pauseMs ?? SWEEP_PAUSE_MS)
      return !stopped
    }
    // Counted a batch of folders a query (unaccountedIn), pausing between batches.
    if (!stopped) for await (const folder of unaccountedIn(deps, ownerFolders(deps), between)) result.unadopted += folder.unaccounted.length
    if (result.unadopted) log.info('folders without a repository (unadopted: adopt or delete them at /api/v1/admin/unadopted)', { count: result.unadopted })
    if (!stopped) {
      const repaired = await repairAttachments(deps, { before: opts.startedAt, between })
      result.attachmentsRemoved = repaired.removed.length
      result.attachmentsMissing = repaired.missing.length
      if (!stopped) result.avatarsRemoved = (await repairAvatars(deps, { before: opts.startedAt, between })).unnamed.length
      if (!stopped) result.packageFilesRemoved = (await repairPackageBlobs(deps, { before: opts.startedAt, between })).length
      if (!stopped) result.lfsObjectsRemoved = (await repairLfsObjects(deps, { before: opts.startedAt, between })).length
    }
    if (stopped) return
    if (result.updated) log.info(`brought ${result.updated} of ${result.checked} repositories in line with git`)
    opts.onDone?.(result)
  }
  const sweep = (delayMs: number) => run(delayMs).catch((e) => log.error('the repository sweep failed', errorFields(e)))
  let running = true
  const track = (p: Promise<void>) => p.finally(() => (running = false))
  // Listed for /admin/cron: once after the start; on demand another whole sweep, when none runs
  // (the same checks, still touching only what is unchanged since this process started).
  const listed = jobBoardOf(deps).register('repository_sweep', {
    schedule: '@startup',
    everyMs: null,
    runNow: () => {
      if (running || stopped) return done
      running = true
      return (done = track(sweep(0)))
    },
  })
  listed.plan(Date.now() + (opts.delayMs ?? SWEEP_DELAY_MS))
  let done: Promise<void> = track(sweep(opts.delayMs ?? SWEEP_DELAY_MS))
  return {
    async stop() {
      stopped = true
      listed.leave()
      clearTimeout(timer)
      wake?.()
      await done
    },
  }
}

export interface SweepResult {
  checked: number
  updated: number
  missing: number
  leftovers: number
  /** Folders of deleted repositories a crash left in repositories/.deleted/, removed (emptyDeletedFolders). */
  deleted: number
  /** Folders no repository accounts for (unadopted), counted; left where they are. */
  unadopted: number
  /** Release asset files (and folders) no attachment accounts for, removed (repairAttachments). */
  attachmentsRemoved: number
  /** Attachments whose file is missing, reported. */
  attachmentsMissing: number
  /** Avatar files no user, organisation or repository names, removed (repairAvatars). */
  avatarsRemoved: number
  /** Package blobs no package file names, and temporary upload files, removed (repairPackageBlobs). */
  packageFilesRemoved: number
  /** LFS objects no repository has, and temporary uploads, removed. */
  lfsObjectsRemoved: number
}
