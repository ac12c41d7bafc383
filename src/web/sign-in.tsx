import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import { pipeline } from '../auth/pipeline'
import { closeSession, cookieOf, openSession, SESSION_COOKIE } from '../auth/sessions'
import { ApiError } from '../lib/errors'
import { Layout } from './layout'
import { cookieHeader, csrfMatches, pageDetail, htmlResponse, newPreSession, PRE_SESSION_COOKIE, safeReturnPath, webContext, type WebContext } from './context'
import { errorPage } from './errors'
import { allowingFormTarget, signInFormTarget } from './pages/oauth'

const FormText = (max: number) => t.Optional(t.String({ maxLength: max }))
const SignInForm = t.Object({ user_name: FormText(320), password: FormText(1024), _csrf: FormText(128), redirect_to: FormText(2048) })
const SignInQuery = t.Object({ redirect_to: FormText(2048) })

function signInPage(ctx: WebContext, opts: { name?: string; returnTo: string; error?: string; status?: number; headers?: Record<string, string> }) {
  return htmlResponse(
    <Layout ctx={ctx} title="Sign in">
      <h1>Sign in</h1>
      {opts.error ? (
        <p class="error" role="alert">
          {opts.error}
        </p>
      ) : null}
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
    </Layout>,
    opts.status ?? 200,
    opts.headers,
  )
}

/**
 * `/user/login` (the form, and its POST: the same password check and failed sign-in limits as the
 * API's Basic credentials) and `POST /user/logout`. A session is a row of `web_sessions`; the
 * cookie holds its secret.
 */
export const signInRoutes = (deps: AppDeps) =>
  new Elysia({ name: 'web-sign-in', detail: { hide: true } })
    .use(pipeline(deps, { session: true }))
    .get(
      '/user/login',
      async ({ request, caller, query }) => {
        const returnTo = safeReturnPath(query.redirect_to)
        if (caller.user) return new Response(null, { status: 303, headers: { location: returnTo } })
        // The form's CSRF token is bound to a pre-session cookie set here.
        let ctx = webContext(deps.config, request, caller)
        const headers: Record<string, string> = {}
        if (!ctx.csrf) {
          const secret = newPreSession()
          headers['set-cookie'] = cookieHeader(deps.config, PRE_SESSION_COOKIE, secret, 3600)
          ctx = webContext(deps.config, new Request(request.url, { headers: { cookie: `${PRE_SESSION_COOKIE}=${secret}` } }), caller)
        }
        return allowingFormTarget(signInPage(ctx, { returnTo, headers }), await signInFormTarget(deps, returnTo))
      },
      { caller: true, query: SignInQuery, detail: pageDetail('webSignInForm') },
    )
    .post(
      '/user/login',
      async ({ request, caller, body }) => {
        const ctx = webContext(deps.config, request, caller)
        if (!csrfMatches(request, caller, body._csrf)) return errorPage(403, 'The form has expired or did not come from this site. Reload the page and try again.', ctx)
        const returnTo = safeReturnPath(body.redirect_to)
        const name = (body.user_name ?? '').trim()
        try {
          const signed = await deps.auth.byPassword(name, body.password ?? '', deps.auth.clientAddress(request))
          const secret = await openSession(deps.db, signed.user!.id, deps.config.sessionLifetime)
          const headers = new Headers({ location: returnTo })
          headers.append('set-cookie', cookieHeader(deps.config, SESSION_COOKIE, secret, deps.config.sessionLifetime))
          headers.append('set-cookie', cookieHeader(deps.config, PRE_SESSION_COOKIE, '', 0))
          return new Response(null, { status: 303, headers })
        } catch (e) {
          if (!(e instanceof ApiError)) throw e
          const error = e.status === 401 ? 'Wrong username or password.' : e.message
          return allowingFormTarget(signInPage(ctx, { name, returnTo, error, status: e.status === 401 ? 200 : e.status, headers: e.headers }), await signInFormTarget(deps, returnTo))
        }
      },
      { caller: true, body: SignInForm, detail: pageDetail('webSignIn') },
    )
    .post(
      '/user/logout',
      async ({ request, caller, body }) => {
        const ctx = webContext(deps.config, request, caller)
        if (!csrfMatches(request, caller, body._csrf)) return errorPage(403, 'The form has expired or did not come from this site. Reload the page and try again.', ctx)
        const secret = cookieOf(request, SESSION_COOKIE)
        if (secret) await closeSession(deps.db, secret)
        return new Response(null, { status: 303, headers: { location: '/', 'set-cookie': cookieHeader(deps.config, SESSION_COOKIE, '', 0) } })
      },
      { caller: true, body: t.Object({ _csrf: FormText(128) }), detail: pageDetail('webSignOut') },
    )
