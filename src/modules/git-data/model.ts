import { t } from 'elysia'
import { PayloadCommitVerificationSchema } from '../branches/model'
import { Int } from '../users/model'
import { CommitSchema } from '../pulls/model'
import { commitSwitches } from '../commits/model'
import { numeric } from '../../lib/validate'

const GitObjectSchema = t.Object({ sha: t.String(), type: t.String(), url: t.String() }, { $id: '#/components/schemas/GitObject' })

export const ReferenceSchema = t.Object({ ref: t.String(), url: t.String(), object: GitObjectSchema }, { $id: '#/components/schemas/Reference' })

/** A list, or (as Gitea) the one reference whose name is exactly the one asked for. */
export const ReferencesAnswer = t.Union([t.Array(ReferenceSchema), ReferenceSchema])

const GitEntrySchema = t.Object(
  { path: t.String(), mode: t.String(), type: t.String(), size: Int(), sha: t.String(), url: t.String() },
  { $id: '#/components/schemas/GitEntry' },
)

export const GitTreeResponseSchema = t.Object(
  {
    sha: t.String(),
    url: t.String(),
    tree: t.Array(GitEntrySchema),
    truncated: t.Boolean({ description: 'more entries follow this page (or the tree has more than WARREN_MAX_TREE_ENTRIES)' }),
    page: Int(),
    total_count: Int({ description: 'entries in the tree (counted up to WARREN_MAX_TREE_ENTRIES)' }),
  },
  { $id: '#/components/schemas/GitTreeResponse' },
)

export const TreeQuery = t.Object({
  recursive: t.Optional(t.String({ maxLength: 16, description: 'list every entry below the tree, by its whole path' })),
  page: t.Optional(numeric({ description: 'page number (1-based)' })),
  per_page: t.Optional(numeric({ description: 'entries per page (default and most: WARREN_DEFAULT_GIT_TREES_PER_PAGE, 1000)' })),
})

export const GitBlobSchema = t.Object(
  {
    sha: t.String(),
    url: t.String(),
    size: Int(),
    encoding: t.Nullable(t.String()),
    content: t.Nullable(t.String({ description: 'base64; null for a blob over WARREN_MAX_BLOB_SIZE' })),
  },
  { $id: '#/components/schemas/GitBlobResponse' },
)


export const AnnotatedTagSchema = t.Object(
  {
    tag: t.String(),
    sha: t.String(),
    url: t.String(),
    message: t.String(),
    tagger: t.Object({ name: t.String(), email: t.String(), date: t.String() }),
    object: t.Object({ type: t.String(), sha: t.String(), url: t.String() }, { $id: '#/components/schemas/AnnotatedTagObject' }),
    verification: PayloadCommitVerificationSchema,
  },
  { $id: '#/components/schemas/AnnotatedTag' },
)

export const NoteSchema = t.Object({ message: t.String(), commit: CommitSchema }, { $id: '#/components/schemas/Note' })

export const NoteQuery = t.Object({ verification: commitSwitches.verification, files: commitSwitches.files })

export const LanguagesSchema = t.Record(t.String(), Int(), { description: 'bytes of each language in the default branch' })

export const ShaParams = t.Object({ owner: t.String(), repo: t.String(), sha: t.String({ maxLength: 255 }) })
