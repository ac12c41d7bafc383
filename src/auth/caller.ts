import { and, eq, gt, inArray, sql } from 'drizzle-orm'
import { nowUnix } from '../lib/time'
import type { Config } from '../config'
import { perConnection, type Db } from '../db/client'
import { PageCache, pageCacheOf } from '../db/page-cache'
import { accessTokens, emailAddresses, oauth2Grants, oauth2Tokens, publicKeys, users } from '../db/schema'
import { ApiError, unauthorized, forbidden } from '../lib/errors'
import { hashPassword, hashToken, newTokenSecret, verifyPassword } from './secrets'
import { FailureLimiter } from './failure-limiter'
import { storedScope, type TokenScope } from './scopes'
import { addressGroup } from '../lib/network-guard'
import { cookieOf, SESSION_COOKIE, sessionUser } from './sessions'
import { parseSignatureHeader, signingString, verifiesWith } from './http-signature'
import { findTwoFactor, INVALID_OTP, passcodeMatches, TWO_FACTOR_GIT_PASSWORD } from './two-factor'

/**
 * A user row. `publicOnly` is set only on the acting user of a request made with a `public-only`
 * token: the visibility rule (visibility.ts, access.ts) then shows that caller what an anonymous
 * one sees, and nothing private, whatever the user could see otherwise.
 */
export type UserRow = typeof users.$inferSelect & { publicOnly?: true }

/** Who is calling, and how they proved it. */
export interface Caller {
  /** The acting user (after `sudo`), or null when anonymous. */
  user: UserRow | null
  /**
   * How the credentials were given: a password (Basic), a token, an HTTP signature made with an
   * SSH key (`http-signature.ts`), a web session cookie, or nothing.
   */
  method: 'password' | 'token' | 'signature' | 'session' | null
  /** The user the credentials belong to (differs from `user` under sudo). */
  signedInAs: UserRow | null
  /**
   * The token's scope when the credentials were a token (the pipeline's `scope` need checks it);
   * null for a password or no credentials, which scopes do not limit.
   */
  scope: TokenScope | null
  /** The OAuth2 grant whose access token the credentials were (its `userinfo` answers only then). */
  grantId?: number
}

const ANONYMOUS: Caller = { user: null, method: null, signedInAs: null, scope: null }

/**
 * The statements signing in reads, prepared at their first use rather than when the server starts
 * (six of them, built by drizzle over the wide users table: two thirds of createDeps's time at a
 * start, about 11 of its 16.5 ms, which answers its first request without them).
 */
const statementsOf = perConnection((db: Db) => ({
  // Sub-queries, not a join: SQLite answers this form several times faster (hot path).
  tokenLookup: db
    .select({
      user: users,
      scope: sql<string>`(select ${accessTokens.scope} from ${accessTokens} where ${accessTokens.tokenHash} = ${sqlPlaceholder('hash')})`,
    })
    .from(users)
    .where(inArray(users.id, db.select({ id: accessTokens.userId }).from(accessTokens).where(eq(accessTokens.tokenHash, sqlPlaceholder('hash')))))
    .prepare(),
  // An OAuth2 access token: live (not expired), of a grant that still exists (revoking it, or
  // deleting its application, deletes its tokens).
  oauth2TokenLookup: db
    .select({ user: users, scope: oauth2Grants.tokenScope, grantId: oauth2Grants.id })
    .from(oauth2Tokens)
    .innerJoin(oauth2Grants, eq(oauth2Grants.id, oauth2Tokens.grantId))
    .innerJoin(users, eq(users.id, oauth2Grants.userId))
    .where(and(eq(oauth2Tokens.tokenHash, sqlPlaceholder('hash')), eq(oauth2Tokens.kind, 'access'), gt(oauth2Tokens.expiresUnix, sqlPlaceholder('now'))))
    .prepare(),
  userByLowerName: db.select().from(users).where(eq(users.lowerName, sqlPlaceholder('name'))).prepare(),
  userByEmail: db
    .select({ user: users })
    .from(emailAddresses)
    .innerJoin(users, eq(users.id, emailAddresses.userId))
    // Only a verified address signs in: one added through POST /user/emails is not (users service addEmails).
    .where(and(eq(emailAddresses.lowerEmail, sqlPlaceholder('email')), eq(emailAddresses.isActivated, true)))
    .prepare(),
  userById: db.select().from(users).where(eq(users.id, sqlPlaceholder('id'))).prepare(),
  userBySshKey: db
    .select({ user: users, content: publicKeys.content })
    .from(publicKeys)
    .innerJoin(users, eq(users.id, publicKeys.ownerId))
    .where(and(eq(publicKeys.fingerprint, sqlPlaceholder('fingerprint')), eq(publicKeys.type, 1)))
    .prepare(),
}))

