import type { AppDeps } from '../../deps'
import { changeMarkOf } from '../../db/client'
import type { UserRow } from '../../auth/caller'
import type { Page } from '../../lib/pagination'
import type { PullFilter } from './service'

/** At most this many pages are kept (about 130 KB of JSON each at 30 per page). */
const PULL_PAGES_KEPT = 32

/** A page of PullRequest records as the JSON text of its answer, with the list's total. */
export interface PullPageText {
  json: string
  total: number
}

/**
 * Pages of PullRequest records already made and serialised, for as long as the database is
 * unchanged (its change mark): a list read again and again between writes is made once. Any
 * write anywhere empties it; the oldest page goes first when it is full.
 */
class PullPageCache {
  private readonly pages = new Map<string, Promise<PullPageText>>()
  private version = ''
  constructor(private readonly changeMark: () => string) {}
  /** The page under `key`, made by `make()` unless held and still fresh. */
  get(key: string, make: () => Promise<PullPageText>): Promise<PullPageText> {
    const version = this.changeMark()
    if (version !== this.version) {
      this.pages.clear()
      this.version = version
    }
    let page = this.pages.get(key)
    if (!page) {
      page = make()
      // A page that failed is not kept; one made while a write lands is dropped at the next
      // call, as the mark has moved by then.
      const made = page
      made.catch(() => this.pages.get(key) === made && this.pages.delete(key))
      // Making it wrote nothing (a read), so the mark it was made under still holds.
      if (this.pages.size >= PULL_PAGES_KEPT) this.pages.delete(this.pages.keys().next().value!)
      this.pages.set(key, page)
    }
    return page
  }
}
const pullPageCaches = new WeakMap<AppDeps['db'], PullPageCache>()

/**
 * A page of a repository's pull request list as `viewer` may see it (the controller's `make`:
 * listPulls, then the records as JSON text), made once while the database is unchanged. The
 * viewer is part of the key: records carry what that viewer may see.
 */
export async function cachedPullPage(
  deps: AppDeps,
  repoId: number,
  viewer: UserRow | null,
  filter: PullFilter,
  page: Page,
  make: () => Promise<PullPageText>,
): Promise<PullPageText> {
  let cache = pullPageCaches.get(deps.db)
  if (!cache) pullPageCaches.set(deps.db, (cache = new PullPageCache(changeMarkOf(deps.db))))
  const key = JSON.stringify([repoId, viewer?.id ?? 0, filter.state ?? '', filter.sort ?? '', filter.milestone ?? 0, filter.labels ?? '', filter.poster ?? '', page.limit, page.offset])
  return cache.get(key, make)
}
