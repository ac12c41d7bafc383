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
  /** The request, to send it again when a hold is to be confirmed. */
  run: () => Promise<unknown>
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
        hostile.push({ label, start, end: performance.now(), run })
      }
    },
    /**
     * Stops polling and judges every hostile request `during` ran. With `confirm` (requests that
     * change nothing, so sending one again is harmless), a request seen holding the loop is sent
     * again under a probe of its own and reported only if it holds it again: a stall seen once may
     * be the machine's (other processes taking both cores at that instant, which the reference
     * work timed at the start and the end does not see), where work done on the loop stalls it
     * every time.
     */
    async stop(stopOpts: { confirm?: boolean } = {}): Promise<ProbeResult> {
      running = false
      await loop
      if (failure) throw failure
      const unit = opts.referenceMs ?? Math.max(reference, referenceWork())
      const scale = HELD_IN_REFERENCES * unit
      const stallOf = (h: Interval) => Math.max(0, ...probes.filter((p) => p.start < h.end && p.end > h.start).map((p) => p.end - p.start))
      let held = hostile.filter((h) => {
        const stall = stallOf(h)
        return stall >= (h.end - h.start) / 2 && stall >= scale
      })
      if (process.env.PROBE_DEBUG) console.log(scale, hostile.map((h) => [h.label, Math.round(h.end - h.start), Math.round(stallOf(h))]))
      if (stopOpts.confirm) {
        const again: Interval[] = []
        for (const h of held) {
          const probe = latencyProbe(baseUrl, { referenceMs: unit })
          await probe.during(h.label, h.run)
          if ((await probe.stop()).held.length) again.push(h)
        }
        held = again
      }
      return { answers: probes.length, held: held.map((h) => h.label) }
    },
  }
}
