import { t } from 'elysia'
import { Int } from '../users/model'

/**
 * The longest secret or variable value taken (Gitea's SecretDataMaxLength, VariableDataMaxLength):
 * a secret's in UTF-8 bytes, a variable's in characters (code points), as Gitea counts them
 * (`service.ts` `boundedValue`: 400 past it). The schemas bound the text in UTF-16 units first
 * (422), never below what the exact count allows: a code point is at most two units.
 */
export const MAX_ACTIONS_VALUE = 65536

export const SecretSchema = t.Object(
  { name: t.String({ description: "the secret's name" }), created_at: t.String({ format: 'date-time' }) },
  { $id: '#/components/schemas/Secret' },
)

export const ActionVariableSchema = t.Object(
  {
    owner_id: Int(),
    repo_id: Int(),
    name: t.String({ description: 'the name of the variable' }),
    data: t.String({ description: 'the value of the variable' }),
  },
  { $id: '#/components/schemas/ActionVariable' },
)

export const CreateOrUpdateSecretOption = t.Object(
  { data: t.String({ minLength: 1, maxLength: MAX_ACTIONS_VALUE, description: 'Data of the secret to update' }) },
  { $id: '#/components/schemas/CreateOrUpdateSecretOption' },
)

export const CreateVariableOption = t.Object(
  { value: t.String({ minLength: 1, maxLength: 2 * MAX_ACTIONS_VALUE, description: 'Value of the variable to create' }) },
  { $id: '#/components/schemas/CreateVariableOption' },
)

export const UpdateVariableOption = t.Object(
  {
    name: t.Optional(t.String({ maxLength: 255, description: "New name for the variable. If the field is empty, the variable name won't be updated." })),
    value: t.String({ minLength: 1, maxLength: 2 * MAX_ACTIONS_VALUE, description: 'Value of the variable to update' }),
  },
  { $id: '#/components/schemas/UpdateVariableOption' },
)

export const RegistrationTokenSchema = t.Object({ token: t.String() }, { $id: '#/components/schemas/RegistrationToken' })

export const RepoSecretParams = t.Object({ owner: t.String(), repo: t.String(), secretname: t.String() })
export const RepoVariableParams = t.Object({ owner: t.String(), repo: t.String(), variablename: t.String() })
export const OrgSecretParams = t.Object({ org: t.String(), secretname: t.String() })
export const OrgVariableParams = t.Object({ org: t.String(), variablename: t.String() })
export const SecretParams = t.Object({ secretname: t.String() })
export const VariableParams = t.Object({ variablename: t.String() })
