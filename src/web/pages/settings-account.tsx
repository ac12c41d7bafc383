/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { CHANGE_PASSWORD_PATH, type UserRow } from '../../auth/caller'
import { SESSION_COOKIE } from '../../auth/sessions'
import type { EmailRow, RepoRow } from '../../db/schema'
import type { EmailPreference } from '../../notify/mails'
import { ApiError } from '../../lib/errors'
import { deleteOwnAccount, editUser } from '../../modules/admin/service'
import { listOrgsOfUser, removeMember } from '../../modules/orgs/service'
import { listOwnedRepos } from '../../modules/repos/queries'
import { addEmails, deleteEmails, emailById, listEmails, makeEmailPrimary } from '../../modules/users/service'
import { cookieHeader, pageDetail, webContext, type WebContext } from '../context'
import { ButtonForm, CsrfField, CsrfText, FormText, formRoute, ListTable, Pager, pageNumber, pagesOf, seeOther, SubmitRow, withoutFieldPrefix } from '../forms'
import { ownerUrl, repoUrl } from '../links'
import { settingsPage, signedPage } from './settings-user'

/*
 * The account side of the user settings (Gitea 1.23's routers/web/user/setting/account.go and the
 * organisation and repository lists of setting/profile.go): the password, the e-mail addresses,
 * deleting the account; the organisations one belongs to, with a way out; the repositories one owns.
 */

/** A new password and its confirmation (`password`, `retype`), as the account page and the mailed reset ask for it. */
export const NewPasswordFields = (props: { ctx: WebContext }) => (
  <>
    <label>
      New password
      <input name="password" type="password" autocomplete="new-password" minlength={String(props.ctx.config.minPasswordLength)} required />
    </label>
    <label>
      Confirm the new password
      <input name="retype" type="password" autocomplete="new-password" required />
    </label>
  </>
)

/** Organisations a page lists. */
const LISTED = 50
/** Repositories a page lists. */
const REPOS_LISTED = 20
/** An address typed in is checked by the users service (at most 254 characters); this bounds the form. */
const EMAIL_FIELD_MAX = 320

const PasswordForm = t.Object({ _csrf: CsrfText, old_password: FormText(255), password: FormText(255), retype: FormText(255) })
const NewPasswordForm = t.Object({ _csrf: CsrfText, password: FormText(255), retype: FormText(255) })
/** Gitea's AddEmailForm, and its `_method=PRIMARY` with the address's `id`. */
const EmailForm = t.Object({ _csrf: CsrfText, email: FormText(EMAIL_FIELD_MAX), _method: FormText(16), id: FormText(20), preference: FormText(16) })
const IdForm = t.Object({ _csrf: CsrfText, id: FormText(20) })
const DeleteForm = t.Object({ _csrf: CsrfText, password: FormText(255) })
const ListQuery = t.Object({ page: FormText(10), done: FormText(40) })
const OrgParams = t.Object({ org: t.String({ maxLength: 255 }) })

/** Gitea's email_notifications_preference choices, as its account page words them. */
const EMAIL_PREFERENCE_LABELS: [EmailPreference, string][] = [
  ['enabled', 'Mail me every notification'],
  ['onmention', 'Only mail me when I am mentioned'],
  ['disabled', 'Mail me no notification'],
]

interface Shown {
  error?: string
  status?: number
  /** The address typed in a refused add form. */
  email?: string
}

/** A user's address as Gitea's list shows it: primary, activated or not. */
function EmailEntry(props: { ctx: WebContext; address: EmailRow }) {
  const { ctx, address: a } = props
  return (
    <tr>
      <td>{a.email}</td>
      <td>
        {a.isPrimary ? <strong>Primary</strong> : null} {a.isActivated ? 'Activated' : <span class="muted">Not activated</span>}
      </td>
      <td>
        {!a.isPrimary && a.isActivated ? (
          <ButtonForm ctx={ctx} action="/user/settings/account/email" label={`Make ${a.email} primary`} fields={{ _method: 'PRIMARY', id: String(a.id) }} />
        ) : null}
        {a.isPrimary ? null : <ButtonForm ctx={ctx} action="/user/settings/account/email/delete" label={`Delete ${a.email}`} fields={{ id: String(a.id) }} danger />}
      </td>
    </tr>
  )
}

