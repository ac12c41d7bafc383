/**
 * Whether this process is answering requests, in memory its background threads share: the server
 * counts the requests it is answering and those it has answered (`answeringStarted`,
 * `answeringEnded`); a background thread given the memory (the webhook deliveries') asks
 * `stepAside` before a piece of its work and waits while requests are being answered, so that on a
 * machine whose cores are shared its work falls between requests rather than beside them (a lower
 * nice value alone still leaves it a tenth of a core the request wanted, and the receiver's and
 * Bun's fetch thread's work it causes at full priority). It waits at most STEP_ASIDE_MAX_MS in any
 * window of WAIT_WINDOW_MS (its waits counted once however many of its pieces of work wait), then
 * goes on without waiting until the window ends: under requests without a pause it still gets a
 * quarter of its time. A request counts from its start until its handler has answered: the body
 * of a large push or upload being received counts too.
 */

/** Quiet this long after the last answer (ms): a client sending its next request at once is not a pause. */
export const QUIET_MS = 2
/** The most a background thread waits for pauses in a window of WAIT_WINDOW_MS (ms). */
export const STEP_ASIDE_MAX_MS = 150
/** The window of STEP_ASIDE_MAX_MS of waits (ms): under requests without a pause, a quarter of the time is the thread's. */
export const WAIT_WINDOW_MS = 200

/**
 * The process's memory (Int32 each, read and moved atomically): [0] the requests being answered,
 * [1] how many have been answered. A background thread tells a pause from the count standing still
 * by its own monotonic clock: no wall clock is shared between threads (one set back would make
 * a past request look yet to end).
 */
const processMemory = new SharedArrayBuffer(8)

/** The foreground's shared memory of this process, for a background thread's start message. */
export const foregroundMemory = (): SharedArrayBuffer => processMemory

const served = new Int32Array(processMemory)

/** A request of the foreground is being answered (the server's, before its handler). */
export function answeringStarted(): void {
  Atomics.add(served, 0, 1)
}

/** A request of the foreground has been answered (the server's, once its handler settled, however). */
export function answeringEnded(): void {
  Atomics.sub(served, 0, 1)
  Atomics.add(served, 1, 1)
}

/** How many requests this process has answered (wrapping at 2^31: compared for change only). */
export const answeredCount = (): number => Atomics.load(served, 1)

/** How many requests this process is answering now (their handlers not yet settled). */
export const answeringNow = (): number => Atomics.load(served, 0)

/** A background thread's view of the foreground it was given (`memory`: foregroundMemory's). */
export class Foreground {
  private readonly counts: Int32Array
  /** The answered count last seen, and when it was first seen (performance.now()). */
  private seen = -1
  private seenAt = 0
  /**
   * The thread's waits in the current window (any of its pieces of work waiting, counted once
   * however many wait): what the waits that ended took, how many wait now and since when
   * (performance.now()).
   */
  private windowStart = 0
  private waited = 0
  private waiters = 0
  private waitingSince = 0
  constructor(
    memory: SharedArrayBuffer,
    /** The most it waits in a window (STEP_ASIDE_MAX_MS but in tests). */
    private readonly maxWaitMs = STEP_ASIDE_MAX_MS,
    /** Its window (WAIT_WINDOW_MS but in tests: as much longer than its waits as WAIT_WINDOW_MS is). */
    private readonly windowMs = (maxWaitMs * WAIT_WINDOW_MS) / STEP_ASIDE_MAX_MS,
  ) {
    this.counts = new Int32Array(memory)
  }
  /**
   * Whether requests are being answered, or one was answered less than QUIET_MS ago (as far as
   * this thread can tell: an answer it sees for the first time counts as just given).
   */
  busy(now = performance.now()): boolean {
    if (Atomics.load(this.counts, 0) > 0) return true
    const answered = Atomics.load(this.counts, 1)
    if (answered !== this.seen) {
      this.seen = answered
      this.seenAt = now
    }
    return now - this.seenAt < QUIET_MS
  }
  /** How long the thread has waited in the current window, a window begun anew once past. */
  private waitedBy(now: number): number {
    if (now - this.windowStart >= this.windowMs) {
      this.windowStart = now
      this.waited = 0
      if (this.waiters > 0) this.waitingSince = now
    }
    return this.waited + (this.waiters > 0 ? now - this.waitingSince : 0)
  }
  /**
   * Resolves once the foreground pauses or `stopped()` says so, at once when it is not busy; a
   * thread that has waited the most it may in the current window goes on without waiting until the
   * window ends: under requests that never pause, or pause only briefly between long ones, it still
   * gets a quarter of its time.
   */
  async stepAside(stopped: () => boolean): Promise<void> {
    let now = performance.now()
    if (!this.busy(now) || stopped() || this.waitedBy(now) >= this.maxWaitMs) return
    if (this.waiters++ === 0) this.waitingSince = now
    try {
      do {
        await Bun.sleep(1)
        now = performance.now()
      } while (this.busy(now) && !stopped() && this.waitedBy(now) < this.maxWaitMs)
    } finally {
      if (--this.waiters === 0) this.waited += performance.now() - this.waitingSince
    }
  }
}
