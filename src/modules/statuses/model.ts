import { t } from 'elysia'
import { Int, UserSchema } from '../users/model'
import { RepositorySchema } from '../repos/model'
import { pageQueryFields } from '../../lib/pagination'
import { literals, recordLiterals } from '../../lib/literals'

/** Commit status states, best first (the combined state is the worst one present). */
export const STATUS_STATES = ['success', 'pending', 'warning', 'failure', 'error'] as const
export type StatusState = (typeof STATUS_STATES)[number]

/** Gitea's `sort` values of a status list (default: newest first). */
export const STATUS_SORTS = ['oldest', 'recentupdate', 'leastupdate', 'leastindex', 'highestindex'] as const

/** The Status record; `id` is the per-commit index. */
export const StatusSchema = t.Object(
  {
    id: Int(),
    status: recordLiterals(STATUS_STATES),
    target_url: t.String(),
    description: t.String(),
    url: t.String(),
    context: t.String(),
    creator: t.Union([UserSchema, t.Null()]),
    created_at: t.String(),
    updated_at: t.String(),
  },
  { $id: '#/components/schemas/Status' },
)

/** The CombinedStatus record; `state` is "" when the commit has no status. */
export const CombinedStatusSchema = t.Object(
  {
    state: recordLiterals(['', ...STATUS_STATES]),
    sha: t.String(),
    total_count: Int(),
    statuses: t.Array(StatusSchema),
    repository: RepositorySchema,
    commit_url: t.String(),
    url: t.String(),
  },
  { $id: '#/components/schemas/CombinedStatus' },
)

/** CreateStatusOption: strings are trimmed and bounded. */
export const CreateStatusOption = t.Object(
  {
    state: literals(STATUS_STATES),
    target_url: t.Optional(t.String({ maxLength: 2048 })),
    description: t.Optional(t.String({ maxLength: 1024 })),
    context: t.Optional(t.String({ maxLength: 255 })),
  },
  { $id: '#/components/schemas/CreateStatusOption' },
)

/** A status list's query: the page, Gitea's `sort` and `state` filters. */
export const StatusListQuery = t.Object({
  ...pageQueryFields,
  sort: t.Optional(literals(['', ...STATUS_SORTS])),
  state: t.Optional(literals(['', ...STATUS_STATES])),
})

export const ShaParams = t.Object({ owner: t.String(), repo: t.String(), sha: t.String({ maxLength: 255 }) })
export const RefParams = t.Object({ owner: t.String(), repo: t.String(), ref: t.String({ maxLength: 255 }) })
