import type { AttachmentRow, ReleaseRow } from '../db/schema'
import type { AppDeps } from '../deps'
import type { Config } from '../config'
import type { UserRow } from '../auth/caller'
import type { RepoContext } from '../auth/repo-context'
import { usersByIds } from './people'
import { userConverter, type ApiUser } from './user'
import { isoTime } from '../lib/time'
import { attachmentsOfReleases, toApiAttachment } from './attachment'
import { apiUrl, webUrl } from '../lib/urls'
import { repoPath, type RepoRef } from './issue'

/** A tag name in a URL path: each of its segments encoded, its slashes kept (Gitea's PathEscapeSegments). */
export const tagPath = (tag: string) => tag.split('/').map(encodeURIComponent).join('/')

/**
 * The Release record (with modern Gitea's `html_url` and `upload_url`):
 * `author` is the publisher's User record (the Ghost for a deleted account), `assets` its
 * attachments, oldest first.
 */
export function toApiRelease(config: Config, repo: RepoRef, row: ReleaseRow, author: ApiUser, assets: AttachmentRow[]) {
  const path = repoPath(repo)
  return {
    id: row.id,
    tag_name: row.tagName,
    target_commitish: row.target,
    name: row.title,
    body: row.note,
    url: apiUrl(config, `repos/${path}/releases/${row.id}`),
    html_url: webUrl(config, `${path}/releases/tag/${tagPath(row.tagName)}`),
    tarball_url: webUrl(config, `${path}/archive/${tagPath(row.tagName)}.tar.gz`),
    zipball_url: webUrl(config, `${path}/archive/${tagPath(row.tagName)}.zip`),
    upload_url: apiUrl(config, `repos/${path}/releases/${row.id}/assets`),
    draft: row.isDraft,
    prerelease: row.isPrerelease,
    created_at: isoTime(row.createdUnix),
    published_at: isoTime(row.createdUnix),
    author,
    assets: assets.map((a) => toApiAttachment(config, a)),
  }
}
export type ApiRelease = ReturnType<typeof toApiRelease>

/** Release records of rows of one repository: publishers and assets in one query each. */
export async function releasesToApi(deps: AppDeps, repo: RepoRef, rows: ReleaseRow[], viewer: UserRow | null): Promise<ApiRelease[]> {
  if (rows.length === 0) return []
  const publishers = await usersByIds(deps, rows.map((r) => r.publisherId))
  const assets = await attachmentsOfReleases(deps, rows.map((r) => r.id))
  const author = userConverter(deps.config, viewer)
  return rows.map((row) => toApiRelease(deps.config, repo, row, author(publishers.get(row.publisherId)), assets.get(row.id) ?? []))
}

export const releaseToApi = async (deps: AppDeps, ctx: RepoContext, row: ReleaseRow): Promise<ApiRelease> => (await releasesToApi(deps, ctx.repo, [row], ctx.caller.user))[0]!
