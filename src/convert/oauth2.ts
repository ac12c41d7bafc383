import type { OAuth2ApplicationRow, OAuth2GrantRow } from '../db/schema'
import { isoTime } from '../lib/time'

/** The registered redirect URIs of an application row. */
export const redirectUrisOf = (row: OAuth2ApplicationRow): string[] => JSON.parse(row.redirectUris) as string[]

/** Gitea's OAuth2Application record; `secret` only right after it was made or regenerated ('' otherwise). */
export const toApiOAuth2Application = (row: OAuth2ApplicationRow, secret = '') => ({
  id: row.id,
  name: row.name,
  client_id: row.clientId,
  client_secret: secret,
  confidential_client: row.confidentialClient,
  skip_secondary_authorization: row.skipSecondaryAuthorization,
  redirect_uris: redirectUrisOf(row),
  created: isoTime(row.createdUnix),
})

/** A grant with the name and client id of its application. */
export const toApiOAuth2Grant = (grant: OAuth2GrantRow, app: Pick<OAuth2ApplicationRow, 'name' | 'clientId'>) => ({
  id: grant.id,
  application: { name: app.name, client_id: app.clientId },
  scope: grant.scope,
  created: isoTime(grant.createdUnix),
  updated: isoTime(grant.updatedUnix),
})
