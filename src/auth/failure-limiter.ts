/**
 * Counts failed sign-in attempts per key (an account, a client address) in a fixed window that
 * starts at the key's first failure. At most `capacity` keys are tracked: all windows have the
 * same length, so the map's insertion order is also the order in which windows end; expired
 * entries are dropped from the front as new ones come, and when the map is full of live entries
 * the oldest one goes.
 *
 * An attempt is counted before it is checked (`take`), so that many concurrent guesses cannot all
 * pass the check before the first of them fails; a success gives its count back (`refund`) or
 * clears the key (`clear`). Only keys with failures stay: successful traffic leaves no entry that
 * could push an attacker's count out.
 */
export class FailureLimiter {
  private readonly entries = new Map<string, { count: number; resetAt: number }>()

  constructor(
    /** Attempts allowed per window; 0 turns the limit off. */
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly capacity: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Number of keys tracked (for tests and metrics). */
  get size(): number {
    return this.entries.size
  }

  /**
   * Counts one attempt for `key`. Answers 0 when the attempt may go on, or the whole seconds to
   * wait when the key is locked (the attempt is then not counted).
   */
  take(key: string): number {
    if (this.limit <= 0) return 0
    const now = this.now()
    this.dropExpired(now)
    let entry = this.entries.get(key)
    if (entry && entry.resetAt <= now) {
      this.entries.delete(key)
      entry = undefined
    }
    if (!entry) {
      if (this.entries.size >= this.capacity) {
        const oldest = this.entries.keys().next()
        if (!oldest.done) this.entries.delete(oldest.value)
      }
      entry = { count: 0, resetAt: now + this.windowMs }
      this.entries.set(key, entry)
    }
    if (entry.count >= this.limit) return Math.max(1, Math.ceil((entry.resetAt - now) / 1000))
    entry.count++
    return 0
  }

  /** The whole seconds `key` is locked for (0: not locked), counting nothing. */
  lockedFor(key: string): number {
    if (this.limit <= 0) return 0
    const entry = this.entries.get(key)
    // The clock is read only for a key at its limit (every good request asks: most have no entry).
    if (!entry || entry.count < this.limit) return 0
    const now = this.now()
    if (entry.resetAt <= now) return 0
    return Math.max(1, Math.ceil((entry.resetAt - now) / 1000))
  }

  /** Gives back one attempt counted by `take` (it succeeded); a key back at zero is forgotten. */
  refund(key: string): void {
    const entry = this.entries.get(key)
    if (entry && --entry.count <= 0) this.entries.delete(key)
  }

  /** Forgets every failure of `key`. */
  clear(key: string): void {
    this.entries.delete(key)
  }

  private dropExpired(now: number): void {
    for (const [key, entry] of this.entries) {
      if (entry.resetAt > now) return
      this.entries.delete(key)
    }
  }
}
