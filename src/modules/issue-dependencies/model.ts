import { t } from 'elysia'
import { ListName, integer } from '../../lib/validate'

/** Gitea's IssueMeta: an issue by repository and index; owner and repo left out name the path's repository. */
export const IssueMeta = t.Object({
  index: integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  owner: t.Optional(ListName),
  repo: t.Optional(ListName),
})
