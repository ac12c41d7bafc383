/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { Caller, UserRow } from '../../auth/caller'
import { ApiError } from '../../lib/errors'
import { qrCodePath } from '../../lib/qr-code'
import {
  disableTwoFactor,
  enrollmentSecret,
  enrollTwoFactor,
  regenerateScratchToken,
  startEnrollment,
  twoFactorEnabled,
  usePasscode,
  useScratchToken,
  type Enrollment,
} from '../../modules/users/two-factor'
import { cookieHeader, csrfMatches, pageDetail, webContext, type WebContext } from '../context'
import { errorPage } from '../errors'
import { ButtonForm, CsrfField, CsrfText, FORM_EXPIRED, FormText, formRoute, seeOther, SubmitRow, titledPage, type FormRequest } from '../forms'
import { PENDING_COOKIE, pendingOf, preSessionContext, signedInAnswer } from '../sign-in'
import { settingsPage } from './settings-user'
import { allowingFormTarget, signInFormTarget } from './oauth'

/*
 * Two-factor authentication (TOTP), Gitea 1.23's pages: the second step of signing in
 * (`/user/two_factor`, `/user/two_factor/scratch`) and the settings (`/user/settings/security`,
 * `/user/settings/security/two_factor/{enroll,regenerate_scratch,disable}`), through
 * modules/users/two-factor.ts.
 */

/** A TOTP passcode's field (`passcode`: six digits, spaces allowed). */
function PasscodeField(props: { label: string }) {
  return (
    <label>
      {props.label}
      <input name="passcode" inputmode="numeric" pattern="[0-9 ]{6,8}" maxlength="8" autocomplete="one-time-code" required />
    </label>
  )
}

/** The form of the second step: a passcode, or (`scratch`) the scratch token. */
function secondStepPage(ctx: WebContext, scratch: boolean, opts: { error?: string; status?: number; headers?: Record<string, string> } = {}) {
  const title = scratch ? 'Two-factor authentication: scratch token' : 'Two-factor authentication'
  return titledPage(
    ctx,
    title,
    <>
      <form class="stack" method="post" action={scratch ? '/user/two_factor/scratch' : '/user/two_factor'}>
        <CsrfField ctx={ctx} />
        {scratch ? (
          <label>
            Scratch token
            <input name="token" autocomplete="off" spellcheck="false" maxlength="64" required />
          </label>
        ) : (
          <PasscodeField label="Passcode from your authenticator app" />
        )}
        <SubmitRow label="Verify" />
      </form>
      {scratch ? (
        <p>
          <a href="/user/two_factor">Use a passcode instead</a>
        </p>
      ) : (
        <p>
          Lost your device? <a href="/user/two_factor/scratch">Use your scratch token</a>
        </p>
      )}
    </>,
    opts,
  )
}

const SecondStepForm = t.Object({ _csrf: CsrfText, passcode: FormText(16), token: FormText(64) })

/**
 * The second step's form, shown while a sign-in waits for it; otherwise back to the sign-in page.
 * As the sign-in form's, it may end at the OAuth2 client the sign-in leads on to (`signInFormTarget`).
 */
async function showSecondStep(deps: AppDeps, request: Request, caller: Caller, scratch: boolean): Promise<Response> {
  if (caller.user) return seeOther('/')
  const pending = pendingOf(deps, request)
  if (!pending) return seeOther('/user/login')
  const { ctx, headers } = preSessionContext(deps, request, caller)
  return allowingFormTarget(secondStepPage(ctx, scratch, { headers }), scratch ? null : await signInFormTarget(deps, pending.returnTo))
}

/**
 * The second step's POST: the passcode (or scratch token) checked under the failed sign-in limits
 * (`Auth.secondFactor`: a wrong one counts against the client address and the account's second
 * factor), then the session made and the pending cookie dropped. A refusal shows the form again.
 */
