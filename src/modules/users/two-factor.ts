import { and, eq, inArray, ne } from 'drizzle-orm'
import { randomInt } from 'node:crypto'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { findTwoFactor, passcodeMatches, scratchHashOf } from '../../auth/two-factor'
import { writeTransaction } from '../../db/client'
import { twoFactors } from '../../db/schema'
import { ApiError, conflict } from '../../lib/errors'
import { openTicket, sealSecret, sealTicket } from '../../lib/secret-box'
import { newTotpSecret, otpauthUri, totpMatches } from '../../lib/totp'
import { nowUnix } from '../../lib/time'

/**
 * A user's TOTP second factor, as Gitea 1.23's settings (`/user/settings/security/two_factor/...`)
 * and sign-in (`/user/two_factor`, `/user/two_factor/scratch`) use it. What signing in asks is
 * `auth/two-factor.ts`; the Basic credentials' `X-Gitea-OTP` is `auth/caller.ts`.
 */

/** How long an enrollment's secret stays valid for its passcode (the page carries it sealed, no row is written before). */
const ENROLLMENT_SECONDS = 3600

/** A new scratch token: 10 letters and digits (Gitea's length), shown once, kept hashed. */
function newScratchToken(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
  let token = ''
  for (let i = 0; i < 10; i++) token += alphabet[randomInt(alphabet.length)]
  return token
}

export const notEnrolled = () => conflict('Two-factor authentication is not enabled for your account.')
const alreadyEnrolled = () => conflict('Two-factor authentication is already enabled for your account.')
export const PASSCODE_INCORRECT = 'Your passcode is incorrect.'

/** Whether the user has a second factor. */
export async function twoFactorEnabled(deps: AppDeps, userId: number): Promise<boolean> {
  return (await findTwoFactor(deps.db, userId)) !== undefined
}

/** Which of `userIds` have a second factor (a list page's, in one query). */
export async function twoFactorUsers(deps: AppDeps, userIds: number[]): Promise<Set<number>> {
  if (userIds.length === 0) return new Set()
  const rows = await deps.db.select({ userId: twoFactors.userId }).from(twoFactors).where(inArray(twoFactors.userId, userIds))
  return new Set(rows.map((r) => r.userId))
}

/** An enrollment being started: its secret (base32), the `otpauth://` URI, and the sealed ticket the form carries back. */
export interface Enrollment {
  secret: string
  uri: string
  ticket: string
}

/** The issuer an authenticator app shows: the site's host and path, as Gitea's (its Domain and sub-URL). */
function issuerOf(baseUrl: string): string {
  const url = new URL(baseUrl)
  return (url.host + url.pathname).replace(/\/+$/, '')
}

/** A new secret for `user` to enroll (409 when they have one); nothing is stored until its passcode is given. */
export async function startEnrollment(deps: AppDeps, user: UserRow, secret = newTotpSecret()): Promise<Enrollment> {
  if (await twoFactorEnabled(deps, user.id)) throw alreadyEnrolled()
  return {
    secret,
    uri: otpauthUri(issuerOf(deps.config.baseUrl), user.name, secret),
    ticket: sealTicket(deps.config.dataDir, 'two-factor-enroll', { u: user.id, s: secret }, ENROLLMENT_SECONDS),
  }
}

/** The secret of an enrollment's ticket, when it is `user`'s and has not expired. */
export function enrollmentSecret(deps: AppDeps, user: UserRow, ticket: string | undefined): string | undefined {
  const value = openTicket(deps.config.dataDir, 'two-factor-enroll', ticket) as { u?: unknown; s?: unknown } | undefined
  return value && value.u === user.id && typeof value.s === 'string' ? value.s : undefined
}

/**
 * Enrolls the secret of `ticket` once `passcode` is its current code: the row written with the
 * secret sealed and a new scratch token's hash; answers the scratch token (shown once). 400 for an
 * expired or foreign ticket, 422 for a wrong passcode, 409 when a second factor is already there;
 * nothing is written then.
 */
