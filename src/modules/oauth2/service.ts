import { createHash } from 'node:crypto'
import { and, asc, count, desc, eq, lte } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { emailAddresses, oauth2Applications, oauth2AuthorizationCodes, oauth2Grants, oauth2Tokens, users, type OAuth2ApplicationRow, type OAuth2GrantRow } from '../../db/schema'
import { maySignIn, type UserRow } from '../../auth/caller'
import { hashToken } from '../../auth/secrets'
import { grantTokenScope } from '../../auth/scopes'
import { notFound } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { pathNumber } from '../../lib/path-number'
import type { Page, Paged } from '../../lib/pagination'
import { redirectUrisOf } from '../../convert/oauth2'
import { applicationByClientId, clientSecretMatches } from './applications'
import { signingKey } from './signing-key'

/**
 * The authorisation code flow (RFC 6749 4.1) with PKCE (RFC 7636) and OpenID Connect, as Gitea
 * serves it at `/login/oauth/*`: the authorisation request checked and answered with a code once
 * the person consents, the token endpoint (codes and refresh tokens), and what an access token
 * tells about its person (`userinfo`). Access tokens are checked where every credential is, in
 * src/auth/caller.ts, against the grant's scope.
 */

/** An error of the token endpoint, in RFC 6749 5.2's shape (`invalid_client` answers 401). */
export class OAuthError extends Error {
  constructor(
    public readonly code: string,
    public readonly description: string,
    public readonly status = code === 'invalid_client' ? 401 : 400,
  ) {
    super(`${code}: ${description}`)
  }
}

/** The bounds of the authorisation request's values (longer ones are refused). */
const MAX_STATE = 2048
const MAX_SCOPE = 1024
const MAX_NONCE = 512
/** RFC 7636 4.1 / 4.2: a verifier, and a challenge, are 43 to 128 unreserved characters. */
const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/

/** A random secret for codes and tokens: 32 bytes as hex, after the prefix that says what it is. */
const newSecret = (prefix: string): string => prefix + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')

// ---- the authorisation request ---------------------------------------------------------------

/** The authorisation request's parameters, as given (query of GET /login/oauth/authorize, or the consent form). */
export interface AuthorizationParams {
  client_id?: string
  redirect_uri?: string
  response_type?: string
  state?: string
  scope?: string
  nonce?: string
  code_challenge?: string
  code_challenge_method?: string
}

/** A request that passed every check: what a code will be issued for. */
export interface ValidAuthorization {
  app: OAuth2ApplicationRow
  redirectUri: string
  state: string
  scope: string
  nonce: string
  codeChallenge: string
  codeChallengeMethod: '' | 'S256' | 'plain'
}

/**
 * What to answer an authorisation request: an error shown as a page (the client or its redirect
 * URI is unknown, so the browser is not sent anywhere: RFC 6749 4.1.2.1), an error sent back to
 * the client's redirect URI, or a valid request.
 */
export type AuthorizationCheck = { page: string } | { redirect: string } | { valid: ValidAuthorization }

/**
 * Whether `uri` is one of the application's redirect URIs, exactly; for a public client an http
 * loopback address matches whatever its port (RFC 8252 7.3: a native application listens on a
 * port it is given when it starts), as in Gitea.
 */
export function redirectUriRegistered(app: OAuth2ApplicationRow, uri: string): boolean {
  const registered = redirectUrisOf(app)
  if (registered.includes(uri)) return true
  if (app.confidentialClient) return false
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return false
  }
  if (url.protocol !== 'http:' || !url.port || !['127.0.0.1', '[::1]'].includes(url.hostname)) return false
  url.port = ''
  return registered.includes(url.toString()) || registered.includes(url.toString().replace(/\/$/, ''))
}

/** `uri` with these parameters added to its query (those it already has are kept). */
export function redirectWith(uri: string, params: Record<string, string>): string {
  const url = new URL(uri)
  for (const [k, v] of Object.entries(params)) if (v !== '') url.searchParams.set(k, v)
  return url.toString()
}

const single = (value: unknown): string => (typeof value === 'string' ? value : '')

