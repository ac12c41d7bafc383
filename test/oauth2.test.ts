import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createPublicKey, verify } from 'node:crypto'
import { statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { count, eq } from 'drizzle-orm'
import { giteaApi } from 'gitea-js'
import { oauth2Grants, oauth2Tokens } from '../src/db/schema'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { empty, fails, ok } from './gitea-calls'
import { git, gitOk, remoteUrl, tempDir } from './git-fixture'
import { authorize, consent, jwtClaims, pkce, tokenCall, visit, webSignIn } from './oauth2-fixture'

/**
 * Warren as an OAuth2 / OpenID Connect provider over plain HTTP: the applications API (through
 * gitea-js), the code flow with PKCE through the sign-in and consent forms, the tokens on the API
 * and on git over HTTP within their scope, refresh rotation, and every refusal leaving nothing
 * issued. Then the login flows of Woodpecker CI and Drone, call by call.
 */

let s: TestServer
let alice: TestUser, bob: TestUser
let cookie: string
const REDIRECT = 'http://127.0.0.1:9/callback'

/** Tokens in the database: a refusal must leave this unchanged. */
const tokensIssued = async () => (await s.deps.db.select({ n: count() }).from(oauth2Tokens))[0]!.n

type App = { id: number; client_id: string; client_secret: string }

async function newApp(owner: TestUser, opts: { confidential?: boolean; uris?: string[]; name?: string } = {}): Promise<App> {
  const api = giteaApi(s.url, { token: owner.token })
  return (await ok(
    api.user.userCreateOAuth2Application({ name: opts.name ?? 'CI', confidential_client: opts.confidential ?? true, redirect_uris: opts.uris ?? [REDIRECT] }),
    201,
  )) as App
}

/** A fresh code for `app` (S256 PKCE unless `challenge: false`), with the verifier. */
async function newCode(app: App, extra: Record<string, string> = {}, challenge = true) {
  const { verifier, challenge: c } = pkce()
  const params: Record<string, string> = { client_id: app.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 'st-' + Math.random(), ...extra }
  if (challenge) Object.assign(params, { code_challenge: c, code_challenge_method: 'S256' })
  const back = await authorize(s, cookie, params)
  expect(back.searchParams.get('state')).toBe(params.state!)
  const code = back.searchParams.get('code')
  expect(code).toMatch(/^[0-9a-f]{64}$/)
  return { code: code!, verifier }
}

const exchange = (app: App, code: string, verifier: string, extra: Record<string, string> = {}) =>
  tokenCall(s, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: app.client_id, client_secret: app.client_secret, ...extra })

