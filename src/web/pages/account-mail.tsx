/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import type { Caller } from '../../auth/caller'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { notFound } from '../../lib/errors'
import { activateAccount, activateEmail, findCode, requestPasswordReset, resendActivation, resetPassword } from '../../modules/users/mail-codes'
import { pageDetail, type WebContext } from '../context'
import { NewPasswordFields } from './settings-account'
import { CsrfField, CsrfText, FormText, formAction, seeOther, titledPage, withoutFieldPrefix } from '../forms'
import { preSessionContext } from '../sign-in'

/*
 * The pages of the mails Warren sends, at Gitea 1.23's addresses (routers/web/auth/password.go,
 * auth.go): `/user/forgot_password` (the reset mail asked for by address: the same answer whether
 * or not an account has it), `/user/recover_account?code=` (a new password, then signing in as
 * always, the second factor asked), `/user/activate` (an inactive account's activation by its
 * code; without one, the activation mail sent again) and `/user/activate_email?code=` (an added
 * address's). A mailed link opens a page whose button does the act (a POST with the form's CSRF
 * token): a mail scanner following the link uses no code.
 */

const CodeQuery = t.Object({ code: FormText(128), email: FormText(320) })
const EmailForm = t.Object({ _csrf: CsrfText, email: FormText(320) })
const CodeForm = t.Object({ _csrf: CsrfText, code: FormText(128), email: FormText(320) })
const ResetForm = t.Object({ _csrf: CsrfText, code: FormText(128), password: FormText(255), retype: FormText(255) })

/** One of these pages: a title, what it says, its form (`titledPage`). */
const mailPage = titledPage

/** Gitea's answer to a link whose code is unknown, used, expired or voided by a new password. */
const INVALID_LINK = 'The link is invalid or has expired.'

/** Where a reset or an activation mail is asked for again. */
const AskAgain = (props: { reset?: boolean }) => (
  <p>{props.reset ? <a href="/user/forgot_password">Ask for a new password reset mail</a> : <a href="/user/activate">Ask for a new activation mail</a>}</p>
)

function EmailRequestForm(props: { ctx: WebContext; action: string; label: string; email?: string }) {
  return (
    <form class="stack" method="post" action={props.action}>
      <CsrfField ctx={props.ctx} />
      <label>
        E-mail address
        <input name="email" type="email" autocomplete="email" required maxlength="320" value={props.email ?? ''} />
      </label>
      <div>
        <button class="primary" type="submit">
          {props.label}
        </button>
      </div>
    </form>
  )
}

/** A mailed link's page: one button posting its code. */
function CodeButton(props: { ctx: WebContext; action: string; code: string; email?: string; label: string }) {
  return (
    <form class="stack" method="post" action={props.action}>
      <CsrfField ctx={props.ctx} />
      <input type="hidden" name="code" value={props.code} />
      {props.email ? <input type="hidden" name="email" value={props.email} /> : null}
      <div>
        <button class="primary" type="submit">
          {props.label}
        </button>
      </div>
    </form>
  )
}

function forgotPage(deps: AppDeps, ctx: WebContext, opts: { sentTo?: string; headers?: Record<string, string> } = {}) {
  if (!deps.config.mailer) return mailPage(ctx, 'Forgot password', <p>This server sends no mail: ask a site administrator to set a new password for you.</p>, opts)
  const lifetime = Math.round(deps.config.resetPasswordCodeLifetime / 60)
  return mailPage(
    ctx,
    'Forgot password',
    opts.sentTo !== undefined ? (
      <p role="status">
        If an account uses {opts.sentTo}, a mail was sent to it with a link to choose a new password. The link is valid for {String(lifetime)} minutes.
      </p>
    ) : (
      <EmailRequestForm ctx={ctx} action="/user/forgot_password" label="Send the reset mail" />
    ),
    opts,
  )
}

