import { and, eq, gt, lt, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { emailAddresses, userCodes, users, type UserCodeRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { hashNewPassword, hashToken } from '../../auth/secrets'
import { queueMails } from '../../mail/queue'
import { activationMail, emailActivationMail, resetPasswordMail } from '../../mail/messages'
import { notFound, unprocessable } from '../../lib/errors'
import { nowUnix } from '../../lib/time'

/*
 * The codes Warren mails (Gitea's time-limited codes of an account's activation, an added
 * address's activation and a password reset), after Gitea's routers/web/auth: each code is 24
 * random bytes, of which only the SHA-256 is stored; it is used once (its row deleted by the
 * statement that uses it), lives WARREN_ACTIVE_CODE_LIVE_MINUTES / WARREN_RESET_PASSWD_CODE_LIVE_MINUTES,
 * and is bound to the password the user had when it was made and to the primary address it was
 * mailed to (Gitea's codes hash the user's password and e-mail): a changed password, or a
 * primary address given up since, voids it.
 */

export type CodePurpose = 'activate' | 'activate_email' | 'reset_password'

/** Gitea's MailResendLimit: one mail of a kind to a user per three minutes; more asks answer the same and send nothing. */
export const MAIL_RESEND_SECONDS = 180

/** A code's form: 48 lower-case hex digits; anything else is no code (never looked up). */
const CODE = /^[0-9a-f]{48}$/

const lifetimeOf = (deps: AppDeps, purpose: CodePurpose) => (purpose === 'reset_password' ? deps.config.resetPasswordCodeLifetime : deps.config.activeCodeLifetime)

/**
 * What a code is bound to: the user's current password hash (never stored as such) and, for the
 * codes mailed to the primary address (an account's activation, a password reset), that address:
 * one mailed to an address the account has since given up opens nothing. An added address's code
 * is bound to its own address instead (activateEmail).
 */
const passwordStamp = (user: Pick<UserRow, 'id' | 'passwordHash' | 'email'>, purpose: CodePurpose) =>
  hashToken(`password-stamp\u0000${user.id}\u0000${user.passwordHash}` + (purpose === 'activate_email' ? '' : `\u0000${user.email.toLowerCase()}`))

/** Makes a code for `user` (inside the caller's transaction) and answers it: the only time it exists in the clear. */
async function issueCode(deps: AppDeps, user: UserRow, purpose: CodePurpose, email = ''): Promise<string> {
  const code = Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('hex')
  const now = nowUnix()
  // Expired codes of the user go as a new one is made: the table holds only live ones, a few a user.
  await deps.db.delete(userCodes).where(and(eq(userCodes.userId, user.id), lt(userCodes.expiresUnix, now)))
  await deps.db
    .insert(userCodes)
    .values({ userId: user.id, purpose, codeHash: hashToken(code), email, passwordStamp: passwordStamp(user, purpose), createdUnix: now, expiresUnix: now + lifetimeOf(deps, purpose) })
  return code
}

/** Whether a code of `purpose` was mailed to the user within the resend limit. */
async function mailedRecently(deps: AppDeps, userId: number, purpose: CodePurpose): Promise<boolean> {
  const since = nowUnix() - MAIL_RESEND_SECONDS
  const found = await deps.db
    .select({ id: userCodes.id })
    .from(userCodes)
    .where(and(eq(userCodes.userId, userId), eq(userCodes.purpose, purpose), gt(userCodes.createdUnix, since)))
    .limit(1)
  return found.length > 0
}

/** The user one of whose addresses `email` is (any case), under `condition` on the address and the user. */
async function userOfAddress(deps: AppDeps, email: string, condition: SQL): Promise<UserRow | undefined> {
  const found = await deps.db
    .select({ user: users })
    .from(emailAddresses)
    .innerJoin(users, eq(users.id, emailAddresses.userId))
    .where(and(eq(emailAddresses.lowerEmail, email.toLowerCase()), condition))
  return found[0]?.user as UserRow | undefined
}

/** A live code of `purpose` and its user: known, not expired, of the user's current password. */
export async function findCode(deps: AppDeps, code: string | undefined, purpose: CodePurpose): Promise<{ row: UserCodeRow; user: UserRow } | undefined> {
  if (!code || !CODE.test(code)) return undefined
  const row = (await deps.db.select().from(userCodes).where(eq(userCodes.codeHash, hashToken(code))))[0]
  if (!row || row.purpose !== purpose || row.expiresUnix <= nowUnix()) return undefined
  const user = (await deps.db.select().from(users).where(eq(users.id, row.userId)))[0] as UserRow | undefined
  if (!user || user.type !== 0 || user.prohibitLogin || row.passwordStamp !== passwordStamp(user, purpose)) return undefined
  return { row, user }
}

/** The refusal of a code that is unknown, used, expired or voided: one message for all. */
const invalidCode = () => unprocessable('The link is invalid or has expired. Ask for a new one.')

/**
 * Uses a code, inside the caller's transaction: found again as findCode finds it and deleted by
 * id in the same statement that answers whether it was still there, so two uses of one code
 * never both pass. 422 otherwise.
 */
async function takeCode(deps: AppDeps, code: string | undefined, purpose: CodePurpose): Promise<{ row: UserCodeRow; user: UserRow }> {
  const found = await findCode(deps, code, purpose)
  if (!found) throw invalidCode()
  const taken = await deps.db.delete(userCodes).where(eq(userCodes.id, found.row.id)).returning({ id: userCodes.id })
  if (taken.length === 0) throw invalidCode()
  return found
}

// ---- account activation ------------------------------------------------------------------------

/** Queues the activation mail of a new, inactive account (inside the transaction that made it). */
export async function mailActivation(deps: AppDeps, user: UserRow): Promise<void> {
  const code = await issueCode(deps, user, 'activate')
  await queueMails(deps.db, [activationMail(deps.config, user, code)])
}

/**
 * Gitea's resend of the activation mail (`POST /user/activate`): to the inactive account whose
 * primary address this is, at most once per MAIL_RESEND_SECONDS. Answers nothing either way.
 */
export async function resendActivation(deps: AppDeps, email: string): Promise<void> {
  if (!deps.config.mailer || email.length > 320) return
  await writeTransaction(deps.db, async () => {
    const user = await userOfAddress(deps, email, and(eq(emailAddresses.isPrimary, true), eq(users.isActive, false), eq(users.prohibitLogin, false))!)
    if (!user || user.type !== 0 || (await mailedRecently(deps, user.id, 'activate'))) return
    await mailActivation(deps, user)
  })
}

/** Activates the account of an activation code (its primary address with it); answers the user. 422 for a bad code. */
export async function activateAccount(deps: AppDeps, code: string | undefined): Promise<UserRow> {
  return await writeTransaction(deps.db, async () => {
    const { user } = await takeCode(deps, code, 'activate')
    await deps.db.update(users).set({ isActive: true, updatedUnix: nowUnix() }).where(eq(users.id, user.id))
    await deps.db.update(emailAddresses).set({ isActivated: true }).where(and(eq(emailAddresses.userId, user.id), eq(emailAddresses.isPrimary, true)))
    return { ...user, isActive: true }
  })
}

// ---- an added address ------------------------------------------------------------------------

/** Queues the activation mails of addresses just added (inside the transaction that added them). */
export async function mailEmailActivations(deps: AppDeps, user: UserRow, emails: string[]): Promise<void> {
  const mails = []
  for (const email of emails) mails.push(emailActivationMail(deps.config, user, email, await issueCode(deps, user, 'activate_email', email)))
  await queueMails(deps.db, mails)
}

/** Activates the address of its code, while the user still has it; answers the user and the address. 422 for a bad code. */
export async function activateEmail(deps: AppDeps, code: string | undefined): Promise<{ user: UserRow; email: string }> {
  return await writeTransaction(deps.db, async () => {
    const { row, user } = await takeCode(deps, code, 'activate_email')
    const changed = await deps.db
      .update(emailAddresses)
      .set({ isActivated: true })
      .where(and(eq(emailAddresses.userId, user.id), eq(emailAddresses.lowerEmail, row.email.toLowerCase())))
      .returning({ id: emailAddresses.id })
    if (changed.length === 0) throw notFound(`email address does not exist [email: ${row.email}]`)
    return { user, email: row.email }
  })
}

// ---- password reset ------------------------------------------------------------------------------

/**
 * Gitea's ForgotPasswdPost: the reset mail to the primary address of the person one of whose
 * activated addresses this is, at most once per MAIL_RESEND_SECONDS; nothing for an unknown
 * address, an organisation or an account barred from signing in. Answers nothing either way, so
 * the page's answer never tells whether the address is known.
 */
export async function requestPasswordReset(deps: AppDeps, email: string): Promise<void> {
  if (!deps.config.mailer || email.length > 320 || !email.includes('@')) return
  await writeTransaction(deps.db, async () => {
    const user = await userOfAddress(deps, email, eq(emailAddresses.isActivated, true))
    if (!user || user.type !== 0 || user.prohibitLogin || !user.email || (await mailedRecently(deps, user.id, 'reset_password'))) return
    const code = await issueCode(deps, user, 'reset_password')
    await queueMails(deps.db, [resetPasswordMail(deps.config, user, code)])
  })
}

/**
 * Gitea's ResetPasswdPost: a new password (the password policy's, hashNewPassword: 400 when too
 * short) for the user of a reset code, which is used up; the user's other codes die with the old
 * password. Signs nobody in: the sign-in that follows asks for the second factor as always.
 */
export async function resetPassword(deps: AppDeps, code: string | undefined, password: string): Promise<UserRow> {
  if (!(await findCode(deps, code, 'reset_password'))) throw invalidCode()
  if (!password) throw unprocessable('The new password is empty.', 'Password')
  if (password.length > 255) throw unprocessable('The new password is too long.', 'Password')
  const passwordHash = await hashNewPassword(deps.config, password)
  return await writeTransaction(deps.db, async () => {
    const { user } = await takeCode(deps, code, 'reset_password')
    await deps.db.delete(userCodes).where(eq(userCodes.userId, user.id))
    return (await deps.db.update(users).set({ passwordHash, mustChangePassword: false, updatedUnix: nowUnix() }).where(eq(users.id, user.id)).returning())[0] as UserRow
  })
}
