import { t } from 'elysia'
import { literals, recordLiterals } from '../../lib/literals'
import { Int, VISIBILITIES } from '../users/model'

/** The Organization record. */
export const OrganizationSchema = t.Object(
  {
    id: Int(),
    username: t.String(),
    name: t.String(),
    full_name: t.String(),
    email: t.String(),
    avatar_url: t.String(),
    description: t.String(),
    website: t.String(),
    location: t.String(),
    visibility: recordLiterals(VISIBILITIES),
    repo_admin_change_team_access: t.Boolean(),
  },
  { $id: '#/components/schemas/Organization' },
)

/** The optional fields of CreateOrgOption, also EditOrgOption (absent = unchanged); lengths and formats are checked by the service. */
const orgFields = {
  full_name: t.Optional(t.String()),
  email: t.Optional(t.String()),
  description: t.Optional(t.String()),
  website: t.Optional(t.String()),
  location: t.Optional(t.String()),
  visibility: t.Optional(literals(VISIBILITIES)),
  repo_admin_change_team_access: t.Optional(t.Boolean()),
}

/** CreateOrgOption. */
export const CreateOrgOption = t.Object({ username: t.String(), ...orgFields }, { $id: '#/components/schemas/CreateOrgOption' })

/** EditOrgOption: absent = unchanged. */
export const EditOrgOption = t.Object(orgFields, { $id: '#/components/schemas/EditOrgOption' })

export const OrgParams = t.Object({ org: t.String() })
export const OrgMemberParams = t.Object({ org: t.String(), username: t.String() })

/** OrganizationPermissions record. */
export const OrganizationPermissionsSchema = t.Object(
  { can_read: t.Boolean(), can_write: t.Boolean(), is_admin: t.Boolean(), is_owner: t.Boolean(), can_create_repository: t.Boolean() },
  { $id: '#/components/schemas/OrganizationPermissions' },
)
export const UserOrgParams = t.Object({ username: t.String(), org: t.String() })
