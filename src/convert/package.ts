import { and, eq, inArray } from 'drizzle-orm'
import { repositories, type PackageFileRow, type PackageRow, type PackageVersionRow } from '../db/schema'
import type { AppDeps } from '../deps'
import type { UserRow } from '../auth/caller'
import { AccessMode, accessLevels } from '../auth/access'
import { reposToApi, type ApiRepo } from './repo'
import { isoTime } from '../lib/time'
import { webUrl } from '../lib/urls'
import { usersByIds } from './people'
import { userConverter } from './user'

/** A version with its package, as the Package record shows it. */
type PackageVersionOf = { pkg: PackageRow; version: PackageVersionRow }

/**
 * The Package record (Gitea's modules/structs/package.go), one per version: its owner's and
 * creator's User records (the Ghost for a deleted account), read in one batch; `repository` the
 * Repository record of the repository it is linked to when the viewer may read it (Gitea's
 * ToPackage), null otherwise; `html_url` is the version's page address as Gitea builds it, from
 * the lower-case name and version.
 */
export async function packagesToApi(deps: AppDeps, viewer: UserRow | null, rows: PackageVersionOf[]) {
  const [people, linked] = await Promise.all([usersByIds(deps, rows.flatMap((r) => [r.pkg.ownerId, r.version.creatorId])), linkedRepos(deps, viewer, rows.map((r) => r.pkg))])
  const user = userConverter(deps.config, viewer)
  return rows.map(({ pkg, version }) => {
    const owner = people.get(pkg.ownerId)
    return {
      id: version.id,
      owner: user(owner),
      repository: (pkg.repoId !== null && linked.get(pkg.repoId)) || null,
      creator: user(people.get(version.creatorId)),
      type: pkg.type,
      name: pkg.name,
      version: version.version,
      html_url: webUrl(
        deps.config,
        `${encodeURIComponent(owner?.name ?? '')}/-/packages/${encodeURIComponent(pkg.type)}/${encodeURIComponent(pkg.lowerName)}/${encodeURIComponent(version.lowerVersion)}`,
      ),
      created_at: isoTime(version.createdUnix),
    }
  })
}

/** The Repository records of the repositories the packages are linked to that `viewer` may read, by id (one read of the rows, one of the access). */
export async function linkedRepos(deps: AppDeps, viewer: UserRow | null, pkgs: Pick<PackageRow, 'repoId'>[]): Promise<Map<number, ApiRepo>> {
  const ids = [...new Set(pkgs.map((p) => p.repoId).filter((id): id is number => id !== null))]
  if (ids.length === 0) return new Map()
  const repos = await deps.db.select().from(repositories).where(and(inArray(repositories.id, ids), eq(repositories.status, 'ready')))
  const modes = await accessLevels(deps.db, viewer, repos)
  const readable = repos.filter((r) => (modes.get(r.id) ?? AccessMode.None) >= AccessMode.Read)
  const records = await reposToApi(deps, viewer, readable)
  return new Map(records.map((r) => [r.id, r]))
}

/** The PackageFile record (Gitea's field `Size` is spelled with a capital). */
export const toApiPackageFile = (file: PackageFileRow) => ({
  id: file.id,
  Size: file.size,
  name: file.name,
  md5: file.md5,
  sha1: file.sha1,
  sha256: file.sha256,
  sha512: file.sha512,
})
