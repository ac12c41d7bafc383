import { timingSafeEqual } from 'node:crypto'
import type { Config } from '../config'
import type { Caller } from '../auth/caller'
import { cookieOf, csrfTokenOf, SESSION_COOKIE } from '../auth/sessions'

/**
 * What every page renders with: the settings, who is looking, and the CSRF token its forms carry.
 * A form's token is bound to the session (derived from its secret), or, before signing in, to the
 * pre-session cookie the sign-in page sets; a POST whose token does not match changes nothing.
 */
export interface WebContext {
  config: Config
  caller: Caller
  /** The token forms carry (`_csrf`), or null when the visitor has no session nor pre-session. */
  csrf: string | null
  /** The page's own path (the sign-in link's `redirect_to`). */
  path: string
}

/** The cookie that binds the sign-in form's CSRF token before there is a session. */
export const PRE_SESSION_COOKIE = 'warren_csrf'

/**
 * The secret a request's forms are bound to: the session's once signed in, the pre-session's for
 * an anonymous visitor (the sign-in form). A caller signed in otherwise (a token, a password, a
 * signature, which web pages also accept) has none: forms are a session's alone, or a token of any
 * scope would post every form with a pre-session cookie of its own choosing.
 */
function csrfSecret(request: Request, caller: Caller): string | undefined {
  if (caller.method === 'session') return cookieOf(request, SESSION_COOKIE)
  return caller.user ? undefined : cookieOf(request, PRE_SESSION_COOKIE)
}

export function webContext(config: Config, request: Request, caller: Caller): WebContext {
  const secret = csrfSecret(request, caller)
  const url = new URL(request.url)
  return { config, caller, csrf: secret ? csrfTokenOf(secret) : null, path: url.pathname + url.search }
}

/** Whether a form's `_csrf` value is the token of the request's session (or pre-session). */
export function csrfMatches(request: Request, caller: Caller, given: unknown): boolean {
  const secret = csrfSecret(request, caller)
  if (!secret || typeof given !== 'string') return false
  const expected = Buffer.from(csrfTokenOf(secret))
  const actual = Buffer.from(given)
  return expected.length === actual.length && timingSafeEqual(expected, actual)
}

/** A Set-Cookie value: HttpOnly, SameSite=Lax, path /, Secure when the site is served over https. */
export function cookieHeader(config: Config, name: string, value: string, maxAge: number): string {
  const secure = config.baseUrl.startsWith('https:') ? '; Secure' : ''
  return `${name}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`
}

/** A new pre-session secret (the sign-in form's CSRF binding). */
export const newPreSession = (): string => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')

/** The headers every page carries: no script but our own files, no framing, no sniffing. */
export const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src * data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
}

/** A page's answer. */
export function htmlResponse(html: { value: string } | string, status = 200, extra: Record<string, string> = {}): Response {
  const headers = new Headers(PAGE_HEADERS)
  for (const [k, v] of Object.entries(extra)) {
    const name = k.toLowerCase()
    if (name === 'set-cookie') headers.append(name, v)
    else if (!(name in PAGE_HEADERS) && typeof v === 'string') headers.set(name, v)
  }
  return new Response('<!doctype html>' + (typeof html === 'string' ? html : html.value), { status, headers })
}

/**
 * A local path to return to after signing in; anything else goes home: another site, `//host`,
 * a backslash after the first slash, and any control character (browsers drop tabs and newlines from a URL, so `/\t/host`
 * would lead away; a header cannot hold them). Characters beyond ASCII are sent percent-encoded,
 * as a header must carry them.
 */
export function safeReturnPath(value: unknown): string {
  if (typeof value !== 'string' || value.length > 2048 || !/^\/(?![/\\])/.test(value) || /[\u0000-\u001f\u007f]/.test(value) || !value.isWellFormed()) return '/'
  return value.replace(/[^\u0020-\u007e]+/g, (run) => encodeURIComponent(run))
}

/** A page route's `detail`: its operation id, marked as answering pages (errors too) rather than JSON. */
export const pageDetail = (operationId: string) => ({ operationId, 'x-warren-page': true })
