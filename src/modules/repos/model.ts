import { t } from 'elysia'
import { MAX_QUERY_TEXT, QueryText, numeric, integer } from '../../lib/validate'
import { Int, PlainUserSchema } from '../users/model'
import { lenientLiterals, literals } from '../../lib/literals'

/** Longest URL a repository setting keeps (external tracker and wiki). */
const MAX_URL = 2048

export { Int, PlainUserSchema }

/**
 * RepoTransfer: a transfer waiting for its recipient. Its `teams` are Team records (organization
 * null, as Gitea shows them), declared loosely: an array of objects inside the record's nullable
 * field sends Elysia's answer normalisation of every Repository list down a path several times
 * slower (a repository search 3,000 → 1,100 req/s); the converter (convert/repo.ts
 * `transfersOf`) makes them with the one Team converter. Measured again (bench/repos.ts search,
 * Team records against this): still ~1,000 against ~2,200-3,300 req/s, also without the Team's
 * `$id`; exact-mirror's cleaner and checkedJson alone, timed on 50 such records outside a route,
 * cost the same with either schema, so the cost is in how the route's answer handling is put
 * together, not yet found.
 */
const RepoTransferSchema = t.Object(
  { doer: PlainUserSchema, recipient: PlainUserSchema, teams: t.Array(t.Any({ description: 'Team records' })) },
  { $id: '#/components/schemas/RepoTransfer' },
)

const PermissionSchema = t.Object({ admin: t.Boolean(), push: t.Boolean(), pull: t.Boolean() }, { $id: '#/components/schemas/Permission' })

const InternalTrackerSchema = t.Object(
  {
    enable_time_tracker: t.Boolean(),
    allow_only_contributors_to_track_time: t.Boolean(),
    enable_issue_dependencies: t.Boolean(),
  },
  { $id: '#/components/schemas/InternalTracker' },
)
const ExternalTrackerSchema = t.Object(
  {
    external_tracker_url: t.String(),
    external_tracker_format: t.String(),
    external_tracker_style: t.String(),
    external_tracker_regexp_pattern: t.String(),
  },
  { $id: '#/components/schemas/ExternalTracker' },
)
const ExternalWikiSchema = t.Object({ external_wiki_url: t.String() }, { $id: '#/components/schemas/ExternalWiki' })

/** The merge styles a repository can allow (Gitea's MergeStyle values). */
export const REPO_MERGE_STYLES = ['merge', 'rebase', 'rebase-merge', 'squash', 'fast-forward-only', 'manually-merged'] as const

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
  allow_fast_forward_only_merge: t.Boolean(),
  allow_rebase_update: t.Boolean(),
  default_merge_style: t.String(),
  default_delete_branch_after_merge: t.Boolean(),
  default_allow_maintainer_edit: t.Boolean(),
  avatar_url: t.String(),
  internal: t.Boolean(),
  template: t.Boolean(),
  url: t.String(),
  link: t.String(),
  language: t.String(),
  languages_url: t.String(),
  original_url: t.String(),
  mirror_interval: t.String(),
  mirror_updated: t.String(),
  archived_at: t.String(),
  has_releases: t.Boolean(),
  has_packages: t.Boolean(),
  has_projects: t.Boolean(),
  has_actions: t.Boolean(),
  projects_mode: t.String(),
  internal_tracker: t.Nullable(InternalTrackerSchema),
  external_tracker: t.Nullable(ExternalTrackerSchema),
  external_wiki: t.Nullable(ExternalWikiSchema),
  topics: t.Array(t.String()),
  licenses: t.Array(t.String()),
  object_format_name: t.String(),
  repo_transfer: t.Nullable(RepoTransferSchema),
}

/**
 * The Repository record; `parent` is a nested Repository or null. `additionalProperties: true`,
 * said outright: Elysia writes `additionalProperties: false` onto a route's answer schema where it
 * finds none, on the shared object, so every list holding repositories (a search's, a pull request's base and head) then checked each record's
 * keys as TypeBox compiles that for a record with an optional key: every key looked up in a new
 * array of the 62 names (`every(key => [...].includes(key))`), most of a repository search's CPU
 * (bench/repos.ts search 2,300 -> 5,800 req/s without it). What goes out is what the converter
 * makes (ApiRepo; test/repo-record.test.ts checks no key beyond the schema's).
 */
