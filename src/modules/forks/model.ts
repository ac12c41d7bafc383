import { t } from 'elysia'

/** CreateForkOption: the organisation to own the fork (absent/null: the caller), and its name. */
export const CreateForkOption = t.Object(
  {
    organization: t.Optional(t.Nullable(t.String({ maxLength: 255, description: 'organization name, if forking into an organization' }))),
    name: t.Optional(t.Nullable(t.String({ maxLength: 255, description: 'name of the forked repository (default: the source name)' }))),
  },
  { $id: '#/components/schemas/CreateForkOption' },
)

/** MergeUpstreamRequest. */
export const MergeUpstreamRequest = t.Object(
  { branch: t.String({ minLength: 1, maxLength: 255 }) },
  { $id: '#/components/schemas/MergeUpstreamRequest' },
)

/** MergeUpstreamResponse. */
export const MergeUpstreamResponse = t.Object(
  { merge_type: t.Union([t.Literal('fast-forward'), t.Literal('merge')]) },
  { $id: '#/components/schemas/MergeUpstreamResponse' },
)
