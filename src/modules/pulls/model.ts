import { t } from 'elysia'
import { BoundedList, ListName, MAX_QUERY_TEXT, MAX_TEXT, MAX_TITLE, QueryFilter, numeric, integer } from '../../lib/validate'
import { pageQueryFields } from '../../lib/pagination'
import { literals, recordLiterals } from '../../lib/literals'
import { Int, PlainUserSchema, RepositorySchema } from '../repos/model'
import { LabelSchema, MilestoneSchema } from '../issues/model'
import { TeamSchema } from '../teams/model'
import { PayloadCommitVerificationSchema } from '../branches/model'

/** The merge styles Warren makes (Gitea's MergeStyle; `manually-merged` is not offered). */
export const MERGE_STYLES = ['merge', 'rebase', 'rebase-merge', 'squash', 'fast-forward-only'] as const
export type MergeStyle = (typeof MERGE_STYLES)[number]

/** PRBranchInfo: `repo` is null once that repository is gone. */
export const PRBranchInfoSchema = t.Object(
  { label: t.String(), ref: t.String(), sha: t.String(), repo_id: Int(), repo: t.Nullable(RepositorySchema) },
  { $id: '#/components/schemas/PRBranchInfo' },
)

/** PullRequest, plus `conflicted_files`. */
export const PullRequestSchema = t.Object(
  {
    id: Int(),
    url: t.String(),
    number: Int(),
    user: PlainUserSchema,
    title: t.String(),
    body: t.String(),
    labels: t.Array(LabelSchema),
    milestone: t.Nullable(MilestoneSchema),
    assignee: t.Nullable(PlainUserSchema),
    assignees: t.Array(PlainUserSchema),
    state: recordLiterals(['open', 'closed']),
    is_locked: t.Boolean(),
    comments: Int(),
    html_url: t.String(),
    diff_url: t.String(),
    patch_url: t.String(),
    mergeable: t.Boolean(),
    merged: t.Boolean(),
    merged_at: t.Nullable(t.String()),
    merge_commit_sha: t.Nullable(t.String()),
    merged_by: t.Nullable(PlainUserSchema),
    conflicted_files: t.Array(t.String(), { description: 'paths that conflict when mergeable is false because of conflicts (Warren)' }),
    base: PRBranchInfoSchema,
    head: PRBranchInfoSchema,
    merge_base: t.String(),
    draft: t.Boolean(),
    additions: Int(),
    deletions: Int(),
    changed_files: Int(),
    allow_maintainer_edit: t.Boolean(),
    pin_order: Int(),
    review_comments: Int(),
    requested_reviewers: t.Array(PlainUserSchema),
    requested_reviewers_teams: t.Array(TeamSchema),
    due_date: t.Nullable(t.String()),
    created_at: t.String(),
    updated_at: t.String(),
    closed_at: t.Nullable(t.String()),
  },
  { $id: '#/components/schemas/PullRequest' },
)

export const PullParams = t.Object({ owner: t.String(), repo: t.String(), index: t.String({ description: 'index of the pull request' }) })

/**
 * `…/pulls/{base}/{head}`: the base branch takes the `index` segment's place; the head is the rest
 * of the path (the router's wildcard `*`, still URL-encoded: the service reads it).
 */
export const PullByBranchesParams = t.Object(
  { owner: t.String(), repo: t.String(), index: t.String({ maxLength: 255, description: 'the base branch' }) },
  { additionalProperties: true },
)

const Timestamp = t.String({ maxLength: 64, description: 'RFC 3339 time' })
/** A branch name as a body gives it (refs are at most 255 characters; `owner:` may come first). */
const BranchField = t.String({ maxLength: 512 })

export const CreatePullRequestOption = t.Object(
  {
    head: BranchField,
    base: BranchField,
    title: t.String({ maxLength: MAX_TITLE }),
    body: t.Optional(t.String({ maxLength: MAX_TEXT })),
    assignee: t.Optional(ListName),
    assignees: t.Optional(BoundedList(ListName)),
    milestone: t.Optional(integer()),
    labels: t.Optional(BoundedList(integer())),
    due_date: t.Optional(t.Nullable(Timestamp)),
  },
  { $id: '#/components/schemas/CreatePullRequestOption' },
)

export const EditPullRequestOption = t.Object(
  {
    title: t.Optional(t.String({ maxLength: MAX_TITLE })),
    body: t.Optional(t.String({ maxLength: MAX_TEXT })),
    base: t.Optional(BranchField),
    assignee: t.Optional(t.Nullable(ListName)),
    assignees: t.Optional(BoundedList(ListName)),
    milestone: t.Optional(t.Nullable(integer())),
    labels: t.Optional(BoundedList(integer())),
    state: t.Optional(literals(['open', 'closed'])),
    due_date: t.Optional(t.Nullable(Timestamp)),
    unset_due_date: t.Optional(t.Boolean()),
    allow_maintainer_edit: t.Optional(t.Boolean()),
  },
  { $id: '#/components/schemas/EditPullRequestOption' },
)

/**
 * MergePullRequestOption. Gitea's struct has no JSON tags for its capitalised
 * keys, so Go matches them case-insensitively: the documented keys and their lower-case / snake
 * forms are read. An empty body (or no `Do`) is a plain merge.
 */
