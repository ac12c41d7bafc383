import { t } from 'elysia'

/** WatchInfo: the caller's subscription to a repository, as Gitea answers it. */
export const WatchInfoSchema = t.Object(
  {
    subscribed: t.Boolean(),
    ignored: t.Boolean(),
    reason: t.Null(),
    created_at: t.String(),
    url: t.String(),
    repository_url: t.String(),
  },
  { $id: '#/components/schemas/WatchInfo' },
)

/** `/user/starred/{owner}/{repo}`. */
export const StarredRepoParams = t.Object({ owner: t.String(), repo: t.String() })
