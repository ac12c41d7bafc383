/**
 * A second client that polls GET /api/v1/version back to back while a test sends hostile
 * requests, to tell whether the hostile work held the server's event loop. No wall-clock limit
 * is asserted (a machine whose cores are busy slows everything): the scale is a reference piece
 * of CPU work (parsing 750 KB of JSON) timed in this process when the probe starts and again when
 * it stops (the longer counts), on the same machine under the same load. While the server's loop is free, /version keeps answering during a
 * hostile request; while it is held, the probe's request waits until the work lets go. So a
 * hostile request held the loop when one probe round trip overlapping it took at least half of
 * the hostile request's own time and longer than `HELD_IN_REFERENCES` reference pieces of work.
 * Bounded synchronous steps (a budgeted glob match, the parse of a body within its size limit)
 * stay below that; work that runs on the loop for as long as it takes does not.
 */

const HELD_IN_REFERENCES = 50

/** Milliseconds this machine takes now for the reference work (the median of seven runs). */
function referenceWork(): number {
  const text = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `n${i}`, ok: true })))
  const times: number[] = []
  for (let i = 0; i < 7; i++) {
    const started = performance.now()
    JSON.parse(text)
    times.push(performance.now() - started)
  }
  return times.sort((a, b) => a - b)[3]!
}

interface Interval {
  label: string
  start: number
  end: number
}

export interface ProbeResult {
  /** Probe answers received. */
  answers: number
  /** The hostile requests (as labelled in `during`) that held the loop; empty when none did. */
  held: string[]
}

/** `referenceMs` fixes the reference work's time instead of measuring it (the probe's own test). */
export function latencyProbe(baseUrl: string, opts: { referenceMs?: number } = {}) {
  const reference = opts.referenceMs ?? referenceWork()
  const probes: { start: number; end: number }[] = []
  const hostile: Interval[] = []
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
      probes.push({ start: started, end: performance.now() })
      // A macrotask between polls, so the test's own requests get their turn on this side too.
      await Bun.sleep(1)
    }
  })()
  return {
    /** How long (ms) a stall must last at least to count as holding the loop, on this machine now. */
    heldAfterMs: HELD_IN_REFERENCES * reference,
    /** Runs one hostile request, remembering when it was in flight. */
    async during<T>(label: string, run: () => Promise<T>): Promise<T> {
      const start = performance.now()
      try {
        return await run()
      } finally {
        hostile.push({ label, start, end: performance.now() })
      }
    },
    /** Stops polling and judges every hostile request `during` ran. */
    async stop(): Promise<ProbeResult> {
      running = false
      await loop
      if (failure) throw failure
      const scale = HELD_IN_REFERENCES * (opts.referenceMs ?? Math.max(reference, referenceWork()))
      const held = hostile
        .filter((h) => {
          const stall = Math.max(0, ...probes.filter((p) => p.start < h.end && p.end > h.start).map((p) => p.end - p.start))
          return stall >= (h.end - h.start) / 2 && stall >= scale
        })
        .map((h) => h.label)
      if (process.env.PROBE_DEBUG)
        console.log(scale, hostile.map((h) => [h.label, Math.round(h.end - h.start), Math.round(Math.max(0, ...probes.filter((p) => p.start < h.end && p.end > h.start).map((p) => p.end - p.start)))]))
      return { answers: probes.length, held }
    },
  }
}