const StyleField = () => t.Optional(literals(['', ...MERGE_STYLES]))
const MessageField = () => t.Optional(t.String({ maxLength: MAX_TEXT }))
export const MergePullRequestOption = t.Object(
  {
    Do: StyleField(),
    MergeTitleField: t.Optional(t.String({ maxLength: MAX_TITLE * 4 })),
    MergeMessageField: MessageField(),
    do: StyleField(),
    merge_title_field: t.Optional(t.String({ maxLength: MAX_TITLE * 4 })),
    merge_message_field: MessageField(),
    head_commit_id: t.Optional(t.String({ maxLength: 64, description: 'refuse (409) unless the head is still this commit' })),
    force_merge: t.Optional(t.Boolean({ description: 'a repository admin merges past unmet branch protection rules' })),
    merge_when_checks_succeed: t.Optional(t.Boolean({ description: 'unless the pull request is ready now, schedule its merge for when its status checks succeed (201)' })),
    delete_branch_after_merge: t.Optional(t.Boolean({ description: 'delete the head branch once merged' })),
  },
  { $id: '#/components/schemas/MergePullRequestOption' },
)

export const PULL_SORTS = ['', 'oldest', 'recentupdate', 'leastupdate', 'mostcomment', 'leastcomment', 'priority'] as const

export const ListPullsQuery = t.Object({
  ...pageQueryFields,
  state: t.Optional(literals(['', 'open', 'closed', 'all'], { description: 'open (default), closed or all' })),
  sort: t.Optional(literals(PULL_SORTS, { description: 'newest first by default' })),
  milestone: t.Optional(numeric({ description: 'only pull requests of this milestone id' })),
  labels: QueryFilter('comma-separated label ids (at most 50); pull requests having all of them'),
  poster: t.Optional(t.String({ maxLength: MAX_QUERY_TEXT, description: 'only pull requests opened by this user' })),
})

/**
 * A switch as Gitea's `ctx.FormBool` reads one (strconv.ParseBool), absent or empty meaning
 * `fallback`: `1`, `t`, `true` (any case of the word) are true, anything else false.
 */
export const formSwitch = (value: string | undefined, fallback: boolean): boolean =>
  value === undefined || value === '' ? fallback : ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)

/** A Gitea switch in a query (read with formSwitch). */
export const SwitchField = (description: string) => t.Optional(t.String({ maxLength: 16, description }))

/** `…/pulls/{index}` (and `{index}.diff`, `.patch`): the download's switch. */
export const PullGetQuery = t.Object({
  binary: SwitchField('`.diff` only: include binary files as git binary patches, so that `git apply` applies it (default false; a `.patch` always does)'),
})

/** `…/pulls/{index}/update`: how the base is brought into the head branch. */
export const UpdatePullQuery = t.Object({
  style: t.Optional(literals(['', 'merge', 'rebase'], { description: 'merge (default): a merge commit of the base on the head; rebase: the head commits replayed on the base' })),
})

/** `…/pulls/{index}/commits`: Gitea 1.23's switches besides the page. */
export const PullCommitsQuery = t.Object({
  ...pageQueryFields,
  verification: SwitchField("include each commit's signature verification (default true; false answers `verification: null`)"),
  files: SwitchField('include the files each commit changed (default true); false answers `files: null` and reads no file list'),
})

/** A pull request's diff or patch (`…/pulls/{index}.diff`, `.patch`): text streamed from git. */
export const PullDiffText = t.String({ description: 'the diff (git diff) or the patch series (git format-patch), streamed as text/plain' })

const CommitUserSchema = t.Object({ name: t.String(), email: t.String(), date: t.String() }, { $id: '#/components/schemas/CommitUser' })
export const CommitMetaSchema = t.Object({ url: t.String(), sha: t.String(), created: t.Optional(t.String()) }, { $id: '#/components/schemas/CommitMeta' })

/** Commit (Gitea's, as `…/pulls/{index}/commits` lists them): `author` / `committer` are the accounts owning the e-mails, or null. */
export const CommitSchema = t.Object(
  {
    url: t.String(),
    sha: t.String(),
    created: t.String(),
    html_url: t.String(),
    commit: t.Object(
      {
        url: t.String(),
        author: CommitUserSchema,
        committer: CommitUserSchema,
        message: t.String(),
        tree: CommitMetaSchema,
        verification: t.Nullable(PayloadCommitVerificationSchema),
      },
      { $id: '#/components/schemas/RepoCommit' },
    ),
    author: t.Nullable(PlainUserSchema),
    committer: t.Nullable(PlainUserSchema),
    parents: t.Array(CommitMetaSchema),
    files: t.Nullable(t.Array(t.Object({ filename: t.String(), status: t.String() }, { $id: '#/components/schemas/CommitAffectedFiles' })), {
      description: 'the files changed against the first parent (none for a merge); null with `files=false`',
    }),
    files_truncated: t.Optional(
      t.Boolean({ description: 'the commit changed more files than `files` lists (at most WARREN_MAX_COMMIT_FILES are listed) (Warren)' }),
    ),
    stats: t.Nullable(t.Object({ total: Int(), additions: Int(), deletions: Int() }, { $id: '#/components/schemas/CommitStats' }), {
      description: 'lines added and deleted against the first parent; null with `stat=false`',
    }),
  },
  { $id: '#/components/schemas/Commit' },
)

/** ChangedFile (Gitea's): a file a pull request changes, with its line counts; `previous_filename` for renames. */
export const ChangedFileSchema = t.Object(
  {
    filename: t.String(),
    previous_filename: t.Optional(t.String()),
    status: t.String({ description: 'added, deleted, renamed, copied, changed or unchanged' }),
    additions: Int(),
    deletions: Int(),
    changes: Int(),
    html_url: t.String(),
    contents_url: t.String(),
    raw_url: t.String(),
  },
  { $id: '#/components/schemas/ChangedFile' },
)
