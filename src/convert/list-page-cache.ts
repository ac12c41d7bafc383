import type { AppDeps } from '../deps'
import { PageCache, pageCacheOf } from './page-cache'

/** A page of a list's records as the JSON text of its answer, with the list's total. */
export interface ListPageText {
  json: string
  total: number
}

/**
 * The pages of one list route as their JSON text (the controller's `make`: the rows, then the
 * records, checked and serialised), each made once while the database is unchanged (the one page
 * cache, `page-cache.ts`), at most `pagesKept` of them. The key names everything the page depends
 * on: the repository, the viewer (records carry what that viewer may see), the filter and the page.
 */
export function listPageCache(kind: string, pagesKept: number) {
  return (deps: AppDeps, key: unknown[], make: () => Promise<ListPageText>): Promise<ListPageText> => {
    const cache = pageCacheOf(deps.db, `list:${kind}`, () => new PageCache<Promise<ListPageText>>(deps.db, { maxCost: pagesKept }))
    return cache.getOrMake(JSON.stringify(key), make)
  }
}