/** Checks an authorisation request (RFC 6749 4.1.1, RFC 7636 4.3), in Gitea's order. */
export async function checkAuthorization(deps: AppDeps, params: AuthorizationParams): Promise<AuthorizationCheck> {
  const app = await applicationByClientId(deps, single(params.client_id))
  if (!app) return { page: 'The application is not registered (unknown client_id).' }
  const redirectUri = single(params.redirect_uri)
  if (!redirectUri || !redirectUriRegistered(app, redirectUri)) return { page: 'The redirect URI is not registered for this application.' }
  const state = single(params.state)
  const fail = (error: string, description: string) => ({ redirect: redirectWith(redirectUri, { error, error_description: description, state: state.slice(0, MAX_STATE) }) })
  if (state.length > MAX_STATE) return fail('invalid_request', `state is longer than ${MAX_STATE} characters`)
  if (single(params.response_type) !== 'code') return fail('unsupported_response_type', 'Only code response type is supported.')
  const scope = single(params.scope).trim().replace(/\s+/g, ' ')
  if (scope.length > MAX_SCOPE) return fail('invalid_scope', `scope is longer than ${MAX_SCOPE} characters`)
  const nonce = single(params.nonce)
  if (nonce.length > MAX_NONCE) return fail('invalid_request', `nonce is longer than ${MAX_NONCE} characters`)
  const codeChallenge = single(params.code_challenge)
  // RFC 7636 4.3: a challenge without a method is `plain`.
  const method = single(params.code_challenge_method) || (codeChallenge ? 'plain' : '')
  if (method !== '' && method !== 'S256' && method !== 'plain') return fail('invalid_request', 'unsupported code challenge method')
  if (method && !PKCE_VALUE.test(codeChallenge)) return fail('invalid_request', 'code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~')
  // RFC 8252 8.1, RFC 7636 4.4.1: a public client has no secret, so a code is bound to it by PKCE alone.
  if (!method && !app.confidentialClient) return fail('invalid_request', 'PKCE is required for public clients')
  return { valid: { app, redirectUri, state, scope, nonce, codeChallenge, codeChallengeMethod: method as ValidAuthorization['codeChallengeMethod'] } }
}

/** The person's grant to an application, if any. */
export async function grantOf(deps: AppDeps, userId: number, applicationId: number): Promise<OAuth2GrantRow | undefined> {
  return (await deps.db.select().from(oauth2Grants).where(and(eq(oauth2Grants.userId, userId), eq(oauth2Grants.applicationId, applicationId))))[0]
}

/**
 * Whether the person is asked on the consent page, rather than sent back with a code at once: not
 * when they granted this application the same scope before and it is confidential or trusted
 * (skip_secondary_authorization). A public client is asked every time (RFC 6749 10.2: anyone can
 * claim its client id), as in Gitea; a wider or other scope is asked for again (Gitea would widen
 * the grant silently).
 */
export async function consentNeeded(deps: AppDeps, userId: number, request: ValidAuthorization): Promise<boolean> {
  if (!request.app.confidentialClient && !request.app.skipSecondaryAuthorization) return true
  const grant = await grantOf(deps, userId, request.app.id)
  return !grant || grant.scope !== request.scope
}

/**
 * The person consents: their grant is made (or its scope becomes the one asked for now) and a
 * code is issued for this request; answers where to send the browser (the redirect URI with
 * `code` and `state`). The code, the grant and the sweep of expired codes are one transaction.
 */