export const RepositorySchema = t.Object(
  { ...repositoryFields, parent: t.Union([t.Null(), t.Object({ ...repositoryFields, parent: t.Null() })]) },
  { $id: '#/components/schemas/Repository', additionalProperties: true },
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
  allow_fast_forward_only_merge: t.Optional(t.Boolean()),
  allow_manual_merge: t.Optional(t.Boolean()),
  autodetect_manual_merge: t.Optional(t.Boolean()),
  allow_rebase_update: t.Optional(t.Boolean()),
  default_delete_branch_after_merge: t.Optional(t.Boolean()),
  default_allow_maintainer_edit: t.Optional(t.Boolean()),
  default_merge_style: t.Optional(literals(REPO_MERGE_STYLES)),
  has_releases: t.Optional(t.Boolean()),
  has_packages: t.Optional(t.Boolean()),
  // Units Warren does not serve: accepted and left off, as a Gitea that disables them site-wide.
  has_projects: t.Optional(t.Boolean()),
  has_actions: t.Optional(t.Boolean()),
  projects_mode: t.Optional(t.String({ maxLength: 16 })),
  archived: t.Optional(t.Boolean()),
  mirror_interval: t.Optional(t.String({ maxLength: 64 })),
  // Mirror updates always prune the refs gone from the remote.
  enable_prune: t.Optional(t.Boolean()),
  internal_tracker: t.Optional(
    t.Object({
      enable_time_tracker: t.Optional(t.Boolean()),
      allow_only_contributors_to_track_time: t.Optional(t.Boolean()),
      enable_issue_dependencies: t.Optional(t.Boolean()),
    }),
  ),
  external_tracker: t.Optional(
    t.Object({
      external_tracker_url: t.Optional(t.String({ maxLength: MAX_URL })),
      external_tracker_format: t.Optional(t.String({ maxLength: MAX_URL })),
      external_tracker_style: t.Optional(literals(['', 'numeric', 'alphanumeric', 'regexp'])),
      external_tracker_regexp_pattern: t.Optional(t.String({ maxLength: MAX_URL })),
    }),
  ),
  external_wiki: t.Optional(t.Object({ external_wiki_url: t.Optional(t.String({ maxLength: MAX_URL })) })),
}, { $id: '#/components/schemas/EditRepoOption' })

export const RepositoryList = t.Array(RepositorySchema)

/** SearchResults. */
export const SearchResultsSchema = t.Object({ ok: t.Boolean(), data: RepositoryList }, { $id: '#/components/schemas/SearchResults' })

/** `mode` of a repository search. */
export const SEARCH_MODES = ['source', 'fork', 'mirror', 'collaborative'] as const

/** Query of GET /repos/search. */
export const RepoSearchQuery = t.Object({
  q: QueryText('keyword: case-insensitive substring of the name'),
  uid: t.Optional(numeric({ description: 'owned by (or, unless exclusive, collaborated on by) this user or organisation' })),
  exclusive: QueryText('with uid: owned repositories only'),
  archived: QueryText('true: archived repositories only; false: none of them; absent or empty: all'),
  // Checked by the service, which answers Gitea's own message for an unknown mode.
  mode: t.Optional(lenientLiterals(SEARCH_MODES, { description: 'source, fork, mirror or collaborative; empty or absent: all', maxLength: MAX_QUERY_TEXT })),
  topic: QueryText('true: `q` names topics (comma-separated, whole names) instead of a part of the name'),
  page: t.Optional(numeric({ description: 'page number of results to return (1-based)' })),
  limit: t.Optional(numeric({ description: 'page size of results, maximum 50' })),
})

export const RepoIdParams = t.Object({ id: numeric() })
export const OwnerParams = t.Object({ username: t.String() })

/** TransferRepoOption. */
export const TransferRepoOption = t.Object(
  {
    new_owner: t.String({ minLength: 1, maxLength: 255 }),
    team_ids: t.Optional(t.Array(integer({ minimum: 1 }), { maxItems: 100, description: 'ID of the team or teams to add to the repository. Teams can only be added to organization-owned repositories.' })),
  },
  { $id: '#/components/schemas/TransferRepoOption' },
)

/** GenerateRepoOption. */
export const GenerateRepoOption = t.Object(
  {
    owner: t.String({ minLength: 1, maxLength: 255 }),
    name: t.String({ minLength: 1, maxLength: 100 }),
    description: t.Optional(t.String({ maxLength: 2048 })),
    private: t.Optional(t.Boolean()),
    default_branch: t.Optional(t.String({ maxLength: 255 })),
    git_content: t.Optional(t.Boolean()),
    topics: t.Optional(t.Boolean()),
    labels: t.Optional(t.Boolean()),
    git_hooks: t.Optional(t.Boolean()),
    webhooks: t.Optional(t.Boolean()),
    avatar: t.Optional(t.Boolean()),
    protected_branch: t.Optional(t.Boolean()),
  },
  { $id: '#/components/schemas/GenerateRepoOption' },
)
