import { isObjectId, type GitRepo } from '../../git/run'
import { resolveObject } from '../../git/objects'
import { walkTree, type TreeEntry } from '../../git/tree'

/**
 * Pages of a tree (Gitea's GetTreeBySHA): its entries in git's order, `per_page` of them (WARREN_DEFAULT_GIT_TREES_PER_PAGE,
 * Gitea's DEFAULT_GIT_TREES_PER_PAGE: 1000 by default and at most), with their number. git's listing is read as it arrives: entries outside
 * the page are counted, not kept, and the count stops at WARREN_MAX_TREE_ENTRIES (the page then
 * says `truncated`).
 *
 * What an object id names never changes, so the listing of a tree id (or of a commit id: its
 * tree) is kept in memory once read, when it is small enough, and later pages and requests are
 * answered from it without git. The cache is per repository (an id seen in one repository says
 * nothing about another) and bounded by the number of entries it holds, least recently used
 * first out.
 */

export interface TreePage {
  /** The id the name resolved to (a commit's own id for a commit, branch or tag; else the tree's), as Gitea shows it. */
  sha: string
  entries: TreeEntry[]
  total: number
  page: number
  /** Entries per page, as clamped. */
  perPage: number
  truncated: boolean
}

/** A listing of at most this many entries is cached. */
const CACHED_TREE_MAX = 20_000
/** Entries held by the cache, all listings together. */
const CACHE_ENTRIES = 200_000

interface Listing {
  sha: string
  entries: TreeEntry[]
}

const cache = new Map<string, Listing>()
let cachedEntries = 0

function remember(key: string, listing: Listing): void {
  cache.set(key, listing)
  cachedEntries += listing.entries.length
  for (const [oldKey, old] of cache) {
    if (cachedEntries <= CACHE_ENTRIES) break
    cache.delete(oldKey)
    cachedEntries -= old.entries.length
  }
}

function recall(key: string): Listing | undefined {
  const hit = cache.get(key)
  if (hit) {
    // Most recently used last: Map keeps insertion order.
    cache.delete(key)
    cache.set(key, hit)
  }
  return hit
}

const keyOf = (repoId: number, recursive: boolean, id: string) => `${repoId}\0${recursive ? 'r' : ''}\0${id}`

const pageOf = (listing: Listing, page: number, perPage: number, capped: boolean): TreePage => {
  const start = (page - 1) * perPage
  const entries = listing.entries.slice(start, start + perPage)
  return { sha: listing.sha, entries, total: listing.entries.length, page, perPage, truncated: capped || start + perPage < listing.entries.length }
}

/**
 * A page of the tree `name` leads to, or null when it names no tree, commit or tag of one.
 * `repoId` keys the cache.
 */
export async function readTreePage(
  git: GitRepo,
  repoId: number,
  name: string,
  opts: { recursive: boolean; page?: number; perPage?: number; pageSize: number },
  maxEntries: number,
): Promise<TreePage | null> {
  const perPage = opts.perPage && opts.perPage > 0 ? Math.min(Math.floor(opts.perPage), opts.pageSize) : opts.pageSize
  const page = opts.page && opts.page > 0 ? Math.min(Math.floor(opts.page), Math.floor(Number.MAX_SAFE_INTEGER / perPage)) : 1
  const byId = isObjectId(name)
  const key = keyOf(repoId, opts.recursive, name)
  const hit = byId ? recall(key) : undefined
  if (hit) return pageOf(hit, page, perPage, false)

  const found = await resolveObject(git, name, 'tree')
  if (!found?.peeled) return null
  const sha = found.object.type === 'tag' ? found.peeled.oid : found.object.oid
  const byName = byId ? undefined : recall(keyOf(repoId, opts.recursive, sha))
  if (byName) return pageOf(byName, page, perPage, false)
  const start = (page - 1) * perPage
  const kept: TreeEntry[] = []
  let all: TreeEntry[] | null = []
  let total = 0
  let capped = false
  const listed = await walkTree(git, found.peeled.oid, { recursive: opts.recursive }, (entry) => {
    if (total >= maxEntries) {
      capped = true
      return false
    }
    if (total >= start && total < start + perPage) kept.push(entry)
    if (all) {
      all.push(entry)
      if (all.length > CACHED_TREE_MAX) all = null
    }
    total++
  })
  if (!listed) return null
  if (all && !capped) remember(byId ? key : keyOf(repoId, opts.recursive, sha), { sha, entries: all })
  return { sha, entries: kept, total, page, perPage, truncated: capped || start + perPage < total }
}
