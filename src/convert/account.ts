import type { AccessTokenRow, EmailRow } from '../db/schema'

/** The AccessToken record; `secret` only right after creation (lists show ""). */
export const toApiAccessToken = (row: AccessTokenRow, secret = '') => ({
  id: row.id,
  name: row.name,
  sha1: secret,
  token_last_eight: row.tokenLastEight,
  scopes: row.scope ? row.scope.split(',') : [],
})

/** The Email record. */
export const toApiEmail = (row: EmailRow) => ({ email: row.email, verified: row.isActivated, primary: row.isPrimary })
