import type { PackageFileRow, PackageRow, PackageVersionRow } from '../db/schema'
import type { AppDeps } from '../deps'
import type { UserRow } from '../auth/caller'
import { isoTime } from '../lib/time'
import { webUrl } from '../lib/urls'
import { usersByIds } from './people'
import { userConverter } from './user'

/** A version with its package, as the Package record shows it. */
type PackageVersionOf = { pkg: PackageRow; version: PackageVersionRow }

/**
 * The Package record (Gitea's modules/structs/package.go), one per version: its owner's and
 * creator's User records (the Ghost for a deleted account), read in one batch; `repository` is
 * null (Warren links no package to a repository); `html_url` is the version's page address as
 * Gitea builds it, from the lower-case name and version.
 */
export async function packagesToApi(deps: AppDeps, viewer: UserRow | null, rows: PackageVersionOf[]) {
  const people = await usersByIds(deps, rows.flatMap((r) => [r.pkg.ownerId, r.version.creatorId]))
  const user = userConverter(deps.config, viewer)
  return rows.map(({ pkg, version }) => {
    const owner = people.get(pkg.ownerId)
    return {
      id: version.id,
      owner: user(owner),
      repository: null,
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
