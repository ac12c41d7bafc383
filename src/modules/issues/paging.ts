import type { Config } from '../../config'
import { pageOf, setPageHeaders } from '../../lib/pagination'

/**
 * The slice of a whole, ordered list a caller asked for. Gitea 1.3 answered labels, milestones,
 * comments and tracked times unpaged, so without `page` and `limit` the whole list is answered
 * (with X-Total-Count); with either, a page with X-Total-Count and Link.
 */
export function pageOfWholeList<T>(
  config: Config,
  request: Request,
  set: { headers: Record<string, any> },
  query: { page?: number; limit?: number },
  all: T[],
): T[] {
  if (query.page === undefined && query.limit === undefined) {
    set.headers['X-Total-Count'] = String(all.length)
    return all
  }
  const page = pageOf(query)
  setPageHeaders(set, config, request, page, all.length)
  return all.slice(page.offset, page.offset + page.limit)
}
