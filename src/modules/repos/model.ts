import { t } from 'elysia'
import { UserSchema } from '../users/model'

export const PermissionSchema = t.Object({ admin: t.Boolean(), push: t.Boolean(), pull: t.Boolean() })

const repositoryFields = {
  id: t.Integer(),
  owner: UserSchema,
  name: t.String(),
  full_name: t.String(),
  description: t.String(),
  empty: t.Boolean(),
  private: t.Boolean(),
  fork: t.Boolean(),
  mirror: t.Boolean(),
  size: t.Integer(),
  html_url: t.String(),
  ssh_url: t.String(),
  clone_url: t.String(),
  website: t.String(),
  stars_count: t.Integer(),
  forks_count: t.Integer(),
  watchers_count: t.Integer(),
  open_issues_count: t.Integer(),
  open_pr_counter: t.Integer(),
  release_counter: t.Integer(),
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
  internal_tracker: t.Object({
    enable_time_tracker: t.Boolean(),
    allow_only_contributors_to_track_time: t.Boolean(),
    enable_issue_dependencies: t.Boolean(),
  }),
}

/** The Repository record (records.md §8); `parent` is a nested Repository or null. */
export const RepositorySchema = t.Object(
  { ...repositoryFields, parent: t.Union([t.Null(), t.Object({ ...repositoryFields, parent: t.Null() })]) },
  { $id: '#/components/schemas/Repository' },
)

/** CreateRepoOption (options.md §3). */
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
})

export const RepoParams = t.Object({ owner: t.String(), repo: t.String() })
