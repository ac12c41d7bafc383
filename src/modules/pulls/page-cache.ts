import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import type { Page } from '../../lib/pagination'
import { PageCache, pageCacheOf } from '../../convert/page-cache'
import type { PullFilter } from './service'

/** At most this many pages are kept (about 130 KB of JSON each at 30 per page). */
const PULL_PAGES_KEPT = 32

/** A page of PullRequest records as the JSON text of its answer, with the list's total. */
export interface PullPageText {
  json: string
  total: number
}

/**
 * A page of a repository's pull request list as `viewer` may see it (the controller's `make`:
 * listPulls, then the records as JSON text), made once while the database is unchanged (the one
 * page cache, `convert/page-cache.ts`). The viewer is part of the key: records carry what that
 * viewer may see.
 */
export async function cachedPullPage(
  deps: AppDeps,
  repoId: number,
  viewer: UserRow | null,
  filter: PullFilter,
  page: Page,
  make: () => Promise<PullPageText>,
): Promise<PullPageText> {
  const cache = pageCacheOf(deps.db, 'pulls', () => new PageCache<Promise<PullPageText>>(deps.db, { maxCost: PULL_PAGES_KEPT }))
  const key = JSON.stringify([repoId, viewer?.id ?? 0, filter.state ?? '', filter.sort ?? '', filter.milestone ?? 0, filter.labels ?? '', filter.poster ?? '', page.limit, page.offset])
  return cache.getOrMake(key, make)
}
