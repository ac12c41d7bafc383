import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import { ApiError, notFound } from '../../lib/errors'
import { PageQuery } from '../../lib/pagination'
import { toApiOAuth2Application, toApiOAuth2Grant } from '../../convert/oauth2'
import { CreateOAuth2ApplicationOption, IdParams, OAuth2ApplicationSchema, OAuth2GrantSchema } from './model'
import { createApplication, deleteApplication, getApplication, listApplications, updateApplication } from './applications'
import { issuer, listGrants, OAuthError, revokeGrant, revokeToken, tokenRequest, userInfo } from './service'
import { signingKey } from './signing-key'
import { OIDC_SCOPES } from '../../auth/scopes'
import { API_PREFIX } from '../../lib/api-prefix'

const NoContent = { 204: t.Void() }

/**
 * The one guard of every OAuth2 route: 404 while OAuth2 is turned off (WARREN_OAUTH2_ENABLED=false),
 * each route then answering as if it did not exist (once the pipeline has passed the caller).
 */
const enabledGuard = (deps: AppDeps) => () => {
  if (!deps.config.oauth2Enabled) throw notFound('OAuth2 is disabled on this server')
}

/**
 * `/user/applications/oauth2` (Gitea's OAuth2 applications of the caller) and
 * `/user/oauth2/grants` (Warren's: the applications the caller granted access to, which Gitea
 * shows only on its settings page; revoking one ends its tokens).
 */
export const oauth2Module = (deps: AppDeps) =>
  new Elysia({ prefix: API_PREFIX, name: 'oauth2', detail: { tags: ['user'] } })
    .use(pipeline(deps))
    .onBeforeHandle(enabledGuard(deps))
    .get(
      '/user/applications/oauth2',
      async ({ user, page, respond }) => {
        return respond(await listApplications(deps, user.id, page), (rows) => rows.map((row) => toApiOAuth2Application(row)))
      },
      {
        scope: 'user',
        signed: true,
        paged: true,
        query: PageQuery,
        response: { 200: t.Array(OAuth2ApplicationSchema) },
        detail: { operationId: 'userGetOauth2Application', summary: "List the authenticated user's oauth2 applications" },
      },
    )
    .post(
      '/user/applications/oauth2',
      async ({ user, body, status }) => {
        const { row, secret } = await createApplication(deps, user.id, body)
        return status(201, toApiOAuth2Application(row, secret))
      },
      {
        scope: 'user',
        signed: true,
        body: CreateOAuth2ApplicationOption,
        response: { 201: OAuth2ApplicationSchema },
        detail: { operationId: 'userCreateOAuth2Application', summary: 'creates a new OAuth2 application' },
      },
    )
    .get(
      '/user/applications/oauth2/:id',
      async ({ user, params }) => {
        return toApiOAuth2Application(await getApplication(deps, user.id, params.id))
      },
      { scope: 'user', signed: true, params: IdParams, response: { 200: OAuth2ApplicationSchema }, detail: { operationId: 'userGetOAuth2Application', summary: 'get an OAuth2 Application' } },
    )
    .patch(
      '/user/applications/oauth2/:id',
      async ({ user, params, body }) => {
        const { row, secret } = await updateApplication(deps, user.id, params.id, body)
        return toApiOAuth2Application(row, secret)
      },
      {
        scope: 'user',
        signed: true,
        params: IdParams,
        body: CreateOAuth2ApplicationOption,
        response: { 200: OAuth2ApplicationSchema },
        detail: { operationId: 'userUpdateOAuth2Application', summary: 'update an OAuth2 Application, this includes regenerating the client secret' },
      },
    )
    .delete(
      '/user/applications/oauth2/:id',
      async ({ user, params, status }) => {
        await deleteApplication(deps, user.id, params.id)
        return status(204, undefined)
      },
      { scope: 'user', signed: true, params: IdParams, response: NoContent, detail: { operationId: 'userDeleteOAuth2Application', summary: 'delete an OAuth2 Application' } },
    )
    .get(
      '/user/oauth2/grants',
      async ({ user, page, respond }) => {
        return respond(await listGrants(deps, user.id, page), (rows) => rows.map((r) => toApiOAuth2Grant(r.grant, r.app)))
      },
      {
        scope: 'user',
        signed: true,
        paged: true,
        query: PageQuery,
        response: { 200: t.Array(OAuth2GrantSchema) },
        detail: { operationId: 'userListOAuth2Grants', summary: 'List the OAuth2 applications the authenticated user granted access to' },
      },
    )
    .delete(
      '/user/oauth2/grants/:id',
      async ({ user, params, status }) => {
        await revokeGrant(deps, user.id, params.id)
        return status(204, undefined)
      },
      { scope: 'user', signed: true, params: IdParams, response: NoContent, detail: { operationId: 'userRevokeOAuth2Grant', summary: "Revoke an OAuth2 application's access (its tokens stop working)" } },
    )

