/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { grantTokenScope, OIDC_SCOPES } from '../../auth/scopes'
import { users } from '../../db/schema'
import { eq } from 'drizzle-orm'
import { checkAuthorization, consentNeeded, deniedRedirect, issueCode, type AuthorizationParams, type ValidAuthorization } from '../../modules/oauth2/service'
import { Layout } from '../layout'
import { csrfMatches, htmlResponse, pageDetail, PAGE_HEADERS, webContext, type WebContext } from '../context'
import { errorPage } from '../errors'
import { FORM_EXPIRED } from '../forms'
import { ownerUrl } from '../links'

const Param = t.Optional(t.String({ maxLength: 4096 }))
const AuthorizeQuery = t.Object({
  client_id: Param,
  redirect_uri: Param,
  response_type: Param,
  state: Param,
  scope: Param,
  nonce: Param,
  code_challenge: Param,
  code_challenge_method: Param,
})
const GrantForm = t.Object({
  _csrf: t.Optional(t.String({ maxLength: 128 })),
  granted: t.Optional(t.String({ maxLength: 8 })),
  client_id: Param,
  redirect_uri: Param,
  state: Param,
  scope: Param,
  nonce: Param,
  code_challenge: Param,
  code_challenge_method: Param,
})

/** What each OpenID Connect scope lets the application learn, in words. */
const OIDC_WORDS: Record<string, string> = {
  openid: 'Sign you in with your Warren account (your user id)',
  profile: 'Your name and profile page',
  email: 'Your e-mail address, if it is verified',
  groups: 'Nothing more (groups are not shared)',
}

/** A redirect to the client, as a 303 (the browser follows it with a GET). */
const redirect = (location: string) => new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store' } })

/**
 * The CSP source a form's submission may end at: the consent form posts here, and its answer sends
 * the browser on to the client's redirect URI, which browsers check against `form-action` too.
 */
function formTarget(uri: string): string {
  const url = new URL(uri)
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol
}

/** A page's answer whose forms may also end at `target` (the client's redirect URI). */
function withFormAction(response: Response, target: string): Response {
  const csp = PAGE_HEADERS['content-security-policy']!.replace("form-action 'self'", `form-action 'self' ${target}`)
  response.headers.set('content-security-policy', csp)
  return response
}

/**
 * The client a sign-in will lead on to, when the page to return to is an authorisation request
 * (the person signs in on the way): the sign-in form's answer may end there, through the
 * authorisation that sends the browser straight on (an application granted before), so its page
 * allows that form target too. Null for any other return path or a request that does not check out.
 */
export async function signInFormTarget(deps: AppDeps, returnTo: string): Promise<string | null> {
  if (!deps.config.oauth2Enabled || !returnTo.startsWith('/login/oauth/authorize?')) return null
  const query = Object.fromEntries(new URLSearchParams(returnTo.slice(returnTo.indexOf('?') + 1)))
  const check = await checkAuthorization(deps, query)
  return 'valid' in check ? formTarget(check.valid.redirectUri) : null
}

/** A page's answer whose forms may also end at the client a sign-in leads on to (see signInFormTarget). */
export const allowingFormTarget = (response: Response, target: string | null): Response => (target ? withFormAction(response, target) : response)