export async function issueCode(deps: AppDeps, userId: number, request: ValidAuthorization): Promise<string> {
  const code = newSecret('')
  const now = nowUnix()
  await writeTransaction(deps.db, async () => {
    await deps.db.delete(oauth2AuthorizationCodes).where(lte(oauth2AuthorizationCodes.expiresUnix, now))
    let grant = await grantOf(deps, userId, request.app.id)
    const tokenScope = grantTokenScope(request.scope)
    if (!grant) {
      // Two consents at once (two tabs, on PostgreSQL): one row; the other finds it.
      ;[grant] = await deps.db
        .insert(oauth2Grants)
        .values({ userId, applicationId: request.app.id, scope: request.scope, tokenScope, createdUnix: now, updatedUnix: now })
        .onConflictDoNothing()
        .returning()
      grant ??= await grantOf(deps, userId, request.app.id)
    }
    if (grant!.scope !== request.scope) await deps.db.update(oauth2Grants).set({ scope: request.scope, tokenScope, updatedUnix: now }).where(eq(oauth2Grants.id, grant!.id))
    await deps.db.insert(oauth2AuthorizationCodes).values({
      grantId: grant!.id,
      codeHash: hashToken(code),
      codeChallenge: request.codeChallenge,
      codeChallengeMethod: request.codeChallengeMethod,
      redirectUri: request.redirectUri,
      nonce: request.nonce,
      expiresUnix: now + deps.config.oauth2CodeLifetime,
    })
  })
  return redirectWith(request.redirectUri, { code, state: request.state })
}

/** The person refuses: the client is told `access_denied` (RFC 6749 4.1.2.1); nothing is issued. */
export const deniedRedirect = (request: ValidAuthorization): string =>
  redirectWith(request.redirectUri, { error: 'access_denied', error_description: 'the request is denied', state: request.state })

// ---- the token endpoint ----------------------------------------------------------------------

/** The token endpoint's answer (RFC 6749 5.1), as Gitea's AccessTokenResponse. */
export interface TokenResponse {
  access_token: string
  token_type: 'bearer'
  expires_in: number
  refresh_token: string
  id_token?: string
}

/** A request parameter: at most once (RFC 6749 3.2), a string, bounded. */
function param(body: Record<string, unknown>, name: string): string {
  const value = body[name]
  if (value === undefined || value === null) return ''
  if (typeof value !== 'string') throw new OAuthError('invalid_request', `${name} must be given once, as text`)
  if (value.length > 4096) throw new OAuthError('invalid_request', `${name} is too long`)
  return value
}

/**
 * The client of a token request: `client_id` and `client_secret` in the body, or Basic credentials
 * (RFC 6749 2.3.1: each form-encoded), which must agree with the body where both say. A
 * confidential client must prove its secret; a public one has none (PKCE binds its codes).
 */
async function authenticateClient(deps: AppDeps, body: Record<string, unknown>, authorization: string | null): Promise<OAuth2ApplicationRow> {
  let clientId = param(body, 'client_id')
  let clientSecret = param(body, 'client_secret')
  if ((!clientId || !clientSecret) && authorization) {
    const [scheme, encoded] = authorization.trim().split(/\s+/, 2)
    if (scheme?.toLowerCase() !== 'basic' || !encoded) throw new OAuthError('invalid_request', 'cannot parse basic auth header')
    const decoded = Buffer.from(encoded, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon < 0) throw new OAuthError('invalid_request', 'cannot parse basic auth header')
    let id: string, secret: string
    try {
      id = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '))
      secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '))
    } catch {
      throw new OAuthError('invalid_request', 'cannot parse basic auth header')
    }
    if (clientId && clientId !== id) throw new OAuthError('invalid_request', 'client_id in request body inconsistent with Authorization header')
    if (clientSecret && clientSecret !== secret) throw new OAuthError('invalid_request', 'client_secret in request body inconsistent with Authorization header')
    clientId = id
    clientSecret = secret
  }
  const app = await applicationByClientId(deps, clientId)
  if (!app) throw new OAuthError('invalid_client', `cannot load client with client id: '${clientId}'`)
  if (app.confidentialClient && !clientSecretMatches(app, clientSecret))
    throw new OAuthError('invalid_client', clientSecret ? 'invalid client secret' : 'invalid empty client secret')
  return app
}

/** `POST /login/oauth/access_token`: a code or a refresh token exchanged for tokens. */
export async function tokenRequest(deps: AppDeps, body: Record<string, unknown>, authorization: string | null): Promise<TokenResponse> {
  const grantType = param(body, 'grant_type')
  if (grantType !== 'authorization_code' && grantType !== 'refresh_token')
    throw new OAuthError('unsupported_grant_type', 'Only refresh_token or authorization_code grant type is supported')
  const app = await authenticateClient(deps, body, authorization)
  // Loaded before the transaction (made on first start; read once per process).
  const key = await signingKey(deps.config.dataDir)
  return grantType === 'authorization_code' ? await exchangeCode(deps, app, body, key) : await refresh(deps, app, body, key)
}

