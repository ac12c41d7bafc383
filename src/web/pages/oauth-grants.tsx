/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { ApiError } from '../../lib/errors'
import { isoTime } from '../../lib/time'
import { listGrants, revokeGrant } from '../../modules/oauth2/service'
import { Layout } from '../layout'
import { csrfMatches, htmlResponse, pageDetail, webContext } from '../context'
import { errorPage } from '../errors'
import { FORM_EXPIRED } from '../forms'
import { TimeAt } from './issue-parts'

const PATH = '/user/settings/applications/oauth2'

/**
 * `/user/settings/applications/oauth2`: the applications the signed-in person authorized (Gitea's
 * "Authorized OAuth2 Applications" section), each with a form that revokes it (its tokens stop
 * working at once; the next authorization asks again). The same services as the API's
 * `/user/oauth2/grants`.
 */
export const oauthGrantPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      PATH,
      async ({ request, caller }) => {
        const ctx = webContext(deps.config, request, caller)
        if (!caller.user) return new Response(null, { status: 303, headers: { location: `/user/login?redirect_to=${encodeURIComponent(PATH)}` } })
        if (!deps.config.oauth2Enabled) return errorPage(404, 'OAuth2 is disabled', ctx)
        const { rows, total } = await listGrants(deps, caller.user.id, { page: 1, limit: 100, offset: 0 })
        return htmlResponse(
          <Layout ctx={ctx} title="Authorized applications">
            <h1>Authorized OAuth2 applications</h1>
            <p class="muted">These applications may use your account through the access you granted them. Revoking one ends its access at once.</p>
            <div class="box">
              <ul class="entries" aria-label="Authorized applications">
                {rows.map(({ grant, app }) => (
                  <li>
                    <strong>{app.name}</strong> <span class="muted">· scope: {grant.scope || '(none: full access)'} · authorized <TimeAt iso={isoTime(grant.createdUnix)} /></span>
                    <form method="post" action={`${PATH}/grants/${grant.id}/revoke`}>
                      <input type="hidden" name="_csrf" value={ctx.csrf ?? ''} />
                      <button type="submit" aria-label={`Revoke access of ${app.name}`}>
                        Revoke
                      </button>
                    </form>
                  </li>
                ))}
                {rows.length === 0 ? <li class="muted">You have not authorized any application.</li> : null}
              </ul>
              {total > rows.length ? <p class="notice muted">{total - rows.length} more not shown.</p> : null}
            </div>
          </Layout>,
        )
      },
      { scope: 'user', caller: true, detail: pageDetail('webOAuthGrants') },
    )
    .post(
      `${PATH}/grants/:id/revoke`,
      async ({ request, caller, body, params }) => {
        const ctx = webContext(deps.config, request, caller)
        if (!caller.user) return errorPage(401, 'Sign in to manage your authorized applications.', ctx)
        if (!csrfMatches(request, caller, body._csrf)) return errorPage(403, FORM_EXPIRED, ctx)
        try {
          await revokeGrant(deps, caller.user.id, params.id)
        } catch (e) {
          if (e instanceof ApiError) return errorPage(e.status, e.message, ctx)
          throw e
        }
        return new Response(null, { status: 303, headers: { location: PATH } })
      },
      { scope: 'user', caller: true, params: t.Object({ id: t.String({ maxLength: 20 }) }), body: t.Object({ _csrf: t.Optional(t.String({ maxLength: 128 })) }), detail: pageDetail('webOAuthRevokeGrant') },
    )
