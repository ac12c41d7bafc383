import { t } from 'elysia'
import { BoundedList, ListName } from '../../lib/validate'
import { OrganizationSchema } from '../orgs/model'

/** The Team record (records.md §7). */
export const TeamSchema = t.Object(
  {
    id: t.Integer(),
    name: t.String(),
    description: t.String(),
    permission: t.String(),
    organization: t.Union([OrganizationSchema, t.Null()]),
    units: t.Array(t.String()),
    includes_all_repositories: t.Boolean(),
    can_create_org_repo: t.Boolean(),
  },
  { $id: '#/components/schemas/Team' },
)

/** CreateTeamOption (options.md §2); names, lengths and values are checked by the service. */
export const CreateTeamOption = t.Object({
  name: t.String(),
  description: t.Optional(t.String()),
  permission: t.Optional(t.String()),
  units: t.Optional(BoundedList(ListName)),
  includes_all_repositories: t.Optional(t.Boolean()),
  can_create_org_repo: t.Optional(t.Boolean()),
})

/** EditTeamOption: every field optional, absent = unchanged. */
export const EditTeamOption = t.Partial(CreateTeamOption)

/** A team id in a path: a non-numeric one is an unknown team (404), not a validation error. */
const TeamId = t.String({ description: 'id of the team' })
export const TeamParams = t.Object({ id: TeamId })
export const TeamMemberParams = t.Object({ id: TeamId, username: t.String() })
export const TeamRepoParams = t.Object({ id: TeamId, org: t.String(), repo: t.String() })
