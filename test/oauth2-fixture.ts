import { createHash, randomBytes } from 'node:crypto'
import { expect } from 'bun:test'
import type { TestServer, TestUser } from './helpers'

/**
 * The OAuth2 code flow driven over plain HTTP, as a browser would: the web sign-in (its CSRF
 * pre-session cookie), the authorisation request, the consent form, the redirect with the code.
 */

const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')

/** The value of a cookie a response sets. */
export function setCookie(res: Response, name: string): string | undefined {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';')
    const eq = pair!.indexOf('=')
    if (pair!.slice(0, eq).trim() === name) return pair!.slice(eq + 1)
  }
  return undefined
}

/** The hidden fields of the first form of a page, by name. */
export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) fields[m[1]!] ??= unescape(m[2]!)
  return fields
}

/** Signs `user` in through the web form; answers the session cookie header. */
export async function webSignIn(s: TestServer, user: TestUser): Promise<string> {
  const page = await fetch(`${s.url}/user/login`, { headers: { accept: 'text/html' } })
  const pre = setCookie(page, 'warren_csrf')!
  const { _csrf } = hiddenFields(await page.text())
  const res = await fetch(`${s.url}/user/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: `warren_csrf=${pre}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: _csrf!, user_name: user.name, password: user.password, redirect_to: '/' }),
  })
  expect(res.status).toBe(303)
  return `warren_session=${setCookie(res, 'warren_session')}`
}

/** A PKCE verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** GET an absolute or site path without following redirects, with the session cookie. */
export const visit = (s: TestServer, path: string, cookie?: string) =>
  fetch(path.startsWith('http') ? path : s.url + path, { redirect: 'manual', headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) } })

/** Answers a consent page (its form, as shown) with `granted`; answers the redirect's Location. */
export async function consent(s: TestServer, cookie: string, page: Response, granted: boolean): Promise<string> {
  expect(page.status).toBe(200)
  const fields = hiddenFields(await page.text())
  const res = await fetch(`${s.url}/login/oauth/grant`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...fields, granted: String(granted) }),
  })
  expect(res.status).toBe(303)
  return res.headers.get('location')!
}

/**
 * The authorisation request with these parameters, through consent when it is asked; answers
 * the URL the browser is finally sent to (the client's redirect URI with `code` or `error`).
 */
export async function authorize(s: TestServer, cookie: string, params: Record<string, string>): Promise<URL> {
  const first = await visit(s, `/login/oauth/authorize?${new URLSearchParams(params)}`, cookie)
  if (first.status === 303) return new URL(first.headers.get('location')!)
  return new URL(await consent(s, cookie, first, true))
}

/** POST to the token endpoint, as a form (or JSON), with optional Basic client credentials. */
export async function tokenCall(s: TestServer, body: Record<string, string>, opts: { basic?: [string, string]; json?: boolean } = {}) {
  const headers: Record<string, string> = { accept: 'application/json', 'content-type': opts.json ? 'application/json' : 'application/x-www-form-urlencoded' }
  if (opts.basic) headers.authorization = 'Basic ' + Buffer.from(`${encodeURIComponent(opts.basic[0])}:${encodeURIComponent(opts.basic[1])}`).toString('base64')
  const res = await fetch(`${s.url}/login/oauth/access_token`, { method: 'POST', headers, body: opts.json ? JSON.stringify(body) : new URLSearchParams(body) })
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> }
}

/** The claims of a JWT (not verified: the browser test verifies id_tokens with a real OIDC library). */
export const jwtClaims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
