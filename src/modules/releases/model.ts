import { t } from 'elysia'
import { Int, UserSchema } from '../users/model'
import { pageQueryFields } from '../../lib/pagination'
import { MAX_TEXT, MAX_TITLE } from '../../lib/validate'
import { AttachmentSchema } from '../attachments/model'

export { AttachmentSchema, EditAttachmentOptions, UploadQuery } from '../attachments/model'

/** Longest tag name taken (Gitea's column is 255; git's own limit is far above). */
export const MAX_TAG_NAME = 255
/** Longest `target_commitish` (a branch name or a commit id). */
export const MAX_TARGET = 255

/** The Release record (with modern Gitea's `html_url` and `upload_url`). */
export const ReleaseSchema = t.Object(
  {
    id: Int(),
    tag_name: t.String(),
    target_commitish: t.String(),
    name: t.String(),
    body: t.String(),
    url: t.String(),
    html_url: t.String(),
    tarball_url: t.String(),
    zipball_url: t.String(),
    upload_url: t.String(),
    draft: t.Boolean(),
    prerelease: t.Boolean(),
    created_at: t.String(),
    published_at: t.String(),
    author: UserSchema,
    assets: t.Array(AttachmentSchema),
  },
  { $id: '#/components/schemas/Release' },
)

/** CreateReleaseOption. */
export const CreateReleaseOption = t.Object(
  {
    tag_name: t.String({ maxLength: MAX_TAG_NAME }),
    target_commitish: t.Optional(t.String({ maxLength: MAX_TARGET })),
    name: t.Optional(t.String({ maxLength: MAX_TITLE })),
    body: t.Optional(t.String({ maxLength: MAX_TEXT })),
    draft: t.Optional(t.Boolean()),
    prerelease: t.Optional(t.Boolean()),
  },
  { $id: '#/components/schemas/CreateReleaseOption' },
)

/** EditReleaseOption: an empty or absent string leaves the value as it is (Gitea). */
export const EditReleaseOption = t.Object(
  {
    tag_name: t.Optional(t.String({ maxLength: MAX_TAG_NAME })),
    target_commitish: t.Optional(t.String({ maxLength: MAX_TARGET })),
    name: t.Optional(t.String({ maxLength: MAX_TITLE })),
    body: t.Optional(t.String({ maxLength: MAX_TEXT })),
    draft: t.Optional(t.Boolean()),
    prerelease: t.Optional(t.Boolean()),
  },
  { $id: '#/components/schemas/EditReleaseOption' },
)

/** A release list's query: the page, and Gitea's `draft` / `pre-release` filters. */
export const ListReleasesQuery = t.Object({
  ...pageQueryFields,
  draft: t.Optional(t.Boolean({ description: 'only drafts (true) or no drafts (false); drafts are listed to writers only' })),
  'pre-release': t.Optional(t.Boolean({ description: 'only pre-releases (true) or no pre-releases (false)' })),
})


export const ReleaseParams = t.Object({ owner: t.String(), repo: t.String(), id: t.String({ description: 'id of the release' }) })
export const TagParams = t.Object({ owner: t.String(), repo: t.String(), tag: t.String({ description: 'tag name of the release' }) })
export const AssetParams = t.Object({
  owner: t.String(),
  repo: t.String(),
  id: t.String({ description: 'id of the release' }),
  asset: t.String({ description: 'id of the attachment' }),
})
export const AttachmentUuidParams = t.Object({ uuid: t.String({ maxLength: 64 }) })
