import { t } from 'elysia'
import { MAX_QUERY_TEXT, QueryText } from '../../lib/validate'
import { Int, PlainUserSchema } from '../users/model'
import { lenientLiterals } from '../../lib/literals'

export { Int, PlainUserSchema }

const PermissionSchema = t.Object({ admin: t.Boolean(), push: t.Boolean(), pull: t.Boolean() }, { $id: '#/components/schemas/Permission' })

const repositoryFields = {
  id: Int(),
  owner: PlainUserSchema,
  name: t.String(),
  full_name: t.String(),
  description: t.String(),
  empty: t.Boolean(),
  private: t.Boolean(),
  fork: t.Boolean(),
  mirror: t.Boolean(),
  size: Int(),
  html_url: t.String(),
  ssh_url: t.String(),
  clone_url: t.String(),
  website: t.String(),
  stars_count: Int(),
  forks_count: Int(),
  watchers_count: Int(),
  open_issues_count: Int(),
  open_pr_counter: Int(),
  release_counter: Int(),
  default_branch: t.String(),
  archived: t.Boolean(),
  created_at: t.String(),
  updated_at: t.String(),
  permissions: t.Optional(PermissionSchema),
  has_issues: t.Boolean(),
  has_wiki: t.Boolean(),
  has_pull_requests: t.Boolean(),
  ignore_whitespace_conflicts: t.Boolean(),
  allow_merge_commits: t.Boolean(),
  allow_rebase: t.Boolean(),
  allow_rebase_explicit: t.Boolean(),
  allow_squash_merge: t.Boolean(),
  avatar_url: t.String(),
  internal_tracker: t.Object(
    {
      enable_time_tracker: t.Boolean(),
      allow_only_contributors_to_track_time: t.Boolean(),
      enable_issue_dependencies: t.Boolean(),
    },
    { $id: '#/components/schemas/InternalTracker' },
  ),
}

/** The Repository record; `parent` is a nested Repository or null. */
export const RepositorySchema = t.Object(
  { ...repositoryFields, parent: t.Union([t.Null(), t.Object({ ...repositoryFields, parent: t.Null() })]) },
  { $id: '#/components/schemas/Repository' },
)

/** CreateRepoOption. */
export const CreateRepoOption = t.Object({
  name: t.String({ maxLength: 100 }),
  description: t.Optional(t.String({ maxLength: 255 })),
  private: t.Optional(t.Boolean()),
  auto_init: t.Optional(t.Boolean()),
  gitignores: t.Optional(t.String({ maxLength: 500 })),
  license: t.Optional(t.String({ maxLength: 100 })),
  readme: t.Optional(t.String({ maxLength: 100 })),
  issue_labels: t.Optional(t.String({ maxLength: 100 })),
  default_branch: t.Optional(t.String({ maxLength: 255 })),
}, { $id: '#/components/schemas/CreateRepoOption' })

export const RepoParams = t.Object({ owner: t.String(), repo: t.String() })

/** EditRepoOption (every field optional, absent = unchanged). */
export const EditRepoOption = t.Object({
  name: t.Optional(t.String({ maxLength: 100 })),
  description: t.Optional(t.String()),
  website: t.Optional(t.String()),
  private: t.Optional(t.Boolean()),
  template: t.Optional(t.Boolean()),
  has_issues: t.Optional(t.Boolean()),
  has_wiki: t.Optional(t.Boolean()),
  has_pull_requests: t.Optional(t.Boolean()),
  default_branch: t.Optional(t.String({ maxLength: 255 })),
  ignore_whitespace_conflicts: t.Optional(t.Boolean()),
  allow_merge_commits: t.Optional(t.Boolean()),
  allow_rebase: t.Optional(t.Boolean()),
  allow_rebase_explicit: t.Optional(t.Boolean()),
  allow_squash_merge: t.Optional(t.Boolean()),
  archived: t.Optional(t.Boolean()),
  internal_tracker: t.Optional(
    t.Object({
      enable_time_tracker: t.Optional(t.Boolean()),
      allow_only_contributors_to_track_time: t.Optional(t.Boolean()),
      enable_issue_dependencies: t.Optional(t.Boolean()),
    }),
  ),
}, { $id: '#/components/schemas/EditRepoOption' })

export const RepositoryList = t.Array(RepositorySchema)

/** SearchResults. */
export const SearchResultsSchema = t.Object({ ok: t.Boolean(), data: RepositoryList }, { $id: '#/components/schemas/SearchResults' })

/** `mode` of a repository search. */
export const SEARCH_MODES = ['source', 'fork', 'mirror', 'collaborative'] as const

/** Query of GET /repos/search. */
export const RepoSearchQuery = t.Object({
  q: QueryText('keyword: case-insensitive substring of the name'),
  uid: t.Optional(t.Numeric({ description: 'owned by (or, unless exclusive, collaborated on by) this user or organisation' })),
  exclusive: QueryText('with uid: owned repositories only'),
  archived: QueryText('true: archived repositories only; false: none of them; absent or empty: all'),
  // Checked by the service, which answers Gitea's own message for an unknown mode.
  mode: t.Optional(lenientLiterals(SEARCH_MODES, { description: 'source, fork, mirror or collaborative; empty or absent: all', maxLength: MAX_QUERY_TEXT })),
  page: t.Optional(t.Numeric({ description: 'page number of results to return (1-based)' })),
  limit: t.Optional(t.Numeric({ description: 'page size of results, maximum 50' })),
})

export const RepoIdParams = t.Object({ id: t.Numeric() })
export const OwnerParams = t.Object({ username: t.String() })