const bearer = (token: string, path: string, init: RequestInit = {}) =>
  fetch(`${s.url}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) } })

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice', { email: 'alice@example.com' })
  bob = await s.user('bob')
  expect((await s.post('/user/repos', { name: 'demo', auto_init: true, private: true }, { token: alice.token })).status).toBe(201)
  cookie = await webSignIn(s, alice)
})
afterAll(() => s.stop())

describe('applications API', () => {
  test('create (the secret shown once), list, get, update (a new secret), delete; another user sees none of it', async () => {
    const api = giteaApi(s.url, { token: alice.token })
    const made = (await ok(api.user.userCreateOAuth2Application({ name: 'Woodpecker', confidential_client: true, redirect_uris: [REDIRECT, 'https://ci.example.com/authorize'] }), 201)) as App & Record<string, unknown>
    expect(made.client_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(made.client_secret).toMatch(/^ocs_[0-9a-f]{64}$/)
    expect(made).toMatchObject({ name: 'Woodpecker', confidential_client: true, skip_secondary_authorization: false, redirect_uris: [REDIRECT, 'https://ci.example.com/authorize'] })
    expect(typeof made.created).toBe('string')
    const listed = await ok(api.user.userGetOauth2Application())
    expect(listed.find((a) => a.id === made.id)).toMatchObject({ name: 'Woodpecker', client_secret: '' })
    expect(await ok(api.user.userGetOAuth2Application(made.id))).toMatchObject({ client_id: made.client_id, client_secret: '' })

    // Gitea's PATCH replaces the fields and regenerates the secret: the old one stops working.
    const updated = (await ok(api.user.userUpdateOAuth2Application(made.id, { name: 'Woodpecker CI', confidential_client: true, redirect_uris: [REDIRECT] }))) as App & { name: string }
    expect(updated.name).toBe('Woodpecker CI')
    expect(updated.client_secret).toMatch(/^ocs_/)
    expect(updated.client_secret).not.toBe(made.client_secret)
    const { code, verifier } = await newCode(updated)
    const before = await tokensIssued()
    const old = await exchange(updated, code, verifier, { client_secret: made.client_secret })
    expect(old.status).toBe(401)
    expect(old.body.error).toBe('invalid_client')
    expect(await tokensIssued()).toBe(before)
    expect((await exchange(updated, code, verifier)).status).toBe(200)

    // Bob sees none of Alice's applications, and cannot change them.
    const asBob = giteaApi(s.url, { token: bob.token })
    expect((await ok(asBob.user.userGetOauth2Application())).length).toBe(0)
    await fails(asBob.user.userGetOAuth2Application(made.id), 404)
    await fails(asBob.user.userUpdateOAuth2Application(made.id, { name: 'x', redirect_uris: [REDIRECT] }), 404)
    await fails(asBob.user.userDeleteOAuth2Application(made.id), 404)

    await empty(api.user.userDeleteOAuth2Application(made.id))
    await fails(api.user.userGetOAuth2Application(made.id), 404)
    expect((await s.get('/user/applications/oauth2')).status).toBe(401)
  })

  test('a name and at least one redirect URI are required; a URI with a fragment, a script scheme or no host is refused', async () => {
    const api = giteaApi(s.url, { token: alice.token })
    for (const body of [
      { name: 'x' },
      { name: 'x', redirect_uris: [] },
      { redirect_uris: [REDIRECT] },
      { name: 'x', redirect_uris: ['https://ci.example.com/cb#frag'] },
      { name: 'x', redirect_uris: ['javascript:alert(1)'] },
      { name: 'x', redirect_uris: ['not a uri'] },
      { name: 'x', redirect_uris: ['https://'] },
    ])
      await fails(api.user.userCreateOAuth2Application(body), 422)
    // A native application's own scheme is a redirect URI too (RFC 8252 7.1).
    await ok(api.user.userCreateOAuth2Application({ name: 'native', redirect_uris: ['com.example.app:/oauth2redirect'] }), 201)
  })
})

describe('the code flow', () => {
  test('PKCE S256 → tokens and an id_token signed by the JWKS key; the API within the granted scope; userinfo; git over HTTP', async () => {
    const app = await newApp(alice)
    const { verifier, challenge } = pkce()
    const params = { client_id: app.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 'xyz', scope: 'openid email profile read:repository read:user', nonce: 'n-0S6', code_challenge: challenge, code_challenge_method: 'S256' }
    // Not signed in: the web sign-in first, coming back to the same request.
    const anonymous = await visit(s, `/login/oauth/authorize?${new URLSearchParams(params)}`)
    expect(anonymous.status).toBe(303)
    const login = new URL(anonymous.headers.get('location')!, s.url)
    expect(login.pathname).toBe('/user/login')
    expect(login.searchParams.get('redirect_to')).toBe(`/login/oauth/authorize?${new URLSearchParams(params)}`)

    const page = await visit(s, `/login/oauth/authorize?${new URLSearchParams(params)}`, cookie)
    const html = await page.clone().text()
    expect(html).toContain('Authorize CI')
    expect(html).toContain('read:repository,read:user')
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:9")
    const back = new URL(await consent(s, cookie, page, true))
    expect(back.origin + back.pathname).toBe(REDIRECT)
    expect(back.searchParams.get('state')).toBe('xyz')
    const code = back.searchParams.get('code')!

    const res = await exchange(app, code, verifier)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const tokens = res.body
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600 })
    expect(tokens.access_token).toMatch(/^oat_[0-9a-f]{64}$/)
    expect(tokens.refresh_token).toMatch(/^ort_[0-9a-f]{64}$/)

    // The id_token: RS256, signed by the key the JWKS publishes, with Gitea's claims.
    const jwks = (await (await fetch(`${s.url}/login/oauth/keys`)).json()) as { keys: Record<string, string>[] }
    const [head, payload, signature] = tokens.id_token.split('.')
    const header = JSON.parse(Buffer.from(head, 'base64url').toString())
    expect(header).toMatchObject({ alg: 'RS256', kid: jwks.keys[0]!.kid })
    const key = createPublicKey({ key: jwks.keys[0] as any, format: 'jwk' })
    expect(verify('sha256', Buffer.from(`${head}.${payload}`), key, Buffer.from(signature, 'base64url'))).toBe(true)
    expect(jwtClaims(tokens.id_token)).toMatchObject({
      iss: s.url,
      aud: app.client_id,
      sub: String(alice.user.id),
      nonce: 'n-0S6',
      preferred_username: 'alice',
      email: 'alice@example.com',
      email_verified: true,
    })
    // The signing key was made in the data folder, readable by Warren alone.
    expect(statSync(join(s.dataDir, 'jwt', 'private.pem')).mode & 0o777).toBe(0o600)

    // The API, as Bearer and as `token`, within read:repository and read:user.
    const me = await bearer(tokens.access_token, '/user')
    expect(me.status).toBe(200)
    expect(((await me.json()) as { login: string }).login).toBe('alice')
    expect((await s.get('/repos/alice/demo', { token: tokens.access_token })).status).toBe(200)
    const beyond = await bearer(tokens.access_token, '/user/repos', { method: 'POST', body: JSON.stringify({ name: 'not-allowed' }) })
    expect(beyond.status).toBe(403)
    expect(((await beyond.json()) as { message: string }).message).toContain('token does not have at least one of required scope(s)')
    expect((await s.get('/repos/alice/not-allowed', { token: alice.token })).status).toBe(404)
    expect((await bearer(tokens.access_token, '/repos/alice/demo/issues', { method: 'POST', body: JSON.stringify({ title: 'x' }) })).status).toBe(403)

    // userinfo answers an OAuth2 access token only.
    const info = await fetch(`${s.url}/login/oauth/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(await info.json()).toMatchObject({ sub: String(alice.user.id), preferred_username: 'alice', email: 'alice@example.com', email_verified: true })
    expect((await fetch(`${s.url}/login/oauth/userinfo`, { headers: { authorization: `token ${alice.token}` } })).status).toBe(401)
    expect((await fetch(`${s.url}/login/oauth/userinfo`)).status).toBe(401)

    // git over HTTP with the token as the password (a private repository): clone (read:repository) yes, push no.
    expect((await git(tempDir(), 'ls-remote', remoteUrl(s.url, 'alice/demo.git'))).code).not.toBe(0)
    const dir = join(tempDir(), 'demo')
    await gitOk(tempDir(), 'clone', '-q', remoteUrl(s.url, 'alice/demo.git', 'alice', tokens.access_token), dir)
    writeFileSync(join(dir, 'new.txt'), 'x\n')
    await gitOk(dir, 'add', '.')
    await gitOk(dir, 'commit', '-q', '-m', 'x')
    const push = await git(dir, 'push', '-q', 'origin', 'HEAD:main')
    expect(push.code).not.toBe(0)
  })

  test('refresh tokens rotate; a used one presented again revokes the grant and every token of it', async () => {
    const app = await newApp(alice, { name: 'rotating' })
    const { code, verifier } = await newCode(app, { scope: 'openid' })
    const first = (await exchange(app, code, verifier)).body
    const refresh = (token: string, extra: Record<string, string> = {}) =>
      tokenCall(s, { grant_type: 'refresh_token', refresh_token: token, ...extra }, { basic: [app.client_id, app.client_secret] })
    const second = await refresh(first.refresh_token)
    expect(second.status).toBe(200)
    expect(second.body.refresh_token).not.toBe(first.refresh_token)
    expect(jwtClaims(second.body.id_token).sub).toBe(String(alice.user.id))
    expect((await bearer(second.body.access_token, '/user')).status).toBe(200)
    // Another client cannot use it.
    const other = await newApp(alice, { name: 'other' })
    const stolen = await tokenCall(s, { grant_type: 'refresh_token', refresh_token: second.body.refresh_token, client_id: other.client_id, client_secret: other.client_secret })
    expect(stolen.body.error).toBe('invalid_grant')

    const before = await tokensIssued()
    const replay = await refresh(first.refresh_token)
    expect(replay.status).toBe(400)
    expect(replay.body.error).toBe('invalid_grant')
    expect(await tokensIssued()).toBeLessThan(before)
    expect((await bearer(second.body.access_token, '/user')).status).toBe(401)
    expect((await refresh(second.body.refresh_token)).body.error).toBe('invalid_grant')
  })

  test('a confidential client granted before is sent back at once; a public one is asked again; loopback redirect URIs of a public client take any port', async () => {
    const app = await newApp(alice, { name: 'again' })
    await newCode(app)
    const direct = await visit(s, `/login/oauth/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 's' })}`, cookie)
    expect(direct.status).toBe(303)
    expect(new URL(direct.headers.get('location')!).searchParams.get('code')).toMatch(/^[0-9a-f]{64}$/)
    // Another scope than the one granted is asked for again.
    const wider = await visit(s, `/login/oauth/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 's', scope: 'write:repository' })}`, cookie)
    expect(wider.status).toBe(200)

    const cli = await newApp(alice, { name: 'cli', confidential: false, uris: ['http://127.0.0.1/callback'] })
    const { verifier, challenge } = pkce()
    const params = { client_id: cli.client_id, redirect_uri: 'http://127.0.0.1:53117/callback', response_type: 'code', state: 's', code_challenge: challenge, code_challenge_method: 'S256' }
    for (let i = 0; i < 2; i++) expect((await visit(s, `/login/oauth/authorize?${new URLSearchParams(params)}`, cookie)).status).toBe(200)
    const back = new URL(await consent(s, cookie, await visit(s, `/login/oauth/authorize?${new URLSearchParams(params)}`, cookie), true))
    expect(back.port).toBe('53117')
    // A public client has no secret: the code and the verifier are its proof.
    const res = await tokenCall(s, { grant_type: 'authorization_code', client_id: cli.client_id, code: back.searchParams.get('code')!, code_verifier: verifier, redirect_uri: 'http://127.0.0.1:53117/callback' })
    expect(res.status).toBe(200)
    // Any port is for loopback only.
    const elsewhere = await visit(s, `/login/oauth/authorize?${new URLSearchParams({ ...params, redirect_uri: 'http://example.com:53117/callback' })}`, cookie)
    expect(elsewhere.status).toBe(400)
  })

  test('PKCE plain, JSON bodies and Basic client credentials; a denied consent sends access_denied', async () => {
    const app = await newApp(alice, { name: 'plain' })
    const verifier = 'v'.repeat(50)
    const { code } = await newCode(app, { code_challenge: verifier, code_challenge_method: 'plain' }, false)
    const res = await tokenCall(s, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT }, { basic: [app.client_id, app.client_secret], json: true })
    expect(res.status).toBe(200)

    const fresh = await newApp(alice, { name: 'declined' })
    const page = await visit(s, `/login/oauth/authorize?${new URLSearchParams({ client_id: fresh.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 'no' })}`, cookie)
    const denied = new URL(await consent(s, cookie, page, false))
    expect(denied.searchParams.get('error')).toBe('access_denied')
    expect(denied.searchParams.get('state')).toBe('no')
    expect(denied.searchParams.get('code')).toBeNull()
    expect((await s.get('/user/oauth2/grants', { token: alice.token })).body.some((g: any) => g.application.client_id === fresh.client_id)).toBe(false)
  })
})

