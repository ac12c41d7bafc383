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
export const toApiEmail = (row: Pick<EmailRow, 'email' | 'isActivated' | 'isPrimary'>) => ({ email: row.email, verified: row.isActivated, primary: row.isPrimary })

/** The Email record of an address listed with its user (Gitea's ToEmailSearch: the site administrator's lists). */
export const toApiUserEmail = (row: Pick<EmailRow, 'email' | 'isActivated' | 'isPrimary'> & { userId: number; username: string }) => ({
  ...toApiEmail(row),
  user_id: row.userId,
  username: row.username,
})
