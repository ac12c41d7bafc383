// runs in one half: postgresql
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import * as oidc from 'openid-client'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { fillSignIn, launchChromium } from './browser-helpers'

/**
 * The whole OpenID Connect flow with a real client library (openid-client) against a listening
 * Warren, the person going through the sign-in and consent pages in a real browser (Debian's
 * Chromium, driven by playwright-core): discovery, authorization with PKCE, the code exchanged,
 * the id_token verified against the JWKS, the API called with the access token, userinfo,
 * refresh, and revocation (by the client, RFC 7009, and by the person on the settings page).
 */

let s: TestServer
let alice: TestUser
let browser: Browser
/** The client's callback: a listener that records the URL the browser was sent to. */
let callback: ReturnType<typeof Bun.serve>
let arrived: ((url: string) => void) | null = null
/** Every request the callback server got, for a failure's message. */
const seen: string[] = []

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice', { email: 'alice@example.com' })
  callback = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      // Only the redirects to the callbacks themselves: the browser may also ask this origin for other
      // things (a favicon) whenever it likes.
      seen.push(request.url)
      if (['/cb', '/again'].includes(new URL(request.url).pathname)) arrived?.(request.url)
      return new Response('<!doctype html><title>Signed in</title><p>Signed in.</p>', { headers: { 'content-type': 'text/html' } })
    },
  })
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  callback?.stop(true)
  await s.stop()
})

/** Where the browser lands next on the client's callback. */
const nextCallback = () => new Promise<string>((resolve) => (arrived = resolve))

test('discovery → sign-in and consent in the browser with PKCE → code exchange → id_token checked against the JWKS → API → userinfo → refresh → revocation', async () => {
  const redirectUri = `http://127.0.0.1:${callback.port}/cb`
  const made = await s.post('/user/applications/oauth2', { name: 'Example CI', confidential_client: true, redirect_uris: [redirectUri] }, { token: alice.token })
  expect(made.status).toBe(201)
  const { client_id: clientId, client_secret: clientSecret } = made.body

  // Discovery (plain http on loopback), signatures of id_tokens checked against the JWKS.
  const config = await oidc.discovery(new URL(s.url), clientId, clientSecret, oidc.ClientSecretBasic(clientSecret), {
    execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks],
  })
  expect(config.serverMetadata().issuer).toBe(s.url)

  const verifier = oidc.randomPKCECodeVerifier()
  const nonce = oidc.randomNonce()
  const state = oidc.randomState()
  const authorizationUrl = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid profile email',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    nonce,
    state,
  })

  const page = await (await browser.newContext()).newPage()
  await page.goto(authorizationUrl.href)
  // Not signed in: the sign-in page, then back to the authorization request.
  await page.waitForURL(/\/user\/login/)
  await fillSignIn(page, alice)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(/\/login\/oauth\/authorize/)
  expect(await page.getByRole('heading', { name: 'Authorize Example CI' }).count()).toBe(1)
  expect(await page.getByRole('list', { name: 'Requested access' }).textContent()).toContain('Your e-mail address')
  const landed = nextCallback()
  await page.getByRole('button', { name: 'Authorize Example CI' }).click()
  const callbackUrl = await landed
  await page.waitForURL(/\/cb\?/)
  // The redirect carries the code and the request's state (what the callback server saw, if not).
  const back = new URL(callbackUrl).searchParams
  expect({ code: back.has('code'), state: back.get('state'), seen }).toMatchObject({ code: true, state })

  // The code exchanged by the library: PKCE, state and nonce checked, the id_token's signature too.
  const tokens = await oidc.authorizationCodeGrant(config, new URL(callbackUrl), { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true })
  const claims = tokens.claims()!
  expect(claims).toMatchObject({ iss: s.url, aud: clientId, sub: String(alice.user.id), nonce, preferred_username: 'alice', email: 'alice@example.com', email_verified: true })

  // The API with the access token, and userinfo.
  const me = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(`${s.url}/api/v1/user`), 'GET')
  expect(me.status).toBe(200)
  expect(((await me.json()) as { login: string }).login).toBe('alice')
  const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)
  expect(info).toMatchObject({ sub: String(alice.user.id), preferred_username: 'alice', email: 'alice@example.com' })

  // Refresh: a new pair; the old refresh token is spent.
  const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!)
  expect(refreshed.access_token).not.toBe(tokens.access_token)
  expect(refreshed.claims()!.sub).toBe(String(alice.user.id))
  const fresh = await oidc.fetchProtectedResource(config, refreshed.access_token, new URL(`${s.url}/api/v1/user`), 'GET')
  expect(fresh.status).toBe(200)

  // Revocation by the client (RFC 7009): a refresh token ends every token of its grant.
  await oidc.tokenRevocation(config, refreshed.refresh_token!)
  expect((await oidc.fetchProtectedResource(config, refreshed.access_token, new URL(`${s.url}/api/v1/user`), 'GET')).status).toBe(401)
  await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toThrow()

  // Signed in already and granted before: the next authorization comes straight back with a code.
  const again = nextCallback()
  const verifier2 = oidc.randomPKCECodeVerifier()
  await page.goto(oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope: 'openid profile email', code_challenge: await oidc.calculatePKCECodeChallenge(verifier2), code_challenge_method: 'S256', state }).href)
  const second = await oidc.authorizationCodeGrant(config, new URL(await again), { pkceCodeVerifier: verifier2, expectedState: state })
  expect((await oidc.fetchProtectedResource(config, second.access_token, new URL(`${s.url}/api/v1/user`), 'GET')).status).toBe(200)

  // Revocation by the person, on the settings page: the token stops working at once.
  await page.goto(`${s.url}/user/settings/applications/oauth2`)
  expect(await page.getByRole('list', { name: 'Authorized applications' }).textContent()).toContain('Example CI')
  await page.getByRole('button', { name: 'Revoke access of Example CI' }).click()
  await page.waitForURL(`${s.url}/user/settings/applications/oauth2`)
  expect(await page.getByRole('list', { name: 'Authorized applications' }).textContent()).toContain('You have not authorized any application.')
  expect((await oidc.fetchProtectedResource(config, second.access_token, new URL(`${s.url}/api/v1/user`), 'GET')).status).toBe(401)
  await expect(oidc.refreshTokenGrant(config, second.refresh_token!)).rejects.toThrow()
  await page.context().close()
})

test('granted before and signed out: the sign-in form sends the browser on through the authorization to the client', async () => {
  const redirectUri = `http://127.0.0.1:${callback.port}/again`
  const made = await s.post('/user/applications/oauth2', { name: 'Returning CI', confidential_client: true, redirect_uris: [redirectUri] }, { token: alice.token })
  const config = await oidc.discovery(new URL(s.url), made.body.client_id, made.body.client_secret, undefined, { execute: [oidc.allowInsecureRequests] })
  const url = () => oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope: 'openid', state: 'again' }).href
  for (const round of [1, 2]) {
    const page = await (await browser.newContext()).newPage()
    await page.goto(url())
    await page.waitForURL(/\/user\/login/)
    await fillSignIn(page, alice)
    const landed = nextCallback()
    await page.getByRole('button', { name: 'Sign in' }).click()
    // The first time the consent page asks; the second time the sign-in leads straight back.
    if (round === 1) await page.getByRole('button', { name: 'Authorize Returning CI' }).click()
    const tokens = await oidc.authorizationCodeGrant(config, new URL(await landed), { expectedState: 'again' })
    expect(tokens.claims()!.sub).toBe(String(alice.user.id))
    await page.context().close()
  }
})
