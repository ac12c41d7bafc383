import type { AppDeps } from '../deps'
import { changeMarkOf } from '../db/client'
import type { RepoRow } from '../db/schema'

type Db = AppDeps['db']

/** At most this many repository rows are kept in a RepoPageCache (a few MiB at most). */
export const REPO_PAGE_CACHE_ROWS = 4000

/**
 * Pages of repositories already computed, valid while the database is unchanged: SQLite's
 * `data_version` moves when another connection commits, `total_changes()` when this one writes
 * anything. Any write empties the cache, so an answer is never older than the last write; the
 * answers that depend on the viewer's permissions (collaborations, teams, organisation
 * membership, visibility, admin flag) only change through such writes, and the viewer is part
 * of every key. Memory is bounded by the number of rows held (oldest pages leave first).
 * The Repository records made from a page it gave out are kept with that page (recordsOf),
 * under the same rule.
 */
export class RepoPageCache {
  private version = ''
  private rows = 0
  private readonly entries = new Map<string, { rows: RepoRow[]; total: number }>()
  /** Records made from the pages given out since the last write: page rows → viewer id → records. */
  private records = new WeakMap<RepoRow[], Map<number, Promise<unknown[]>>>()
  private readonly changeMark
  constructor(
    db: Db,
    private readonly maxRows = REPO_PAGE_CACHE_ROWS,
  ) {
    this.changeMark = changeMarkOf(db)
  }
  private fresh(): void {
    const version = this.changeMark()
    if (version !== this.version) {
      this.entries.clear()
      this.records = new WeakMap()
      this.rows = 0
      this.version = version
    }
  }
  get(key: string) {
    this.fresh()
    return this.entries.get(key)
  }
  set(key: string, value: { rows: RepoRow[]; total: number }) {
    // One row's worth for an empty page, so that many empty answers are bounded too.
    const cost = Math.max(1, value.rows.length)
    if (cost > this.maxRows) return
    const old = this.entries.get(key)
    if (old) {
      this.entries.delete(key)
      this.rows -= Math.max(1, old.rows.length)
    }
    for (const [k, e] of this.entries) {
      if (this.rows + cost <= this.maxRows) break
      this.entries.delete(k)
      this.rows -= Math.max(1, e.rows.length)
    }
    this.entries.set(key, value)
    this.records.set(value.rows, new Map())
    this.rows += cost
  }
  /**
   * The records `make()` gives for `rows` as viewer `viewerId` (0: anonymous), made once while
   * the database is unchanged when `rows` is a page this cache gave out; made afresh otherwise.
   */
  recordsOf<R>(rows: RepoRow[], viewerId: number, make: () => Promise<R[]>): Promise<R[]> {
    this.fresh()
    const byViewer = this.records.get(rows)
    if (!byViewer) return make()
    let records = byViewer.get(viewerId)
    if (!records) {
      const made = make()
      byViewer.set(viewerId, (records = made))
      made.catch(() => byViewer.get(viewerId) === made && byViewer.delete(viewerId))
    }
    return records as Promise<R[]>
  }
  /** Rows held now (for tests). */
  get size() {
    return this.rows
  }
}
const repoPageCaches = new WeakMap<Db, RepoPageCache>()
export function resultCacheOf(db: Db): RepoPageCache {
  let cache = repoPageCaches.get(db)
  if (!cache) repoPageCaches.set(db, (cache = new RepoPageCache(db)))
  return cache
}
