import type { AppDeps } from '../deps'
import { queueDueMirrors, stopMirrorUpdates } from '../modules/migrations/mirrors'

/** How often the scheduler looks for due mirrors. */
export const MIRROR_TICK_MS = 60_000

/**
 * Updates pull mirrors whose interval has passed, in the background (started and stopped by
 * `warren serve`). `tick(now)` is the whole of one round, for tests to call with a chosen time.
 */
export function startMirrorScheduler(deps: AppDeps, opts: { tickMs?: number } = {}) {
  const tick = (now?: number) => queueDueMirrors(deps, now)
  const timer = setInterval(() => {
    try {
      tick()
    } catch (e) {
      console.error('warren: mirror scheduler tick failed:', e)
    }
  }, opts.tickMs ?? MIRROR_TICK_MS)
  timer.unref?.()
  // A first round soon after start, for mirrors that came due while the server was down.
  const first = setTimeout(() => tick(), 1000)
  first.unref?.()
  return {
    tick,
    /** Stops looking for due mirrors, drops queued updates, stops running ones and waits for them. */
    async stop() {
      clearInterval(timer)
      clearTimeout(first)
      await stopMirrorUpdates(deps)
    },
  }
}
