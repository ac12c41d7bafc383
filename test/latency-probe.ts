/**
 * A second client that polls GET /api/v1/version while a test sends hostile requests: the slowest
 * answer it saw tells whether the hostile work held the event loop.
 */
/**
 * The slowest /version answer a test accepts while hostile work runs. The work it guards against
 * takes seconds (render budgets, git time limits); a free event loop answers in a few ms, but a
 * loaded 2-core machine (CI beside other processes) has been seen to take 140 ms to schedule it.
 */
export const NOT_HELD_MS = 300

export function latencyProbe(baseUrl: string, everyMs = 20) {
  let slowest = 0
  let answers = 0
  let running = true
  let failure: unknown
  const loop = (async () => {
    while (running) {
      const started = performance.now()
      try {
        const res = await fetch(`${baseUrl}/api/v1/version`)
        await res.arrayBuffer()
      } catch (e) {
        // Kept for stop(): thrown here it would be an unhandled rejection once a failed test's
        // clean-up stops the server under a probe that was never stopped.
        failure = e
        break
      }
      slowest = Math.max(slowest, performance.now() - started)
      answers++
      await Bun.sleep(everyMs)
    }
  })()
  return {
    /** Stops polling; resolves to the slowest answer (ms) and how many answers came. */
    async stop(): Promise<{ slowest: number; answers: number }> {
      running = false
      await loop
      if (failure) throw failure
      return { slowest, answers }
    },
  }
}

/** Milliseconds `run` takes. */
export async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  await run()
  return performance.now() - started
}
