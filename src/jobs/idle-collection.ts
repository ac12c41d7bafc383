import { heapSize } from 'bun:jsc'
import { answeredCount, answeringNow } from '../lib/foreground'
import type { BackgroundJob } from '../ops/shutdown'

/**
 * A collection of the main thread's heap once the server goes quiet after a burst of requests.
 * JavaScriptCore collects its heap as it allocates, so a server that stops answering keeps what a
 * busy one had grown to (its garbage included) until it is busy again: bench/memory.ts read
 * 183 MiB 5 s after its load against 59 at start. Every CHECK_MS this job looks at the counts of
 * requests answered and being answered (lib/foreground.ts); when requests were answered in the
 * interval before the last, none in the last and none is being answered (a push still arriving
 * waits for no collection), and the heap has grown by GROWTH_BYTES since the last collection, it
 * asks for one (`Bun.gc(false)`: 10-20 ms of the event loop at the heaps measured, where a full
 * synchronous one took 55-70 ms), once, whatever the quiet's length; the heap's size after it is
 * read at the next check, once the collection has had its time. A server under steady load is
 * never collected this way, nor an idle one again and again.
 */

/** How often the job looks (ms), and so how long a quiet must last. */
export const CHECK_MS = 1000
/** How much the heap must have grown since the last collection for a quiet to earn another (bytes). */
export const GROWTH_BYTES = 8 * 1024 * 1024

export interface IdleCollection extends BackgroundJob {
  /** Collections asked so far (tests). */
  readonly collections: number
  /** Checks made so far (tests). */
  readonly checks: number
}

export function startIdleCollection(
  opts: { checkMs?: number; growthBytes?: number; collect?: () => void; heap?: () => number } = {},
): IdleCollection {
  const { checkMs = CHECK_MS, growthBytes = GROWTH_BYTES, collect = () => Bun.gc(false), heap = heapSize } = opts
  let seen = answeredCount()
  let busy = false
  let base = heap()
  let collections = 0
  let checks = 0
  /** Whether a collection was asked at the last check: the heap's size after it is read at this one. */
  let collected = false
  const timer = setInterval(() => {
    checks++
    if (collected) {
      collected = false
      base = heap()
    }
    const answered = answeredCount()
    if (answered !== seen) {
      seen = answered
      busy = true
      return
    }
    if (!busy || answeringNow() > 0) return
    busy = false
    if (heap() - base < growthBytes) return
    collect()
    collections++
    collected = true
  }, checkMs)
  timer.unref()
  return {
    get collections() {
      return collections
    },
    get checks() {
      return checks
    },
    stop: () => clearInterval(timer),
  }
}
