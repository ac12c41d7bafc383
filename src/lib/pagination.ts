import { count, type SQL } from 'drizzle-orm'
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core'
import { t } from 'elysia'
import type { Config } from '../config'
import type { Db } from '../db/client'
import { numeric } from './validate'

/** A list's page size when none is asked for, and the largest one served (Gitea's [api] DEFAULT_PAGING_NUM and MAX_RESPONSE_ITEMS). */
export const DEFAULT_PAGE_SIZE = 30
export const MAX_PAGE_SIZE = 50

/** The `page` and `limit` query parameters every list takes (merge into a route's query schema). */
export const pageQueryFields = {
  page: t.Optional(numeric({ description: 'page number of results to return (1-based)' })),
  limit: t.Optional(numeric({ description: 'page size of results' })),
}
export const PageQuery = t.Object(pageQueryFields)

export interface Page {
  page: number
  limit: number
  offset: number
}

/** A page of rows and the total number of rows across all pages, as every list service returns it. */
export interface Paged<T> {
  rows: T[]
  total: number
}

/**
 * One page of `table`'s rows matching `where`, in `order`, with the total count (LIMIT/OFFSET in
 * SQL, then COUNT only when the page does not tell it: totalOf); with `page` null, every row (one
 * query; see askedPage).
 */
export async function selectPage<T extends SQLiteTable>(
  db: Db,
  table: T,
  where: SQL | undefined,
  order: SQLiteColumn | SQL | (SQLiteColumn | SQL)[],
  page: Page | null,
): Promise<Paged<T['$inferSelect']>> {
  const query = db.select().from(table as SQLiteTable).where(where).orderBy(...[order].flat())
  if (!page) {
    const rows = await query as T['$inferSelect'][]
    return { rows, total: rows.length }
  }
  const rows = (await query.limit(page.limit).offset(page.offset)) as T['$inferSelect'][]
  return { rows, total: await totalOf(page, rows.length, async () => (await db.select({ n: count() }).from(table as SQLiteTable).where(where))[0]!.n) }
}

/**
 * selectPage for prepared statements: `rows` (with `limit` and `offset` placeholders when a page
 * is asked, without for all) and `count`, both given `params`.
 */
export async function preparedPage<Row>(
  statements: { rows: { execute(params: Record<string, unknown>): Promise<unknown> }; count: { execute(params: Record<string, unknown>): Promise<unknown> } },
  params: Record<string, unknown>,
  page: Page | null,
): Promise<Paged<Row>> {
  if (!page) {
    const rows = (await statements.rows.execute(params)) as Row[]
    return { rows, total: rows.length }
  }
  const rows = (await statements.rows.execute({ ...params, limit: page.limit, offset: page.offset })) as Row[]
  return { rows, total: await totalOf(page, rows.length, async () => ((await statements.count.execute(params)) as { n: number }[])[0]!.n) }
}

/**
 * The total of a list whose page (at `page`) held `found` rows: a page that is not full is the
 * last, so the total is its offset and its rows, and `count()` is asked only for a full page or an
 * empty one past the first (most lists fit one page: one statement instead of two).
 */
export async function totalOf(page: Page, found: number, count: () => Promise<number>): Promise<number> {
  return found < page.limit && (found > 0 || page.offset === 0) ? page.offset + found : await count()
}

/**
 * Gitea's paging rules: `page` 1-based (0, negative or absent = 1); `limit` defaults to
 * `defaultLimit` and is clamped to `maxLimit`, never rejected.
 */
export function pageOf(
  query: { page?: number; limit?: number },
  { defaultLimit = DEFAULT_PAGE_SIZE, maxLimit = MAX_PAGE_SIZE } = {},
): Page {
  const limit = query.limit && query.limit > 0 ? Math.min(Math.floor(query.limit), maxLimit) : defaultLimit
  // A huge page (99999999999999999999, 1e400) would make an offset SQLite cannot bind: such a
  // page is past the end of any list anyway, so it is clamped to one that still is.
  const page = query.page && query.page > 0 ? Math.min(Math.floor(query.page), Math.floor(Number.MAX_SAFE_INTEGER / limit)) : 1
  return { page, limit, offset: (page - 1) * limit }
}

/**
 * `X-Total-Count` and a `Link` header (next, last, first, prev) whose URLs keep the request's
 * other query parameters, as modern Gitea sends them.
 */
function pageHeaders(config: Config, request: Request, page: Page, total: number): Record<string, string> {
  const headers: Record<string, string> = {
    'X-Total-Count': String(total),
    'Access-Control-Expose-Headers': 'Link, X-Total-Count',
  }
  const lastPage = Math.max(1, Math.ceil(total / page.limit))
  const url = new URL(request.url)
  // One copy of the query for every link: `page` and `limit` replaced where the request has them
  // (added after its other parameters where it does not), only `page` changing from link to link.
  const params = new URLSearchParams(url.search)
  const base = `<${config.baseUrl}${url.pathname.replace(/^\//, '')}?`
  const linkTo = (n: number, rel: string) => {
    params.set('page', String(n))
    params.set('limit', String(page.limit))
    return `${base}${params.toString()}>; rel="${rel}"`
  }
  const links: string[] = []
  if (page.page < lastPage) links.push(linkTo(page.page + 1, 'next'), linkTo(lastPage, 'last'))
  if (page.page > 1) links.push(linkTo(1, 'first'), linkTo(page.page - 1, 'prev'))
  if (links.length) headers.Link = links.join(',')
  return headers
}

/**
 * For the small collections Gitea answers whole unless a page is asked for (one issue's comments
 * and times, a repository's labels and milestones): the page asked for (`page` or `limit` given),
 * else null, the whole list. Lists that grow without bound use pageOf (a default page) instead.
 */
export function askedPage(query: { page?: number; limit?: number }): Page | null {
  return query.page === undefined && query.limit === undefined ? null : pageOf(query)
}

/** The headers of a list answered from selectPage: X-Total-Count, and the Link header when paged. */
export function listHeaders(config: Config, request: Request, page: Page | null, total: number): Record<string, string> {
  return page ? pageHeaders(config, request, page, total) : { 'X-Total-Count': String(total) }
}

/** Applies listHeaders to Elysia's `set.headers`. */
export function setListHeaders(
  set: { headers: Record<string, string | number> | any },
  config: Config,
  request: Request,
  page: Page | null,
  total: number,
): void {
  Object.assign(set.headers, listHeaders(config, request, page, total))
}
