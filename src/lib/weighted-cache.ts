/**
 * A cache of answers that never change (what object ids name: highlighted blobs, diffs between two
 * commits), bounded by the total weight of what it holds (characters, rows), least recently used
 * first out. A value heavier than a quarter of the bound is not kept: one answer never empties it.
 */
export class WeightedCache<V> {
  private readonly entries = new Map<string, { value: V; weight: number }>()
  private held = 0

  constructor(
    private readonly maxWeight: number,
    private readonly weigh: (value: V) => number,
  ) {}

  get(key: string): V | undefined {
    const hit = this.entries.get(key)
    if (!hit) return undefined
    // Most recently used last: a Map keeps insertion order.
    this.entries.delete(key)
    this.entries.set(key, hit)
    return hit.value
  }

  /** The weight held now (tests). */
  get weight(): number {
    return this.held
  }

  /** Drops what `key` holds, if anything. */
  delete(key: string): void {
    const old = this.entries.get(key)
    if (!old) return
    this.entries.delete(key)
    this.held -= old.weight
  }

  set(key: string, value: V): void {
    const weight = this.weigh(value)
    if (weight > this.maxWeight / 4) return
    this.delete(key)
    this.entries.set(key, { value, weight })
    this.held += weight
    for (const [k, v] of this.entries) {
      if (this.held <= this.maxWeight) break
      this.entries.delete(k)
      this.held -= v.weight
    }
  }
}
