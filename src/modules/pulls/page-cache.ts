import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import type { Page } from '../../lib/pagination'
import { listPageCache, type ListPageText } from '../../convert/list-page-cache'
import type { PullFilter } from './service'

/** At most this many pages are kept (about 130 KB of JSON each at 30 per page). */
const PULL_PAGES_KEPT = 32

const pullPages = listPageCache('pulls', PULL_PAGES_KEPT)

/**
 * A page of a repository's pull request list as `viewer` may see it (the controller's `make`:
 * listPulls, then the records as JSON text), made once while the database is unchanged
 * (`convert/list-page-cache.ts`).
 */
export function cachedPullPage(deps: AppDeps, repoId: number, viewer: UserRow | null, filter: PullFilter, page: Page, make: () => Promise<ListPageText>): Promise<ListPageText> {
  return pullPages(deps, [repoId, viewer?.id ?? 0, viewer?.publicOnly ?? false, filter.state ?? '', filter.sort ?? '', filter.milestone ?? 0, filter.labels ?? '', filter.poster ?? '', page.limit, page.offset], make)
}
