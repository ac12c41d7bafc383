import type { Config } from '../config'
import { badRequest } from '../lib/errors'

/** Passwords: argon2id through Bun.password; the cost comes from the config. */
export function hashPassword(config: Config, password: string): Promise<string> {
  return Bun.password.hash(password, {
    algorithm: 'argon2id',
    memoryCost: config.passwordMemoryCost,
    timeCost: config.passwordTimeCost,
  })
}

/**
 * A password someone sets (API user creation, admin edit, the command line), hashed: every one
 * comes here, the one place that refuses one shorter than `minPasswordLength` (400, as Gitea's
 * PasswordTooShort).
 */
export function hashNewPassword(config: Config, password: string): Promise<string> {
  try {
    checkNewPassword(config, password)
  } catch (e) {
    return Promise.reject(e)
  }
  return hashPassword(config, password)
}

/** 400 when a new password is shorter than the site's minimum. */
export function checkNewPassword(config: Config, password: string): void {
  if (password.length < config.minPasswordLength) throw badRequest(`password must be at least ${config.minPasswordLength} characters`)
}

export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  if (!hash) return false
  try {
    return await Bun.password.verify(password, hash)
  } catch {
    return false
  }
}

/** A new access-token secret: 20 random bytes as 40 lower-case hex characters (Gitea's format). */
export function newTokenSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(20))).toString('hex')
}

/** Tokens are looked up by this fast hash (never a password hash: it runs on every request). */
export function hashToken(secret: string): string {
  return Bun.SHA256.hash(secret, 'hex')
}
