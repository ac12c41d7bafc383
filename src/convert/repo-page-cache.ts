import type { AppDeps } from '../deps'
import type { RepoRow } from '../db/schema'
import { PageCache, pageCacheOf, type PageCacheLimits } from '../db/page-cache'

type Db = AppDeps['db']

/** At most this many repository rows are kept in the repository page cache (a few MiB at most). */
export const REPO_PAGE_CACHE_ROWS = 4000

/** A page of repositories with the list's total. */
export interface RepoPage {
  rows: RepoRow[]
  total: number
}

const repoPageLimits = (maxRows: number): PageCacheLimits<RepoPage> => ({ maxCost: maxRows, costOf: (p) => p.rows.length, anchorOf: (p) => p.rows })

/**
 * The page cache (`page-cache.ts`) holding pages of repositories, weighed by their rows; the
 * Repository records made from a page it gave out are kept with the page's rows (`recordsOf`).
 */
export class RepoPageCache extends PageCache<RepoPage> {
  constructor(db: Db, maxRows = REPO_PAGE_CACHE_ROWS) {
    super(db, repoPageLimits(maxRows))
  }
  /** The records `make()` gives for `rows` as viewer `viewerId` (0: anonymous); see `derive`. */
  recordsOf<R>(rows: RepoRow[], viewerId: number, make: () => Promise<R[]>): Promise<R[]> {
    return this.derive(rows, viewerId, make)
  }
}

/** The process's repository page cache of this database. */
export function resultCacheOf(db: Db): RepoPageCache {
  return pageCacheOf(db, 'repos', () => new RepoPageCache(db))
}