function recoverPage(deps: AppDeps, ctx: WebContext, code: string, email: string, opts: { error?: string; status?: number; headers?: Record<string, string> } = {}) {
  return mailPage(
    ctx,
    'Choose a new password',
    <>
      <p>For the account of {email}.</p>
      <form class="stack" method="post" action="/user/recover_account">
        <CsrfField ctx={ctx} />
        <input type="hidden" name="code" value={code} />
        <NewPasswordFields ctx={ctx} />
        <div>
          <button class="primary" type="submit">
            Change the password
          </button>
        </div>
      </form>
    </>,
    opts,
  )
}

/** The page asking for a new activation mail (and answering one asked for: the same words whoever asks). */
export function activationPage(deps: AppDeps, ctx: WebContext, opts: { sentTo?: string; email?: string; error?: string; status?: number; headers?: Record<string, string> } = {}) {
  const lifetime = Math.round(deps.config.activeCodeLifetime / 60)
  return mailPage(
    ctx,
    'Activate your account',
    opts.sentTo !== undefined ? (
      <p role="status">
        If an account waiting for activation uses {opts.sentTo}, an activation mail was sent to it. Follow its link within {String(lifetime)} minutes.
      </p>
    ) : (
      <>
        <p>Your account is not activated yet: follow the link of the activation mail we sent you. Did it not arrive? Ask for another one.</p>
        {deps.config.mailer ? <EmailRequestForm ctx={ctx} action="/user/activate" label="Send the activation mail again" email={opts.email} /> : null}
      </>
    ),
    opts,
  )
}

/** 404 unless the mailer is on: asking for a mail means nothing without it (Gitea's MailService == nil). */
function requireMailer(deps: AppDeps): void {
  if (!deps.config.mailer) throw notFound('the mailer is off')
}

type Route = { request: Request; caller: Caller }

/** One of these pages' forms posted: its context, the CSRF check, then `act`; a refusal answered by `again` (formAction). */
function posted(
  deps: AppDeps,
  c: Route & { body: { _csrf?: string } },
  act: (ctx: WebContext) => Promise<Response>,
  again?: (ctx: WebContext, error: string, status: number) => Response | Promise<Response>,
): Promise<Response> {
  const { ctx } = preSessionContext(deps, c.request, c.caller)
  return formAction(c.request, c.caller, ctx, c.body._csrf, () => act(ctx), again && ((error, status) => again(ctx, error, status)))
}