/** The token endpoint's headers (RFC 6749 5.1: never cached). */
const NO_STORE = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', pragma: 'no-cache' }

const json = (body: unknown, status = 200, extra: Record<string, string> = {}) => new Response(JSON.stringify(body), { status, headers: { ...NO_STORE, ...extra } })

/** An RFC 6749 5.2 error answer; `invalid_client` with Basic credentials says so in WWW-Authenticate. */
function oauthErrorResponse(e: OAuthError, request: Request): Response {
  const extra: Record<string, string> = e.status === 401 ? { 'www-authenticate': /^\s*basic\s/i.test(request.headers.get('authorization') ?? '') ? 'Basic realm="Warren OAuth2"' : 'Bearer realm="Warren OAuth2"' } : {}
  return json({ error: e.code, error_description: e.description }, e.status, extra)
}

/** The answer of the token or revocation endpoint: its JSON, or an RFC 6749 error. */
async function oauthAnswer(deps: AppDeps, request: Request, run: () => Promise<unknown>): Promise<Response> {
  try {
    return json(await run())
  } catch (e) {
    if (e instanceof OAuthError) return oauthErrorResponse(e, request)
    throw e
  }
}

const bodyObject = (body: unknown): Record<string, unknown> => (body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {})

/**
 * The provider's endpoints outside the API, at Gitea's paths: the token endpoint (form or JSON
 * bodies; client credentials by Basic or in the body), RFC 7009 revocation, the JWKS, the OpenID
 * Connect discovery document and userinfo. The token and revocation endpoints authenticate the
 * client, not a person, so they declare no caller need (the Authorization header holds the
 * client's credentials there).
 */
export const oauth2ProviderModule = (deps: AppDeps) => {
  return new Elysia({ name: 'oauth2-provider', detail: { hide: true } })
    .use(pipeline(deps))
    .onBeforeHandle(enabledGuard(deps))
    .post(
      '/login/oauth/access_token',
      ({ request, body }) => oauthAnswer(deps, request, () => tokenRequest(deps, bodyObject(body), request.headers.get('authorization'))),
      { detail: { operationId: 'oauth2AccessToken' } },
    )
    .post(
      '/login/oauth/revoke',
      ({ request, body }) => oauthAnswer(deps, request, async () => (await revokeToken(deps, bodyObject(body), request.headers.get('authorization')), {})),
      { detail: { operationId: 'oauth2Revoke' } },
    )
    .get(
      '/login/oauth/keys',
      async () => {
        const key = await signingKey(deps.config.dataDir)
        return new Response(JSON.stringify({ keys: [key.jwk] }), { headers: { 'content-type': 'application/json' } })
      },
      { detail: { operationId: 'oauth2Keys' } },
    )
    .get(
      '/.well-known/openid-configuration',
      () => {
        const base = issuer(deps)
        return {
          issuer: base,
          authorization_endpoint: `${base}/login/oauth/authorize`,
          token_endpoint: `${base}/login/oauth/access_token`,
          jwks_uri: `${base}/login/oauth/keys`,
          userinfo_endpoint: `${base}/login/oauth/userinfo`,
          revocation_endpoint: `${base}/login/oauth/revoke`,
          response_types_supported: ['code'],
          grant_types_supported: ['authorization_code', 'refresh_token'],
          id_token_signing_alg_values_supported: ['RS256'],
          subject_types_supported: ['public'],
          scopes_supported: [...OIDC_SCOPES],
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
          claims_supported: ['aud', 'exp', 'iat', 'iss', 'sub', 'nonce', 'name', 'preferred_username', 'profile', 'website', 'updated_at', 'email', 'email_verified'],
          code_challenge_methods_supported: ['plain', 'S256'],
        }
      },
      { detail: { operationId: 'oidcDiscovery' } },
    )
    .get('/login/oauth/userinfo', ({ caller }) => userInfoAnswer(deps, caller), { caller: true, detail: { operationId: 'oidcUserInfo' } })
    .post('/login/oauth/userinfo', ({ caller }) => userInfoAnswer(deps, caller), { caller: true, detail: { operationId: 'oidcUserInfoPost' } })
}

/** Userinfo answers only an OAuth2 access token's person (as Gitea: not a password, nor a personal token). */
async function userInfoAnswer(deps: AppDeps, caller: { user: Parameters<typeof userInfo>[1] | null; grantId?: number }) {
  if (!caller.user || caller.grantId === undefined)
    throw new ApiError(401, 'no valid authorization', {}, { 'www-authenticate': 'Bearer realm="Warren OAuth2", error="invalid_token"' })
  return await userInfo(deps, caller.user, caller.grantId)
}
