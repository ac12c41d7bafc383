import type { Table } from 'drizzle-orm'
import { changeMarkOf, type Db } from './client'

/** How a PageCache weighs and bounds what it holds. */
export interface PageCacheLimits<V> {
  /** The most it holds, in the units of `costOf`. */
  maxCost: number
  /** What one value costs (at least 1, so that many empty pages are bounded too). */
  costOf?: (value: V) => number
  /** The object records made from a value are kept under (`derive`); without it nothing is derived. */
  anchorOf?: (value: V) => object
  /**
   * Every table its values are read from, when they are few: it is then emptied only by the
   * changes of those (on PostgreSQL: changeMarkOf's scoped mark). Without it, by any change.
   */
  tables?: readonly Table[]
}

/**
 * The one cache of what was read or made from the database — rows read by key (a token's hash, a
 * repository's or an owner's name), pages of rows, pages of records, their JSON — valid while the
 * database is unchanged, as its change mark says (`changeMarkOf`): on SQLite the header's
 * `user_version`, raised by the commit of every write of any connection; on PostgreSQL every write
 * transaction of any process notifies the others at its commit (db/postgres.ts), and the mark
 * moves at each. Any write empties it (but the webhook deliveries' and outbox consumers'
 * bookkeeping, which no cache may read: movesChangeMark), so an answer is never older than the
 * last write this process knows of (one scoped to its `tables`, of those tables); the answers that depend on the viewer's permissions (collaborations,
 * teams, organisation membership, visibility, admin flag) only change through such writes, and
 * callers make the viewer part of every key. Memory is bounded by the total cost held; the oldest
 * entries leave first. What it holds is shared: callers hand out copies of what they let others
 * change.
 *
 * A value is kept only if the mark did not move between the start of its reads and their end (it
 * may predate the write that moved it). Inside a write transaction nothing is kept or handed out
 * and everything is made afresh: the transaction sees its own writes before its commit moves the
 * mark, and a rollback would undo what it saw without moving it.
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
  constructor(
    private readonly db: Db,
    limits: PageCacheLimits<V>,
  ) {
    this.changeMark = changeMarkOf(db, limits.tables)
    this.maxCost = limits.maxCost
    this.costOf = (v) => Math.max(1, limits.costOf?.(v) ?? 1)
    this.anchorOf = limits.anchorOf
  }
  /** Whether the caller is inside a write transaction (nothing kept or given out: see above). */
  private writing(): boolean {
    return this.db.$runtime.inWriteTransaction()
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
    if (this.writing()) return undefined
    this.fresh()
    return this.entries.get(key)?.value
  }
  /**
   * Keeps `value` under `key`; with `madeAt` (the mark its reads began under) only if the mark
   * has not moved since (no write landed while it read).
   */
  set(key: string, value: V, madeAt?: string): void {
    if (this.writing()) return
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
    if (this.anchorOf) this.derived.set(this.anchorOf(value), new Map())
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
   * The value under `key`, made by `make()` unless held and still fresh; callers asking while it
   * is being made share the promise. A promise that fails is not kept. One that a write landed
   * during is checked after its reads too, lazily: the mark has moved by the next call, which
   * drops it before handing anything out (checking at once would cost SQLite a statement per page
   * made).
   */
  getOrMake(key: string, make: () => V): V {
    const held = this.get(key)
    if (held !== undefined) return held
    const madeAt = this.version
    const value = make()
    this.set(key, value, madeAt)
    if (value instanceof Promise) value.catch(() => this.entries.get(key)?.value === value && this.remove(key))
    return value
  }
  /**
   * The value under `key`: the one held, or `read()`'s, kept when it found one (not undefined)
   * and no write landed while it read.
   */
  async getOrRead(key: string, read: () => Promise<V | undefined>): Promise<V | undefined> {
    const held = this.get(key)
    if (held !== undefined) return held
    const madeAt = this.version
    const value = await read()
    if (value !== undefined) this.set(key, value, madeAt)
    return value
  }
  /**
   * The records `make()` gives for `anchor` under `subKey` (a viewer's id, say), made once while
   * the database is unchanged when `anchor` belongs to a value this cache gave out; made afresh
   * otherwise.
   */
  derive<R>(anchor: object, subKey: string | number, make: () => Promise<R>): Promise<R> {
    if (this.writing()) return make()
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

/** The most counts `keptCount` keeps of one kind, a few bytes each. */
const COUNTS_KEPT = 1000

/**
 * The count `count()` gives, kept under `key` in the page cache of counts named `name` while the
 * database is unchanged: for the lists whose count reads every row their filter lets through while
 * their page stops at its end (a search without a text), so that the pages of one list share it.
 * `key` must name everything the count depends on (the statement's shape and values, the viewer).
 */
export function keptCount(db: Db, name: string, key: string, count: () => Promise<number>): Promise<number> {
  return pageCacheOf(db, `count:${name}`, () => new PageCache<Promise<number>>(db, { maxCost: COUNTS_KEPT })).getOrMake(key, count)
}
