import type { AppDeps } from '../deps'
import { onPullsQueued, queuedPullIds } from '../push/pull-queue'
import { checkPull } from '../modules/pulls/mergeability'
import { errorFields, loggerOf } from '../lib/log'
import { everySchedule, jobBoardOf } from '../lib/job-board'

/** How often the checker looks for queued pull requests when nothing woke it (a safety net). */
export const PULL_CHECK_TICK_MS = 30_000
/** Pull requests taken per round. */
const BATCH = 20

/**
 * Checks the mergeability of queued pull requests (src/push/pull-queue.ts) in the background,
 * one at a time, started and stopped by `warren serve`. Woken when something is queued (a push
 * moved a branch, a pull request was reopened or got a new base); its first round, right after
 * start, takes up the checks a crash or a stop left queued.
 */
export function startPullChecker(deps: AppDeps, opts: { tickMs?: number } = {}) {
  let stopped = false
  let wanted = true
  let round: Promise<void> | null = null
  const tickMs = opts.tickMs ?? PULL_CHECK_TICK_MS
  const runRound = async () => {
    listed.round()
    while (wanted && !stopped) {
      wanted = false
      for (let ids = await queuedPullIds(deps.db, BATCH); ids.length && !stopped; ids = await queuedPullIds(deps.db, BATCH)) {
        let progressed = false
        for (const id of ids) {
          if (stopped) break
          try {
            await checkPull(deps, id)
            progressed = true
          } catch (e) {
            loggerOf(deps.config).error('checking a pull request failed', { pullId: id, ...errorFields(e) })
          }
        }
        // Every check failed (the database is broken?): the next tick tries again.
        if (!progressed) break
      }
    }
  }
  const wake = (): void => {
    wanted = true
    if (stopped || round) return
    // A failed round (the database unreachable?) is logged; the next wake-up or tick tries again.
    round = runRound()
      .catch((e) => loggerOf(deps.config).error('a pull request check round failed', errorFields(e)))
      .finally(() => {
        round = null
        if (wanted && !stopped) wake()
      })
  }
  // Listed for /admin/cron; a round on demand is a wake-up (one round at a time, whoever wakes it).
  const listed = jobBoardOf(deps).register('check_pull_requests', { schedule: everySchedule(tickMs), everyMs: tickMs, runNow: wake })
  onPullsQueued(deps.db, wake)
  const timer = setInterval(wake, tickMs)
  timer.unref?.()
  wake()
  return {
    /** Runs a round now and waits until the queue is empty (tests). */
    async drain() {
      wake()
      while (round) await round
    },
    /** Stops taking checks and waits for the running one; what is still queued stays queued. */
    async stop() {
      stopped = true
      listed.leave()
      clearInterval(timer)
      onPullsQueued(deps.db, null)
      await round
    },
  }
}
