/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Child, Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import { SCOPE_CATEGORIES } from '../../auth/scopes'
import { toApiAccessToken } from '../../convert/account'
import { gpgKeysToApi, toApiPublicKey } from '../../convert/key'
import { ApiError, unprocessable } from '../../lib/errors'
import { avatarUrl } from '../../convert/user'
import { changeAvatar } from '../../modules/avatars/service'
import { AVATAR_MAX_BYTES, AVATAR_MAX_DIMENSION } from '../../modules/avatars/image'
import { editUser } from '../../modules/admin/service'
import { addGpgKey, addPublicKey, deleteGpgKey, deletePublicKey, gpgVerificationToken, listGpgKeys, listPublicKeys, MAX_TOKEN_SIGNATURE, verifyGpgKey, verifySshKey } from '../../modules/keys/service'
import { createAccessToken, deleteAccessToken, listAccessTokens } from '../../modules/users/service'
import { pageDetail, webContext, type WebContext } from '../context'
import { ButtonForm, CsrfField, CsrfText, FormCheck, FormText, formRoute, Pager, pageNumber, seeOther, ticked, pagesOf, ListTable, settingsResponse } from '../forms'
import { TimeAt } from './issue-parts'

/** Keys and tokens a settings page lists per page. */
const LISTED = 50

const MENU: [string, string][] = [
  ['/user/settings', 'Profile'],
  ['/user/settings/account', 'Account'],
  ['/user/settings/security', 'Security'],
  ['/user/settings/keys', 'SSH / GPG keys'],
  ['/user/settings/applications', 'Applications'],
  ['/user/settings/organization', 'Organisations'],
  ['/user/settings/repos', 'Repositories'],
  ['/user/settings/blocked_users', 'Blocked users'],
  ['/user/settings/hooks', 'Webhooks'],
]

/** A page of the user settings: the menu beside it, the title, the notices and the error of a refused form. */
export function settingsPage(ctx: WebContext, current: string, title: string, body: Child, opts: { error?: string; status?: number } = {}) {
  return settingsResponse(ctx, { title, header: <h1>Settings</h1>, menu: 'User settings', items: MENU, current }, title, body, opts)
}

const ProfileForm = t.Object({
  _csrf: CsrfText,
  full_name: FormText(100),
  website: FormText(255),
  location: FormText(50),
  description: FormText(255),
  hide_email: FormCheck,
})
type ProfileValues = Partial<typeof ProfileForm.static>

/** The profile fields a user and an organisation share (the form's values when shown again, else the row's); `about` names the description. */
export function ProfileFields(props: { values?: Partial<Record<'full_name' | 'website' | 'location' | 'description', string>>; owner: UserRow; about: string }) {
  const { values: v, owner } = props
  return (
    <>
      <label>
        Full name
        <input name="full_name" maxlength="100" value={v?.full_name ?? owner.fullName} autocomplete="name" />
      </label>
      <label>
        Website
        <input name="website" type="url" maxlength="255" value={v?.website ?? owner.website} autocomplete="url" />
      </label>
      <label>
        Location
        <input name="location" maxlength="50" value={v?.location ?? owner.location} />
      </label>
      <label>
        {props.about}
        <textarea name="description" maxlength="255" rows="4">
          {v?.description ?? owner.description}
        </textarea>
      </label>
    </>
  )
}

function profilePage(ctx: WebContext, user: UserRow, opts: { values?: ProfileValues; error?: string; status?: number } = {}) {
  const v = opts.values
  return settingsPage(
    ctx,
    '/user/settings',
    'Profile',
    <>
      <form class="stack wide" method="post" action="/user/settings">
        <CsrfField ctx={ctx} />
        <ProfileFields values={v} owner={user} about="Biography" />
        <label class="check">
          <input type="checkbox" name="hide_email" checked={v ? ticked(v.hide_email) : user.keepEmailPrivate} />
          Keep my e-mail address ({user.email}) hidden from other users
        </label>
        <div>
          <button class="primary" type="submit">
            Update profile
          </button>
        </div>
      </form>
      <UserAvatarForms ctx={ctx} user={user} action="/user/settings/avatar" />
    </>,
    opts,
  )
}

