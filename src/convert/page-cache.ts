import type { AppDeps } from '../deps'
import { changeMarkOf } from '../db/client'

type Db = AppDeps['db']

/** How a PageCache weighs and bounds what it holds. */
export interface PageCacheLimits<V> {
  /** The most it holds, in the units of `costOf`. */
  maxCost: number
  /** What one value costs (at least 1, so that many empty pages are bounded too). */
  costOf?: (value: V) => number
  /** The object records made from a value are kept under (the value itself unless said). */
  anchorOf?: (value: V) => object
}

/**
 * The one cache of answers already made — pages of rows, pages of records, their JSON — valid
 * while the database is unchanged, as its change mark says (`changeMarkOf`): on SQLite
 * `data_version` moves when another connection commits, `total_changes()` when this one writes
 * anything; on PostgreSQL every write transaction of any process notifies the others at its
 * commit (db/postgres.ts), and the mark moves at each. Any write empties it, so an answer is never
 * older than the last write this process knows of; the answers that depend on the viewer's
 * permissions (collaborations, teams, organisation membership, visibility, admin flag) only change
 * through such writes, and callers make the viewer part of every key. Memory is bounded by the
 * total cost held; the oldest entries leave first.
 *
 * Records made from a value it gave out (`derive`) are kept with that value, under the same rule.
 */
export class PageCache<V> {
  private version = ''
  private cost = 0
  private readonly entries = new Map<string, { value: V; cost: number }>()
  /** Records made from the values given out since the last write: anchor → sub-key → records. */
  private derived = new WeakMap<object, Map<string | number, Promise<unknown>>>()
  private readonly changeMark: () => string
  private readonly maxCost: number
  private readonly costOf: (value: V) => number
  private readonly anchorOf: ((value: V) => object) | undefined
  constructor(db: Db, limits: PageCacheLimits<V>) {
    this.changeMark = changeMarkOf(db)
    this.maxCost = limits.maxCost
    this.costOf = (v) => Math.max(1, limits.costOf?.(v) ?? 1)
    this.anchorOf = limits.anchorOf
  }
  private fresh(): void {
    const version = this.changeMark()
    if (version !== this.version) {
      this.entries.clear()
      this.derived = new WeakMap()
      this.cost = 0
      this.version = version
    }
  }
  get(key: string): V | undefined {
    this.fresh()
    return this.entries.get(key)?.value
  }
  /**
   * The mark the database is at now: a value made from reads begun after this call is kept by
   * `set(key, value, mark)` only if no write landed meanwhile (it may predate that write).
   */
  mark(): string {
    this.fresh()
    return this.version
  }
  set(key: string, value: V, madeAt?: string): void {
    this.fresh()
    if (madeAt !== undefined && madeAt !== this.version) return
    const cost = this.costOf(value)
    if (cost > this.maxCost) return
    this.remove(key)
    for (const [k, e] of this.entries) {
      if (this.cost + cost <= this.maxCost) break
      this.entries.delete(k)
      this.cost -= e.cost
    }
    this.entries.set(key, { value, cost })
    const anchor = this.anchorOf ? this.anchorOf(value) : value
    if (typeof anchor === 'object' && anchor !== null) this.derived.set(anchor, new Map())
    this.cost += cost
  }
  private remove(key: string): void {
    const old = this.entries.get(key)
    if (old) {
      this.entries.delete(key)
      this.cost -= old.cost
    }
  }
  /**
   * The value under `key`, made by `make()` unless held and still fresh. A promise that fails is
   * not kept; one made while a write lands is dropped at the next call, as the mark has moved by
   * then (making it wrote nothing, so the mark it was made under still holds).
   */
  getOrMake(key: string, make: () => V): V {
    const held = this.get(key)
    if (held !== undefined) return held
    const value = make()
    this.set(key, value)
    if (value instanceof Promise) value.catch(() => this.entries.get(key)?.value === value && this.remove(key))
    return value
  }
  /**
   * The records `make()` gives for `anchor` under `subKey` (a viewer's id, say), made once while
   * the database is unchanged when `anchor` belongs to a value this cache gave out; made afresh
   * otherwise.
   */
  derive<R>(anchor: object, subKey: string | number, make: () => Promise<R>): Promise<R> {
    this.fresh()
    const bySubKey = this.derived.get(anchor)
    if (!bySubKey) return make()
    let made = bySubKey.get(subKey) as Promise<R> | undefined
    if (!made) {
      const fresh = make()
      bySubKey.set(subKey, (made = fresh))
      fresh.catch(() => bySubKey.get(subKey) === fresh && bySubKey.delete(subKey))
    }
    return made
  }
  /** The cost held now (for tests). */
  get size(): number {
    return this.cost
  }
}

const caches = new WeakMap<Db, Map<string, PageCache<any>>>()

/** The cache named `name` of this database (one per process and database), made by `make` on first use. */
export function pageCacheOf<C extends PageCache<any>>(db: Db, name: string, make: () => C): C {
  let byName = caches.get(db)
  if (!byName) caches.set(db, (byName = new Map()))
  let cache = byName.get(name)
  if (!cache) byName.set(name, (cache = make()))
  return cache as C
}