/**
 * Turns a request's credentials into a Caller, once per request (cached on the Request).
 * Forms, in Gitea's order: `?token=`, `?access_token=`, `Authorization: token|bearer T`,
 * `Authorization: Basic` (login or e-mail with a password, or a token as either half), and on API
 * routes an HTTP signature made with one of the user's SSH keys (`Signature` header).
 * Credentials that are given but wrong answer 401; no credentials means anonymous.
 *
 * Failed sign-ins are limited per account and per client address (429 with `Retry-After` while
 * locked, whatever the credentials); a password is checked with the same work whether the account
 * exists or not, so neither the answer nor its timing tells which accounts exist.
 */
const tooManyFailures = (wait: number) =>
  new ApiError(429, `Too many failed sign-in attempts; try again in ${wait} seconds.`, {}, { 'Retry-After': String(wait) })

export class Auth {
  private readonly cache = new WeakMap<Request, Promise<Caller>>()
  /**
   * Requests whose session cookie counts (web pages, marked by the web pipeline before their caller
   * is resolved). API routes never read the cookie: a browser sends it on requests another site
   * makes it send, and the API's writes carry no CSRF token.
   */
  private readonly sessionRequests = new WeakSet<Request>()
  /** Client addresses, set by the server from the socket (never from a header a client sends). */
  private readonly clientAddresses = new WeakMap<Request, string | (() => string | undefined)>()
  /** Keys of the addresses seen last (addressKey parses the address). */
  private readonly addressKeys = new Map<string, string>()
  private readonly accountFailures: FailureLimiter
  private readonly addressFailures: FailureLimiter
  /** Hash of a random password, verified against when there is no real hash to check. */
  private dummyHash?: Promise<string>
  /** The last password check of each account being checked now (see oneAtATime). */
  private readonly passwordChecks = new Map<string, Promise<void>>()
  /** Tokens found since the database last changed (findToken), by hash. */
  private readonly tokensFound: PageCache<{ user: UserRow; scope: string }>
  /**
   * The hashes of the personal token secrets last found (a client sends the same secret with each
   * request: its SHA-256 was ~3% of a token point read). Only secrets that named a token
   * when they were hashed go in; a secret whose token is gone since finds nothing by its hash.
   */
  private readonly tokenHashes = new Map<string, string>()

  constructor(
    private readonly db: Db,
    private readonly config: Config,
  ) {
    this.tokensFound = pageCacheOf(db, 'tokens', () => new PageCache<{ user: UserRow; scope: string }>(db, { maxCost: TOKENS_KEPT, tables: [users, accessTokens] }))
    const { loginFailureWindowMs: window, loginFailureCapacity: capacity } = config
    this.accountFailures = new FailureLimiter(config.loginFailuresPerAccount, window, capacity)
    this.addressFailures = new FailureLimiter(config.loginFailuresPerAddress, window, capacity)
  }

  /** Records how to learn the address a request came from (the server does, from the connection): asked, and its key worked out, when first wanted. */
  setClientAddress(request: Request, address: () => string | undefined): void {
    this.clientAddresses.set(request, address)
  }

  /** The key of the address a request came from (IPv6: its /64), as failures are counted under. */
  clientAddress(request: Request): string | undefined {
    let address = this.clientAddresses.get(request)
    if (typeof address === 'function') this.clientAddresses.set(request, (address = address() ?? ''))
    if (!address) return undefined
    // Most requests come from the addresses of the last ones (a proxy, a client's connections).
    let key = this.addressKeys.get(address)
    if (key === undefined) {
      if (this.addressKeys.size >= ADDRESS_KEYS_KEPT) this.addressKeys.clear()
      this.addressKeys.set(address, (key = addressKey(address)))
    }
    return key
  }

  /** How many accounts and addresses have failures remembered (bounded by the configured capacity). */
  failuresTracked(): { accounts: number; addresses: number } {
    return { accounts: this.accountFailures.size, addresses: this.addressFailures.size }
  }

  /** Lets this request's session cookie sign it in (web pages only; see sessionRequests). */
  acceptSession(request: Request): void {
    this.sessionRequests.add(request)
  }