/**
 * An avatar's forms (the profile page's, an organisation's settings', a repository's): the current
 * one (`src`, none when ''), an upload form posted to `action` (multipart, the file as `avatar`),
 * and a delete button (`{action}/delete`) for an uploaded one.
 */
export function AvatarForms(props: { ctx: WebContext; src: string; alt: string; uploaded: boolean; action: string }) {
  const { ctx } = props
  return (
    <section aria-labelledby="avatar">
      <h3 id="avatar">Avatar</h3>
      {props.src ? <img src={props.src} alt={props.alt} width="96" height="96" /> : null}
      <form class="stack" method="post" action={props.action} enctype="multipart/form-data">
        <CsrfField ctx={ctx} />
        <label>
          A PNG, JPEG, GIF or WebP image, at most {String(AVATAR_MAX_BYTES / 1024)} KiB and {String(AVATAR_MAX_DIMENSION)}×{String(AVATAR_MAX_DIMENSION)} pixels
          <input name="avatar" type="file" accept="image/png,image/jpeg,image/gif,image/webp" required />
        </label>
        <div>
          <button class="primary" type="submit">
            Update avatar
          </button>
        </div>
      </form>
      {props.uploaded ? <ButtonForm ctx={ctx} action={`${props.action}/delete`} label="Delete the current avatar" danger /> : null}
    </section>
  )
}

/** A user's or organisation's avatar forms. */
export const UserAvatarForms = (props: { ctx: WebContext; user: UserRow; action: string }) => (
  <AvatarForms ctx={props.ctx} src={avatarUrl(props.ctx.config, props.user)} alt={`${props.user.name}'s avatar`} uploaded={!!props.user.avatar} action={props.action} />
)

/** The avatar form: the file comes as a File of the multipart body (bounded by the body parser, checked by modules/avatars). */
export const AvatarForm = t.Object({ _csrf: CsrfText, avatar: t.Optional(t.Unknown()) })

/** The uploaded avatar file of an AvatarForm's body, as bytes; 422 when none was chosen. */
export async function avatarBytes(file: unknown): Promise<Uint8Array> {
  if (!(file instanceof Blob) || file.size === 0) throw unprocessable('choose an image file to upload', 'avatar')
  return new Uint8Array(await file.arrayBuffer())
}

/** The keys page's form (Gitea's): `type` ssh or gpg adds `content`; verify_ssh (`fingerprint`) and verify_gpg (`key_id`) verify a key by the `signature` of the token. */
const KeyForm = t.Object({
  _csrf: CsrfText,
  type: FormText(16),
  title: FormText(255),
  content: FormText(64 * 1024),
  fingerprint: FormText(100),
  key_id: FormText(40),
  signature: FormText(MAX_TOKEN_SIGNATURE),
})
const KeyDeleteForm = t.Object({ _csrf: CsrfText, type: FormText(8), id: FormText(20) })
const ListQuery = t.Object({ page: FormText(10), done: FormText(40) })

/**
 * A key's verification (Gitea's): the token to sign, the command that signs it, the signature's
 * box; posted to the keys page with `fields` saying which key.
 */
function VerifyKeyForm(props: { ctx: WebContext; label: string; fields: Record<string, string>; command: string }): Html {
  const id = `verify-${Object.values(props.fields).join('-').replace(/[^A-Za-z0-9-]/g, '')}`
  return (
    <details class="verify-key">
      <summary>{props.label}</summary>
      <form class="stack wide" method="post" action="/user/settings/keys">
        <CsrfField ctx={props.ctx} />
        {Object.entries(props.fields).map(([name, value]) => (
          <input type="hidden" name={name} value={value} />
        ))}
        <p>Sign this text with the key, then paste the armored signature below:</p>
        <pre>
          <code>{props.command}</code>
        </pre>
        <label for={id}>Signature</label>
        <textarea id={id} name="signature" rows="6" required></textarea>
        <div>
          <button class="primary" type="submit">
            Verify
          </button>
        </div>
      </form>
    </details>
  )
}

