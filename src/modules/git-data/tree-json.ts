import { checkedJson } from '../../lib/checked-json'
import type { Config } from '../../config'
import type { RepoRow } from '../../auth/access'
import { toApiTree } from '../../convert/git-data'
import { repoPath } from '../../convert/issue'
import { GitTreeResponseSchema } from './model'
import type { TreePage } from './trees'

/**
 * A page of a tree as its JSON text, kept once made: a tree id's page never changes, and its URLs
 * change only with the repository's path (part of the key), so a page read again (a client
 * walking a large tree, many clients reading the same commit) costs neither building nor
 * checking nor serialising a thousand entries. Checked once here as Elysia checks an answer
 * against its schema (a Response goes out unchecked). Bounded by the characters held, least
 * recently used first out.
 */

const treeJson = checkedJson(GitTreeResponseSchema)
const MAX_CHARS = 32 * 1024 * 1024
const pages = new Map<string, string>()
let held = 0

function build(config: Config, repo: RepoRow, page: TreePage): string {
  return treeJson(toApiTree(config, repo, page))
}

/** The JSON of a tree page (`perPage` as asked, part of what the page holds). */
export function treePageJson(config: Config, repo: RepoRow, page: TreePage, opts: { recursive: boolean; perPage: number }): string {
  const key = `${config.baseUrl}\0${repo.id}\0${repoPath(repo)}\0${page.sha}\0${opts.recursive ? 'r' : ''}\0${page.page}\0${opts.perPage}\0${page.total}`
  const hit = pages.get(key)
  if (hit !== undefined) {
    pages.delete(key)
    pages.set(key, hit)
    return hit
  }
  const json = build(config, repo, page)
  if (json.length > MAX_CHARS / 4) return json
  pages.set(key, json)
  held += json.length
  for (const [oldKey, old] of pages) {
    if (held <= MAX_CHARS) break
    pages.delete(oldKey)
    held -= old.length
  }
  return json
}
