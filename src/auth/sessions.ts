import { and, eq, gt, lte } from 'drizzle-orm'
import type { Db } from '../db/client'
import { writeTransaction } from '../db/client'
import { users, webSessions } from '../db/schema'
import { nowUnix } from '../lib/time'
import { hashToken } from './secrets'

/**
 * Web sign-in sessions (table `web_sessions`). The browser holds a random secret in an HttpOnly
 * cookie; the database holds its SHA-256 and an expiry, so any process behind the same database
 * recognises it. The session's CSRF token is derived from the same secret (never stored), so a
 * form's token is bound to the session that rendered it.
 */

/** The cookie that carries the session's secret. */
export const SESSION_COOKIE = 'warren_session'

/** A new session secret: 32 random bytes as hex (a different length from access tokens). */
const newSessionSecret = (): string => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')

/** Opens a session for `userId`; answers the secret for the cookie. Expired sessions are swept here. */
export async function openSession(db: Db, userId: number, lifetime: number): Promise<string> {
  const secret = newSessionSecret()
  const now = nowUnix()
  await writeTransaction(db, async () => {
    await db.delete(webSessions).where(lte(webSessions.expiresUnix, now))
    await db.insert(webSessions).values({ tokenHash: hashToken(secret), userId, createdUnix: now, expiresUnix: now + lifetime })
  })
  return secret
}

/** The user of a live session, or undefined (unknown, expired, or not a secret at all). */
export async function sessionUser(db: Db, secret: string): Promise<typeof users.$inferSelect | undefined> {
  if (!/^[0-9a-f]{64}$/.test(secret)) return undefined
  const row = await db
    .select({ user: users })
    .from(webSessions)
    .innerJoin(users, eq(users.id, webSessions.userId))
    .where(and(eq(webSessions.tokenHash, hashToken(secret)), gt(webSessions.expiresUnix, nowUnix())))
  return row[0]?.user
}

/** Ends a session (signing out). */
export async function closeSession(db: Db, secret: string): Promise<void> {
  if (!/^[0-9a-f]{64}$/.test(secret)) return
  await writeTransaction(db, async () => {
    await db.delete(webSessions).where(eq(webSessions.tokenHash, hashToken(secret)))
  })
}

/** The CSRF token of the session (or pre-session) whose secret is `secret`. */
export const csrfTokenOf = (secret: string): string => hashToken('csrf\u0000' + secret)

/** A request's cookie by name (undefined when absent). */
export function cookieOf(request: Request, name: string): string | undefined {
  const header = request.headers.get('cookie')
  if (!header) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}