/** Whether a PKCE verifier answers the code's challenge (RFC 7636 4.6). */
function verifierMatches(method: string, challenge: string, verifier: string): boolean {
  if (!method) return true
  if (!PKCE_VALUE.test(verifier)) return false
  const computed = method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier
  return computed === challenge
}

type Key = Awaited<ReturnType<typeof signingKey>>

/** What a transaction decided: tokens, or a refusal that is answered once its changes are committed. */
type Outcome = { tokens: TokenResponse } | { refused: OAuthError }

async function decided(deps: AppDeps, run: () => Promise<Outcome>): Promise<TokenResponse> {
  const outcome = await writeTransaction(deps.db, run)
  if ('refused' in outcome) throw outcome.refused
  return outcome.tokens
}

async function exchangeCode(deps: AppDeps, app: OAuth2ApplicationRow, body: Record<string, unknown>, key: Key): Promise<TokenResponse> {
  const code = param(body, 'code')
  const redirectUri = param(body, 'redirect_uri')
  const verifier = param(body, 'code_verifier')
  if (!code) throw new OAuthError('invalid_request', 'code is required')
  const now = nowUnix()
  return decided(deps, async () => {
    const [found] = await deps.db
      .select({ code: oauth2AuthorizationCodes, grant: oauth2Grants })
      .from(oauth2AuthorizationCodes)
      .innerJoin(oauth2Grants, eq(oauth2Grants.id, oauth2AuthorizationCodes.grantId))
      .where(eq(oauth2AuthorizationCodes.codeHash, hashToken(code)))
    if (!found || found.grant.applicationId !== app.id) return { refused: new OAuthError('invalid_grant', 'the authorization code is not valid for this client') }
    const refuse = async (description: string) => {
      // The code is spent by any refused use: a stolen one gets a single try. Deleted, not marked
      // used: a later try finds no code, where a used one's would revoke tokens it never issued.
      await deps.db.delete(oauth2AuthorizationCodes).where(eq(oauth2AuthorizationCodes.id, found.code.id))
      return { refused: new OAuthError('invalid_grant', description) }
    }
    if (found.code.used) {
      // RFC 6749 4.1.2: a code used twice has leaked; what it issued is revoked.
      await deps.db.delete(oauth2Tokens).where(eq(oauth2Tokens.grantId, found.grant.id))
      return { refused: new OAuthError('invalid_grant', 'authorization code already used; the tokens it issued are revoked') }
    }
    if (found.code.expiresUnix <= now) return refuse('authorization code expired')
    if (redirectUri !== found.code.redirectUri) return refuse('redirect_uri differs from the original authorization request')
    if (!verifierMatches(found.code.codeChallengeMethod, found.code.codeChallenge, verifier)) return refuse('failed PKCE code challenge')
    if (await barredFromSigningIn(deps, found.grant.userId)) return refuse(BARRED)
    // Claimed by a compare-and-set: of two exchanges at once, one gets tokens.
    const claimed = await deps.db
      .update(oauth2AuthorizationCodes)
      .set({ used: true })
      .where(and(eq(oauth2AuthorizationCodes.id, found.code.id), eq(oauth2AuthorizationCodes.used, false)))
      .returning({ id: oauth2AuthorizationCodes.id })
    if (claimed.length === 0) return { refused: new OAuthError('invalid_grant', 'authorization code already used') }
    return { tokens: await issueTokens(deps, app, found.grant, key, found.code.nonce) }
  })
}

const BARRED = 'the account is prohibited from signing in'

/** Whether the person of a grant may not sign in now (deleted, deactivated, prohibited): no tokens are issued to them, as no credential of theirs signs in (auth/caller.ts maySignIn). */
async function barredFromSigningIn(deps: AppDeps, userId: number): Promise<boolean> {
  const [user] = await deps.db.select({ isActive: users.isActive, prohibitLogin: users.prohibitLogin }).from(users).where(eq(users.id, userId))
  return !user || !maySignIn(user)
}