function Consent(props: { ctx: WebContext; request: ValidAuthorization; owner: string }): Html {
  const { request, ctx } = props
  const items = request.scope ? request.scope.split(' ') : []
  const oidc = items.filter((s) => (OIDC_SCOPES as readonly string[]).includes(s))
  const api = grantTokenScope(request.scope)
  const hidden = {
    client_id: request.app.clientId,
    redirect_uri: request.redirectUri,
    state: request.state,
    scope: request.scope,
    nonce: request.nonce,
    code_challenge: request.codeChallenge,
    code_challenge_method: request.codeChallengeMethod,
  }
  return (
    <Layout ctx={ctx} title={`Authorize ${request.app.name}`}>
      <h1>Authorize {request.app.name}</h1>
      <p>
        <strong>{request.app.name}</strong> (registered by <a href={ownerUrl(props.owner)}>@{props.owner}</a>) asks for access to your account{' '}
        <strong>{ctx.caller.user?.name}</strong>.
      </p>
      <div class="box">
        <header>It will be able to</header>
        <ul class="entries" aria-label="Requested access">
          {oidc.map((s) => (
            <li>{OIDC_WORDS[s]}</li>
          ))}
          <li>
            {api === 'all' ? (
              'Use the API as you, with all your access: read and change your repositories, issues, organisations and settings'
            ) : (
              <>
                Use the API as you, limited to: <code>{api}</code>
              </>
            )}
          </li>
        </ul>
      </div>
      <p class="muted">
        Once you authorize it, you will be sent to <strong>{request.redirectUri}</strong>. You can revoke its access at any time in{' '}
        <a href="/user/settings/applications/oauth2">your authorized applications</a>.
      </p>
      <form method="post" action="/login/oauth/grant">
        <input type="hidden" name="_csrf" value={ctx.csrf ?? ''} />
        {Object.entries(hidden).map(([name, value]) => (
          <input type="hidden" name={name} value={value} />
        ))}
        <button class="primary" type="submit" name="granted" value="true">
          Authorize {request.app.name}
        </button>{' '}
        <button type="submit" name="granted" value="false">
          Cancel
        </button>
      </form>
    </Layout>
  )
}

/**
 * `GET /login/oauth/authorize` (RFC 6749 4.1.1): the request is checked; a visitor who is not
 * signed in goes through the web sign-in and comes back; the consent page asks once (a
 * confidential or trusted application granted before sends the browser straight back with a code);
 * `POST /login/oauth/grant` is the consent form's answer, checked again in full (the form's fields
 * are the visitor's own to change, so nothing in them is trusted that the request check did not
 * pass) and bound to the session by its CSRF token.
 */
export const oauthPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/login/oauth/authorize',
      async ({ request, caller, query }) => {
        const ctx = webContext(deps.config, request, caller)
        if (!deps.config.oauth2Enabled) return errorPage(404, 'OAuth2 is disabled', ctx)
        const check = await checkAuthorization(deps, query as AuthorizationParams)
        if ('page' in check) return errorPage(400, check.page, ctx)
        if ('redirect' in check) return redirect(check.redirect)
        // Only a session grants: a token or a password sent with the request (a leaked token of any
        // scope) would otherwise be turned into an application's access of the grant's whole scope.
        const user = caller.method === 'session' ? caller.user : null
        if (!user) return redirect(`/user/login?redirect_to=${encodeURIComponent(ctx.path)}`)
        if (!(await consentNeeded(deps, user.id, check.valid))) return redirect(await issueCode(deps, user.id, check.valid))
        const [owner] = await deps.db.select({ name: users.name }).from(users).where(eq(users.id, check.valid.app.userId))
        return withFormAction(htmlResponse(<Consent ctx={ctx} request={check.valid} owner={owner?.name ?? ''} />), formTarget(check.valid.redirectUri))
      },
      { scope: 'none', caller: true, query: AuthorizeQuery, detail: pageDetail('webOAuthAuthorize') },
    )
    .post(
      '/login/oauth/grant',
      async ({ request, caller, body }) => {
        const ctx = webContext(deps.config, request, caller)
        if (!deps.config.oauth2Enabled) return errorPage(404, 'OAuth2 is disabled', ctx)
        if (!caller.user || caller.method !== 'session') return errorPage(401, 'Sign in to authorize an application.', ctx)
        if (!csrfMatches(request, caller, body._csrf)) return errorPage(403, FORM_EXPIRED, ctx)
        const check = await checkAuthorization(deps, { ...body, response_type: 'code' })
        if ('page' in check) return errorPage(400, check.page, ctx)
        if ('redirect' in check) return redirect(check.redirect)
        if (body.granted !== 'true') return redirect(deniedRedirect(check.valid))
        return redirect(await issueCode(deps, caller.user.id, check.valid))
      },
      { scope: 'none', caller: true, body: GrantForm, detail: pageDetail('webOAuthGrant') },
    )
