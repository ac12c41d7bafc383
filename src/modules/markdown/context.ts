import { and, eq, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { repositories } from '../../db/schema'
import { findReadableRepo } from '../repos/queries'

/**
 * The branch a rendering's relative links point into when its context names a repository of this
 * server the viewer may read (`owner/repo`, or its URL under the base URL): that repository's
 * default branch. Undefined otherwise (another server's, or one the viewer may not read): the
 * renderer's own default then.
 */
export async function contextBranch(
  deps: AppDeps,
  viewer: UserRow | null,
  opts: { mode?: string; wiki?: boolean; context?: string },
): Promise<string | undefined> {
  // Only `gfm` links into a branch, and a wiki's links go to the wiki (render.ts linkPlan): no lookup otherwise.
  if (opts.mode !== 'gfm' || opts.wiki) return undefined
  const trimmed = opts.context?.trim() ?? ''
  // As the renderer reads it (render.ts contextUrl): a URL, else a path under the base URL.
  const absolute = /^https?:\/\//i.test(trimmed)
  if (absolute && !trimmed.startsWith(deps.config.baseUrl)) return undefined
  const names = (absolute ? trimmed.slice(deps.config.baseUrl.length) : trimmed).replace(/^\/+|\/+$/g, '').split('/')
  if (names.length !== 2 || !names[0] || !names[1]) return undefined
  const [owner, name] = names.map((n) => n.toLowerCase()) as [string, string]
  const repo = await findReadableRepo(deps, viewer, and(eq(repositories.lowerName, name), sql`lower(${repositories.ownerName}) = ${owner}`)!)
  return repo?.defaultBranch
}
