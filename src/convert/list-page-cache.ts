import type { AppDeps } from '../deps'
import type { RepoContext } from '../auth/repo-context'
import { PageCache, pageCacheOf } from '../db/page-cache'
import { JSON_TYPE } from '../lib/checked-json'
import { listHeaders, type Page } from '../lib/pagination'

/** A page of a list's records as the JSON text of its answer, with the list's total. */
export interface ListPageText {
  json: string
  total: number
}

/** A page as kept: its JSON text's bytes (each answer's body shares them, not encoding the text again), and the list's total. */
interface KeptPage {
  body: Blob
  total: number
}

/** What a repository list route's handler has that its page depends on or is answered with. */
export interface ListPageRoute {
  /** The repository and the viewer (records carry what that viewer may see). */
  repo: Pick<RepoContext, 'repo' | 'caller'>
  /** The filter, as the route's query schema parsed it. */
  query: object
  page: Page
  request: Request
}

/**
 * The responder of one repository list route (the issue list, the pull request list) whose pages
 * are kept as their JSON text: `respondListPage(deps, route, make)` answers the page `make()`
 * gives (the rows, then the records, checked and serialised), made once while the database is
 * unchanged (the one page cache, `db/page-cache.ts`), at most `pagesKept` of them, with the
 * list's headers. The key names everything the page depends on: the repository, the viewer, the
 * filter and the page.
 */
export function listPageCache(kind: string, pagesKept: number) {
  const name = `list:${kind}`
  return async function respondListPage(deps: AppDeps, route: ListPageRoute, make: () => Promise<ListPageText>): Promise<Response> {
    const { repo: ctx, query, page } = route
    const viewer = ctx.caller.user
    const key = JSON.stringify([ctx.repo.id, viewer?.id ?? 0, viewer?.publicOnly ?? false, query, page.limit, page.offset])
    const cache = pageCacheOf(deps.db, name, () => new PageCache<Promise<KeptPage>>(deps.db, { maxCost: pagesKept }))
    const found = await cache.getOrMake(key, () => make().then(({ json, total }) => ({ body: new Blob([json]), total })))
    // The list's headers on the Response itself: with none in Elysia's `set`, Elysia sends the
    // Response as it is, where it would copy it to add them (its body read again as a stream).
    return new Response(found.body, { headers: { 'content-type': JSON_TYPE, ...listHeaders(deps.config, route.request, page, found.total) } })
  }
}
