import { t } from 'elysia'
import { PayloadCommitVerificationSchema } from '../branches/model'
import type { TSchema } from '@sinclair/typebox'

/** Longest path (or from_path) a body may name, in characters (git stores longer; nobody needs them). */
export const MAX_PATH_LENGTH = 4096
/** Files one ChangeFilesOptions may change in its one commit. */
export const MAX_CHANGE_FILES = 1000
/** Longest commit message accepted (64 KiB). */
export const MAX_MESSAGE_LENGTH = 65536

const Nullable = <T extends TSchema>(s: T) => t.Union([s, t.Null()])

const Links = t.Object({ self: t.String(), git: Nullable(t.String()), html: Nullable(t.String()) })

/** Gitea's ContentsResponse: a file (with base64 content), a folder, a symlink or a submodule. */
export const ContentsSchema = t.Object(
  {
    name: t.String(),
    path: t.String(),
    sha: t.String(),
    last_commit_sha: t.String(),
    type: t.String({ description: '`file`, `dir`, `symlink` or `submodule`' }),
    // A whole number; t.Integer inside a nullable array item fails Elysia's response check (FilesResponse.files).
    size: t.Number({ description: 'bytes' }),
    encoding: Nullable(t.String()),
    content: Nullable(t.String()),
    target: Nullable(t.String()),
    url: t.String(),
    html_url: Nullable(t.String()),
    git_url: Nullable(t.String()),
    download_url: Nullable(t.String()),
    submodule_git_url: Nullable(t.String()),
    _links: Links,
  },
  { description: "A repository entry's metadata, and a file's content" },
)

/** A file's entry, or a folder's entries (GET …/contents/{filepath}). */
export const ContentsOrList = t.Union([ContentsSchema, t.Array(ContentsSchema)])

const Person = t.Object({ name: t.String(), email: t.String(), date: t.String() })
const CommitMeta = t.Object({ sha: t.String(), url: t.String(), created: t.String() })

export const FileCommitSchema = t.Object({
  sha: t.String(),
  url: t.String(),
  html_url: t.String(),
  created: t.String(),
  author: Person,
  committer: Person,
  message: t.String(),
  parents: t.Array(CommitMeta),
  tree: CommitMeta,
})

/** The written commit's verification: always unsigned (the server signs nothing). */
const Verification = PayloadCommitVerificationSchema

export const FileResponseSchema = t.Object({ content: Nullable(ContentsSchema), commit: FileCommitSchema, verification: Verification })
export const FilesResponseSchema = t.Object({ files: t.Array(Nullable(ContentsSchema)), commit: FileCommitSchema, verification: Verification })

/** Gitea's Identity: who to record as author or committer. */
const Identity = t.Object({
  name: t.Optional(t.String({ maxLength: 255 })),
  email: t.Optional(t.String({ maxLength: 254 })),
})

const CommitDates = t.Object({
  author: t.Optional(t.String({ maxLength: 64 })),
  committer: t.Optional(t.String({ maxLength: 64 })),
})

/** The options every contents write shares (Gitea's FileOptions). */
const fileOptions = {
  branch: t.Optional(t.String({ maxLength: 255 })),
  new_branch: t.Optional(t.String({ maxLength: 255 })),
  message: t.Optional(t.String({ maxLength: MAX_MESSAGE_LENGTH })),
  author: t.Optional(Identity),
  committer: t.Optional(Identity),
  dates: t.Optional(CommitDates),
  signoff: t.Optional(t.Boolean()),
}
export type FileOptions = {
  branch?: string
  new_branch?: string
  message?: string
  author?: { name?: string; email?: string }
  committer?: { name?: string; email?: string }
  dates?: { author?: string; committer?: string }
  signoff?: boolean
}

/** base64 text; its length is bounded by the body limit, its decoded size by WARREN_MAX_BLOB_SIZE. */
const Base64 = t.String({ description: 'base64 of the bytes' })
const Path = t.String({ maxLength: MAX_PATH_LENGTH })

export const CreateFileOptions = t.Object({ ...fileOptions, content: Base64 })
export const UpdateFileOptions = t.Object({ ...fileOptions, content: Base64, sha: t.String({ maxLength: 64 }), from_path: t.Optional(Path) })
export const DeleteFileOptions = t.Object({ ...fileOptions, sha: t.String({ maxLength: 64 }) })

export const ChangeFileOperation = t.Object({
  operation: t.Union([t.Literal('create'), t.Literal('update'), t.Literal('delete')]),
  path: Path,
  content: t.Optional(Base64),
  from_path: t.Optional(Path),
  sha: t.Optional(t.String({ maxLength: 64 })),
})
export const ChangeFilesOptions = t.Object({ ...fileOptions, files: t.Array(ChangeFileOperation, { minItems: 1, maxItems: MAX_CHANGE_FILES }) })

/** POST …/diffpatch: Gitea's ApplyDiffPatchFileOptions (UpdateFileOptions in gitea-js): `content` is the patch, as text. */
export const DiffPatchOptions = t.Object({
  ...fileOptions,
  content: t.String({ description: 'the patch (git diff / format-patch output)' }),
  sha: t.Optional(t.String({ maxLength: 64 })),
  from_path: t.Optional(Path),
})
