import { t } from 'elysia'
import { MAX_TAG_NAME, MAX_TARGET } from '../releases/model'
import { MAX_TEXT } from '../../lib/validate'
import { CommitMetaSchema } from '../pulls/model'

/** The Tag record. */
export const TagSchema = t.Object(
  {
    name: t.String(),
    message: t.String(),
    id: t.String(),
    commit: CommitMetaSchema,
    zipball_url: t.String(),
    tarball_url: t.String(),
  },
  { $id: '#/components/schemas/Tag' },
)

/** CreateTagOption: `message` makes an annotated tag; `target` is the default branch when empty. */
export const CreateTagOption = t.Object(
  {
    tag_name: t.String({ maxLength: MAX_TAG_NAME }),
    target: t.Optional(t.String({ maxLength: MAX_TARGET })),
    message: t.Optional(t.String({ maxLength: MAX_TEXT })),
  },
  { $id: '#/components/schemas/CreateTagOption' },
)
