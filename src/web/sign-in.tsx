/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import { eq } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { pageGroup, type AreaApp } from '../auth/pipeline'
import { closeSession, cookieOf, openSession, SESSION_COOKIE } from '../auth/sessions'
import { hashToken } from '../auth/secrets'
import { openTicket, sealTicket } from '../lib/secret-box'
import { twoFactorEnabled } from '../modules/users/two-factor'
import { ApiError } from '../lib/errors'
import type { Caller } from '../auth/caller'
import { cookieHeader, csrfMatches, pageDetail, newPreSession, PRE_SESSION_COOKIE, safeReturnPath, webContext, type WebContext } from './context'
import { errorPage } from './errors'
import { FORM_EXPIRED, titledPage } from './forms'
import { emailAddresses, users } from '../db/schema'
import { allowingFormTarget, signInFormTarget } from './pages/oauth'

const FormText = (max: number) => t.Optional(t.String({ maxLength: max }))
const SignInForm = t.Object({ user_name: FormText(320), password: FormText(1024), _csrf: FormText(128), redirect_to: FormText(2048) })
const SignInQuery = t.Object({ redirect_to: FormText(2048) })

function signInPage(ctx: WebContext, opts: { name?: string; returnTo: string; error?: string; status?: number; headers?: Record<string, string> }) {
  return titledPage(
    ctx,
    'Sign in',
    <>
      <form class="stack" method="post" action="/user/login">
        <input type="hidden" name="_csrf" value={ctx.csrf ?? ''} />
        <input type="hidden" name="redirect_to" value={opts.returnTo} />
        <label>
          Username or e-mail address
          <input name="user_name" autocomplete="username" required value={opts.name ?? ''} />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <div>
          <button class="primary" type="submit">
            Sign in
          </button>
        </div>
      </form>
      {ctx.config.mailer ? (
        <p>
          <a href="/user/forgot_password">Forgot password?</a>
        </p>
      ) : null}
    </>,
    opts,
  )
}

/**
 * A form page's context before signing in: its CSRF token is bound to a pre-session cookie, set
 * here when the visitor has none yet (`headers` then carries it).
 */
export function preSessionContext(deps: AppDeps, request: Request, caller: Caller): { ctx: WebContext; headers: Record<string, string> } {
  const ctx = webContext(deps.config, request, caller)
  if (ctx.csrf) return { ctx, headers: {} }
  const secret = newPreSession()
  return {
    ctx: webContext(deps.config, new Request(request.url, { headers: { cookie: `${PRE_SESSION_COOKIE}=${secret}` } }), caller),
    headers: { 'set-cookie': cookieHeader(deps.config, PRE_SESSION_COOKIE, secret, 3600) },
  }
}

/** Opens a session for the user: the 303 to `returnTo` that sets its cookie and drops the pre-session. */
export async function signedInAnswer(deps: AppDeps, userId: number, returnTo: string): Promise<Response> {
  const secret = await openSession(deps.db, userId, deps.config.sessionLifetime)
  const headers = new Headers({ location: returnTo })
  headers.append('set-cookie', cookieHeader(deps.config, SESSION_COOKIE, secret, deps.config.sessionLifetime))
  headers.append('set-cookie', cookieHeader(deps.config, PRE_SESSION_COOKIE, '', 0))
  return new Response(null, { status: 303, headers })
}

/**
 * The cookie of a sign-in waiting for its second factor: the user, where to go next and the
 * pre-session it was made in, sealed with the data folder's key for a few minutes. It is no
 * session: it signs nothing in; only the second factor turns it into one.
 */
export const PENDING_COOKIE = 'warren_twofa'
const PENDING_SECONDS = 300
const PENDING_KIND = 'two-factor-sign-in'

interface Pending {
  userId: number
  returnTo: string
}

const preSessionBinding = (request: Request): string => hashToken('two-factor\u0000' + (cookieOf(request, PRE_SESSION_COOKIE) ?? ''))

/** The answer to a right password of a user with a second factor: the pending cookie, and on to the passcode form. */
function pendingSignInAnswer(deps: AppDeps, request: Request, userId: number, returnTo: string): Response {
  // A cookie holds at most 4 KiB: a return path too long for it goes home instead.
  const r = returnTo.length <= 1024 ? returnTo : '/'
  const ticket = sealTicket(deps.config.dataDir, PENDING_KIND, { u: userId, r, p: preSessionBinding(request) }, PENDING_SECONDS)
  return new Response(null, { status: 303, headers: { location: '/user/two_factor', 'set-cookie': cookieHeader(deps.config, PENDING_COOKIE, ticket, PENDING_SECONDS) } })
}

