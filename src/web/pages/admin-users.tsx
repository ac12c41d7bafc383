/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import { toApiUser } from '../../convert/user'
import { unprocessable } from '../../lib/errors'
import type { Page } from '../../lib/pagination'
import { ACCOUNT_SORTS, accountById, deleteAccount, editAccount, searchAccounts, type AccountEdit, type AccountFilters, type AccountSort } from '../../modules/admin/users'
import { changeAvatar } from '../../modules/avatars/service'
import { listOrgsOfUser } from '../../modules/orgs/service'
import { listOwnedRepos } from '../../modules/repos/queries'
import { VISIBILITIES } from '../../modules/users/model'
import { createUser, listEmails } from '../../modules/users/service'
import { twoFactorEnabled, twoFactorUsers } from '../../modules/users/two-factor'
import { pageDetail, webContext, type WebContext } from '../context'
import { CsrfField, CsrfText, FormCheck, FormText, formRoute, ListTable, seeOther, SubmitRow, ticked } from '../forms'
import { ownerUrl, repoUrl } from '../links'
import { AdminQuery, adminListPage, adminPage, type AdminListSpec } from './admin'
import { AvatarForm, UserAvatarForms, avatarBytes } from './settings-user'
import { VisibilityField } from './org-settings'

/*
 * The site administrator's user accounts at Gitea 1.23's addresses (routers/web/admin/users.go):
 * the list with Gitea's filters and orders (`/-/admin/users`, also `/admin/users`), a new account
 * (`/-/admin/users/new`), an account's view (`/-/admin/users/{id}`: its addresses, repositories,
 * organisations, second factor), its edit form (`/edit`: a rename, the EditUserOption fields, the
 * second factor reset), its deletion (`/delete`, `purge`) and its avatar (`/avatar`,
 * `/avatar/delete`); each through the services of the API's `/admin/users` routes.
 */

const USERS = '/-/admin/users'
/** How many of a user's repositories and organisations their view lists. */
const SHOWN = 50
const FIRST: Page = { page: 1, limit: SHOWN, offset: 0 }
const day = (unix: number) => (unix ? new Date(unix * 1000).toISOString().slice(0, 10) : 'never')

/** Gitea's status filters of the list: the filter, its query key's inner name, its label. */
const FILTERS: [keyof AccountFilters, string, string][] = [
  ['isActive', 'is_active', 'Active'],
  ['isAdmin', 'is_admin', 'Administrator'],
  ['isRestricted', 'is_restricted', 'Restricted'],
  ['is2faEnabled', 'is_2fa_enabled', 'Two-factor authentication'],
  ['isProhibitLogin', 'is_prohibit_login', 'Sign-in prohibited'],
]
const filterKey = (name: string) => `status_filter[${name}]`

const SORT_LABELS: Record<AccountSort, string> = {
  alphabetically: 'Alphabetically',
  reversealphabetically: 'Reverse alphabetically',
  newest: 'Newest',
  oldest: 'Oldest',
  recentupdate: 'Recently updated',
  leastupdate: 'Least recently updated',
}

/** The list's query: the search, the page, Gitea's `status_filter[...]` keys and `sort`. */
const UsersQuery = t.Object({
  ...AdminQuery.properties,
  ...Object.fromEntries(FILTERS.map(([, name]) => [filterKey(name), FormText(8)])),
  sort: FormText(30),
})
type UsersQueryValues = Partial<Record<string, string>>

/** The filters and order a list query asks for (anything unknown: not filtered, alphabetically). */
function usersAsked(query: UsersQueryValues): { filters: AccountFilters; keep: Record<string, string>; sort: AccountSort } {
  const filters: AccountFilters = {}
  const keep: Record<string, string> = {}
  for (const [key, name] of FILTERS) {
    const value = query[filterKey(name)]
    if (value !== 'true' && value !== 'false') continue
    filters[key] = value === 'true'
    keep[filterKey(name)] = value
  }
  const sort = (ACCOUNT_SORTS as readonly string[]).includes(query.sort ?? '') ? (query.sort as AccountSort) : 'alphabetically'
  if (sort !== 'alphabetically') keep.sort = sort
  return { filters, keep, sort }
}

