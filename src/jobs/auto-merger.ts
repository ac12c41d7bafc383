import type { AppDeps } from '../deps'
import { runConsumerLoop } from '../events/consumer-loop'
import { errorFields, loggerOf } from '../lib/log'
import { everySchedule, jobBoardOf } from '../lib/job-board'
import { AUTO_MERGE_CONSUMER, autoMergeRound, retryScheduledMerges } from '../modules/pulls/auto-merge'

/** How often the outbox is looked at when it was empty (a read). */
export const AUTO_MERGE_POLL_MS = 500

/**
 * Scheduled merges in the background (started and stopped by `warren serve`, in one process at a
 * time: asLeader): first every schedule is tried once (what was ready while no process ran it, or
 * when a crash came between an event and its merge), then the outbox's auto-merge consumer tries
 * the schedules each new event may have made ready (src/modules/pulls/auto-merge.ts). Listed for
 * /admin/cron (a round: the first try of every schedule, then a batch of events taken); a round on
 * demand tries every schedule again, as the start does (a merge already under way or done is not
 * made twice: its claim, merge.ts).
 */
export async function startAutoMerger(deps: AppDeps, opts: { pollMs?: number } = {}) {
  const log = loggerOf(deps.config)
  const tryAll = async (when: string) => {
    listed.round()
    const merged = await retryScheduledMerges(deps).catch((e) => {
      log.error(`trying the scheduled merges ${when} failed`, errorFields(e))
      return 0
    })
    if (merged) log.info(`merged ${merged} pull requests whose scheduled merge was ready`)
  }
  const listed = jobBoardOf(deps).register('scheduled_merges', {
    schedule: everySchedule(opts.pollMs ?? AUTO_MERGE_POLL_MS),
    everyMs: null,
    runNow: () => tryAll('on demand'),
  })
  await tryAll('at start')
  const loop = await runConsumerLoop(deps.db, {
    consumer: AUTO_MERGE_CONSUMER,
    round: () => autoMergeRound(deps),
    log,
    what: 'scheduled merges',
    pollMs: opts.pollMs ?? AUTO_MERGE_POLL_MS,
    onRound: listed.round,
  })
  return {
    ...loop,
    async stop() {
      listed.leave()
      await loop.stop()
    },
  }
}