describe('refusals leave nothing issued', () => {
  test('wrong code_verifier (and the code is spent), a reused code (which revokes what it issued), a redirect URI not registered, an expired code, a wrong client secret', async () => {
    const app = await newApp(alice, { name: 'refusals' })

    // A wrong verifier: refused, and the code cannot be tried again.
    let before = await tokensIssued()
    const wrong = await newCode(app)
    const bad = await exchange(app, wrong.code, pkce().verifier)
    expect(bad.body).toMatchObject({ error: 'invalid_grant', error_description: 'failed PKCE code challenge' })
    expect((await exchange(app, wrong.code, wrong.verifier)).body.error).toBe('invalid_grant')
    // ... which revokes nothing: the code issued no token (a holder of a code is not to end the person's other sessions).
    const kept = await newCode(app)
    const keptTokens = await exchange(app, kept.code, kept.verifier)
    expect(keptTokens.status).toBe(200)
    const spent = await newCode(app)
    expect((await exchange(app, spent.code, pkce().verifier)).body.error).toBe('invalid_grant')
    expect((await exchange(app, spent.code, spent.verifier)).body.error).toBe('invalid_grant')
    expect((await bearer(keptTokens.body.access_token, '/user')).status).toBe(200)
    before = await tokensIssued()
    const missing = await newCode(app)
    expect((await exchange(app, missing.code, '')).body.error).toBe('invalid_grant')
    expect(await tokensIssued()).toBe(before)

    // A code used twice: the second use is refused and revokes what the first one issued.
    const once = await newCode(app)
    const good = await exchange(app, once.code, once.verifier)
    expect(good.status).toBe(200)
    before = await tokensIssued()
    const reused = await exchange(app, once.code, once.verifier)
    expect(reused.body.error).toBe('invalid_grant')
    expect(await tokensIssued()).toBeLessThan(before)
    expect((await bearer(good.body.access_token, '/user')).status).toBe(401)

    // A redirect URI not registered: an error page, never a redirect to it.
    before = await tokensIssued()
    const unregistered = await visit(s, `/login/oauth/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: 'https://evil.example/cb', response_type: 'code', state: 's' })}`, cookie)
    expect(unregistered.status).toBe(400)
    expect(unregistered.headers.get('location')).toBeNull()
    expect(await unregistered.text()).toContain('redirect URI is not registered')
    // ... nor a near one (exact match), nor at the exchange.
    expect((await visit(s, `/login/oauth/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: REDIRECT + '/', response_type: 'code' })}`, cookie)).status).toBe(400)
    const other = await newCode(app)
    expect((await exchange(app, other.code, other.verifier, { redirect_uri: 'https://evil.example/cb' })).body.error).toBe('invalid_grant')
    // An unknown client: an error page too.
    expect((await visit(s, `/login/oauth/authorize?${new URLSearchParams({ client_id: 'nobody', redirect_uri: REDIRECT, response_type: 'code' })}`, cookie)).status).toBe(400)
    expect(await tokensIssued()).toBe(before)

    // An expired code (the lifetime is a setting: here one second less than none, so the code is
    // issued a second past its expiry, with no wait for the clock).
    s.config.oauth2CodeLifetime = -1
    try {
      const late = await newCode(app)
      const expired = await exchange(app, late.code, late.verifier)
      expect(expired.body).toMatchObject({ error: 'invalid_grant', error_description: 'authorization code expired' })
    } finally {
      s.config.oauth2CodeLifetime = 600
    }
    expect(await tokensIssued()).toBe(before)

    // A wrong client secret, in the body or by Basic; an unknown client.
    const fine = await newCode(app)
    for (const res of [
      await exchange(app, fine.code, fine.verifier, { client_secret: 'ocs_' + '0'.repeat(64) }),
      await exchange(app, fine.code, fine.verifier, { client_secret: '' }),
      await tokenCall(s, { grant_type: 'authorization_code', code: fine.code, code_verifier: fine.verifier, redirect_uri: REDIRECT }, { basic: [app.client_id, 'wrong'] }),
      await exchange(app, fine.code, fine.verifier, { client_id: 'nobody' }),
    ]) {
      expect(res.status).toBe(401)
      expect(res.body.error).toBe('invalid_client')
    }
    expect(await tokensIssued()).toBe(before)
    // The code is still good for its client.
    expect((await exchange(app, fine.code, fine.verifier)).status).toBe(200)

    // Other malformed requests: RFC 6749's errors.
    expect((await tokenCall(s, { grant_type: 'password', username: 'alice', password: alice.password })).body.error).toBe('unsupported_grant_type')
    expect((await tokenCall(s, { grant_type: 'authorization_code', client_id: app.client_id, client_secret: app.client_secret })).body.error).toBe('invalid_request')
  })

  test('a public client without PKCE is refused at the authorization request (sent back with invalid_request)', async () => {
    const cli = await newApp(alice, { name: 'no-pkce', confidential: false })
    const res = await visit(s, `/login/oauth/authorize?${new URLSearchParams({ client_id: cli.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 'p' })}`, cookie)
    expect(res.status).toBe(303)
    const back = new URL(res.headers.get('location')!)
    expect(back.searchParams.get('error')).toBe('invalid_request')
    expect(back.searchParams.get('error_description')).toBe('PKCE is required for public clients')
    expect(back.searchParams.get('state')).toBe('p')
    const unsupported = await visit(s, `/login/oauth/authorize?${new URLSearchParams({ client_id: cli.client_id, redirect_uri: REDIRECT, response_type: 'token' })}`, cookie)
    expect(new URL(unsupported.headers.get('location')!).searchParams.get('error')).toBe('unsupported_response_type')
  })

  test('a revoked grant: its tokens stop working on the API and git, its refresh token is refused, and the next authorization asks again', async () => {
    const app = await newApp(alice, { name: 'revoked' })
    const { code, verifier } = await newCode(app)
    const tokens = (await exchange(app, code, verifier)).body
    expect((await bearer(tokens.access_token, '/user')).status).toBe(200)
    const grants = await s.get('/user/oauth2/grants', { token: alice.token })
    expect(grants.status).toBe(200)
    const grant = grants.body.find((g: any) => g.application.client_id === app.client_id)
    expect(grant).toMatchObject({ application: { name: 'revoked' }, scope: '' })
    expect((await s.del(`/user/oauth2/grants/${grant.id}`, undefined, { token: bob.token })).status).toBe(404)
    expect((await s.del(`/user/oauth2/grants/${grant.id}`, undefined, { token: alice.token })).status).toBe(204)
    const before = await tokensIssued()
    expect((await bearer(tokens.access_token, '/user')).status).toBe(401)
    expect((await git(tempDir(), 'ls-remote', remoteUrl(s.url, 'alice/demo.git', 'alice', tokens.access_token))).code).not.toBe(0)
    expect((await tokenCall(s, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: app.client_id, client_secret: app.client_secret })).body.error).toBe('invalid_grant')
    expect(await tokensIssued()).toBe(before)
    const page = await visit(s, `/login/oauth/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 's' })}`, cookie)
    expect(page.status).toBe(200)
    // Deleting the application ends every grant of it.
    await newCode(app)
    await empty(giteaApi(s.url, { token: alice.token }).user.userDeleteOAuth2Application(app.id))
    expect((await s.deps.db.select({ n: count() }).from(oauth2Grants).where(eq(oauth2Grants.applicationId, app.id)))[0]!.n).toBe(0)
    expect((await s.get('/user/oauth2/grants', { token: alice.token })).body.some((g: any) => g.application.client_id === app.client_id)).toBe(false)
  })

  test('the settings page lists the authorized applications and revokes one (CSRF-checked)', async () => {
    const app = await newApp(alice, { name: 'Settings Page App' })
    const { code, verifier } = await newCode(app)
    const tokens = (await exchange(app, code, verifier)).body
    const page = await visit(s, '/user/settings/applications/oauth2', cookie)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('Settings Page App')
    const action = new RegExp(`action="(/user/settings/applications/oauth2/grants/\\d+/revoke)"`).exec(html.slice(html.indexOf('Settings Page App')))![1]!
    const forged = await fetch(s.url + action, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: '_csrf=forged' })
    expect(forged.status).toBe(403)
    expect((await bearer(tokens.access_token, '/user')).status).toBe(200)
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1]!
    const revoked = await fetch(s.url + action, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: `_csrf=${csrf}` })
    expect(revoked.status).toBe(303)
    expect((await bearer(tokens.access_token, '/user')).status).toBe(401)
    expect(await (await visit(s, '/user/settings/applications/oauth2', cookie)).text()).not.toContain('Settings Page App')
    expect((await visit(s, '/user/settings/applications/oauth2')).status).toBe(303)
  })
})