interface AccountRow {
  user: UserRow
  twoFactor: boolean
}

const yesNo = (value: boolean) => (value ? 'yes' : 'no')

/** The user accounts: every one (a site administrator's), searched by login, full name or e-mail, filtered and ordered as Gitea's. */
function usersList(deps: AppDeps, admin: UserRow, query: UsersQueryValues): AdminListSpec<AccountRow> {
  const { filters, keep, sort } = usersAsked(query)
  return {
    path: USERS,
    title: 'User accounts',
    searchLabel: 'Search users',
    noun: 'accounts',
    actionsAbove: (
      <p>
        <a href={`${USERS}/new`}>Create user account</a>
      </p>
    ),
    filters: (
      <>
        {FILTERS.map(([, name, label]) => (
          <label>
            {label}
            <select name={filterKey(name)}>
              <option value="">Any</option>
              <option value="true" selected={keep[filterKey(name)] === 'true'}>
                Yes
              </option>
              <option value="false" selected={keep[filterKey(name)] === 'false'}>
                No
              </option>
            </select>
          </label>
        ))}
        <label>
          Sort
          <select name="sort">
            {ACCOUNT_SORTS.map((s) => (
              <option value={s} selected={s === sort}>
                {SORT_LABELS[s]}
              </option>
            ))}
          </select>
        </label>
      </>
    ),
    keep,
    search: async (q, page) => {
      const found = await searchAccounts(deps, q, filters, sort, page)
      const withTotp = await twoFactorUsers(deps, found.rows.map((u) => u.id))
      return { total: found.total, rows: found.rows.map((user) => ({ user, twoFactor: withTotp.has(user.id) })) }
    },
    columns: ['ID', 'Username', 'E-mail', 'Admin', 'Active', '2FA', 'Repositories', 'Visibility', 'Created', 'Last sign-in'],
    actions: true,
    empty: 'No accounts match.',
    row: ({ user, twoFactor }) => {
      const u = toApiUser(deps.config, user, admin)
      return (
        <tr>
          <td>{u.id}</td>
          <td>
            <a href={`${USERS}/${u.id}`}>{u.login}</a>
            {u.full_name ? <span class="muted"> · {u.full_name}</span> : null}
          </td>
          <td>{u.email}</td>
          <td>{yesNo(u.is_admin)}</td>
          <td>{yesNo(u.active)}</td>
          <td>{yesNo(twoFactor)}</td>
          <td>{user.numRepos}</td>
          <td>{u.visibility}</td>
          <td>{u.created.slice(0, 10)}</td>
          <td>{day(user.lastLoginUnix)}</td>
          <td>
            <a href={`${USERS}/${u.id}/edit`} aria-label={`Edit ${u.login}`}>
              Edit
            </a>
          </td>
        </tr>
      )
    },
  }
}

/** A service's refusal as the form says it: the field's label for the API's `[Field]: ` prefix. */
const FIELD_LABELS: Record<string, string> = {
  UserName: 'Username',
  NewName: 'Username',
  Email: 'E-mail address',
  Password: 'Password',
  FullName: 'Full name',
  Website: 'Website',
  Location: 'Location',
  Description: 'Description',
  LoginName: 'Login name',
  Visibility: 'Visibility',
  MaxRepoCreation: 'Maximum number of repositories',
}
const formMessage = (message: string) => message.replace(/^\[(\w+)\]: /, (_, field: string) => `${FIELD_LABELS[field] ?? field}: `)

/** A person's visibilities, as the edit and new account forms offer them. */
const USER_VISIBILITY: Record<(typeof VISIBILITIES)[number], string> = {
  public: 'Public: everyone',
  limited: 'Limited: signed-in users',
  private: 'Private: the user and their organisations',
}

const NewUserForm = t.Object({
  _csrf: CsrfText,
  user_name: FormText(255),
  email: FormText(255),
  password: FormText(255),
  must_change_password: FormCheck,
  visibility: FormText(10),
  send_notify: FormCheck,
  login_type: FormText(20),
  login_name: FormText(255),
})
type NewUserValues = Partial<typeof NewUserForm.static>

