import { t } from 'elysia'
import { Int } from '../users/model'
import { RepositorySchema } from '../repos/model'
import { pageQueryFields } from '../../lib/pagination'
import { QueryText, numeric } from '../../lib/validate'

/** The DeployKey record. */
export const DeployKeySchema = t.Object(
  {
    id: Int(),
    key_id: Int(),
    key: t.String(),
    url: t.String(),
    title: t.String(),
    fingerprint: t.String(),
    created_at: t.String(),
    read_only: t.Boolean(),
    repository: t.Optional(RepositorySchema),
  },
  { $id: '#/components/schemas/DeployKey' },
)

/** `GET /repos/{o}/{r}/keys`: Gitea's `key_id` and `fingerprint` filters, and the page. */
export const DeployKeyListQuery = t.Object({
  ...pageQueryFields,
  key_id: t.Optional(numeric({ description: 'the key_id to search for' })),
  fingerprint: QueryText('fingerprint of the key'),
})

export const DeployKeyParams = t.Object({ owner: t.String(), repo: t.String(), id: t.String() })