  /** Whether this request is a web page's (its session cookie counts). */
  sessionAccepted(request: Request): boolean {
    return this.sessionRequests.has(request)
  }

  /** The caller of this request (resolved lazily, at most once per request). */
  async caller(request: Request): Promise<Caller> {
    let pending = this.cache.get(request)
    if (!pending) {
      pending = this.resolve(request)
      this.cache.set(request, pending)
    }
    return pending
  }

  /** The request's caller if it was asked for and found (an error page is drawn for them); undefined otherwise. */
  async callerFound(request: Request): Promise<Caller | undefined> {
    return await this.cache.get(request)?.catch(() => undefined)
  }

  /** A page request's caller as its session cookie names it (an error page refused before the pipeline is drawn for them); undefined when it names none or cannot be read. */
  async sessionCaller(request: Request): Promise<Caller | undefined> {
    this.acceptSession(request)
    return await this.caller(request).catch(() => undefined)
  }

  /** Who the request was answered for, if its caller was asked for (the request log's `user`). */
  async answeredFor(request: Request): Promise<string | undefined> {
    return (await this.callerFound(request))?.user?.name
  }

  private async resolve(request: Request): Promise<Caller> {
    const url = request.url
    const q = url.indexOf('?')
    const params = q >= 0 ? new URLSearchParams(url.slice(q + 1)) : null
    const caller = await this.credentials(request, params)
    // A user who must change their password (an administrator set it) does nothing else first, as
    // in Gitea: every API call is refused, a page signed in by the session leads to the page that
    // changes it (Gitea's /user/settings/change_password, and signing out stays possible), a page
    // reached with a token or a password is refused too. git over HTTP is not affected.
    if (caller.signedInAs?.mustChangePassword) {
      const page = this.sessionRequests.has(request)
      if (isApiUrl(url) || (page && caller.method !== 'session')) throw forbidden(`You must change your password. Change it at: ${this.config.baseUrl}${CHANGE_PASSWORD_PATH.slice(1)}`)
      if (page && !BEFORE_CHANGE.has(pathOf(url))) throw new ApiError(303, 'You must change your password first.', {}, { location: CHANGE_PASSWORD_PATH })
    }
    // Sudo is the API's (Gitea's sudo middleware of /api/v1): git over HTTP, LFS, the package
    // registry and the pages act as the credentials' own user, and record pushes and locks as theirs.
    const sudo = isApiUrl(url, '/api/v1/') ? params?.get('sudo') || request.headers.get('sudo') : null
    if (!sudo) return caller.scope?.publicOnly ? { ...caller, user: publicOnlyViewer(caller.user!) } : caller
    // Gitea's body for this one has no `url`.
    if (!caller.user?.isAdmin) throw new ApiError(403, 'Only administrators allowed to sudo.', { url: undefined })
    // No name holds a NUL character (and PostgreSQL cannot be asked for one).
    const target = sudo.includes('\u0000') ? undefined : (await statementsOf(this.db).userByLowerName.execute({ name: sudo.toLowerCase() }))[0]
    if (!target || target.type !== 0) throw new ApiError(404, `user does not exist [name: ${sudo}]`)
    // Gitea does not check this; acting as an account barred from signing in would bypass the bar.
    if (!maySignIn(target))
      throw forbidden(`Cannot sudo as ${target.name}: the account is prohibited from signing in.`)
    // The token's scope limits what is done as the other user too.
    return { user: caller.scope?.publicOnly ? publicOnlyViewer(target) : target, method: caller.method, signedInAs: caller.signedInAs, scope: caller.scope }
  }

  private async credentials(request: Request, params: URLSearchParams | null): Promise<Caller> {
    // Asked of the connection only where wanted (byToken: rarely).
    const address = () => this.clientAddress(request)
    const queryToken = params?.get('token') || params?.get('access_token')
    if (queryToken) return await this.byToken(queryToken, address)
    const header = request.headers.get('authorization')
    if (!header) {
      const signature = request.headers.get('signature')
      if (signature && isApiUrl(request.url)) return await this.bySignature(request, signature, address())
      return await this.bySession(request)
    }
    const space = header.indexOf(' ')
    const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase()
    const value = space < 0 ? '' : header.slice(space + 1).trim()
    if (scheme === 'token' || scheme === 'bearer') return value ? await this.byToken(value, address) : ANONYMOUS
    if (scheme === 'basic') return await this.byBasic(value, address(), request)
    if (scheme === 'signature' && isApiUrl(request.url)) return await this.bySignature(request, value, address())
    throw unauthorized('unsupported authorization scheme')
  }