/** A token (access or refresh) by its secret, with its grant. */
async function tokenOf(deps: AppDeps, secret: string) {
  const [found] = await deps.db
    .select({ token: oauth2Tokens, grant: oauth2Grants })
    .from(oauth2Tokens)
    .innerJoin(oauth2Grants, eq(oauth2Grants.id, oauth2Tokens.grantId))
    .where(eq(oauth2Tokens.tokenHash, hashToken(secret)))
  return found
}

async function refresh(deps: AppDeps, app: OAuth2ApplicationRow, body: Record<string, unknown>, key: Key): Promise<TokenResponse> {
  const token = param(body, 'refresh_token')
  if (!token) throw new OAuthError('invalid_request', 'refresh_token is required')
  const now = nowUnix()
  return decided(deps, async () => {
    const found = await tokenOf(deps, token)
    if (!found || found.token.kind !== 'refresh' || found.grant.applicationId !== app.id || found.token.expiresUnix <= now)
      return { refused: new OAuthError('invalid_grant', 'the refresh token is not valid for this client') }
    // Refused without spending the token: an administrator may allow the account again.
    if (await barredFromSigningIn(deps, found.grant.userId)) return { refused: new OAuthError('invalid_grant', BARRED) }
    const claimed = found.token.used
      ? []
      : await deps.db
          .update(oauth2Tokens)
          .set({ used: true })
          .where(and(eq(oauth2Tokens.id, found.token.id), eq(oauth2Tokens.used, false)))
          .returning({ id: oauth2Tokens.id })
    if (claimed.length === 0) {
      // A rotated refresh token presented again has leaked (or its client lost track): the grant is
      // revoked with every token and code of it, and the person grants access anew.
      await deps.db.delete(oauth2Grants).where(eq(oauth2Grants.id, found.grant.id))
      return { refused: new OAuthError('invalid_grant', 'refresh token already used; the grant is revoked') }
    }
    return { tokens: await issueTokens(deps, app, found.grant, key, '') }
  })
}

/**
 * A new access token and refresh token of a grant (inside the caller's transaction), with an
 * id_token when `openid` was granted. Expired tokens are swept here.
 */
async function issueTokens(deps: AppDeps, app: OAuth2ApplicationRow, grant: OAuth2GrantRow, key: Key, nonce: string): Promise<TokenResponse> {
  const { config } = deps
  const now = nowUnix()
  const access = newSecret('oat_')
  const refreshToken = newSecret('ort_')
  await deps.db.delete(oauth2Tokens).where(lte(oauth2Tokens.expiresUnix, now))
  await deps.db.insert(oauth2Tokens).values([
    { grantId: grant.id, kind: 'access', tokenHash: hashToken(access), createdUnix: now, expiresUnix: now + config.oauth2AccessTokenLifetime },
    { grantId: grant.id, kind: 'refresh', tokenHash: hashToken(refreshToken), createdUnix: now, expiresUnix: now + config.oauth2RefreshTokenLifetime },
  ])
  const response: TokenResponse = { access_token: access, token_type: 'bearer', expires_in: config.oauth2AccessTokenLifetime, refresh_token: refreshToken }
  if (scopeHas(grant.scope, 'openid')) {
    const claims = await personClaims(deps, grant.userId, grant.scope)
    response.id_token = key.signJwt({
      iss: issuer(deps),
      sub: String(grant.userId),
      aud: app.clientId,
      iat: now,
      exp: now + config.oauth2AccessTokenLifetime,
      ...(nonce ? { nonce } : {}),
      ...claims,
    })
  }
  return response
}

const scopeHas = (scope: string, item: string) => scope.split(' ').includes(item)

/** The issuer of id_tokens and of the discovery document: the site's URL without its trailing slash (as Gitea). */
export const issuer = (deps: AppDeps): string => deps.config.baseUrl.replace(/\/$/, '')

/**
 * What an id_token and userinfo tell about a person: `name` and `preferred_username` always (the
 * login is public), `profile` with the `profile` scope, `email` and `email_verified` only with the
 * `email` scope and only for a verified primary address.
 */