/** Gitea's new account form: local accounts only (Warren has no other login source); no mail is sent. */
function newUserPage(web: WebContext, opts: { values?: NewUserValues; error?: string; status?: number } = {}) {
  const v = opts.values
  return adminPage(
    web,
    USERS,
    'Create user account',
    <form class="stack wide" method="post" action={`${USERS}/new`}>
      <CsrfField ctx={web} />
      <label>
        Username
        <input name="user_name" required maxlength="40" value={v?.user_name ?? ''} autocomplete="off" />
      </label>
      <label>
        E-mail address
        <input name="email" type="email" required maxlength="254" value={v?.email ?? ''} autocomplete="off" />
      </label>
      <label>
        Password
        <input name="password" type="password" required maxlength="255" autocomplete="new-password" />
      </label>
      <label class="check">
        <input type="checkbox" name="must_change_password" checked={v ? ticked(v.must_change_password) : true} />
        Require the user to change the password
      </label>
      <VisibilityField labels={USER_VISIBILITY} value={v?.visibility ?? 'public'} />
      <p class="muted">Warren sends no e-mail: tell the new user about their account yourself.</p>
      <SubmitRow label="Create user account" />
    </form>,
    opts,
  )
}

/** An account's view: its details, e-mail addresses, repositories, organisations and second factor (Gitea's admin/user/view). */
async function viewPage(deps: AppDeps, web: WebContext, admin: UserRow, user: UserRow) {
  const u = toApiUser(deps.config, user, admin)
  const emails = await listEmails(deps, user.id)
  const repos = await listOwnedRepos(deps, admin, user, FIRST)
  const orgs = await listOrgsOfUser(deps, user, admin, FIRST)
  const totp = await twoFactorEnabled(deps, user.id)
  const details: [string, string][] = [
    ['ID', String(u.id)],
    ['Full name', u.full_name],
    ['E-mail', u.email],
    ['Administrator', yesNo(u.is_admin)],
    ['Active', yesNo(u.active)],
    ['Sign-in prohibited', yesNo(u.prohibit_login)],
    ['Must change password', yesNo(user.mustChangePassword)],
    ['Visibility', u.visibility],
    ['Two-factor authentication', totp ? 'enabled' : 'disabled'],
    ['Maximum repositories', user.maxRepoCreation === -1 ? "the site's default" : String(user.maxRepoCreation)],
    ['Created', u.created.slice(0, 10)],
    ['Last sign-in', day(user.lastLoginUnix)],
  ]
  const more = (total: number, noun: string) => (total > SHOWN ? <p class="muted">The first {SHOWN} of {total} {noun}.</p> : null)
  return adminPage(
    web,
    USERS,
    `Account ${user.name}`,
    <>
      <p>
        <a href={`${USERS}/${user.id}/edit`}>Edit this account</a> · <a href={ownerUrl(user.name)}>Profile page</a>
      </p>
      <ListTable label="Account details" columns={['Detail', 'Value']}>
        {details.map(([label, value]) => (
          <tr>
            <td>{label}</td>
            <td>{value}</td>
          </tr>
        ))}
      </ListTable>
      <section aria-labelledby="user-emails">
        <h3 id="user-emails">E-mail addresses ({emails.length})</h3>
        <ListTable label="E-mail addresses" columns={['E-mail', 'Primary', 'Activated']}>
          {emails.map((e) => (
            <tr>
              <td>{e.email}</td>
              <td>{yesNo(e.isPrimary)}</td>
              <td>{yesNo(e.isActivated)}</td>
            </tr>
          ))}
        </ListTable>
      </section>
      <section aria-labelledby="user-repos">
        <h3 id="user-repos">Repositories ({repos.total})</h3>
        <ListTable label="Repositories" columns={['Name', 'Private', 'Stars', 'Forks']} empty={repos.rows.length ? false : 'No repositories.'}>
          {repos.rows.map((r) => (
            <tr>
              <td>
                <a href={repoUrl(user.name, r.name)}>{r.name}</a>
              </td>
              <td>{yesNo(r.isPrivate)}</td>
              <td>{r.numStars}</td>
              <td>{r.numForks}</td>
            </tr>
          ))}
        </ListTable>
        {more(repos.total, 'repositories')}
      </section>
      <section aria-labelledby="user-orgs">
        <h3 id="user-orgs">Organisations ({orgs.total})</h3>
        <ListTable label="Organisations" columns={['Name', 'Visibility']} empty={orgs.rows.length ? false : 'No organisations.'}>
          {orgs.rows.map((o) => (
            <tr>
              <td>
                <a href={ownerUrl(o.name)}>{o.name}</a>
              </td>
              <td>{o.visibility}</td>
            </tr>
          ))}
        </ListTable>
        {more(orgs.total, 'organisations')}
      </section>
    </>,
  )
}