/** The field asking for the user's current password. */
function CurrentPassword(props: { name: string; label: string }) {
  return (
    <label>
      {props.label}
      <input name={props.name} type="password" autocomplete="current-password" required />
    </label>
  )
}

/**
 * Gitea's must-change-password page: the new password twice, no current one (an administrator set
 * it, and the visitor just signed in with it). The request pipeline sends such a visitor here from
 * every other page (auth/caller.ts).
 */
function changePasswordPage(ctx: WebContext, opts: Shown = {}) {
  return settingsPage(
    ctx,
    CHANGE_PASSWORD_PATH,
    'Change your password',
    <>
      <p>An administrator set your password: choose your own before you go on.</p>
      <form class="stack" method="post" action={CHANGE_PASSWORD_PATH}>
        <CsrfField ctx={ctx} />
        <NewPasswordFields ctx={ctx} />
        <SubmitRow label="Change password" />
      </form>
    </>,
    opts,
  )
}

/** Gitea's account page: the password form, the e-mail addresses with their forms, and deleting the account. */
async function accountPage(deps: AppDeps, ctx: WebContext, user: UserRow, opts: Shown = {}) {
  const emails = await listEmails(deps, user.id)
  return settingsPage(
    ctx,
    '/user/settings/account',
    'Account',
    <>
      <section aria-labelledby="password">
        <h3 id="password">Password</h3>
        <form class="stack" method="post" action="/user/settings/account">
          <CsrfField ctx={ctx} />
          <CurrentPassword name="old_password" label="Current password" />
          <NewPasswordFields ctx={ctx} />
          <SubmitRow label="Change password" />
        </form>
      </section>
      <section aria-labelledby="emails">
        <h3 id="emails">E-mail addresses</h3>
        <p class="muted">
          {deps.config.mailer
            ? 'An address you add is activated by the link mailed to it. Only an activated address can become your primary one.'
            : 'An address you add is not activated: Warren sends no mail to confirm it, so a site administrator activates it. Only an activated address can become your primary one.'}
        </p>
        <div class="box">
          <ListTable label="E-mail addresses" columns={['Address', 'State']} actions>
            {emails.map((a) => (
              <EmailEntry ctx={ctx} address={a} />
            ))}
          </ListTable>
        </div>
        <form class="stack" method="post" action="/user/settings/account/email">
          <CsrfField ctx={ctx} />
          <label>
            New e-mail address
            <input name="email" type="email" maxlength="254" autocomplete="email" required value={opts.email ?? ''} />
          </label>
          <SubmitRow label="Add e-mail address" />
        </form>
        <form class="stack" method="post" action="/user/settings/account/email">
          <CsrfField ctx={ctx} />
          <input type="hidden" name="_method" value="NOTIFICATION" />
          <label>
            E-mail notifications {deps.config.mailer ? null : <span class="muted">(this server sends no mail)</span>}
            <select name="preference">
              {EMAIL_PREFERENCE_LABELS.map(([value, label]) => (
                <option value={value} selected={user.emailNotificationsPreference === value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <SubmitRow label="Set e-mail notification preference" />
        </form>
      </section>
      <section aria-labelledby="delete-account">
        <h3 id="delete-account">Delete your account</h3>
        <p>
          Deleting your account cannot be undone. Transfer or delete your repositories and leave your organisations first; your issues and comments stay, shown as
          written by a deleted user.
        </p>
        <form class="stack" method="post" action="/user/settings/account/delete">
          <CsrfField ctx={ctx} />
          <CurrentPassword name="password" label="Your password" />
          <SubmitRow label="Delete your account" danger />
        </form>
      </section>
    </>,
    opts,
  )
}

/** Whether `password` is the user's current one: the same check, and the same failed sign-in limits, as signing in. */
async function passwordMatches(deps: AppDeps, request: Request, user: UserRow, password: string): Promise<boolean> {
  try {
    await deps.auth.byPassword(user.name, password, deps.auth.clientAddress(request))
    return true
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return false
    throw e
  }
}

/** An address's id as a form sends it (404 for anything that names none). */
const addressId = (value: string | undefined) => (/^[0-9]{1,15}$/.test(value ?? '') ? Number(value) : 0)

/** The organisations the user belongs to, each with its Leave button. */
async function organizationsPage(deps: AppDeps, ctx: WebContext, user: UserRow, pageAt: number, opts: Shown = {}) {
  const found = await listOrgsOfUser(deps, user, user, { page: pageAt, limit: LISTED, offset: (pageAt - 1) * LISTED })
  return settingsPage(
    ctx,
    '/user/settings/organization',
    'Organisations',
    <>
      <p>
        <a href="/org/create">New organisation</a>
      </p>
      <div class="box">
        <ListTable label="Organisations" columns={['Organisation']} actions empty={found.rows.length === 0 && 'You are not a member of any organisation.'}>
          {found.rows.map((org) => (
            <tr>
              <td>
                <a href={ownerUrl(org.name)}>{org.name}</a>
                {org.fullName ? <span class="muted"> · {org.fullName}</span> : null}
              </td>
              <td>
                <ButtonForm ctx={ctx} action={`/org/${encodeURIComponent(org.name)}/members/action/leave`} label={`Leave ${org.name}`} danger />
              </td>
            </tr>
          ))}
        </ListTable>
      </div>
      <Pager path="/user/settings/organization" page={pageAt} pages={pagesOf(found.total, LISTED)} />
    </>,
    opts,
  )
}

/** What a repository is besides its name: private, a fork, a mirror, archived. */
const marksOf = (r: RepoRow) => [r.isPrivate && 'Private', r.isFork && 'Fork', r.isMirror && 'Mirror', r.isArchived && 'Archived'].filter((m): m is string => !!m)

/** The repositories the user owns, paged, each linked with its settings. */
async function reposPage(deps: AppDeps, ctx: WebContext, user: UserRow, pageAt: number) {
  const found = await listOwnedRepos(deps, user, user, { page: pageAt, limit: REPOS_LISTED, offset: (pageAt - 1) * REPOS_LISTED })
  return settingsPage(
    ctx,
    '/user/settings/repos',
    'Repositories',
    <>
      <p class="muted">
        {found.total === 1 ? 'You own 1 repository.' : `You own ${found.total} repositories.`} <a href="/repo/create">New repository</a>
      </p>
      <div class="box">
        <ListTable label="Repositories" columns={['Repository', 'Kind']} actions empty={found.rows.length === 0 && 'You own no repositories.'}>
          {found.rows.map((r) => (
            <tr>
              <td>
                <a href={repoUrl(user.name, r.name)}>
                  {user.name}/{r.name}
                </a>
                {r.description ? <div class="muted">{r.description}</div> : null}
              </td>
              <td>{marksOf(r).join(', ')}</td>
              <td>
                <a href={`${repoUrl(user.name, r.name)}/settings`}>Settings of {r.name}</a>
              </td>
            </tr>
          ))}
        </ListTable>
      </div>
      <Pager path="/user/settings/repos" page={pageAt} pages={pagesOf(found.total, REPOS_LISTED)} />
    </>,
  )
}


/**
 * Gitea 1.23's `/user/settings/account` (password: `POST` there; e-mail addresses:
 * `/account/email`, with `_method=PRIMARY` and `id` making an activated one primary, and
 * `/account/email/delete`; `/account/delete` with the password), `/user/settings/organization`
 * with `POST /org/{org}/members/action/leave`, and `/user/settings/repos`; each form through the
 * service the API's own routes call.
 */
export const accountSettingsPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get('/user/settings/account', ({ request, caller, user }) => accountPage(deps, webContext(deps.config, request, caller), user), signedPage('webUserAccount'))
    .post(
      '/user/settings/account',
      ({ request, caller, body, user }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async (web) => {
            if ((body.password ?? '') !== (body.retype ?? '')) return accountPage(deps, web, user, { error: 'The new passwords do not match.', status: 422 })
            if (!(await passwordMatches(deps, request, user, body.old_password ?? ''))) return accountPage(deps, web, user, { error: 'The current password is wrong.', status: 403 })
            if (!body.password) return accountPage(deps, web, user, { error: 'The new password is empty.', status: 422 })
            await editUser(deps, user, { password: body.password, must_change_password: false })
            return seeOther('/user/settings/account', 'password')
          },
          (web, error, status) => accountPage(deps, web, user, { error, status }),
        ),
      { ...signedPage('webUserPassword'), body: PasswordForm },
    )
    // Only for one who must change their password: anyone else goes home (Gitea's rule).
    .get(CHANGE_PASSWORD_PATH, ({ request, caller, user }) => (user.mustChangePassword ? changePasswordPage(webContext(deps.config, request, caller)) : seeOther('/')), signedPage('webUserChangePasswordForm'))
    .post(
      CHANGE_PASSWORD_PATH,
      ({ request, caller, body, user }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async (web) => {
            if (!user.mustChangePassword) return '/'
            if ((body.password ?? '') !== (body.retype ?? '')) return changePasswordPage(web, { error: 'The new passwords do not match.', status: 422 })
            if (!body.password) return changePasswordPage(web, { error: 'The new password is empty.', status: 422 })
            await editUser(deps, user, { password: body.password, must_change_password: false })
            return '/'
          },
          (web, error, status) => changePasswordPage(web, { error, status }),
        ),
      { ...signedPage('webUserChangePassword'), body: NewPasswordForm },
    )
    .post(
      '/user/settings/account/email',
      ({ request, caller, body, user }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            // Gitea's `_method=NOTIFICATION`: the e-mail notification preference, through the settings' one writer.
            if (body._method === 'NOTIFICATION') {
              await editUser(deps, user, { email_notifications_preference: body.preference ?? '' })
              return seeOther('/user/settings/account', 'saved')
            }
            if (body._method === 'PRIMARY') {
              await makeEmailPrimary(deps, user, addressId(body.id))
              return seeOther('/user/settings/account', 'email-primary')
            }
            await addEmails(deps, user.id, [(body.email ?? '').trim()])
            return seeOther('/user/settings/account', deps.config.mailer ? 'email-added-mailed' : 'email-added')
          },
          (web, error, status) =>
            accountPage(deps, web, user, {
              error: `${body._method === 'PRIMARY' ? 'Could not make the address primary' : 'Could not add the address'}: ${withoutFieldPrefix(error)}`,
              status,
              email: body._method === 'PRIMARY' ? undefined : body.email,
            }),
        ),
      { ...signedPage('webUserEmailAdd'), body: EmailForm },
    )
    .post(
      '/user/settings/account/email/delete',
      ({ request, caller, body, user }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            const address = await emailById(deps, user.id, addressId(body.id))
            await deleteEmails(deps, user.id, [address.email])
            return seeOther('/user/settings/account', 'email-deleted')
          },
          (web, error, status) => accountPage(deps, web, user, { error: `Could not delete the address: ${withoutFieldPrefix(error)}`, status }),
        ),
      { ...signedPage('webUserEmailDelete'), body: IdForm },
    )
    .post(
      '/user/settings/account/delete',
      ({ request, caller, body, user }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async (web) => {
            if (!(await passwordMatches(deps, request, user, body.password ?? '')))
              return accountPage(deps, web, user, { error: 'The password is wrong: your account was not deleted.', status: 403 })
            await deleteOwnAccount(deps, user)
            // Its sessions went with the account (ON DELETE CASCADE); the browser forgets its cookie.
            return new Response(null, { status: 303, headers: { location: '/', 'set-cookie': cookieHeader(deps.config, SESSION_COOKIE, '', 0) } })
          },
          (web, error, status) => accountPage(deps, web, user, { error: `Your account was not deleted: ${error}`, status }),
        ),
      { ...signedPage('webUserDelete'), body: DeleteForm },
    )
    .get(
      '/user/settings/organization',
      ({ request, caller, user, query }) => organizationsPage(deps, webContext(deps.config, request, caller), user, pageNumber(query.page)),
      { ...signedPage('webUserOrganizations'), query: ListQuery },
    )
    .post(
      '/org/:org/members/action/leave',
      ({ request, caller, body, user, org }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await removeMember(deps, org, user)
            return seeOther('/user/settings/organization', 'org-left')
          },
          (web, error, status) => organizationsPage(deps, web, user, 1, { error: `Could not leave ${org.org.name}: ${error}`, status }),
        ),
      { scope: 'organization', signed: true, org: 'member', params: OrgParams, body: t.Object({ _csrf: CsrfText }), detail: pageDetail('webOrgLeave') },
    )
    .get(
      '/user/settings/repos',
      ({ request, caller, user, query }) => reposPage(deps, webContext(deps.config, request, caller), user, pageNumber(query.page)),
      { ...signedPage('webUserRepos'), query: ListQuery },
    )
