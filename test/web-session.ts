import { expect } from 'bun:test'
import type { TestUser } from './helpers'

/** The CSRF token a page's forms carry, if any. */
export const csrfIn = (html: string): string | undefined => /name="_csrf" value="([0-9a-f]+)"/.exec(html)?.[1]

/**
 * Signs `user` in through the web form at `baseUrl` (the sign-in page's pre-session cookie and
 * CSRF token, then the POST), as a browser does; answers the session's cookie (`name=value`),
 * having checked that it is HttpOnly and SameSite=Lax.
 */
export async function signInByForm(baseUrl: string, user: Pick<TestUser, 'name' | 'password'>): Promise<string> {
  const form = await fetch(baseUrl + '/user/login', { headers: { accept: 'text/html' }, redirect: 'manual' })
  const pre = form.headers.get('set-cookie')!.split(';')[0]!
  const csrf = csrfIn(await form.text())!
  const res = await fetch(baseUrl + '/user/login', {
    method: 'POST',
    headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, user_name: user.name, password: user.password, redirect_to: '/' }),
    redirect: 'manual',
  })
  expect(res.status).toBe(303)
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('warren_session='))!
  expect(cookie).toContain('HttpOnly')
  expect(cookie).toContain('SameSite=Lax')
  return cookie.split(';')[0]!
}

/**
 * A test's web visitors of the server at `base()`: `page` fetches a page (with a session's cookie when given),
 * not following redirects; `signIn` signs a user in once through the form and keeps the cookie;
 * `submit` posts a form as the user with the CSRF token of the page `from` (`csrf: null` leaves it
 * out, a string sends that one instead).
 */
export function webVisitors(base: () => string, mark: () => Promise<string>) {
  const cookies = new Map<string, string>()
  const page = (path: string, cookie?: string) => fetch(base() + path, { headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) }, redirect: 'manual' })
  async function signIn(user: Pick<TestUser, 'name' | 'password'>): Promise<string> {
    let cookie = cookies.get(user.name)
    if (!cookie) cookies.set(user.name, (cookie = await signInByForm(base(), user)))
    return cookie
  }
  async function submit(user: Pick<TestUser, 'name' | 'password'>, path: string, fields: Record<string, string | string[]>, opts: { from?: string; csrf?: string | null } = {}) {
    const cookie = await signIn(user)
    const csrf = opts.csrf === undefined ? csrfIn(await (await page(opts.from ?? '/', cookie)).text())! : opts.csrf
    const body = new URLSearchParams()
    if (csrf !== null) body.append('_csrf', csrf)
    for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one)
    const res = await fetch(base() + path, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body, redirect: 'manual' })
    return { status: res.status, location: res.headers.get('location'), html: await res.text() }
  }
  /** A form POST without its CSRF token, or with a wrong one, is a 403 page and changes nothing (`mark` reads the database's content). */
  async function expectCsrfRefused(user: Pick<TestUser, 'name' | 'password'>, path: string, fields: Record<string, string | string[]>) {
    await signIn(user)
    const before = await mark()
    const missing = await submit(user, path, fields, { csrf: null })
    expect(missing.status).toBe(403)
    expect(missing.html).toContain('The form has expired')
    const wrong = await submit(user, path, fields, { csrf: 'f'.repeat(64) })
    expect(wrong.status).toBe(403)
    expect(wrong.html).toContain('The form has expired')
    expect(await mark()).toBe(before)
  }
  /** A signed-out visit of a page that needs a signed-in user: a See Other to the sign-in page, and back to it (Gitea's reqSignIn). */
  async function expectSignInAsked(path: string) {
    const res = await page(path)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe(`/user/login?redirect_to=${encodeURIComponent(path)}`)
  }
  return { page, signIn, submit, expectCsrfRefused, expectSignInAsked }
}
