import { t } from 'elysia'
import { caseInsensitivePattern, lenientLiterals } from '../../lib/literals'

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