const EditUserForm = t.Object({
  _csrf: CsrfText,
  user_name: FormText(255),
  login_type: FormText(20),
  login_name: FormText(255),
  full_name: FormText(255),
  email: FormText(255),
  password: FormText(255),
  website: FormText(255),
  location: FormText(255),
  description: FormText(1024),
  visibility: FormText(10),
  max_repo_creation: FormText(20),
  active: FormCheck,
  admin: FormCheck,
  restricted: FormCheck,
  prohibit_login: FormCheck,
  allow_git_hook: FormCheck,
  allow_import_local: FormCheck,
  allow_create_organization: FormCheck,
  reset_2fa: FormCheck,
})
type EditUserValues = Partial<typeof EditUserForm.static>

/**
 * The edit form as the service's change: text fields as sent (absent: unchanged; an empty e-mail,
 * password or user name: unchanged, as Gitea), checkboxes ticked or not. 422 for a maximum that
 * is not a whole number.
 */
function accountEditOf(body: EditUserValues): AccountEdit {
  const max = body.max_repo_creation?.trim()
  if (max && !/^-?\d{1,9}$/.test(max)) throw unprocessable("must be a whole number (-1: the site's default)", 'MaxRepoCreation')
  return {
    username: body.user_name?.trim() || undefined,
    full_name: body.full_name,
    email: body.email?.trim() || undefined,
    password: body.password || undefined,
    website: body.website?.trim(),
    location: body.location,
    description: body.description,
    visibility: (body.visibility || undefined) as AccountEdit['visibility'],
    max_repo_creation: max ? Number(max) : undefined,
    active: ticked(body.active),
    admin: ticked(body.admin),
    prohibit_login: ticked(body.prohibit_login),
    allow_git_hook: ticked(body.allow_git_hook),
    allow_import_local: ticked(body.allow_import_local),
    allow_create_organization: ticked(body.allow_create_organization),
    reset_2fa: ticked(body.reset_2fa),
  }
}

const CHECKS: [keyof EditUserValues, string][] = [
  ['active', 'Active: the account may be used'],
  ['admin', 'Site administrator'],
  ['prohibit_login', 'Prohibit signing in'],
  ['allow_git_hook', 'May create git hooks'],
  ['allow_import_local', 'May import local repositories'],
  ['allow_create_organization', 'May create organisations'],
]
const rowFlag: Record<string, (u: UserRow) => boolean> = {
  active: (u) => u.isActive,
  admin: (u) => u.isAdmin,
  prohibit_login: (u) => u.prohibitLogin,
  allow_git_hook: (u) => u.allowGitHook,
  allow_import_local: (u) => u.allowImportLocal,
  allow_create_organization: (u) => u.allowCreateOrganization,
}

