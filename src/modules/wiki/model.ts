import { t } from 'elysia'
import { MAX_TEXT } from '../../lib/validate'
import { Int } from '../users/model'

/** The longest title and page name (in the path) taken: a page's file name grows up to three times its title when escaped. */
export const MAX_WIKI_TITLE = 255
export const MAX_PAGE_NAME = 1024

export const WikiPageParams = t.Object({ owner: t.String(), repo: t.String(), pageName: t.String({ maxLength: MAX_PAGE_NAME }) })

const CommitUserSchema = t.Object({ name: t.String(), email: t.String(), date: t.String() })

/** Gitea's WikiCommit (its committer's key is `commiter`). */
export const WikiCommitSchema = t.Object(
  { sha: t.String(), author: CommitUserSchema, commiter: CommitUserSchema, message: t.String() },
  { $id: '#/components/schemas/WikiCommit' },
)

const metaFields = {
  title: t.String(),
  html_url: t.String(),
  sub_url: t.String({ description: 'The page\'s web path: the name the page routes take' }),
  last_commit: t.Nullable(WikiCommitSchema),
}

export const WikiPageMetaDataSchema = t.Object(metaFields, { $id: '#/components/schemas/WikiPageMetaData' })

export const WikiPageSchema = t.Object(
  {
    ...metaFields,
    content_base64: t.String({ description: "Page content, base64 encoded ('' past WARREN_MAX_BLOB_SIZE)" }),
    commit_count: Int(),
    sidebar: t.String(),
    footer: t.String(),
  },
  { $id: '#/components/schemas/WikiPage' },
)

export const WikiCommitListSchema = t.Object({ commits: t.Array(WikiCommitSchema), count: Int() }, { $id: '#/components/schemas/WikiCommitList' })

/** CreateWikiPageOptions (also the edit's body: a title there renames the page). */
export const CreateWikiPageOptions = t.Object(
  {
    title: t.Optional(t.String({ maxLength: MAX_WIKI_TITLE, description: 'page title. leave empty to keep unchanged' })),
    content_base64: t.Optional(t.String({ description: 'content must be base64 encoded' })),
    message: t.Optional(t.String({ maxLength: MAX_TEXT, description: 'optional commit message summarizing the change' })),
  },
  { $id: '#/components/schemas/CreateWikiPageOptions' },
)
