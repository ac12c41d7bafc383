/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { ApiError } from '../../lib/errors'
import { createUser } from '../../modules/users/service'
import { mailActivation } from '../../modules/users/mail-codes'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, type WebContext } from '../context'
import { errorPage } from '../errors'
import { CsrfField, CsrfText, FormText, formAction, Notices } from '../forms'
import { preSessionContext, signedInAnswer } from '../sign-in'

const SignUpForm = t.Object({ _csrf: CsrfText, user_name: FormText(40), email: FormText(320), password: FormText(255), retype: FormText(255) })
type SignUpValues = Partial<typeof SignUpForm.static>

function signUpPage(ctx: WebContext, opts: { values?: SignUpValues; error?: string; status?: number; headers?: Record<string, string> } = {}) {
  const v = opts.values
  return htmlResponse(
    <Layout ctx={ctx} title="Register">
      <h1>Create an account</h1>
      <Notices ctx={ctx} error={opts.error} />
      <form class="stack" method="post" action="/user/sign_up">
        <CsrfField ctx={ctx} />
        <label>
          Username
          <input name="user_name" autocomplete="username" required maxlength="40" value={v?.user_name ?? ''} />
        </label>
        <label>
          E-mail address
          <input name="email" type="email" autocomplete="email" required maxlength="320" value={v?.email ?? ''} />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="new-password" minlength={String(ctx.config.minPasswordLength)} required />
        </label>
        <label>
          Confirm the password
          <input name="retype" type="password" autocomplete="new-password" required />
        </label>
        <div>
          <button class="primary" type="submit">
            Register
          </button>
        </div>
      </form>
      <p>
        Already have an account? <a href="/user/login">Sign in</a>
      </p>
    </Layout>,
    opts.status ?? 200,
    opts.headers,
  )
}

/** After a sign-up that waits for its address's confirmation: Gitea's "check your mail" page. */
function checkMailPage(deps: AppDeps, ctx: WebContext, email: string) {
  return htmlResponse(
    <Layout ctx={ctx} title="Activate your account">
      <h1>Activate your account</h1>
      <p role="status">
        A mail was sent to {email}. Follow its link within {String(Math.round(deps.config.activeCodeLifetime / 60))} minutes to activate your account.
      </p>
    </Layout>,
  )
}

/** 404 unless registration is on (WARREN_WEB_REGISTRATION): the page does not exist otherwise. */
function requireRegistration(deps: AppDeps): void {
  if (!deps.config.webRegistration) throw new ApiError(404, 'registration is off')
}

/**
 * `/user/sign_up` (Gitea's URL), when WARREN_WEB_REGISTRATION is on: the user is made by the
 * service admin user creation uses (the same name, e-mail and password rules), then signed in; with
 * WARREN_REGISTER_EMAIL_CONFIRM, made inactive with its activation mail queued, signed in by the
 * mailed link (`/user/activate`, pages/account-mail.tsx).
 */
export const signUpPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/user/sign_up',
      ({ request, caller }) => {
        requireRegistration(deps)
        if (caller.user) return new Response(null, { status: 303, headers: { location: '/' } })
        const { ctx, headers } = preSessionContext(deps, request, caller)
        return signUpPage(ctx, { headers })
      },
      { scope: 'none', caller: true, detail: pageDetail('webSignUpForm') },
    )
    .post(
      '/user/sign_up',
      async ({ request, caller, body }) => {
        requireRegistration(deps)
        const { ctx } = preSessionContext(deps, request, caller)
        if (caller.user) return errorPage(403, 'You are signed in already; sign out to register another account.', ctx)
        const values = { ...body, password: undefined, retype: undefined }
        return formAction(
          request,
          caller,
          ctx,
          body._csrf,
          async () => {
            if ((body.password ?? '') !== (body.retype ?? '')) return signUpPage(ctx, { values, error: 'The passwords do not match.', status: 422 })
            const input = { username: (body.user_name ?? '').trim(), email: (body.email ?? '').trim(), password: body.password ?? '' }
            if (deps.config.registerEmailConfirm) {
              // Gitea's REGISTER_EMAIL_CONFIRM: the account waits, inactive, for the link mailed in the transaction that made it.
              const user = await createUser(deps, { ...input, isActive: false }, { afterInsert: (row) => mailActivation(deps, row) })
              return checkMailPage(deps, ctx, user.email)
            }
            const user = await createUser(deps, input)
            return await signedInAnswer(deps, user.id, '/')
          },
          (error, status) => signUpPage(ctx, { values, error, status }),
        )
      },
      { scope: 'none', caller: true, body: SignUpForm, detail: pageDetail('webSignUp') },
    )
