/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Child } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { OrgRow } from '../../auth/org-context'
import { unprocessable } from '../../lib/errors'
import { changeAvatar } from '../../modules/avatars/service'
import { createOrganization, deleteOrganization, editOrganization, requireMayCreateOrg } from '../../modules/orgs/service'
import { VISIBILITIES } from '../../modules/users/model'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { CsrfField, CsrfText, FormCheck, FormText, formRoute, Notices, seeOther, SubmitRow, ticked, settingsResponse } from '../forms'
import { ownerUrl } from '../links'
import { NewThings } from './repo-actions'
import { AvatarForm, UserAvatarForms, avatarBytes, ProfileFields } from './settings-user'

const NAME_MAX = 255
const OrgParams = t.Object({ org: t.String({ maxLength: NAME_MAX }) })
const DoneQuery = t.Object({ done: FormText(40) })

const settingsBase = (org: string) => `/org/${encodeURIComponent(org)}/settings`

/** The organisation settings' menu (its owners'): every page of it. */
export const orgSettingsItems = (org: string): [string, string][] => {
  const b = settingsBase(org)
  return [
    [b, 'Options'],
    [`${b}/labels`, 'Labels'],
    [`${b}/blocked_users`, 'Blocked users'],
    [`${b}/hooks`, 'Webhooks'],
    [`${b}/delete`, 'Delete organisation'],
  ]
}

/** A page of an organisation's settings: its menu beside the body, the notices above it. */
export function orgSettingsPage(web: WebContext, org: OrgRow, current: string, title: string, body: Child, opts: { error?: string; status?: number } = {}) {
  const header = (
    <h1>
      <a href={ownerUrl(org.name)}>{org.name}</a> · Settings
    </h1>
  )
  return settingsResponse(web, { title: `${title} · ${org.name}`, header, menu: 'Organisation settings', items: orgSettingsItems(org.name), current }, title, body, opts)
}

const VISIBILITY_LABELS: Record<(typeof VISIBILITIES)[number], string> = {
  public: 'Public: anyone may see it',
  limited: 'Limited: only signed-in users may see it',
  private: 'Private: only its members may see it',
}

/** The visibility select of an owner's form (an organisation's labels unless `labels` are given: a person's, `admin-users.tsx`). */
export function VisibilityField(props: { value: string; labels?: Record<(typeof VISIBILITIES)[number], string> }) {
  return (
    <label>
      Visibility
      <select name="visibility">
        {VISIBILITIES.map((v) => (
          <option value={v} selected={v === props.value}>
            {(props.labels ?? VISIBILITY_LABELS)[v]}
          </option>
        ))}
      </select>
    </label>
  )
}

function TeamAccessField(props: { checked: boolean }) {
  return (
    <label class="check">
      <input type="checkbox" name="repo_admin_change_team_access" checked={props.checked} />
      Repository administrators may add and remove teams' access
    </label>
  )
}

// ---- new organisation -------------------------------------------------------------------------

const CreateOrgForm = t.Object({ _csrf: CsrfText, org_name: FormText(NAME_MAX), visibility: FormText(16), repo_admin_change_team_access: FormCheck })
type CreateOrgValues = Partial<typeof CreateOrgForm.static>

function createOrgPage(web: WebContext, opts: { values?: CreateOrgValues; error?: string; status?: number } = {}) {
  const v = opts.values
  return htmlResponse(
    <Layout ctx={web} title="New organisation">
      <h1>New organisation</h1>
      <NewThings current="/org/create" />
      <Notices ctx={web} error={opts.error} />
      <form class="stack wide" method="post" action="/org/create">
        <CsrfField ctx={web} />
        <label>
          Organisation name
          <input name="org_name" required maxlength={String(NAME_MAX)} autocomplete="off" value={v?.org_name ?? ''} />
        </label>
        <VisibilityField value={v?.visibility ?? 'public'} />
        <TeamAccessField checked={v ? ticked(v.repo_admin_change_team_access) : true} />
        <SubmitRow label="Create organisation" />
      </form>
    </Layout>,
    opts.status ?? 200,
  )
}

// ---- options ----------------------------------------------------------------------------------

const OptionsForm = t.Object({
  _csrf: CsrfText,
  full_name: FormText(100),
  email: FormText(255),
  description: FormText(255),
  website: FormText(255),
  location: FormText(50),
  visibility: FormText(16),
  repo_admin_change_team_access: FormCheck,
})
type OptionsValues = Partial<typeof OptionsForm.static>

function optionsPage(web: WebContext, org: OrgRow, opts: { values?: OptionsValues; error?: string; status?: number } = {}) {
  const v = opts.values
  const b = settingsBase(org.name)
  return orgSettingsPage(
    web,
    org,
    b,
    'Options',
    <>
      <form class="stack wide" method="post" action={b}>
        <CsrfField ctx={web} />
        <ProfileFields values={v} owner={org} about="Description" />
        <label>
          E-mail address
          <input name="email" type="email" maxlength="255" value={v?.email ?? org.email} />
        </label>
        <VisibilityField value={v?.visibility ?? org.visibility} />
        <TeamAccessField checked={v ? ticked(v.repo_admin_change_team_access) : org.repoAdminChangeTeamAccess} />
        <SubmitRow label="Update settings" />
      </form>
      <UserAvatarForms ctx={web} user={org} action={`${b}/avatar`} />
    </>,
    opts,
  )
}