async function keysPage(deps: AppDeps, ctx: WebContext, user: UserRow, pageAt: number, opts: { values?: Partial<typeof KeyForm.static>; error?: string; status?: number } = {}) {
  const page = { page: pageAt, limit: LISTED, offset: (pageAt - 1) * LISTED }
  const ssh = await listPublicKeys(deps, user.id, page)
  const gpg = await listGpgKeys(deps, user.id, page)
  const sshKeys = ssh.rows.map((k) => toApiPublicKey(deps.config, k, user, user))
  const gpgKeys = await gpgKeysToApi(deps, user.id, gpg.rows)
  const token = gpgVerificationToken(user, 1)
  const v = opts.values
  return settingsPage(
    ctx,
    '/user/settings/keys',
    'SSH and GPG keys',
    <>
      <section aria-labelledby="ssh-keys">
        <h3 id="ssh-keys">SSH keys</h3>
        <div class="box">
          <ul class="entries" aria-label="SSH keys">
            {ssh.rows.map((row, i) => {
              const k = sshKeys[i]!
              return (
                <li>
                  <strong>{k.title ?? ''}</strong> <code>{k.fingerprint ?? ''}</code> {row.verified ? <span class="label signature-verified">Verified</span> : null}{' '}
                  <span class="muted">
                    added <TimeAt iso={k.created_at} />
                  </span>{' '}
                  <ButtonForm ctx={ctx} action="/user/settings/keys/delete" label={`Delete ${k.title ?? 'key'}`} fields={{ type: 'ssh', id: String(k.id) }} danger />
                  {row.verified ? null : (
                    <VerifyKeyForm ctx={ctx} label={`Verify ${k.title ?? 'key'}`} fields={{ type: 'verify_ssh', fingerprint: row.fingerprint }} command={`echo -n '${token}' | ssh-keygen -Y sign -n gitea -f /path/to/your/key`} />
                  )}
                </li>
              )
            })}
            {sshKeys.length === 0 ? <li class="muted">No SSH keys yet.</li> : null}
          </ul>
        </div>
      </section>
      <section aria-labelledby="gpg-keys">
        <h3 id="gpg-keys">GPG keys</h3>
        <div class="box">
          <ul class="entries" aria-label="GPG keys">
            {gpgKeys.map((k) => (
              <li>
                <code>{k.key_id}</code> {k.verified ? <span class="label signature-verified">Verified</span> : null} <span class="muted">{k.emails.map((e) => e.email).join(', ')}</span>{' '}
                <ButtonForm ctx={ctx} action="/user/settings/keys/delete" label={`Delete GPG key ${k.key_id}`} fields={{ type: 'gpg', id: String(k.id) }} danger />
                {k.verified ? null : (
                  <VerifyKeyForm ctx={ctx} label={`Verify GPG key ${k.key_id}`} fields={{ type: 'verify_gpg', key_id: k.key_id }} command={`echo '${token}' | gpg -a --default-key ${k.key_id} --detach-sig`} />
                )}
              </li>
            ))}
            {gpgKeys.length === 0 ? <li class="muted">No GPG keys yet.</li> : null}
          </ul>
        </div>
      </section>
      <Pager path="/user/settings/keys" query={{}} page={pageAt} pages={pagesOf(Math.max(ssh.total, gpg.total), LISTED)} />
      <h3>Add a key</h3>
      <form class="stack wide" method="post" action="/user/settings/keys">
        <CsrfField ctx={ctx} />
        <label>
          Kind
          <select name="type">
            <option value="ssh" selected={v?.type !== 'gpg'}>
              SSH key
            </option>
            <option value="gpg" selected={v?.type === 'gpg'}>
              GPG key
            </option>
          </select>
        </label>
        <label>
          Title (SSH keys)
          <input name="title" maxlength="255" value={v?.title ?? ''} />
        </label>
        <label>
          Key
          <textarea name="content" rows="6" required placeholder="ssh-ed25519 AAAA… or -----BEGIN PGP PUBLIC KEY BLOCK-----">
            {v?.content ?? ''}
          </textarea>
        </label>
        <div>
          <button class="primary" type="submit">
            Add key
          </button>
        </div>
      </form>
    </>,
    opts,
  )
}

/** Scope levels a token may get per category. */
const LEVELS = ['', 'read', 'write'] as const
const TokenForm = t.Object({
  _csrf: CsrfText,
  name: FormText(255),
  public_only: FormCheck,
  ...Object.fromEntries(SCOPE_CATEGORIES.map((c) => [`scope_${c}`, FormText(8)])),
})
type TokenValues = Record<string, string | undefined>