  /**
   * A token secret → its owner; 401 when unknown (a failure of the client address). A locked
   * address is refused before the lookup, but a lookup is counted only once it failed: tokens
   * cannot be guessed, and counting lookups in flight would refuse an address's many concurrent
   * good requests (they await the database side by side).
   */
  async byToken(secret: string, address: () => string | undefined = () => undefined): Promise<Caller> {
    // The address (learnt from the connection when asked) only where it matters: while some
    // address has failures remembered (none is locked otherwise), or once this lookup failed.
    if (this.addressFailures.size > 0) this.checkNotLocked(this.addressFailures, address())
    const found = await this.findToken(secret)
    if (!found) {
      this.takeAttempt(this.addressFailures, address())
      throw unauthorized('invalid token')
    }
    return this.signedIn(found.user, 'token', storedScope(found.scope), found.grantId)
  }

  /**
   * The owner of a token secret and the token's scope (undefined when no token has it): a personal
   * access token, or an OAuth2 access token (while OAuth2 is on), limited to its grant's scope.
   * Personal tokens found are kept while the users and tokens are unchanged (their change mark):
   * deleting a token, changing its owner or their rights is a write of one of them, which forgets
   * them all (on SQLite any write does); each caller gets
   * its own copy. OAuth2 tokens are read each time: they also end by time, which no write marks.
   */
  private async findToken(secret: string): Promise<{ user: UserRow; scope: string; grantId?: number } | undefined> {
    if (OAUTH2_ACCESS_TOKEN.test(secret)) {
      if (!this.config.oauth2Enabled) return undefined
      return (await statementsOf(this.db).oauth2TokenLookup.execute({ hash: hashToken(secret), now: nowUnix() }))[0]
    }
    let hash = this.tokenHashes.get(secret)
    if (hash === undefined) {
      if (!/^[0-9a-f]{40}$/i.test(secret)) return undefined
      hash = hashToken(secret.toLowerCase())
    }
    const found = await this.tokensFound.getOrRead(hash, async () => (await statementsOf(this.db).tokenLookup.execute({ hash }))[0])
    if (!found) return undefined
    if (!this.tokenHashes.has(secret)) {
      if (this.tokenHashes.size >= TOKENS_KEPT) this.tokenHashes.clear()
      this.tokenHashes.set(secret, hash)
    }
    return { user: { ...found.user }, scope: found.scope }
  }

