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

/** Signs each user in once through the form (signInByForm), answering the same session's cookie after. */
export function sessionCookies(baseUrl: () => string): (user: Pick<TestUser, 'name' | 'password'>) => Promise<string> {
  const cookies = new Map<string, string>()
  return async (user) => {
    const known = cookies.get(user.name)
    if (known) return known
    const cookie = await signInByForm(baseUrl(), user)
    cookies.set(user.name, cookie)
    return cookie
  }
}
