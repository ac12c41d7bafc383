import { eq } from 'drizzle-orm'
import type { Config } from '../config'
import type { Db } from '../db/client'
import { twoFactors, type TwoFactorRow } from '../db/schema'
import { openSecret } from '../lib/secret-box'
import { totpMatches } from '../lib/totp'
import { nowUnix } from '../lib/time'
import { hashToken } from './secrets'

/**
 * A user's TOTP second factor (table `two_factor`): what signing in asks of those who enrolled one
 * (the web's `/user/two_factor`, the API's Basic credentials with `X-Gitea-OTP`). Enrolling,
 * disabling and the scratch token are modules/users/two-factor.ts.
 */

/** The user's second factor, if they enrolled one. */
export async function findTwoFactor(db: Db, userId: number): Promise<TwoFactorRow | undefined> {
  return (await db.select().from(twoFactors).where(eq(twoFactors.userId, userId)))[0]
}

/** Whether `passcode` is the TOTP code of the row's secret now (one step either side). */
export function passcodeMatches(config: Config, row: TwoFactorRow, passcode: string): boolean {
  return totpMatches(openSecret(config.dataDir, row.secretSealed), passcode.trim(), nowUnix())
}

/** How a scratch token is kept: its SHA-256 (it is random, as an access token). */
export const scratchHashOf = (token: string): string => hashToken('two-factor-scratch\u0000' + token.trim())

/** The answer to Basic credentials with a password of a user with a second factor, without a valid `X-Gitea-OTP` (Gitea's). */
export const INVALID_OTP = 'invalid provided OTP'

/** Git over HTTP never takes a password of a user with a second factor (Gitea's answer). */
export const TWO_FACTOR_GIT_PASSWORD =
  'Users with two-factor authentication enabled cannot perform HTTP/HTTPS operations via plain username and password. Please create and use a personal access token on the user settings page'
