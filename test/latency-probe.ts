/**
 * A second client that polls GET /api/v1/version while a test sends hostile requests: the slowest
 * answer it saw tells whether the hostile work held the event loop.
 */
export function latencyProbe(baseUrl: string, everyMs = 20) {
  let slowest = 0
  let answers = 0
  let running = true
  const loop = (async () => {
    while (running) {
      const started = performance.now()
      const res = await fetch(`${baseUrl}/api/v1/version`)
      await res.arrayBuffer()
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
