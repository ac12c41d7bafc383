import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../lib/pagination'
import { MAX_ASSETS_PER_RELEASE } from '../releases/service'
import { allowedTypesText } from '../attachments/files'
import { Int } from '../users/model'

const MiB = 1024 * 1024

const GeneralAPISettings = t.Object(
  { max_response_items: Int(), default_paging_num: Int(), default_git_trees_per_page: Int(), default_max_blob_size: Int() },
  { $id: '#/components/schemas/GeneralAPISettings' },
)
const GeneralRepoSettings = t.Object(
  {
    mirrors_disabled: t.Boolean(),
    http_git_disabled: t.Boolean(),
    migrations_disabled: t.Boolean(),
    stars_disabled: t.Boolean(),
    time_tracking_disabled: t.Boolean(),
    lfs_disabled: t.Boolean(),
  },
  { $id: '#/components/schemas/GeneralRepoSettings' },
)
const GeneralUISettings = t.Object(
  { default_theme: t.String(), allowed_reactions: t.Array(t.String()), custom_emojis: t.Array(t.String()) },
  { $id: '#/components/schemas/GeneralUISettings' },
)
const GeneralAttachmentSettings = t.Object(
  { enabled: t.Boolean(), allowed_types: t.String(), max_size: Int(), max_files: Int() },
  { $id: '#/components/schemas/GeneralAttachmentSettings' },
)

/** Gitea's global settings as clients read them, from Warren's own. */
export const settingsModule = (deps: AppDeps, api: AreaApp) => {
  const { config } = deps
  return area(api, { tags: ['settings'] })
    .get(
      '/settings/api',
      () => ({
        max_response_items: MAX_PAGE_SIZE,
        default_paging_num: DEFAULT_PAGE_SIZE,
        default_git_trees_per_page: config.gitTreesPerPage,
        default_max_blob_size: config.maxBlobSize,
      }),
      { scope: 'none', response: { 200: GeneralAPISettings }, detail: { operationId: 'getGeneralAPISettings', summary: 'Get the global API settings: page sizes and limits' } },
    )
    .get(
      '/settings/repository',
      // Git over HTTP, migrations, stars and time tracking are all served, mirrors unless turned off; Git LFS is not.
      () => ({ mirrors_disabled: !config.mirrorEnabled, http_git_disabled: false, migrations_disabled: false, stars_disabled: false, time_tracking_disabled: false, lfs_disabled: true }),
      { scope: 'none', response: { 200: GeneralRepoSettings }, detail: { operationId: 'getGeneralRepositorySettings', summary: 'Get the global repository settings: which features are served' } },
    )
    .get(
      '/settings/ui',
      // Warren has no web pages: no theme, and no custom emoji images to show.
      () => ({ default_theme: '', allowed_reactions: config.reactions, custom_emojis: [] as string[] }),
      { scope: 'none', response: { 200: GeneralUISettings }, detail: { operationId: 'getGeneralUISettings', summary: 'Get the global UI settings: the reactions accepted' } },
    )
    .get(
      '/settings/attachment',
      // Issues' and comments' attachments of the allowed types (release assets of any type); Gitea
      // counts the size in MiB. One file per upload, at most MAX_ASSETS_PER_RELEASE on one holder.
      () => ({ enabled: true, allowed_types: allowedTypesText(config), max_size: Math.floor(config.maxAttachmentSize / MiB), max_files: MAX_ASSETS_PER_RELEASE }),
      { scope: 'none', response: { 200: GeneralAttachmentSettings }, detail: { operationId: 'getGeneralAttachmentSettings', summary: 'Get the global attachment settings: size and number limits' } },
    )
}