async function secondStep(deps: AppDeps, c: FormRequest & { body: typeof SecondStepForm.static }, scratch: boolean): Promise<Response> {
  const ctx = webContext(deps.config, c.request, c.caller)
  if (!csrfMatches(c.request, c.caller, c.body._csrf)) return errorPage(403, FORM_EXPIRED, ctx)
  const pending = pendingOf(deps, c.request)
  if (!pending) return errorPage(400, 'Your sign-in has expired or was not started here. Sign in again.', ctx)
  const given = (scratch ? c.body.token : c.body.passcode) ?? ''
  try {
    await deps.auth.secondFactor(pending.userId, deps.auth.clientAddress(c.request), () =>
      scratch ? useScratchToken(deps, pending.userId, given) : usePasscode(deps, pending.userId, given.replace(/\s/g, '')),
    )
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    const error = e.status !== 401 ? e.message : scratch ? 'Your scratch token is incorrect.' : 'Your passcode is incorrect. If you misplaced your device, use your scratch token to sign in.'
    const page = secondStepPage(ctx, scratch, { error, status: e.status === 401 ? 200 : e.status, headers: e.headers })
    return allowingFormTarget(page, scratch ? null : await signInFormTarget(deps, pending.returnTo))
  }
  // Gitea sends one who used the scratch token to the settings, to enroll again or make a new token.
  const answer = await signedInAnswer(deps, pending.userId, scratch ? '/user/settings/security?done=twofa-scratch-used' : pending.returnTo)
  answer.headers.append('set-cookie', cookieHeader(deps.config, PENDING_COOKIE, '', 0))
  return answer
}

/** Groups a base32 secret by four characters, as it is typed into an app. */
const grouped = (secret: string) => secret.replace(/(.{4})(?=.)/g, '$1 ')

/** `/user/settings/security`: whether the second factor is on, and what may be done with it; a scratch token just made is shown once. */
async function securityPage(deps: AppDeps, web: WebContext, user: UserRow, opts: { scratch?: string; enrolled?: boolean; error?: string; status?: number } = {}) {
  const enabled = await twoFactorEnabled(deps, user.id)
  return settingsPage(
    web,
    '/user/settings/security',
    'Security',
    <>
      <h3 id="two-factor">Two-factor authentication</h3>
      {opts.scratch ? (
        <section class="notice-ok" role="status" aria-labelledby="new-scratch">
          <p id="new-scratch">
            {opts.enrolled ? 'Your account has been enrolled in two-factor authentication. ' : 'A new scratch token was made. '}
            Store your single-use scratch token in a safe place: it is shown only this once, and signs you in if you lose your device.
          </p>
          <p class="token-once" data-scratch>
            {opts.scratch}
          </p>
        </section>
      ) : null}
      {enabled ? (
        <>
          <p>Two-factor authentication is enabled: signing in asks for a passcode from your authenticator app.</p>
          <p>Lost your scratch token, or used it? Make a new one (the old one stops working).</p>
          <ButtonForm ctx={web} action="/user/settings/security/two_factor/regenerate_scratch" label="Regenerate scratch token" />
          <p>Disabling it signs you in with your password alone.</p>
          <ButtonForm ctx={web} action="/user/settings/security/two_factor/disable" label="Disable two-factor authentication" danger />
        </>
      ) : (
        <>
          <p>Two-factor authentication is not enabled. With it, signing in also asks for a passcode from an authenticator app on your device.</p>
          <p>
            <a href="/user/settings/security/two_factor/enroll">Enroll into two-factor authentication</a>
          </p>
        </>
      )}
    </>,
    opts,
  )
}

/** A QR code of `text` drawn as one SVG path, dark on light whatever the page's colours (a phone's camera reads it off the screen). */
const QrCode = (props: { code: { size: number; path: string }; label: string }): Html => {
  const { size, path } = props.code
  return (
    <svg class="qr-code" role="img" aria-label={props.label} width="200" height="200" viewBox={`0 0 ${size} ${size}`} shape-rendering="crispEdges">
      <rect width={String(size)} height={String(size)} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  )
}

