import { t } from 'elysia'

/** Gitea's OAuth2Application record (`client_secret` only right after it was made or regenerated). */
export const OAuth2ApplicationSchema = t.Object({
  id: t.Number(),
  name: t.String(),
  client_id: t.String(),
  client_secret: t.String(),
  confidential_client: t.Boolean(),
  skip_secondary_authorization: t.Boolean(),
  redirect_uris: t.Array(t.String()),
  created: t.String(),
})

/** Most redirect URIs one application registers, and the longest one. */
export const MAX_REDIRECT_URIS = 32
export const MAX_REDIRECT_URI = 1024

/** Gitea's CreateOAuth2ApplicationOptions (POST, and PATCH which replaces every field). */
export const CreateOAuth2ApplicationOption = t.Object({
  name: t.Optional(t.String({ maxLength: 255 })),
  confidential_client: t.Optional(t.Boolean()),
  skip_secondary_authorization: t.Optional(t.Boolean()),
  redirect_uris: t.Optional(t.Array(t.String({ maxLength: MAX_REDIRECT_URI }), { maxItems: MAX_REDIRECT_URIS })),
})

/** A grant the caller gave an application (Warren's own record: Gitea lists them only on its settings page). */
export const OAuth2GrantSchema = t.Object({
  id: t.Number(),
  application: t.Object({ name: t.String(), client_id: t.String() }),
  scope: t.String(),
  created: t.String(),
  updated: t.String(),
})

export const IdParams = t.Object({ id: t.String() })
