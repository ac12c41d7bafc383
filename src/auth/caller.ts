import { and, eq, inArray, sql } from 'drizzle-orm'
import type { Config } from '../config'
import type { Db } from '../db/client'
import { accessTokens, emailAddresses, users } from '../db/schema'
import { ApiError, unauthorized, forbidden } from '../lib/errors'
import { hashToken, verifyPassword } from './secrets'

export type UserRow = typeof users.$inferSelect

/** Who is calling, and how they proved it. */
export interface Caller {
  /** The acting user (after `sudo`), or null when anonymous. */
  user: UserRow | null
  /** How the credentials were given: a password (Basic), a token, or nothing. */
  method: 'password' | 'token' | null
  /** The user the credentials belong to (differs from `user` under sudo). */
  signedInAs: UserRow | null
}

const ANONYMOUS: Caller = { user: null, method: null, signedInAs: null }

/**
 * Turns a request's credentials into a Caller, once per request (cached on the Request).
 * Forms, in Gitea's order: `?token=`, `?access_token=`, `Authorization: token|bearer T`,
 * `Authorization: Basic` (login or e-mail with a password, or a token as either half).
 * Credentials that are given but wrong answer 401; no credentials means anonymous.
 */
export class Auth {
  private readonly cache = new WeakMap<Request, Promise<Caller>>()
  private readonly tokenLookup
  private readonly userByLowerName
  private readonly userByEmail
  private readonly userById

  constructor(
    private readonly db: Db,
    private readonly config: Config,
  ) {
    // A sub-query, not a join: SQLite answers this form several times faster (hot path).
    this.tokenLookup = db
      .select()
      .from(users)
      .where(inArray(users.id, db.select({ id: accessTokens.userId }).from(accessTokens).where(eq(accessTokens.tokenHash, sqlPlaceholder('hash')))))
      .prepare()
    this.userByLowerName = db.select().from(users).where(eq(users.lowerName, sqlPlaceholder('name'))).prepare()
    this.userByEmail = db
      .select({ user: users })
      .from(emailAddresses)
      .innerJoin(users, eq(users.id, emailAddresses.userId))
      // Only a verified address signs in: one added through POST /user/emails is not (users service addEmails).
      .where(and(eq(emailAddresses.lowerEmail, sqlPlaceholder('email')), eq(emailAddresses.isActivated, true)))
      .prepare()
    this.userById = db.select().from(users).where(eq(users.id, sqlPlaceholder('id'))).prepare()
  }

  /** The caller of this request (resolved lazily, at most once per request). */
  caller(request: Request): Promise<Caller> {
    let pending = this.cache.get(request)
    if (!pending) {
      pending = this.resolve(request)
      this.cache.set(request, pending)
    }
    return pending
  }

  private async resolve(request: Request): Promise<Caller> {
    const url = request.url
    const q = url.indexOf('?')
    const params = q >= 0 ? new URLSearchParams(url.slice(q + 1)) : null
    const caller = await this.credentials(request, params)
    // Gitea refuses every API call of a user who must change their password (git over HTTP
    // is not affected). Warren has no page for that: a site admin sets the new password.
    if (caller.signedInAs?.mustChangePassword && isApiUrl(url))
      throw forbidden('You must change your password. Ask a site administrator to set a new one.')
    const sudo = params?.get('sudo') || request.headers.get('sudo')
    if (!sudo) return caller
    // Gitea's body for this one has no `url`.
    if (!caller.user?.isAdmin) throw new ApiError(403, 'Only administrators allowed to sudo.', { url: undefined })
    const target = this.userByLowerName.get({ name: sudo.toLowerCase() })
    if (!target || target.type !== 0) throw new ApiError(404, `user does not exist [name: ${sudo}]`)
    return { user: target, method: caller.method, signedInAs: caller.signedInAs }
  }

  private async credentials(request: Request, params: URLSearchParams | null): Promise<Caller> {
    const queryToken = params?.get('token') || params?.get('access_token')
    if (queryToken) return this.byToken(queryToken)
    const header = request.headers.get('authorization')
    if (!header) return ANONYMOUS
    const space = header.indexOf(' ')
    const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase()
    const value = space < 0 ? '' : header.slice(space + 1).trim()
    if (scheme === 'token' || scheme === 'bearer') return value ? this.byToken(value) : ANONYMOUS
    if (scheme === 'basic') return this.byBasic(value)
    throw unauthorized('unsupported authorization scheme')
  }

  /** A token secret → its owner; 401 when unknown. */
  byToken(secret: string): Caller {
    const user = this.findTokenOwner(secret)
    if (!user) throw unauthorized('invalid token')
    return this.signedIn(user, 'token')
  }

  private findTokenOwner(secret: string): UserRow | undefined {
    if (!/^[0-9a-f]{40}$/i.test(secret)) return undefined
    return this.tokenLookup.get({ hash: hashToken(secret.toLowerCase()) })
  }

  /** Basic credentials: login or e-mail with a password, or a token as either half. */
  async byBasic(encoded: string): Promise<Caller> {
    let decoded: string
    try {
      decoded = Buffer.from(encoded, 'base64').toString('utf8')
    } catch {
      throw unauthorized('invalid basic credentials')
    }
    const colon = decoded.indexOf(':')
    if (colon < 0) throw unauthorized('invalid basic credentials')
    const name = decoded.slice(0, colon)
    const password = decoded.slice(colon + 1)
    // A token as the user name (empty password or x-oauth-basic), as modern git tools send it.
    if (password === '' || password === 'x-oauth-basic') {
      const owner = this.findTokenOwner(name)
      if (owner) return this.signedIn(owner, 'token')
    }
    const user = name.includes('@')
      ? this.userByEmail.get({ email: name.toLowerCase() })?.user
      : this.userByLowerName.get({ name: name.toLowerCase() })
    if (!user || user.type !== 0) throw unauthorized('invalid credentials')
    // A token as the password: it must belong to that login.
    const tokenOwner = this.findTokenOwner(password)
    if (tokenOwner) {
      if (tokenOwner.id !== user.id) throw unauthorized('invalid credentials')
      return this.signedIn(user, 'token')
    }
    if (!(await verifyPassword(password, user.passwordHash))) throw unauthorized('invalid credentials')
    return this.signedIn(user, 'password')
  }

  private signedIn(user: UserRow, method: 'password' | 'token'): Caller {
    if (!user.isActive || user.prohibitLogin)
      throw forbidden('This account is prohibited from signing in, please contact your site administrator.')
    return { user, method, signedInAs: user }
  }

  /** Re-reads a user (e.g. after an update) by id. */
  userRowById(id: number): UserRow | undefined {
    return this.userById.get({ id })
  }
}

const sqlPlaceholder = (name: string) => sql.placeholder(name)

/** Whether an absolute request URL names an API route (`/api/...`, whatever the host). */
const isApiUrl = (url: string) => {
  const path = url.indexOf('/', url.indexOf('//') + 2)
  return path >= 0 && url.startsWith('/api/', path)
}

/** The signed-in user, or 401. */
export function requireUser(caller: Caller): UserRow {
  if (!caller.user) throw unauthorized()
  return caller.user
}

/** A site administrator, or 401 (anonymous) / 403 (signed in, not admin). */
export function requireSiteAdmin(caller: Caller): UserRow {
  const user = requireUser(caller)
  if (!user.isAdmin) throw forbidden('You must be a site administrator')
  return user
}
