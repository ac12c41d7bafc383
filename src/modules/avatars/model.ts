import { t } from 'elysia'
import { AVATAR_MAX_BASE64 } from './image'

/** UpdateUserAvatarOption / UpdateRepoAvatarOption: the image, base64 of a PNG, JPEG, GIF or WebP. */
export const UpdateAvatarOption = t.Object({
  image: t.String({ maxLength: AVATAR_MAX_BASE64, description: 'image must be base64 encoded' }),
})

export const AvatarHashParams = t.Object({ hash: t.String() })