async function applicationsPage(
  deps: AppDeps,
  ctx: WebContext,
  user: UserRow,
  pageAt: number,
  opts: { created?: { name: string; secret: string }; values?: TokenValues; error?: string; status?: number } = {},
) {
  const tokens = await listAccessTokens(deps, user.id, { page: pageAt, limit: LISTED, offset: (pageAt - 1) * LISTED })
  const v = opts.values ?? {}
  return settingsPage(
    ctx,
    '/user/settings/applications',
    'Access tokens',
    <>
      {opts.created ? (
        <section class="notice-ok" role="status" aria-labelledby="new-token">
          <p id="new-token">
            Token <strong>{opts.created.name}</strong> was created. Copy it now: it will not be shown again.
          </p>
          <p class="token-once" data-token>
            {opts.created.secret}
          </p>
        </section>
      ) : null}
      <div class="box">
        <ListTable label="Access tokens" columns={['Name', 'Scopes', 'Ends with']} actions>
            {tokens.rows.map((r) => toApiAccessToken(r)).map((tk) => (
              <tr>
                <td>{tk.name}</td>
                <td>{tk.scopes.join(', ')}</td>
                <td>
                  <code>…{tk.token_last_eight}</code>
                </td>
                <td>
                  <ButtonForm ctx={ctx} action="/user/settings/applications/delete" label={`Delete ${tk.name}`} fields={{ id: String(tk.id) }} danger />
                </td>
              </tr>
            ))}
            {tokens.rows.length === 0 ? (
              <tr>
                <td colspan="4" class="muted">
                  No access tokens yet.
                </td>
              </tr>
            ) : null}
          </ListTable>
      </div>
      <Pager path="/user/settings/applications" query={{}} page={pageAt} pages={pagesOf(tokens.total, LISTED)} />
      <h3>Generate a new token</h3>
      <form class="stack wide" method="post" action="/user/settings/applications">
        <CsrfField ctx={ctx} />
        <label>
          Token name
          <input name="name" maxlength="255" required value={v.name ?? ''} />
        </label>
        <fieldset>
          <legend>Permissions</legend>
          {SCOPE_CATEGORIES.map((c) => (
            <label>
              {c}
              <select name={`scope_${c}`}>
                {LEVELS.map((level) => (
                  <option value={level} selected={(v[`scope_${c}`] ?? '') === level}>
                    {level === '' ? 'No access' : level === 'read' ? 'Read' : 'Read and write'}
                  </option>
                ))}
              </select>
            </label>
          ))}
          <label class="check">
            <input type="checkbox" name="public_only" checked={ticked(v.public_only)} />
            Public repositories and organisations only
          </label>
        </fieldset>
        <div>
          <button class="primary" type="submit">
            Generate token
          </button>
        </div>
      </form>
    </>,
    opts,
  )
}

/** The scopes a token form asked for, as the API's `scopes` list (`read:repository`, …). */
function scopesOf(values: TokenValues): string[] {
  const scopes = SCOPE_CATEGORIES.flatMap((c) => {
    const level = values[`scope_${c}`] ?? ''
    if (level === '') return []
    if (level !== 'read' && level !== 'write') throw new ApiError(422, `unknown level for ${c}: ${level}`)
    return [`${level}:${c}`]
  })
  return ticked(values.public_only) ? ['public-only', ...scopes] : scopes
}

/** A signed-in user's own settings page or form; a token needs the user scope (the API's `/user/...` routes'). */
export const signedPage = (id: string) => ({ scope: 'user' as const, signed: true as const, detail: pageDetail(id) })

/**
 * The signed-in user's settings (Gitea's `/user/settings/...`): profile, SSH and GPG keys, access
 * tokens (the account's pages are `settings-account.tsx`'s). Each form calls the service the API's own routes call.
 */
