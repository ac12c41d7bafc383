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
 * A web client of the server at `baseUrl` for page and form tests: `page` fetches a page (as a
 * browser asks for it, redirects not followed), `signIn` signs a user in once and keeps the
 * session's cookie, `submit` posts a form as that user with the CSRF token of a page of theirs
 * (`null`: no token; a string: that token).
 */
export function webForms(baseUrl: string) {
  const cookies = new Map<string, string>()
  const page = (path: string, cookie?: string) => fetch(baseUrl + path, { headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) }, redirect: 'manual' })
  const signIn = async (user: Pick<TestUser, 'name' | 'password'>): Promise<string> => {
    if (!cookies.has(user.name)) cookies.set(user.name, await signInByForm(baseUrl, user))
    return cookies.get(user.name)!
  }
  const submit = async (user: Pick<TestUser, 'name' | 'password'>, path: string, fields: Record<string, string>, csrf?: string | null) => {
    const cookie = await signIn(user)
    const token = csrf === undefined ? csrfIn(await (await page('/', cookie)).text())! : csrf
    const body = new URLSearchParams(fields)
    if (token !== null) body.append('_csrf', token)
    const res = await fetch(baseUrl + path, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body, redirect: 'manual' })
    return { status: res.status, location: res.headers.get('location'), html: await res.text() }
  }
  return { page, signIn, submit }
}

/** webForms for tests that only visit pages (page, signIn). */
export const webVisits = webForms

/** Signs each user in once through the form (webForms' signIn), answering the same session's cookie after; the address read at first use. */
export function sessionCookies(baseUrl: () => string): (user: Pick<TestUser, 'name' | 'password'>) => Promise<string> {
  let forms: ReturnType<typeof webForms> | undefined
  return (user) => (forms ??= webForms(baseUrl())).signIn(user)
}
