import type { AppDeps } from '../deps'
import { errorFields, loggerOf } from '../lib/log'
import { everySchedule, jobBoardOf } from '../lib/job-board'
import type { BackgroundJob } from '../ops/shutdown'
import { repairPullMerges } from '../modules/pulls/merge'
import { settleAbandonedPushes } from '../push'
import { repairAbandonedFolderMoves } from '../modules/repos/folder-move'
import { emptyDeletedFolders } from '../modules/repos/repair'

/**
 * Repairs, while serving, what a process that died mid-work left on a PostgreSQL database several
 * processes share: merges it had under way (the pull request stays "being merged", or merged in
 * git but not in the database), pushes it had pending (their ref changes unrecorded, no push
 * events) and folder moves it had under way (a rename, a transfer or a deletion: the folder is put
 * back where the unchanged rows look for it, repairAbandonedFolderMoves); then the folders of
 * deleted repositories left in repositories/.deleted/ are removed (emptyDeletedFolders, those
 * there since before the round began). Which work is abandoned is known by its claim (claimWork), which went with the dead
 * process's connection: work a running process claims is never touched. Runs in one process at a
 * time (asLeader), a round every `intervalMs` (WARREN_LEFTOVER_REPAIR_MS); the start-up repairs cover the rest (and SQLite,
 * where one process owns the database).
 */
export function startLeftoverRepair(deps: AppDeps, intervalMs = deps.config.leftoverRepairMs): BackgroundJob {
  const log = loggerOf(deps.config)
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let round: Promise<void> = Promise.resolve()
  const repair = async () => {
    listed.round()
    listed.plan(null)
    const startedAt = Date.now()
    // A step apiece: one failing (a folder that cannot move back) does not stop the others, this
    // round or any after; each failure logged once, where it happens.
    const step = async (what: string, run: () => Promise<void>) => {
      try {
        await run()
      } catch (e) {
        log.error(`repairing what a dead process left failed: ${what}`, errorFields(e))
      }
    }
    // Folder moves first: a deletion's folder put back leaves .deleted/ before it is emptied.
    await step('folder moves', async () => {
      const movedBack = await repairAbandonedFolderMoves(deps)
      if (movedBack) log.info(`moved back ${movedBack} folders whose move a dead process left`)
    })
    await step('deleted folders', async () => void (await emptyDeletedFolders(deps, startedAt)))
    // Merges first: a merge that landed is marked merged before its push is recorded, so the
    // re-checks the push queues never see the pull request as open.
    await step('merges', async () => {
      const merged = await repairPullMerges(deps, { abandonedOnly: true })
      if (merged) log.info(`marked ${merged} pull requests merged whose merge a dead process left`)
    })
    await step('pushes', async () => {
      const settled = await settleAbandonedPushes(deps)
      if (settled) log.info(`recorded ${settled} pushes a dead process left pending`)
    })
    if (stopped) return
    timer = setTimeout(() => void (round = repair()), intervalMs)
    timer.unref?.()
    listed.plan(Date.now() + intervalMs)
  }
  // Listed for /admin/cron; a round on demand is the next round brought forward, after the running one.
  const runNow = async () => {
    await round
    if (stopped || !timer) return
    clearTimeout(timer)
    timer = undefined
    round = repair()
    await round
  }
  const listed = jobBoardOf(deps).register('repair_leftovers', { schedule: everySchedule(intervalMs), everyMs: intervalMs, runNow })
  round = repair()
  return {
    async stop() {
      stopped = true
      listed.leave()
      clearTimeout(timer)
      await round
    },
  }
}