export async function enrollTwoFactor(deps: AppDeps, user: UserRow, ticket: string | undefined, passcode: string): Promise<string> {
  const secret = enrollmentSecret(deps, user, ticket)
  if (!secret) throw new ApiError(400, 'The enrollment has expired. Start it again.')
  const code = passcode.trim()
  if (!totpMatches(secret, code, nowUnix())) throw new ApiError(422, PASSCODE_INCORRECT)
  const scratch = newScratchToken()
  const now = nowUnix()
  const made = await writeTransaction(deps.db, () =>
    deps.db
      .insert(twoFactors)
      .values({ userId: user.id, secretSealed: sealSecret(deps.config.dataDir, secret), scratchHash: scratchHashOf(scratch), lastUsedPasscode: code, createdUnix: now, updatedUnix: now })
      .onConflictDoNothing({ target: twoFactors.userId })
      .returning({ id: twoFactors.id }),
  )
  if (made.length === 0) throw alreadyEnrolled()
  return scratch
}

/** A new scratch token for the user (the old one no longer works); answers it. 409 without a second factor. */
export async function regenerateScratchToken(deps: AppDeps, user: UserRow): Promise<string> {
  const scratch = newScratchToken()
  const changed = await writeTransaction(deps.db, () =>
    deps.db
      .update(twoFactors)
      .set({ scratchHash: scratchHashOf(scratch), updatedUnix: nowUnix() })
      .where(eq(twoFactors.userId, user.id))
      .returning({ id: twoFactors.id }),
  )
  if (changed.length === 0) throw notEnrolled()
  return scratch
}

/** Removes the user's second factor. 409 without one. */
export async function disableTwoFactor(deps: AppDeps, user: UserRow): Promise<void> {
  if (!(await removeTwoFactor(deps, user.id))) throw notEnrolled()
}

/**
 * Removes the user's second factor if they have one (the user's own "disable", and the site
 * administrator's "reset two-factor authentication", Gitea's DisableTwoFactor): whether there was one.
 */
export async function removeTwoFactor(deps: AppDeps, userId: number): Promise<boolean> {
  const gone = await writeTransaction(deps.db, () => deps.db.delete(twoFactors).where(eq(twoFactors.userId, userId)).returning({ id: twoFactors.id }))
  return gone.length > 0
}

/**
 * Whether `passcode` signs the user in: their current code, and not the last one that did (Gitea's
 * LastUsedPasscode), marked used in the same statement, so two requests with one code cannot both pass.
 */
export async function usePasscode(deps: AppDeps, userId: number, passcode: string): Promise<boolean> {
  const row = await findTwoFactor(deps.db, userId)
  const code = passcode.trim()
  if (!row || !passcodeMatches(deps.config, row, code)) return false
  const used = await writeTransaction(deps.db, () =>
    deps.db
      .update(twoFactors)
      .set({ lastUsedPasscode: code, updatedUnix: nowUnix() })
      .where(and(eq(twoFactors.userId, userId), ne(twoFactors.lastUsedPasscode, code)))
      .returning({ id: twoFactors.id }),
  )
  return used.length === 1
}

/**
 * Whether `token` is the user's scratch token; if so it is used up: replaced by a new one nobody
 * is shown (Gitea's TwoFactorScratchPost: the second factor stays on, the user regenerates a token
 * in the settings), in the same statement that checks it.
 */
export async function useScratchToken(deps: AppDeps, userId: number, token: string): Promise<boolean> {
  if (!token.trim()) return false
  const used = await writeTransaction(deps.db, () =>
    deps.db
      .update(twoFactors)
      .set({ scratchHash: scratchHashOf(newScratchToken()), updatedUnix: nowUnix() })
      .where(and(eq(twoFactors.userId, userId), eq(twoFactors.scratchHash, scratchHashOf(token))))
      .returning({ id: twoFactors.id }),
  )
  return used.length === 1
}
