import type { AppDeps } from '../deps'
import { queueDueMirrors, stopMirrorUpdates } from '../modules/migrations/mirrors'
import { errorFields, loggerOf } from '../lib/log'
import { everySchedule, jobBoardOf } from '../lib/job-board'

/** How often the scheduler looks for due mirrors. */
export const MIRROR_TICK_MS = 60_000

/**
 * Updates pull mirrors whose interval has passed, in the background (started and stopped by
 * `warren serve`). `tick(now)` is the whole of one round, for tests to call with a chosen time.
 */
export function startMirrorScheduler(deps: AppDeps, opts: { tickMs?: number } = {}) {
  const tickMs = opts.tickMs ?? MIRROR_TICK_MS
  const tick = async (now?: number) => {
    listed.round()
    return await queueDueMirrors(deps, now)
  }
  // A failed round is logged and the next one tries again: it must never end the process.
  const safeTick = async () => {
    try {
      await tick()
    } catch (e) {
      loggerOf(deps.config).error('a mirror scheduler tick failed', errorFields(e))
    }
  }
  // Listed for /admin/cron; a round on demand is one more tick (queuing a mirror already queued does nothing).
  const listed = jobBoardOf(deps).register('update_mirrors', { schedule: everySchedule(tickMs), everyMs: tickMs, runNow: safeTick })
  const timer = setInterval(safeTick, tickMs)
  timer.unref?.()
  // A first round soon after start, for mirrors that came due while the server was down.
  const first = setTimeout(safeTick, 1000)
  first.unref?.()
  return {
    tick,
    /** Stops looking for due mirrors, drops queued updates, stops running ones and waits for them. */
    async stop() {
      listed.leave()
      clearInterval(timer)
      clearTimeout(first)
      await stopMirrorUpdates(deps)
    },
  }
}
