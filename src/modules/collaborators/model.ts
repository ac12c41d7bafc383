import { t } from 'elysia'
import { caseInsensitivePattern, lenientLiterals } from '../../lib/literals'
import { PlainUserSchema } from '../repos/model'

const PERMISSIONS = ['read', 'write', 'admin']

export const CollaboratorParams = t.Object({ owner: t.String(), repo: t.String(), collaborator: t.String() })

/** AddCollaboratorOption; the body may be empty. */
export const AddCollaboratorOption = t.Object(
  {
    permission: t.Optional(
      // Any letter case; empty = the default.
      lenientLiterals(PERMISSIONS, { pattern: caseInsensitivePattern(['', ...PERMISSIONS]), description: 'read, write or admin (default write)' }),
    ),
  },
  { $id: '#/components/schemas/AddCollaboratorOption' },
)

/** RepoCollaboratorPermission record (role_name is the permission, as in Gitea 1.23). */
export const RepoCollaboratorPermissionSchema = t.Object(
  { permission: t.String(), role_name: t.String(), user: PlainUserSchema },
  { $id: '#/components/schemas/RepoCollaboratorPermission' },
)