  /**
   * An HTTP signature made with a user's SSH key, found by its fingerprint (`keyId`): the key's
   * owner, with a token's full rights as Gitea gives them (no scope limits it). 401 with the
   * reason otherwise, counted as a failure of the client address.
   */
  private async bySignature(request: Request, header: string, address?: string): Promise<Caller> {
    this.checkNotLocked(this.addressFailures, address)
    try {
      if (request.headers.has('x-ssh-certificate'))
        throw unauthorized('SSH certificates are not accepted: this server trusts no SSH certificate authority; sign with a key added to your account')
      const params = parseSignatureHeader(header)
      const data = signingString(request, params, nowUnix())
      const found = params.keyId.includes('\u0000') ? undefined : (await statementsOf(this.db).userBySshKey.execute({ fingerprint: params.keyId }))[0]
      if (!found) throw unauthorized(`no SSH key of a user has the fingerprint ${params.keyId}`)
      if (!verifiesWith(found.content, data, params.signature)) throw unauthorized('HTTP signature verification failed')
      return this.signedIn(found.user, 'signature', null)
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) this.takeAttempt(this.addressFailures, address)
      throw e
    }
  }

  /** The user of the request's session cookie, on a web page; anonymous when there is none or it ended. */
  private async bySession(request: Request): Promise<Caller> {
    if (!this.sessionRequests.has(request)) return ANONYMOUS
    const secret = cookieOf(request, SESSION_COOKIE)
    const user = secret ? await sessionUser(this.db, secret) : undefined
    if (!user || !maySignIn(user)) return ANONYMOUS
    return { user, method: 'session', signedInAs: user, scope: null }
  }

  /**
   * Basic credentials, as Gitea reads them: a token as the user name (empty password or
   * `x-oauth-basic`) or as the password whatever the name (`oauth2:TOKEN`), else a login or
   * e-mail with its password.
   */
  async byBasic(encoded: string, address?: string, request?: Request): Promise<Caller> {
    let decoded: string
    try {
      decoded = Buffer.from(encoded, 'base64').toString('utf8')
    } catch {
      throw unauthorized('invalid basic credentials')
    }
    const colon = decoded.indexOf(':')
    // No name, password or token holds a NUL character (and PostgreSQL cannot be asked for one).
    if (colon < 0 || decoded.includes('\u0000')) throw unauthorized('invalid basic credentials')
    const name = decoded.slice(0, colon)
    const password = decoded.slice(colon + 1)
    // A token in either half, as byToken; a password is counted before it is checked.
    this.checkNotLocked(this.addressFailures, address)
    const token = await this.findToken(password === '' || password === 'x-oauth-basic' ? name : password)
    if (token) return this.signedIn(token.user, 'token', storedScope(token.scope), token.grantId)
    const caller = await this.byPassword(name, password, address)
    await this.basicSecondFactor(caller.user!, address, request)
    return caller
  }

  /**
   * A password given as Basic credentials by a user with a second factor (Gitea's Basic method):
   * on the API, a valid TOTP code in `X-Gitea-OTP` too (401 `invalid provided OTP` otherwise,
   * counted as a failed sign-in; the code is not marked used, as in Gitea, so a client may send it
   * with several requests of its 30 seconds); elsewhere (git over HTTP, raw files, attachments)
   * never: a token is needed there (Gitea's git HTTP answer).
   */
  private async basicSecondFactor(user: UserRow, address: string | undefined, request: Request | undefined): Promise<void> {
    const row = await findTwoFactor(this.db, user.id)
    if (!row) return
    if (!request || !isApiUrl(request.url)) throw unauthorized(TWO_FACTOR_GIT_PASSWORD)
    const passcode = request.headers.get('x-gitea-otp') ?? ''
    await this.secondFactor(user.id, address, async () => passcodeMatches(this.config, row, passcode))
  }

  /**
   * A second factor given for `userId` (a TOTP code, a scratch token: `check` says whether it was
   * right) under the failed sign-in limits a password is under: of the client address, and of the
   * account's second factor (counted apart from its password, so that knowing the password does
   * not clear the failures of the codes). 401 `invalid provided OTP` when wrong, 429 while locked.
   */
  async secondFactor(userId: number, address: string | undefined, check: () => Promise<boolean>): Promise<void> {
    this.checkNotLocked(this.addressFailures, address)
    this.takeAttempt(this.addressFailures, address)
    await this.countedCheck(`2fa:${userId}`, address, async () => {
      if (!(await check())) throw unauthorized(INVALID_OTP)
    })
  }

  /**
   * A login or e-mail with its password (Basic credentials, the web sign-in form), under the
   * failed sign-in limits of the account and of the client address.
   */
  async byPassword(name: string, password: string, address?: string): Promise<Caller> {
    this.checkNotLocked(this.addressFailures, address)
    this.takeAttempt(this.addressFailures, address)
    const found = name.includes('@')
      ? (await statementsOf(this.db).userByEmail.execute({ email: name.toLowerCase() }))[0]?.user
      : (await statementsOf(this.db).userByLowerName.execute({ name: name.toLowerCase() }))[0]
    const user = found && found.type === 0 ? found : undefined
    // Unknown names are counted too (by name), so that locking does not tell which accounts exist.
    const account = user ? `id:${user.id}` : `name:${name.toLowerCase().slice(0, MAX_COUNTED_NAME)}`
    return this.countedCheck(account, address, async () => {
      // The same work whether or not there is a real hash to check (unknown user, organisation).
      const realHash = user?.passwordHash || undefined
      const ok = await verifyPassword(password, realHash ?? (await this.dummyPasswordHash()))
      if (!ok || !user || !realHash) throw unauthorized('invalid credentials')
      return this.signedIn(user, 'password', null)
    })
  }

  /**
   * One sign-in check of `account` whose client address's attempt is already counted: the
   * account's attempt counted (429 while locked, the address's given back then), the checks of the
   * account one at a time, and on success (`check` returns) the account's failures cleared and the
   * address's attempt given back; a failure (`check` throws) stays counted on both.
   */
  private countedCheck<T>(account: string, address: string | undefined, check: () => Promise<T>): Promise<T> {
    return this.oneAtATime(account, async () => {
      try {
        this.takeAttempt(this.accountFailures, account)
      } catch (e) {
        if (address) this.addressFailures.refund(address)
        throw e
      }
      const result = await check()
      this.accountFailures.clear(account)
      if (address) this.addressFailures.refund(address)
      return result
    })
  }

  /**
   * Runs the password checks of one account one after another: each sees the failures of those
   * before it, so a burst of guesses stops at the limit (no more hashes than that are spent), and
   * a burst of right passwords (a client's parallel requests) all pass.
   */
  private oneAtATime<T>(account: string, check: () => Promise<T>): Promise<T> {
    const run = (this.passwordChecks.get(account) ?? Promise.resolve()).then(check)
    const settled = run.then(
      () => {},
      () => {},
    )
    this.passwordChecks.set(account, settled)
    void settled.then(() => {
      if (this.passwordChecks.get(account) === settled) this.passwordChecks.delete(account)
    })
    return run
  }

  /** Counts one sign-in attempt for `key`; 429 with `Retry-After` while the key is locked. */
  private takeAttempt(limiter: FailureLimiter, key: string | undefined): void {
    if (key === undefined) return
    const wait = limiter.take(key)
    if (wait > 0) throw tooManyFailures(wait)
  }

  private checkNotLocked(limiter: FailureLimiter, key: string | undefined): void {
    if (key === undefined) return
    const wait = limiter.lockedFor(key)
    if (wait > 0) throw tooManyFailures(wait)
  }

  private dummyPasswordHash(): Promise<string> {
    this.dummyHash ??= hashPassword(this.config, newTokenSecret())
    return this.dummyHash
  }

  private signedIn(user: UserRow, method: 'password' | 'token' | 'signature', scope: TokenScope | null, grantId?: number): Caller {
    if (!maySignIn(user))
      throw forbidden('This account is prohibited from signing in, please contact your site administrator.')
    return grantId === undefined ? { user, method, signedInAs: user, scope } : { user, method, signedInAs: user, scope, grantId }
  }

  /** Re-reads a user (e.g. after an update) by id. */
  async userRowById(id: number): Promise<UserRow | undefined> {
    return (await statementsOf(this.db).userById.execute({ id }))[0]
  }
}