async function personClaims(deps: AppDeps, userId: number, scope: string): Promise<Record<string, unknown>> {
  const [user] = await deps.db.select().from(users).where(eq(users.id, userId))
  if (!user) return {}
  const claims: Record<string, unknown> = { name: user.fullName || user.name, preferred_username: user.name }
  if (scopeHas(scope, 'profile')) {
    claims.profile = deps.config.baseUrl + encodeURIComponent(user.name)
    if (user.website) claims.website = user.website
    claims.updated_at = user.updatedUnix
  }
  if (scopeHas(scope, 'email')) {
    const [primary] = await deps.db
      .select({ email: emailAddresses.email, verified: emailAddresses.isActivated })
      .from(emailAddresses)
      .where(and(eq(emailAddresses.userId, userId), eq(emailAddresses.isPrimary, true)))
    if (primary?.verified) Object.assign(claims, { email: primary.email, email_verified: true })
  }
  return claims
}

/** `/login/oauth/userinfo` for the person of an access token of `grantId`: `sub` and the claims its scope allows. */
export async function userInfo(deps: AppDeps, user: UserRow, grantId: number): Promise<Record<string, unknown>> {
  const [grant] = await deps.db.select().from(oauth2Grants).where(eq(oauth2Grants.id, grantId))
  return { sub: String(user.id), ...(await personClaims(deps, user.id, grant?.scope ?? '')) }
}

/**
 * RFC 7009 revocation by the client: a refresh token ends every token of its grant, an access
 * token itself. An unknown token, or another client's, changes nothing and is answered the same.
 */
export async function revokeToken(deps: AppDeps, body: Record<string, unknown>, authorization: string | null): Promise<void> {
  const app = await authenticateClient(deps, body, authorization)
  const token = param(body, 'token')
  if (!token) throw new OAuthError('invalid_request', 'token is required')
  await writeTransaction(deps.db, async () => {
    const found = await tokenOf(deps, token)
    if (!found || found.grant.applicationId !== app.id) return
    if (found.token.kind === 'refresh') await deps.db.delete(oauth2Tokens).where(eq(oauth2Tokens.grantId, found.token.grantId))
    else await deps.db.delete(oauth2Tokens).where(eq(oauth2Tokens.id, found.token.id))
  })
}

// ---- the person's grants ---------------------------------------------------------------------

export type GrantWithApp = { grant: OAuth2GrantRow; app: Pick<OAuth2ApplicationRow, 'name' | 'clientId'> }

/** The applications a person granted access to, most recently updated first. */
export async function listGrants(deps: AppDeps, userId: number, page: Page | null): Promise<Paged<GrantWithApp>> {
  const where = eq(oauth2Grants.userId, userId)
  const query = deps.db
    .select({ grant: oauth2Grants, app: { name: oauth2Applications.name, clientId: oauth2Applications.clientId } })
    .from(oauth2Grants)
    .innerJoin(oauth2Applications, eq(oauth2Applications.id, oauth2Grants.applicationId))
    .where(where)
    .orderBy(desc(oauth2Grants.updatedUnix), asc(oauth2Grants.id))
  if (!page) {
    const rows = await query
    return { rows, total: rows.length }
  }
  const [rows, [{ n }]] = await Promise.all([query.limit(page.limit).offset(page.offset), deps.db.select({ n: count() }).from(oauth2Grants).where(where)])
  return { rows, total: n }
}

/** Revokes one of the person's grants: its tokens and codes go with it (a new authorisation asks again). */
export async function revokeGrant(deps: AppDeps, userId: number, idText: string): Promise<void> {
  const id = pathNumber(idText)
  const gone = Number.isSafeInteger(id)
    ? await writeTransaction(deps.db, async () =>
        await deps.db.delete(oauth2Grants).where(and(eq(oauth2Grants.id, id), eq(oauth2Grants.userId, userId))).returning({ id: oauth2Grants.id }),
      )
    : []
  if (gone.length === 0) throw notFound(`OAuth2 grant does not exist [id: ${idText}]`)
}
