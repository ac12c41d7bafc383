/**
 * Whether this process is answering requests, in memory its background threads share: the server
 * counts the requests it is answering and notes when it last answered one (`serving`); a
 * background thread given the memory (the webhook deliveries') asks `stepAside` before a piece of
 * its work and waits while requests are being answered, so that on a machine whose cores are
 * shared its work falls between requests rather than beside them (a lower nice value alone still
 * leaves it a tenth of a core the request wanted, and the receiver's and Bun's fetch thread's work
 * it causes at full priority). It never waits longer than STEP_ASIDE_MAX_MS at a time, and after
 * such a wait goes on without waiting for as long again: under requests without a pause it still
 * gets at least half of its time.
 */

/** Quiet this long after the last answer (ms): a client sending its next request at once is not a pause. */
export const QUIET_MS = 2
/** The longest a background thread waits for a pause, and then goes on for as long without waiting (ms). */
export const STEP_ASIDE_MAX_MS = 50

/** The process's memory: requests being answered (Int32, [0]), and when the last one ended (Float64, ms since the epoch, [1]). */
const processMemory = new SharedArrayBuffer(16)

/** The foreground's shared memory of this process, for a background thread's start message. */
export const foregroundMemory = (): SharedArrayBuffer => processMemory

const views = (memory: SharedArrayBuffer) => ({ answering: new Int32Array(memory, 0, 1), lastEnd: new Float64Array(memory, 8, 1) })

const served = views(processMemory)

/** Answers `answer()` as a request of the foreground: counted while it runs. */
export async function serving<T>(answer: () => T | Promise<T>): Promise<T> {
  Atomics.add(served.answering, 0, 1)
  try {
    return await answer()
  } finally {
    Atomics.sub(served.answering, 0, 1)
    served.lastEnd[0] = Date.now()
  }
}

/** A background thread's view of the foreground it was given (`memory`: foregroundMemory's). */
export class Foreground {
  private readonly answering: Int32Array
  private readonly lastEnd: Float64Array
  /** Until when (ms) this thread goes on without waiting, after a wait that reached its longest. */
  private freeUntil = 0
  constructor(
    memory: SharedArrayBuffer,
    /** The longest wait (STEP_ASIDE_MAX_MS but in tests). */
    private readonly maxWaitMs = STEP_ASIDE_MAX_MS,
  ) {
    ;({ answering: this.answering, lastEnd: this.lastEnd } = views(memory))
  }
  /** Whether requests are being answered, or one ended less than QUIET_MS ago. */
  busy(now = Date.now()): boolean {
    return Atomics.load(this.answering, 0) > 0 || now - this.lastEnd[0]! < QUIET_MS
  }
  /**
   * Resolves once the foreground pauses, or after its longest wait (then not waiting again for as
   * long), or when `stopped()` says so; at once when it is not busy.
   */
  async stepAside(stopped: () => boolean): Promise<void> {
    const start = Date.now()
    if (start < this.freeUntil) return
    for (let now = start; this.busy(now) && !stopped(); now = Date.now()) {
      if (now - start >= this.maxWaitMs) {
        this.freeUntil = now + this.maxWaitMs
        return
      }
      await Bun.sleep(1)
    }
  }
}