const sqlPlaceholder = (name: string) => sql.placeholder(name)

/** Where a user who must change their password does so (Gitea's page). */
export const CHANGE_PASSWORD_PATH = '/user/settings/change_password'
/** The pages such a user may reach before: that one, and signing out. */
const BEFORE_CHANGE = new Set([CHANGE_PASSWORD_PATH, '/user/logout'])
/** A request URL's path (no query). */
const pathOf = (url: string): string => {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const q = url.indexOf('?', start)
  return start < 0 ? '/' : url.slice(start, q < 0 ? undefined : q)
}

/** Whether an account may sign in at all (active, not prohibited by an administrator): every credential and session asks it, and the OAuth2 token endpoint before it issues tokens. */
export const maySignIn = (user: Pick<UserRow, 'isActive' | 'prohibitLogin'>): boolean => user.isActive && !user.prohibitLogin

/** An OAuth2 access token's form (src/modules/oauth2/tokens.ts makes them): `oat_` and 64 hex digits. */
const OAUTH2_ACCESS_TOKEN = /^oat_[0-9a-f]{64}$/

/** The acting user as a `public-only` token shows them to the visibility rule (see UserRow). */
const publicOnlyViewer = (user: UserRow): UserRow => ({ ...user, publicOnly: true })

/** Longest unknown name counted as is (longer ones cannot be accounts; bounds the memory). */
const MAX_COUNTED_NAME = 320

/**
 * The key a client address is counted under (failed sign-ins, markdown workers): the network
 * guard's address group, as the SSH limits count it (IPv4 alone, IPv6 by its /64).
 */
export const addressKey = addressGroup

/** How many tokens Auth keeps found (the oldest forgotten first past it). */
const TOKENS_KEPT = 1024

/** How many address keys Auth keeps worked out (all are forgotten at once past it). */
const ADDRESS_KEYS_KEPT = 1024

/** Whether an absolute request URL names an API route (`/api/...`, or under `prefix`, whatever the host). */
const isApiUrl = (url: string, prefix = '/api/') => {
  const path = url.indexOf('/', url.indexOf('//') + 2)
  return path >= 0 && url.startsWith(prefix, path)
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