export const accountMailPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/user/forgot_password',
      ({ request, caller }) => {
        const { ctx, headers } = preSessionContext(deps, request, caller)
        return forgotPage(deps, ctx, { headers })
      },
      { scope: 'none', caller: true, detail: pageDetail('webForgotPasswordForm') },
    )
    .post(
      '/user/forgot_password',
      async ({ request, caller, body }) => {
        requireMailer(deps)
        const email = (body.email ?? '').trim()
        return posted(deps, { request, caller, body }, async (ctx) => {
          await requestPasswordReset(deps, email)
          return forgotPage(deps, ctx, { sentTo: email })
        })
      },
      { scope: 'none', caller: true, body: EmailForm, detail: pageDetail('webForgotPassword') },
    )
    .get(
      '/user/recover_account',
      async ({ request, caller, query }) => {
        const { ctx, headers } = preSessionContext(deps, request, caller)
        const found = await findCode(deps, query.code, 'reset_password')
        if (!found) return mailPage(ctx, 'Choose a new password', <AskAgain reset />, { error: INVALID_LINK, headers })
        return recoverPage(deps, ctx, query.code!, found.user.email, { headers })
      },
      { scope: 'none', caller: true, query: CodeQuery, detail: pageDetail('webRecoverAccountForm') },
    )
    .post(
      '/user/recover_account',
      async ({ request, caller, body }) => {
        const code = body.code ?? ''
        return posted(
          deps,
          { request, caller, body },
          async (ctx) => {
            const found = await findCode(deps, code, 'reset_password')
            if (!found) return mailPage(ctx, 'Choose a new password', <AskAgain reset />, { error: INVALID_LINK, status: 422 })
            if ((body.password ?? '') !== (body.retype ?? '')) return recoverPage(deps, ctx, code, found.user.email, { error: 'The passwords do not match.', status: 422 })
            await resetPassword(deps, code, body.password ?? '')
            return seeOther('/user/login', 'password-reset')
          },
          async (ctx, error, status) => {
            const found = await findCode(deps, code, 'reset_password')
            return found
              ? recoverPage(deps, ctx, code, found.user.email, { error: withoutFieldPrefix(error), status })
              : mailPage(ctx, 'Choose a new password', <AskAgain reset />, { error: INVALID_LINK, status })
          },
        )
      },
      { scope: 'none', caller: true, body: ResetForm, detail: pageDetail('webRecoverAccount') },
    )
    .get(
      '/user/activate',
      async ({ request, caller, query }) => {
        const { ctx, headers } = preSessionContext(deps, request, caller)
        if (!query.code) return activationPage(deps, ctx, { headers })
        if (!(await findCode(deps, query.code, 'activate'))) return mailPage(ctx, 'Activate your account', <AskAgain />, { error: INVALID_LINK, headers })
        return mailPage(ctx, 'Activate your account', <CodeButton ctx={ctx} action="/user/activate" code={query.code} label="Activate my account" />, { headers })
      },
      { scope: 'none', caller: true, query: CodeQuery, detail: pageDetail('webActivateForm') },
    )
    .post(
      '/user/activate',
      async ({ request, caller, body }) => {
        return posted(
          deps,
          { request, caller, body },
          async (ctx) => {
            // The code alone opens no session (whoever reads the mail is not yet whoever knows the
            // password and holds the second factor; Gitea asks the password): the sign-in follows.
            if (body.code) {
              await activateAccount(deps, body.code)
              return seeOther('/user/login', 'account-activated')
            }
            // Without a code: Gitea's resend of the activation mail, the same answer whoever asks.
            requireMailer(deps)
            const email = (body.email ?? '').trim()
            await resendActivation(deps, email)
            return activationPage(deps, ctx, { sentTo: email })
          },
          (ctx, _error, status) => mailPage(ctx, 'Activate your account', <AskAgain />, { error: INVALID_LINK, status }),
        )
      },
      { scope: 'none', caller: true, body: CodeForm, detail: pageDetail('webActivate') },
    )
    .get(
      '/user/activate_email',
      async ({ request, caller, query }) => {
        const { ctx, headers } = preSessionContext(deps, request, caller)
        const found = await findCode(deps, query.code, 'activate_email')
        if (!found) return mailPage(ctx, 'Verify your e-mail address', <p>Add the address again in your account settings to get a new link.</p>, { error: INVALID_LINK, headers })
        return mailPage(
          ctx,
          'Verify your e-mail address',
          <>
            <p>Confirm that {found.row.email} is your address.</p>
            <CodeButton ctx={ctx} action="/user/activate_email" code={query.code!} label="Verify this address" />
          </>,
          { headers },
        )
      },
      { scope: 'none', caller: true, query: CodeQuery, detail: pageDetail('webActivateEmailForm') },
    )
    .post(
      '/user/activate_email',
      async ({ request, caller, body }) => {
        return posted(
          deps,
          { request, caller, body },
          async (ctx) => {
            const { email } = await activateEmail(deps, body.code)
            return mailPage(
              ctx,
              'Verify your e-mail address',
              <p role="status">
                The address {email} is verified. <a href="/user/settings/account">Your account settings</a>
              </p>,
            )
          },
          (ctx, _error, status) => mailPage(ctx, 'Verify your e-mail address', <p>Add the address again in your account settings to get a new link.</p>, { error: INVALID_LINK, status }),
        )
      },
      { scope: 'none', caller: true, body: CodeForm, detail: pageDetail('webActivateEmail') },
    )