export const userSettingsPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get('/user/settings', ({ request, caller, user }) => profilePage(webContext(deps.config, request, caller), user), signedPage('webUserSettings'))
    .post(
      '/user/settings',
      ({ request, caller, body, user }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await editUser(deps, user, {
              full_name: body.full_name ?? '',
              website: body.website ?? '',
              location: body.location ?? '',
              description: body.description ?? '',
              hide_email: ticked(body.hide_email),
            })
            return seeOther('/user/settings', 'saved')
          },
          (web, error, status) => profilePage(web, user, { values: body, error, status }),
        ),
      { ...signedPage('webUserSettingsSave'), body: ProfileForm },
    )
    .post(
      '/user/settings/avatar',
      ({ request, caller, body, user }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await changeAvatar(deps, 'user', user.id, await avatarBytes(body.avatar))
            return seeOther('/user/settings', 'avatar-saved')
          },
          (web, error, status) => profilePage(web, user, { error, status }),
        ),
      { ...signedPage('webUserAvatarSave'), body: AvatarForm },
    )
    .post(
      '/user/settings/avatar/delete',
      ({ request, caller, body, user }) =>
        formRoute(deps.config, { request, caller, body }, async () => {
          await changeAvatar(deps, 'user', user.id, null)
          return seeOther('/user/settings', 'avatar-deleted')
        }),
      { ...signedPage('webUserAvatarDelete'), body: t.Object({ _csrf: CsrfText }) },
    )
    .get(
      '/user/settings/keys',
      async ({ request, caller, user, query }) => keysPage(deps, webContext(deps.config, request, caller), user, pageNumber(query.page)),
      { ...signedPage('webUserKeys'), query: ListQuery },
    )
    .post(
      '/user/settings/keys',
      ({ request, caller, body, user }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            if (body.type === 'verify_ssh' || body.type === 'verify_gpg') {
              if (body.type === 'verify_ssh') await verifySshKey(deps, user, body.fingerprint ?? '', body.signature ?? '')
              else await verifyGpgKey(deps, user, body.key_id ?? '', body.signature ?? '')
              return seeOther('/user/settings/keys', 'key-verified')
            }
            const content = (body.content ?? '').trim()
            if (body.type === 'gpg') await addGpgKey(deps, user, content)
            else await addPublicKey(deps, user.id, { title: (body.title ?? '').trim(), key: content })
            return seeOther('/user/settings/keys', 'key-added')
          },
          (web, error, status) => keysPage(deps, web, user, 1, { values: body, error, status }),
        ),
      { ...signedPage('webUserKeyAdd'), body: KeyForm },
    )
    .post(
      '/user/settings/keys/delete',
      ({ request, caller, body, user }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            const id = Number(body.id)
            if (!Number.isSafeInteger(id) || id <= 0) throw new ApiError(404, 'no such key')
            if (body.type === 'gpg') await deleteGpgKey(deps, user.id, id)
            else await deletePublicKey(deps, user.id, id)
            return seeOther('/user/settings/keys', 'key-deleted')
          },
          (web, error, status) => keysPage(deps, web, user, 1, { error, status }),
        ),
      { ...signedPage('webUserKeyDelete'), body: KeyDeleteForm },
    )
    .get(
      '/user/settings/applications',
      async ({ request, caller, user, query }) => applicationsPage(deps, webContext(deps.config, request, caller), user, pageNumber(query.page)),
      { ...signedPage('webUserTokens'), query: ListQuery },
    )
    .post(
      '/user/settings/applications',
      ({ request, caller, body, user }) => {
        const values = body as TokenValues
        return formRoute(
          deps.config,
          { request, caller, body },
          async (web) => {
            const { row, secret } = await createAccessToken(deps, user.id, (body.name ?? '').trim(), scopesOf(values))
            // Shown in this answer only: the database keeps its hash.
            return applicationsPage(deps, web, user, 1, { created: { name: row.name, secret }, status: 201 })
          },
          (web, error, status) => applicationsPage(deps, web, user, 1, { values, error, status }),
        )
      },
      { ...signedPage('webUserTokenCreate'), body: TokenForm },
    )
    .post(
      '/user/settings/applications/delete',
      ({ request, caller, body, user }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await deleteAccessToken(deps, user.id, body.id ?? '')
            return seeOther('/user/settings/applications', 'token-deleted')
          },
          (web, error, status) => applicationsPage(deps, web, user, 1, { error, status }),
        ),
      { ...signedPage('webUserTokenDelete'), body: t.Object({ _csrf: CsrfText, id: FormText(20) }) },
    )
