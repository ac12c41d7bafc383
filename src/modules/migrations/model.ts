import { t } from 'elysia'
import { Int } from '../users/model'

/** MigrateRepoForm (Gitea's MigrateRepoOptions). */
export const MigrateRepoForm = t.Object(
  {
    clone_addr: t.String({ minLength: 1, maxLength: 2048 }),
    auth_username: t.Optional(t.String({ maxLength: 255 })),
    auth_password: t.Optional(t.String({ maxLength: 1024 })),
    /** Modern Gitea: a token instead of a password (sent the same way). */
    auth_token: t.Optional(t.String({ maxLength: 1024 })),
    uid: t.Optional(Int()),
    /** Modern Gitea: the owner by name instead of `uid`. */
    repo_owner: t.Optional(t.String({ maxLength: 255 })),
    repo_name: t.String({ maxLength: 100 }),
    mirror: t.Optional(t.Boolean()),
    private: t.Optional(t.Boolean()),
    description: t.Optional(t.String({ maxLength: 255 })),
    /** Go duration ("8h0m0s", "10m"); "0" = no periodic update. */
    mirror_interval: t.Optional(t.String({ maxLength: 40 })),
    /** Accepted for clients of later Gitea versions; only the git data is migrated (the wiki's too with `wiki`). */
    service: t.Optional(t.String({ maxLength: 40 })),
    /** Also clone the remote's wiki (`{address}.wiki.git`, or `.git/wiki`) when it has one, as Gitea does. */
    wiki: t.Optional(t.Boolean()),
    milestones: t.Optional(t.Boolean()),
    labels: t.Optional(t.Boolean()),
    issues: t.Optional(t.Boolean()),
    pull_requests: t.Optional(t.Boolean()),
    releases: t.Optional(t.Boolean()),
    lfs: t.Optional(t.Boolean()),
  },
  { $id: '#/components/schemas/MigrateRepoOptions' },
)

/** CreatePushMirrorOption (Gitea's; `use_ssh` as later Gitea versions and Forgejo send it, refused). */
export const CreatePushMirrorOption = t.Object(
  {
    remote_address: t.String({ maxLength: 2048 }),
    remote_username: t.Optional(t.String({ maxLength: 255 })),
    remote_password: t.Optional(t.String({ maxLength: 1024 })),
    /** Go duration ("8h0m0s", "10m"); "0" = no periodic push; absent = 8h. */
    interval: t.Optional(t.String({ maxLength: 40 })),
    sync_on_commit: t.Optional(t.Boolean()),
    use_ssh: t.Optional(t.Boolean()),
  },
  { $id: '#/components/schemas/CreatePushMirrorOption' },
)

/** PushMirror: `remote_address` without credentials; `last_update` null before the first push. */
export const PushMirrorSchema = t.Object(
  {
    repo_name: t.String(),
    remote_name: t.String(),
    remote_address: t.String(),
    created: t.String(),
    last_update: t.Nullable(t.String()),
    last_error: t.String(),
    interval: t.String(),
    sync_on_commit: t.Boolean(),
    public_key: t.String(),
  },
  { $id: '#/components/schemas/PushMirror' },
)

export const PushMirrorParams = t.Object({ owner: t.String(), repo: t.String(), name: t.String({ maxLength: 255 }) })
