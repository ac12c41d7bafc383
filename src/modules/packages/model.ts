import { t } from 'elysia'
import { pageQueryFields } from '../../lib/pagination'
import { QueryText } from '../../lib/validate'
import { Int, UserSchema } from '../users/model'
import { RepositorySchema } from '../repos/model'

/** The Package record (one version of a package). */
export const PackageSchema = t.Object(
  {
    id: Int(),
    owner: UserSchema,
    repository: t.Union([RepositorySchema, t.Null()]),
    creator: UserSchema,
    type: t.String(),
    name: t.String(),
    version: t.String(),
    html_url: t.String(),
    created_at: t.String({ format: 'date-time' }),
  },
  { $id: '#/components/schemas/Package' },
)

/** The PackageFile record. */
export const PackageFileSchema = t.Object(
  {
    id: Int(),
    Size: Int(),
    name: t.String(),
    md5: t.String(),
    sha1: t.String(),
    sha256: t.String(),
    sha512: t.String(),
  },
  { $id: '#/components/schemas/PackageFile' },
)

export const OwnerParams = t.Object({ owner: t.String() })
export const VersionParams = t.Object({ owner: t.String(), type: t.String(), name: t.String(), version: t.String() })
export const GenericVersionParams = t.Object({ owner: t.String(), name: t.String(), version: t.String() })
export const GenericFileParams = t.Object({ owner: t.String(), name: t.String(), version: t.String(), filename: t.String() })

/** listPackages' query: Gitea's paging, the type and a part of the name. */
export const PackageListQuery = t.Object({
  ...pageQueryFields,
  type: t.Optional(t.String({ maxLength: 32, description: 'package type filter' })),
  q: QueryText('name filter'),
})