describe('what no grant comes from', () => {
  test('a token or a password sent to the authorization page is no session: sent to sign in, no code, even for an application granted before', async () => {
    const app = await newApp(alice, { name: 'granted-before' })
    // Granted once in the browser (a confidential client is then sent back at once).
    await newCode(app)
    const { challenge } = pkce()
    const params = new URLSearchParams({ client_id: app.client_id, redirect_uri: REDIRECT, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' })
    const scoped = (await s.post('/users/alice/tokens', { name: 'narrow', scopes: ['read:misc'] }, { basic: [alice.name, alice.password] })).body.sha1 as string
    for (const authorization of [`token ${scoped}`, alice.basic]) {
      const res = await fetch(`${s.url}/login/oauth/authorize?${params}`, { redirect: 'manual', headers: { accept: 'text/html', authorization } })
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toStartWith('/user/login?redirect_to=')
    }
    const asToken = await fetch(`${s.url}/login/oauth/authorize?${params}&access_token=${scoped}`, { redirect: 'manual', headers: { accept: 'text/html' } })
    expect(asToken.headers.get('location')).toStartWith('/user/login?redirect_to=')
    // The consent form's answer too.
    const grant = await fetch(`${s.url}/login/oauth/grant`, { method: 'POST', redirect: 'manual', headers: { authorization: `token ${scoped}`, 'content-type': 'application/x-www-form-urlencoded' }, body: `${params}&granted=true` })
    expect(grant.status).toBe(401)
    expect(grant.headers.get('location')).toBeNull()
  })

  test('an account prohibited from signing in gets no tokens: neither for a code nor for a refresh token (kept for when it is allowed again)', async () => {
    const carol = await s.user('carol')
    const carolCookie = await webSignIn(s, carol)
    const app = await newApp(alice, { name: 'for-carol' })
    const codeFor = async (verifier: string) =>
      (await authorize(s, carolCookie, { client_id: app.client_id, redirect_uri: REDIRECT, response_type: 'code', code_challenge: verifier, code_challenge_method: 'plain' })).searchParams.get('code')!
    const admin = await s.user('site-admin', { admin: true })
    const issued = await exchange(app, await codeFor('x'.repeat(43)), 'x'.repeat(43))
    expect(issued.status).toBe(200)
    const pendingCode = await codeFor('y'.repeat(43))
    expect((await s.patch('/admin/users/carol', { login_name: 'carol', source_id: 0, prohibit_login: true }, { token: admin.token })).status).toBe(200)
    const before = await tokensIssued()
    const byCode = await exchange(app, pendingCode, 'y'.repeat(43))
    expect(byCode.body).toMatchObject({ error: 'invalid_grant', error_description: 'the account is prohibited from signing in' })
    const byRefresh = await tokenCall(s, { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token, client_id: app.client_id, client_secret: app.client_secret })
    expect(byRefresh.body).toMatchObject({ error: 'invalid_grant', error_description: 'the account is prohibited from signing in' })
    expect(await tokensIssued()).toBe(before)
    // Allowed again: the refresh token still works.
    expect((await s.patch('/admin/users/carol', { login_name: 'carol', source_id: 0, prohibit_login: false }, { token: admin.token })).status).toBe(200)
    expect((await tokenCall(s, { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token, client_id: app.client_id, client_secret: app.client_secret })).status).toBe(200)
  })
})

describe('discovery and the on/off switch', () => {
  test('the discovery document names the endpoints; with OAuth2 off every endpoint answers 404 and tokens sign nobody in', async () => {
    const doc = (await (await fetch(`${s.url}/.well-known/openid-configuration`)).json()) as Record<string, any>
    expect(doc).toMatchObject({
      issuer: s.url,
      authorization_endpoint: `${s.url}/login/oauth/authorize`,
      token_endpoint: `${s.url}/login/oauth/access_token`,
      jwks_uri: `${s.url}/login/oauth/keys`,
      userinfo_endpoint: `${s.url}/login/oauth/userinfo`,
      code_challenge_methods_supported: ['plain', 'S256'],
      id_token_signing_alg_values_supported: ['RS256'],
    })
    const app = await newApp(alice, { name: 'switch' })
    const { code, verifier } = await newCode(app)
    const tokens = (await exchange(app, code, verifier)).body
    s.config.oauth2Enabled = false
    try {
      expect((await fetch(`${s.url}/.well-known/openid-configuration`)).status).toBe(404)
      expect((await fetch(`${s.url}/login/oauth/keys`)).status).toBe(404)
      expect((await tokenCall(s, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).status).toBe(404)
      expect((await visit(s, `/login/oauth/authorize?client_id=${app.client_id}`, cookie)).status).toBe(404)
      expect((await s.get('/user/applications/oauth2', { token: alice.token })).status).toBe(404)
      expect((await bearer(tokens.access_token, '/user')).status).toBe(401)
    } finally {
      s.config.oauth2Enabled = true
    }
    expect((await bearer(tokens.access_token, '/user')).status).toBe(200)
  })
})

describe('the login flows of CI servers, call by call', () => {
  /** A browser that is not signed in: the authorisation request sends it through the sign-in form and back. */
  async function signInThroughAuthorize(authorizeUrl: string, user: TestUser): Promise<{ cookie: string; page: Response }> {
    const first = await visit(s, authorizeUrl)
    expect(first.status).toBe(303)
    const login = new URL(first.headers.get('location')!, s.url)
    expect(login.pathname).toBe('/user/login')
    const form = await fetch(login, { headers: { accept: 'text/html' } })
    const pre = form.headers.getSetCookie().find((c) => c.startsWith('warren_csrf='))!.split(';')[0]!
    const fields = Object.fromEntries([...(await form.text()).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replace(/&amp;/g, '&')]))
    const signed = await fetch(`${s.url}/user/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, user_name: user.name, password: user.password }),
    })
    expect(signed.status).toBe(303)
    const back = signed.headers.get('location')!
    expect(back).toBe(authorizeUrl.slice(s.url.length))
    const session = signed.headers.getSetCookie().find((c) => c.startsWith('warren_session='))!.split(';')[0]!
    return { cookie: session, page: await visit(s, back, session) }
  }

  test('Woodpecker (server/forge/gitea: golang.org/x/oauth2 and the Gitea SDK)', async () => {
    const callback = 'https://ci.example.com/authorize'
    const app = await newApp(alice, { name: 'Woodpecker', uris: [callback] })
    // Login: no code yet, so a redirect to AuthCodeURL("woodpecker").
    const authorizeUrl = `${s.url}/login/oauth/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: callback, response_type: 'code', state: 'woodpecker' })}`
    const { cookie: session, page } = await signInThroughAuthorize(authorizeUrl, alice)
    const back = new URL(await consent(s, session, page, true))
    expect(back.origin + back.pathname).toBe(callback)
    expect(back.searchParams.get('state')).toBe('woodpecker')
    // config.Exchange: the client credentials in the header first (AuthStyleAutoDetect), a form body.
    const exchanged = await tokenCall(s, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: callback }, { basic: [app.client_id, app.client_secret] })
    expect(exchanged.status).toBe(200)
    const { access_token: token, refresh_token: refreshToken, expires_in } = exchanged.body
    expect(expires_in).toBeGreaterThan(0)
    // gitea.NewClient checks the version, then GetMyUserInfo.
    const sdk = (path: string, init: RequestInit = {}) =>
      fetch(`${s.url}/api/v1${path}`, { ...init, headers: { authorization: `token ${token}`, 'content-type': 'application/json', accept: 'application/json' } })
    expect(((await (await sdk('/version')).json()) as { version: string }).version).toMatch(/^1\./)
    const me = (await (await sdk('/user')).json()) as { id: number; login: string; email: string; avatar_url: string }
    expect(me).toMatchObject({ id: alice.user.id, login: 'alice', email: 'alice@example.com' })
    // Teams (ListMyOrgs) and Repos (ListMyRepos), paged by 50.
    expect((await sdk('/user/orgs?page=1&limit=50')).status).toBe(200)
    const repos = (await (await sdk('/user/repos?page=1&limit=50')).json()) as { full_name: string; private: boolean }[]
    expect(repos.map((r) => r.full_name)).toContain('alice/demo')
    // Repo, BranchHead, Branches, File, Activate (a hook), Status, Deactivate.
    const repo = (await (await sdk('/repos/alice/demo')).json()) as { id: number; clone_url: string }
    expect((await sdk(`/repositories/${repo.id}`)).status).toBe(200)
    const branch = (await (await sdk('/repos/alice/demo/branches/main')).json()) as { commit: { id: string } }
    expect(branch.commit.id).toMatch(/^[0-9a-f]{40}$/)
    expect((await sdk('/repos/alice/demo/branches?page=1&limit=50')).status).toBe(200)
    const file = await sdk(`/repos/alice/demo/raw/README.md?ref=${branch.commit.id}`)
    expect(file.status).toBe(200)
    expect(await file.text()).toContain('demo')
    const hook = await sdk('/repos/alice/demo/hooks', {
      method: 'POST',
      body: JSON.stringify({ type: 'gitea', config: { url: 'https://ci.example.com/api/hook', secret: 'h4sh', content_type: 'json' }, events: ['push', 'create', 'pull_request'], active: true }),
    })
    expect(hook.status).toBe(201)
    const status = await sdk(`/repos/alice/demo/statuses/${branch.commit.id}`, {
      method: 'POST',
      body: JSON.stringify({ state: 'pending', target_url: 'https://ci.example.com/repos/1/pipeline/1', description: 'Pipeline is pending', context: 'ci/woodpecker/push/woodpecker' }),
    })
    expect(status.status).toBe(201)
    const hooks = (await (await sdk('/repos/alice/demo/hooks')).json()) as { id: number; config: { url: string } }[]
    const ours = hooks.find((h) => h.config.url === 'https://ci.example.com/api/hook')!
    expect((await sdk(`/repos/alice/demo/hooks/${ours.id}`, { method: 'DELETE' })).status).toBe(204)
    // Netrc: the agent clones with the login and the access token as the password.
    await gitOk(tempDir(), 'clone', '-q', remoteUrl(s.url, 'alice/demo.git', 'alice', token), join(tempDir(), 'w'))
    // Refresh: TokenSource with the refresh token, the client credentials in the header.
    const refreshed = await tokenCall(s, { grant_type: 'refresh_token', refresh_token: refreshToken }, { basic: [app.client_id, app.client_secret] })
    expect(refreshed.status).toBe(200)
    expect((await fetch(`${s.url}/api/v1/user`, { headers: { authorization: `token ${refreshed.body.access_token}` } })).status).toBe(200)
  })

  test('Drone (drone/go-login gitea: client credentials in the form body, state sent back; go-scm with Bearer; netrc with the token as login)', async () => {
    const callback = 'https://drone.example.com/login'
    const app = await newApp(alice, { name: 'Drone', uris: [callback] })
    const state = 'b8c5e3b1a2f4'
    // authorizeRedirect: url.Values encoded (sorted): client_id, redirect_uri, response_type, state.
    const authorizeUrl = `${s.url}/login/oauth/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: callback, response_type: 'code', state })}`
    const { cookie: session, page } = await signInThroughAuthorize(authorizeUrl, alice)
    const back = new URL(await consent(s, session, page, true))
    expect(back.searchParams.get('state')).toBe(state)
    // exchange (BasicAuthOff): client_id and client_secret in the form, with state and redirect_uri; Accept JSON; an error is anything above 299.
    const exchanged = await tokenCall(s, { client_id: app.client_id, client_secret: app.client_secret, code: back.searchParams.get('code')!, grant_type: 'authorization_code', redirect_uri: callback, state })
    expect(exchanged.status).toBe(200)
    expect(exchanged.body).toMatchObject({ token_type: 'bearer', expires_in: 3600 })
    const token: string = exchanged.body.access_token
    // go-scm's gitea driver: the user, then the repositories, with a Bearer token.
    const scm = (path: string) => fetch(`${s.url}/api/v1${path}`, { headers: { authorization: `Bearer ${token}` } })
    expect(((await (await scm('/user')).json()) as { login: string }).login).toBe('alice')
    expect(((await (await scm('/user/repos?page=1&limit=100')).json()) as { full_name: string }[]).map((r) => r.full_name)).toContain('alice/demo')
    expect((await scm('/repos/alice/demo')).status).toBe(200)
    // Drone's netrc for Gitea: the token as the login, `x-oauth-basic` as the password.
    await gitOk(tempDir(), 'clone', '-q', remoteUrl(s.url, 'alice/demo.git', token, 'x-oauth-basic'), join(tempDir(), 'd'))
  })
})