// ---- delete -----------------------------------------------------------------------------------

const DeleteForm = t.Object({ _csrf: CsrfText, org_name: FormText(NAME_MAX) })

function deletePage(web: WebContext, org: OrgRow, opts: { error?: string; status?: number } = {}) {
  const b = `${settingsBase(org.name)}/delete`
  return orgSettingsPage(
    web,
    org,
    b,
    'Delete organisation',
    <>
      <p>
        Deleting the organisation removes its teams and memberships for good. It cannot be deleted while it owns repositories: delete or transfer them
        first.
      </p>
      <form class="stack" method="post" action={b}>
        <CsrfField ctx={web} />
        <label>
          Type the organisation's name, {org.name}, to confirm
          <input name="org_name" required maxlength={String(NAME_MAX)} autocomplete="off" />
        </label>
        <SubmitRow label="Delete this organisation" danger />
      </form>
    </>,
    opts,
  )
}

/**
 * `/org/create` (a new organisation: the API's POST /orgs rules, `requireMayCreateOrg` and
 * `createOrganization`) and an organisation's settings for its owners (the pipeline's
 * `org: 'owner'`): `/org/{org}/settings` (the EditOrgOption fields; the avatar through
 * modules/avatars as `/orgs/{org}/avatar`), `/org/{org}/settings/delete` (the name typed to
 * confirm; refused while it owns repositories, by the service, as DELETE /orgs/{org}).
 */
export const orgSettingsPages = (deps: AppDeps, webApp: AreaApp) => {
  const owner = (id: string) => ({ scope: 'organization' as const, signed: true as const, org: 'owner' as const, params: OrgParams, detail: pageDetail(id) })
  return pageGroup(webApp)
    .get('/org/create', ({ request, caller }) => createOrgPage(webContext(deps.config, request, caller)), {
      scope: 'organization',
      signed: true,
      detail: pageDetail('webOrgCreateForm'),
    })
    .post(
      '/org/create',
      ({ request, caller, body, user }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            requireMayCreateOrg(user)
            const name = (body.org_name ?? '').trim()
            if (!name) throw unprocessable('Enter a name for the organisation.', 'UserName')
            const org = await createOrganization(deps, user, {
              username: name,
              visibility: body.visibility || 'public',
              repo_admin_change_team_access: ticked(body.repo_admin_change_team_access),
            })
            return seeOther(ownerUrl(org.name), 'org-created')
          },
          (web, error, status) => createOrgPage(web, { values: body, error, status }),
        ),
      { scope: 'organization', signed: true, body: CreateOrgForm, detail: pageDetail('webOrgCreate') },
    )
    .get('/org/:org/settings', ({ request, caller, org }) => optionsPage(webContext(deps.config, request, caller), org.org), {
      ...owner('webOrgSettings'),
      query: DoneQuery,
    })
    .post(
      '/org/:org/settings',
      ({ request, caller, body, org }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await editOrganization(deps, org.org, {
              full_name: body.full_name ?? '',
              email: body.email ?? '',
              description: body.description ?? '',
              website: body.website ?? '',
              location: body.location ?? '',
              visibility: body.visibility || undefined,
              repo_admin_change_team_access: ticked(body.repo_admin_change_team_access),
            })
            return seeOther(settingsBase(org.org.name), 'saved')
          },
          (web, error, status) => optionsPage(web, org.org, { values: body, error, status }),
        ),
      { ...owner('webOrgSettingsSave'), body: OptionsForm },
    )
    .post(
      '/org/:org/settings/avatar',
      ({ request, caller, body, org }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await changeAvatar(deps, 'user', org.org.id, await avatarBytes(body.avatar))
            return seeOther(settingsBase(org.org.name), 'org-avatar-saved')
          },
          (web, error, status) => optionsPage(web, org.org, { error, status }),
        ),
      { ...owner('webOrgAvatarSave'), body: AvatarForm },
    )
    .post(
      '/org/:org/settings/avatar/delete',
      ({ request, caller, body, org }) =>
        formRoute(deps.config, { request, caller, body }, async () => {
          await changeAvatar(deps, 'user', org.org.id, null)
          return seeOther(settingsBase(org.org.name), 'org-avatar-deleted')
        }),
      { ...owner('webOrgAvatarDelete'), body: t.Object({ _csrf: CsrfText }) },
    )
    .get('/org/:org/settings/delete', ({ request, caller, org }) => deletePage(webContext(deps.config, request, caller), org.org), owner('webOrgDeleteForm'))
    .post(
      '/org/:org/settings/delete',
      ({ request, caller, body, org }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            if ((body.org_name ?? '').trim().toLowerCase() !== org.org.lowerName) throw unprocessable(`Type the organisation's name, ${org.org.name}, to confirm.`, 'org_name')
            await deleteOrganization(deps, org.org)
            return seeOther('/', 'org-deleted')
          },
          (web, error, status) => deletePage(web, org.org, { error, status }),
        ),
      { ...owner('webOrgDelete'), body: DeleteForm },
    )
}
