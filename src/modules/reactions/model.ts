import { t } from 'elysia'
import { PlainUserSchema } from '../repos/model'

/** EditReactionOption: the reaction's name (one of WARREN_REACTIONS). */
export const EditReactionOption = t.Object({ content: t.Optional(t.String({ maxLength: 64 })) }, { $id: '#/components/schemas/EditReactionOption' })

/** Reaction record. */
export const ReactionSchema = t.Object(
  { user: PlainUserSchema, content: t.String(), created_at: t.String() },
  { $id: '#/components/schemas/Reaction' },
)