/** The sign-in waiting for this request's second factor, if it has not expired and was made in the same pre-session. */
export function pendingOf(deps: AppDeps, request: Request): Pending | undefined {
  const value = openTicket(deps.config.dataDir, PENDING_KIND, cookieOf(request, PENDING_COOKIE)) as { u?: unknown; r?: unknown; p?: unknown } | undefined
  if (!value || typeof value.u !== 'number' || typeof value.r !== 'string' || value.p !== preSessionBinding(request)) return undefined
  return { userId: value.u, returnTo: value.r }
}

/** Whether the account of a sign-in name (login or e-mail) waits for its activation (and is not barred by an administrator). */
async function inactiveAccount(deps: AppDeps, name: string): Promise<boolean> {
  const lower = name.toLowerCase()
  const found = name.includes('@')
    ? await deps.db.select({ user: users }).from(emailAddresses).innerJoin(users, eq(users.id, emailAddresses.userId)).where(eq(emailAddresses.lowerEmail, lower))
    : await deps.db.select({ user: users }).from(users).where(eq(users.lowerName, lower))
  const user = found[0]?.user
  return !!user && user.type === 0 && !user.isActive && !user.prohibitLogin
}

/**
 * `/user/login` (the form, and its POST: the same password check and failed sign-in limits as the
 * API's Basic credentials) and `POST /user/logout`. A session is a row of `web_sessions`; the
 * cookie holds its secret.
 */
export const signInRoutes = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/user/login',
      async ({ request, caller, query }) => {
        const returnTo = safeReturnPath(query.redirect_to)
        if (caller.user) return new Response(null, { status: 303, headers: { location: returnTo } })
        const { ctx, headers } = preSessionContext(deps, request, caller)
        return allowingFormTarget(signInPage(ctx, { returnTo, headers }), await signInFormTarget(deps, returnTo))
      },
      { scope: 'none', caller: true, query: SignInQuery, detail: pageDetail('webSignInForm') },
    )
    .post(
      '/user/login',
      async ({ request, caller, body }) => {
        const ctx = webContext(deps.config, request, caller)
        if (!csrfMatches(request, caller, body._csrf)) return errorPage(403, FORM_EXPIRED, ctx)
        const returnTo = safeReturnPath(body.redirect_to)
        const name = (body.user_name ?? '').trim()
        try {
          const signed = await deps.auth.byPassword(name, body.password ?? '', deps.auth.clientAddress(request))
          // A user with a second factor is not signed in yet: the passcode form comes first (pages/two-factor.tsx).
          if (await twoFactorEnabled(deps, signed.user!.id)) return pendingSignInAnswer(deps, request, signed.user!.id, returnTo)
          return await signedInAnswer(deps, signed.user!.id, returnTo)
        } catch (e) {
          if (!(e instanceof ApiError)) throw e
          // The right password of an account waiting for its activation (a 403 comes only after the password matched): Gitea's activate page.
          if (e.status === 403 && ctx.config.mailer) {
            const waiting = await inactiveAccount(deps, name)
            if (waiting) return new Response(null, { status: 303, headers: { location: '/user/activate' } })
          }
          const error = e.status === 401 ? 'Wrong username or password.' : e.message
          return allowingFormTarget(signInPage(ctx, { name, returnTo, error, status: e.status === 401 ? 200 : e.status, headers: e.headers }), await signInFormTarget(deps, returnTo))
        }
      },
      { scope: 'none', caller: true, body: SignInForm, detail: pageDetail('webSignIn') },
    )
    .post(
      '/user/logout',
      async ({ request, caller, body }) => {
        const ctx = webContext(deps.config, request, caller)
        if (!csrfMatches(request, caller, body._csrf)) return errorPage(403, FORM_EXPIRED, ctx)
        const secret = cookieOf(request, SESSION_COOKIE)
        if (secret) await closeSession(deps.db, secret)
        return new Response(null, { status: 303, headers: { location: '/', 'set-cookie': cookieHeader(deps.config, SESSION_COOKIE, '', 0) } })
      },
      { scope: 'none', caller: true, body: t.Object({ _csrf: FormText(128) }), detail: pageDetail('webSignOut') },
    )
