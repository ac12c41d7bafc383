import { t } from 'elysia'
import { ListName } from '../../lib/validate'

/** Gitea's IssueMeta: an issue by repository and index; owner and repo left out name the path's repository. */
export const IssueMeta = t.Object({
  index: t.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  owner: t.Optional(ListName),
  repo: t.Optional(ListName),
})
