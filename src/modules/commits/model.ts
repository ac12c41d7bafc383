import { t } from 'elysia'
import { pageQueryFields } from '../../lib/pagination'
import { QueryText } from '../../lib/validate'
import { Int } from '../users/model'
import { ChangedFileSchema, CommitSchema, SwitchField } from '../pulls/model'

/** Gitea's switches of a commit record (each true unless `false`, `0`, ...). */
export const commitSwitches = {
  stat: SwitchField('include diff stats for every commit (default true); false answers `stats: null`'),
  verification: SwitchField("include each commit's signature verification (default true; false answers `verification: null`)"),
  files: SwitchField('include the files each commit changed (default true; at most WARREN_MAX_COMMIT_FILES each)'),
}

/** Longest path accepted in `path` (Linux's PATH_MAX). */
export const MAX_PATH_QUERY = 4096

export const CommitListQuery = t.Object({
  ...pageQueryFields,
  ...commitSwitches,
  sha: QueryText('SHA or branch or tag to start listing commits from (default: the default branch)'),
  path: t.Optional(t.String({ maxLength: MAX_PATH_QUERY, description: 'only commits touching this file or folder' })),
  not: QueryText('commits reachable from this branch, tag or commit are not listed'),
  since: QueryText('only commits committed at or after this time (RFC 3339)'),
  until: QueryText('only commits committed at or before this time (RFC 3339)'),
})

export const CommitQuery = t.Object(commitSwitches)

export const ShaParams = t.Object({ owner: t.String(), repo: t.String(), sha: t.String({ maxLength: 255 }) })
export const RefParams = t.Object({ owner: t.String(), repo: t.String(), ref: t.String({ maxLength: 255 }) })

/** A commit's diff or patch (`…/git/commits/{sha}.diff`, `.patch`): text streamed from git. */
export const CommitDiffText = t.String({ description: 'the diff against the first parent (git diff) or the patch (git format-patch), streamed as text/plain' })

/** Compare (Gitea's), with the files changed from base (or the merge base, for `...`) to head. */
export const CompareSchema = t.Object(
  {
    total_commits: Int(),
    commits: t.Array(CommitSchema, { description: 'newest first, at most WARREN_MAX_COMPARE_COMMITS' }),
    files: t.Array(ChangedFileSchema, { description: 'at most 3000' }),
  },
  { $id: '#/components/schemas/Compare' },
)

export const CompareQuery = t.Object({
  verification: commitSwitches.verification,
  files: commitSwitches.files,
})