/** Gitea's edit form (admin/user/edit), with the avatar's forms and the deletion (its `purge`) below it. */
async function editPage(deps: AppDeps, web: WebContext, admin: UserRow, user: UserRow, opts: { values?: EditUserValues; error?: string; status?: number } = {}) {
  const v = opts.values
  const base = `${USERS}/${user.id}`
  const totp = await twoFactorEnabled(deps, user.id)
  const text = (name: keyof EditUserValues, stored: string) => v?.[name] ?? stored
  return adminPage(
    web,
    USERS,
    `Edit account ${user.name}`,
    <>
      <p>
        <a href={base}>View this account</a>
      </p>
      <form class="stack wide" method="post" action={`${base}/edit`}>
        <CsrfField ctx={web} />
        <label>
          Username
          <input name="user_name" required maxlength="40" value={text('user_name', user.name)} autocomplete="off" />
        </label>
        <label>
          Full name
          <input name="full_name" maxlength="100" value={text('full_name', user.fullName)} />
        </label>
        <label>
          E-mail address
          <input name="email" type="email" required maxlength="254" value={text('email', user.email)} autocomplete="off" />
        </label>
        <label>
          New password (leave empty to keep the current one)
          <input name="password" type="password" maxlength="255" autocomplete="new-password" />
        </label>
        <label>
          Website
          <input name="website" type="url" maxlength="255" value={text('website', user.website)} />
        </label>
        <label>
          Location
          <input name="location" maxlength="50" value={text('location', user.location)} />
        </label>
        <label>
          Description
          <textarea name="description" maxlength="255" rows="3">
            {text('description', user.description)}
          </textarea>
        </label>
        <VisibilityField labels={USER_VISIBILITY} value={text('visibility', user.visibility)} />
        <label>
          Maximum number of repositories (-1: the site's default)
          <input name="max_repo_creation" type="number" min="-1" value={text('max_repo_creation', String(user.maxRepoCreation))} />
        </label>
        {CHECKS.map(([name, label]) => (
          <label class="check">
            <input type="checkbox" name={name} checked={v ? ticked(v[name]) : rowFlag[name]!(user)} disabled={name === 'prohibit_login' && admin.id === user.id} />
            {label}
            {name === 'prohibit_login' && admin.id === user.id ? ' (not for your own account)' : ''}
          </label>
        ))}
        {totp ? (
          <label class="check">
            <input type="checkbox" name="reset_2fa" checked={v ? ticked(v.reset_2fa) : false} />
            Reset two-factor authentication: the user signs in with their password alone until they enroll again
          </label>
        ) : (
          <p class="muted">Two-factor authentication is not enabled for this account.</p>
        )}
        <SubmitRow label="Update account" />
      </form>
      <UserAvatarForms ctx={web} user={user} action={`${base}/avatar`} />
      <section aria-labelledby="delete-account">
        <h3 id="delete-account">Delete this account</h3>
        <form class="stack" method="post" action={`${base}/delete`}>
          <CsrfField ctx={web} />
          <p>The account is refused deletion while it owns repositories or belongs to organisations, unless it is purged.</p>
          <label class="check">
            <input type="checkbox" name="purge" />
            Purge: also delete the user's repositories, take them out of their organisations and delete the organisations they alone own
          </label>
          <SubmitRow label="Delete this account" danger />
        </form>
      </section>
    </>,
    { error: opts.error && formMessage(opts.error), status: opts.status },
  )
}

/** A row id of the address (`/-/admin/users/{id}`): a positive number, or 0, which names none. */
const idOf = (value: string) => (/^\d{1,15}$/.test(value) ? Number(value) : 0)
const IdParams = t.Object({ id: t.String({ maxLength: 20 }) })
const DoneQuery = t.Object({ done: FormText(40) })
const DeleteForm = t.Object({ _csrf: CsrfText, purge: FormCheck })

/** What every route here declares: site administrators only, a token with the `admin` scope. */
const adminOnly = (id: string) => ({ scope: 'admin' as const, siteAdmin: true as const, detail: pageDetail(id) })

/** The user accounts' pages and forms: site administrators only (the pipeline's siteAdmin need). */
export const adminUserPages = (deps: AppDeps, webApp: AreaApp) => {
  const web = (request: Request, caller: Parameters<typeof webContext>[2]) => webContext(deps.config, request, caller)
  const app = pageGroup(webApp)
  for (const path of [USERS, '/admin/users'])
    app.get(path, ({ request, caller, user, query }) => adminListPage(web(request, caller), query, usersList(deps, user, query as UsersQueryValues)), {
      ...adminOnly(path === USERS ? 'webAdminUsers' : 'webAdminUsersOld'),
      query: UsersQuery,
    })
  /**
   * A form posted about account `{id}` (404 when there is none): `formRoute` with `act`, a refusal
   * shown on the account's edit page again (with the form's `values` when they are its own). Its
   * handlers give it the members they destructure: Elysia parses only those
   * (test/route-context.test.ts).
   */
  const accountForm = async (
    c: { request: Request; caller: Parameters<typeof webContext>[2]; user: UserRow; params: { id: string }; body: { _csrf?: string } },
    act: (user: UserRow) => Promise<Response>,
    values?: EditUserValues,
  ) => {
    const user = await accountById(deps, idOf(c.params.id))
    return formRoute(deps.config, c, () => act(user), async (w, error, status) => editPage(deps, w, c.user, await accountById(deps, user.id), { values, error, status }))
  }
  return app
    .get(`${USERS}/new`, ({ request, caller }) => newUserPage(web(request, caller)), { ...adminOnly('webAdminUserNewForm'), query: DoneQuery })
    .post(
      `${USERS}/new`,
      ({ request, caller, body }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            // send_notify: Warren has no mailer, so there is nothing to send.
            const created = await createUser(deps, {
              username: body.user_name?.trim() ?? '',
              email: body.email?.trim() ?? '',
              password: body.password ?? '',
              mustChangePassword: ticked(body.must_change_password),
              visibility: body.visibility || undefined,
            })
            return seeOther(`${USERS}/${created.id}`, 'user-created')
          },
          (w, error, status) => newUserPage(w, { values: body, error: formMessage(error), status }),
        ),
      { ...adminOnly('webAdminUserNew'), body: NewUserForm },
    )
    .get(`${USERS}/:id`, async ({ request, caller, user, params }) => viewPage(deps, web(request, caller), user, await accountById(deps, idOf(params.id))), {
      ...adminOnly('webAdminUser'),
      params: IdParams,
      query: DoneQuery,
    })
    .get(`${USERS}/:id/edit`, async ({ request, caller, user, params }) => editPage(deps, web(request, caller), user, await accountById(deps, idOf(params.id))), {
      ...adminOnly('webAdminUserEditForm'),
      params: IdParams,
      query: DoneQuery,
    })
    .post(
      `${USERS}/:id/edit`,
      ({ request, caller, user, params, body }) =>
        accountForm({ request, caller, user, params, body }, async (account) => {
          await editAccount(deps, user, account, accountEditOf(body))
          return seeOther(`${USERS}/${account.id}`, 'user-saved')
        }, body),
      { ...adminOnly('webAdminUserEdit'), params: IdParams, body: EditUserForm },
    )
    .post(
      `${USERS}/:id/delete`,
      ({ request, caller, user, params, body }) =>
        accountForm({ request, caller, user, params, body }, async (account) => {
          await deleteAccount(deps, user, account, ticked(body.purge))
          return seeOther(USERS, 'user-deleted')
        }),
      { ...adminOnly('webAdminUserDelete'), params: IdParams, body: DeleteForm },
    )
    .post(
      `${USERS}/:id/avatar`,
      ({ request, caller, user, params, body }) =>
        accountForm({ request, caller, user, params, body }, async (account) => {
          await changeAvatar(deps, 'user', account.id, await avatarBytes(body.avatar))
          return seeOther(`${USERS}/${account.id}/edit`, 'user-avatar-saved')
        }),
      { ...adminOnly('webAdminUserAvatar'), params: IdParams, body: AvatarForm },
    )
    .post(
      `${USERS}/:id/avatar/delete`,
      ({ request, caller, user, params, body }) =>
        accountForm({ request, caller, user, params, body }, async (account) => {
          await changeAvatar(deps, 'user', account.id, null)
          return seeOther(`${USERS}/${account.id}/edit`, 'user-avatar-deleted')
        }),
      { ...adminOnly('webAdminUserAvatarDelete'), params: IdParams, body: t.Object({ _csrf: CsrfText }) },
    )
}