/** The enrollment: the secret and its URI, and the passcode form carrying the sealed secret back. */
async function enrollPage(web: WebContext, enrollment: Enrollment, opts: { error?: string; status?: number } = {}) {
  const qr = await qrCodePath(enrollment.uri)
  return settingsPage(
    web,
    '/user/settings/security',
    'Enroll into two-factor authentication',
    <>
      <p>Scan the code with your authenticator app, or add this account with the key below (or its URI), then enter the passcode the app shows.</p>
      <QrCode code={qr} label="QR code of the URI below" />
      <dl>
        <dt>Key</dt>
        <dd>
          <code>{grouped(enrollment.secret)}</code>
        </dd>
        <dt>URI</dt>
        <dd class="token-once">{enrollment.uri}</dd>
      </dl>
      <form class="stack" method="post" action="/user/settings/security/two_factor/enroll">
        <CsrfField ctx={web} />
        <input type="hidden" name="enrollment" value={enrollment.ticket} />
        <PasscodeField label="Passcode" />
        <SubmitRow label="Verify" />
      </form>
    </>,
    opts,
  )
}

const EnrollForm = t.Object({ _csrf: CsrfText, enrollment: FormText(1024), passcode: FormText(16) })
const ButtonOnly = t.Object({ _csrf: CsrfText })
const signedPage = (id: string) => ({ scope: 'user' as const, signed: true as const, detail: pageDetail(id) })

export const twoFactorPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get('/user/two_factor', ({ request, caller }) => showSecondStep(deps, request, caller, false), { scope: 'none', caller: true, detail: pageDetail('webTwoFactorForm') })
    .post('/user/two_factor', ({ request, caller, body }) => secondStep(deps, { request, caller, body }, false), { scope: 'none', caller: true, body: SecondStepForm, detail: pageDetail('webTwoFactor') })
    .get('/user/two_factor/scratch', ({ request, caller }) => showSecondStep(deps, request, caller, true), { scope: 'none', caller: true, detail: pageDetail('webTwoFactorScratchForm') })
    .post('/user/two_factor/scratch', ({ request, caller, body }) => secondStep(deps, { request, caller, body }, true), { scope: 'none', caller: true, body: SecondStepForm, detail: pageDetail('webTwoFactorScratch') })
    .get('/user/settings/security', ({ request, caller, user }) => securityPage(deps, webContext(deps.config, request, caller), user), signedPage('webUserSecurity'))
    .get(
      '/user/settings/security/two_factor/enroll',
      async ({ request, caller, user }) => {
        const web = webContext(deps.config, request, caller)
        try {
          return await enrollPage(web, await startEnrollment(deps, user))
        } catch (e) {
          if (e instanceof ApiError && e.status === 409) return securityPage(deps, web, user, { error: e.message, status: 409 })
          throw e
        }
      },
      signedPage('webUserTwoFactorEnrollForm'),
    )
    .post(
      '/user/settings/security/two_factor/enroll',
      ({ request, caller, body, user }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async (web) => securityPage(deps, web, user, { scratch: await enrollTwoFactor(deps, user, body.enrollment, body.passcode ?? ''), enrolled: true }),
          async (web, error, status) => {
            if (status === 409) return securityPage(deps, web, user, { error, status })
            // The same secret again while its enrollment lasts, so the app's entry stays right.
            const enrollment = await startEnrollment(deps, user, enrollmentSecret(deps, user, body.enrollment))
            return enrollPage(web, enrollment, { error, status })
          },
        ),
      { ...signedPage('webUserTwoFactorEnroll'), body: EnrollForm },
    )
    .post(
      '/user/settings/security/two_factor/regenerate_scratch',
      ({ request, caller, body, user }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async (web) => securityPage(deps, web, user, { scratch: await regenerateScratchToken(deps, user) }),
          (web, error, status) => securityPage(deps, web, user, { error, status }),
        ),
      { ...signedPage('webUserTwoFactorRegenerateScratch'), body: ButtonOnly },
    )
    .post(
      '/user/settings/security/two_factor/disable',
      ({ request, caller, body, user }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await disableTwoFactor(deps, user)
            return seeOther('/user/settings/security', 'twofa-disabled')
          },
          (web, error, status) => securityPage(deps, web, user, { error, status }),
        ),
      { ...signedPage('webUserTwoFactorDisable'), body: ButtonOnly },
    )
