/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Child } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, canEditGitHooks, type RepoNeed, type AreaApp } from '../../auth/pipeline'
import { AccessMode, accessModeName } from '../../auth/access'
import { gitDirOf, type RepoContext } from '../../auth/repo-context'
import { repoToApi } from '../../convert/repo'
import { hookToApi } from '../../convert/hook'
import { deployKeysToApi } from '../../convert/deploy-key'
import { toApiUser } from '../../convert/user'
import { ApiError, forbidden, notFound } from '../../lib/errors'
import { pathNumber } from '../../lib/path-number'
import { addCollaborator, collaboratorModes, collaboratorUser, listCollaborators, removeCollaborator } from '../../modules/collaborators/service'
import { createHook, deleteHook, editHook, getDelivery, getHook, listHooks, redeliver, testHook } from '../../modules/hooks/service'
import { addDeployKey, deleteDeployKey, listDeployKeys } from '../../modules/deploy-keys/service'
import { getGitHook, listGitHooks, MAX_GIT_HOOK_CHARS, setGitHook } from '../../modules/git-hooks/service'
import { deleteMetaObject, listMetaObjects } from '../../modules/lfs/service'
import { listLockRows, releaseLock } from '../../modules/lfs/locks'
import { sizeText } from './source'
import { TimeAt } from './issue-parts'
import { isoTime } from '../../lib/time'
import { changeRepoTeam, listRepoTeams } from '../../modules/teams/service'
import { teamsToApi } from '../../convert/team'
import { pageDetail, webContext, type WebContext } from '../context'
import { ButtonForm, CsrfField, CsrfText, FormCheck, FormText, formRoute, type FormRequest, Pager, pageNumber, seeOther, ticked, pagesOf, ListTable, settingsResponse, SubmitRow } from '../forms'
import { RepoHeader } from './repo-chrome'
import { HookDeliveries, HookFields, HookForm, hookInputOf, HookList, type HookValues } from './hook-settings'
import { repoUrl } from '../links'

/** Collaborators, hooks, deploy keys a page lists. */
const LISTED = 50

const RepoParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })
const HookParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), id: t.String({ maxLength: 20 }) })
const DeliveryParams = t.Object({ ...HookParams.properties, delivery: t.String({ maxLength: 40 }) })
const ListQuery = t.Object({ page: FormText(10), done: FormText(40) })

/** A settings page's need: the API's own for the same change (admin; `writes` as its route says). */
export const admin = (writes?: boolean): RepoNeed => (writes === undefined ? { level: 'admin' } : { level: 'admin', writes })

export const base = (ctx: RepoContext) => `${repoUrl(ctx.owner.name, ctx.repo.name)}/settings`

function menu(deps: AppDeps, ctx: RepoContext): [string, string][] {
  const b = base(ctx)
  const user = ctx.caller.user
  return [
    [b, 'Repository'],
    [`${b}/collaboration`, 'Collaborators'],
    [`${b}/branches`, 'Branches'],
    [`${b}/tags`, 'Tags'],
    [`${b}/hooks`, 'Webhooks'],
    // Offered to those the pages' `gitHooks` need lets in.
    ...(user && canEditGitHooks(deps.config, user) ? [[`${b}/hooks/git`, 'Git hooks'] as [string, string]] : []),
    [`${b}/keys`, 'Deploy keys'],
    ...(deps.config.lfsStartServer ? [[`${b}/lfs`, 'LFS'] as [string, string]] : []),
  ]
}

export async function settingsPage(deps: AppDeps, ctx: RepoContext, web: WebContext, current: string, title: string, body: Child, opts: { error?: string; status?: number } = {}) {
  const repo = await repoToApi(deps, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode)
  return settingsResponse(web, { title: `${title} · ${repo.full_name}`, header: <RepoHeader repo={repo} />, menu: 'Repository settings', items: menu(deps, ctx), current }, title, body, opts)
}

// ---- collaborators ------------------------------------------------------------------------------

const PERMISSIONS = ['read', 'write', 'admin'] as const
const CollaboratorForm = t.Object({ _csrf: CsrfText, collaborator: FormText(255), permission: FormText(8) })

async function collaborationPage(deps: AppDeps, ctx: RepoContext, web: WebContext, pageAt: number, opts: { error?: string; status?: number } = {}) {
  const viewer = ctx.caller.user
  const found = await listCollaborators(deps, viewer, ctx.repo, { page: pageAt, limit: LISTED, offset: (pageAt - 1) * LISTED })
  const modes = await collaboratorModes(deps, ctx.repo, found.rows.map((u) => u.id))
  const b = `${base(ctx)}/collaboration`
  const teams = ctx.owner.type === 1 ? await TeamsSection({ deps, ctx, web }) : null
  return settingsPage(
    deps,
    ctx,
    web,
    b,
    'Collaborators',
    <>
      <div class="box">
        <ListTable label="Collaborators" columns={['User', 'Permission']} empty={found.rows.length === 0 && 'No collaborators yet.'} actions>
            {found.rows.map((row) => {
              const u = toApiUser(deps.config, row, viewer)
              const mode = accessModeName(modes.get(row.id) ?? AccessMode.Read)
              return (
                <tr>
                  <td>
                    <a href={`/${encodeURIComponent(u.login)}`}>{u.login}</a>
                  </td>
                  <td>
                    <form class="row" method="post" action={b}>
                      <CsrfField ctx={web} />
                      <input type="hidden" name="collaborator" value={u.login} />
                      <label>
                        <span class="sr-only">Permission of {u.login}</span>
                        <select name="permission">
                          {PERMISSIONS.map((p) => (
                            <option value={p} selected={p === mode}>
                              {p}
                            </option>
                          ))}
                        </select>
                      </label>
                      <button class="secondary" type="submit">
                        Change
                      </button>
                    </form>
                  </td>
                  <td>
                    <ButtonForm ctx={web} action={`${b}/delete`} label={`Remove ${u.login}`} fields={{ collaborator: u.login }} danger />
                  </td>
                </tr>
              )
            })}
          </ListTable>
      </div>
      <Pager path={b} query={{}} page={pageAt} pages={pagesOf(found.total, LISTED)} />
      <h3>Add a collaborator</h3>
      <form class="row" method="post" action={b}>
        <CsrfField ctx={web} />
        <label>
          Username
          <input name="collaborator" required maxlength="255" />
        </label>
        <label>
          Permission
          <select name="permission">
            {PERMISSIONS.map((p) => (
              <option value={p} selected={p === 'write'}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <button class="primary" type="submit">
          Add collaborator
        </button>
      </form>
      {teams}
    </>,
    opts,
  )
}

/**
 * The teams of an organisation's repository (Gitea's collaboration page): those covering it, the
 * ones given it removable (`/settings/collaboration/team/delete`, the team's `id`), and a team
 * named to add (`/settings/collaboration/team`, `team`); both through the teams service as the
 * API's `/repos/{o}/{r}/teams/{team}`, its rule included (an owner, or an administrator when the
 * organisation lets them change team access).
 */
async function TeamsSection(props: { deps: AppDeps; ctx: RepoContext; web: WebContext }) {
  const { deps, ctx, web } = props
  const teams = await teamsToApi(deps, await listRepoTeams(deps, ctx), ctx.caller.user)
  const b = `${base(ctx)}/collaboration/team`
  return (
    <section aria-labelledby="teams">
      <h3 id="teams">Teams</h3>
      <div class="box">
        <ListTable label="Teams" columns={['Team', 'Permission']} actions empty={teams.length === 0 && 'No team has access to this repository.'}>
          {teams.map((team) => (
            <tr>
              <td>
                <a href={`/org/${encodeURIComponent(ctx.owner.name)}/teams/${encodeURIComponent(team.name)}`}>{team.name}</a>
              </td>
              <td>{team.includes_all_repositories ? `${team.permission} (every repository)` : team.permission}</td>
              <td>{team.permission === 'owner' || team.includes_all_repositories ? null : <ButtonForm ctx={web} action={`${b}/delete`} label={`Remove ${team.name}`} fields={{ id: String(team.id) }} danger />}</td>
            </tr>
          ))}
        </ListTable>
      </div>
      <form class="row" method="post" action={b}>
        <CsrfField ctx={web} />
        <label>
          Team name
          <input name="team" required maxlength="255" />
        </label>
        <button class="primary" type="submit">
          Add team
        </button>
      </form>
    </section>
  )
}

// ---- webhooks -----------------------------------------------------------------------------------

async function hooksPage(deps: AppDeps, ctx: RepoContext, web: WebContext, pageAt: number, opts: { values?: HookValues; error?: string; status?: number } = {}) {
  const found = await listHooks(deps, { repo: ctx.repo }, { page: pageAt, limit: LISTED, offset: (pageAt - 1) * LISTED })
  const b = `${base(ctx)}/hooks`
  return settingsPage(
    deps,
    ctx,
    web,
    b,
    'Webhooks',
    <>
      <HookList label="Webhooks" hooks={found.rows.map(hookToApi)} hookUrl={(id) => `${b}/${id}`} />
      <Pager path={b} query={{}} page={pageAt} pages={pagesOf(found.total, LISTED)} />
      <h3>Add a webhook</h3>
      <HookFields web={web} values={opts.values} action={b} submit="Add webhook" />
    </>,
    opts,
  )
}

async function hookPage(deps: AppDeps, ctx: RepoContext, web: WebContext, id: number, opts: { values?: HookValues; error?: string; status?: number } = {}) {
  const row = await getHook(deps, { repo: ctx.repo }, id)
  const hook = hookToApi(row)
  const b = `${base(ctx)}/hooks/${hook.id}`
  return settingsPage(
    deps,
    ctx,
    web,
    `${base(ctx)}/hooks`,
    `Webhook ${hook.id}`,
    <>
      <HookFields web={web} hook={hook} values={opts.values} action={b} submit="Update webhook" />
      <div class="repo-actions">
        <ButtonForm ctx={web} action={`${b}/test`} label="Test delivery" />
        <ButtonForm ctx={web} action={`${base(ctx)}/hooks/delete`} label="Delete webhook" fields={{ id: String(hook.id) }} danger />
      </div>
      {await HookDeliveries({ deps, web, hook: row, redeliverUrl: (uuid) => `${b}/replay/${uuid}` })}
    </>,
    opts,
  )
}

// ---- git hooks ----------------------------------------------------------------------------------

const GitHookParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), name: t.String({ maxLength: 40 }) })
const GitHookForm = t.Object({ _csrf: CsrfText, content: FormText(MAX_GIT_HOOK_CHARS) })

/** Gitea's Git hooks tab: the three hooks, each with its state and its page. */
async function gitHooksPage(deps: AppDeps, ctx: RepoContext, web: WebContext) {
  const hooks = await listGitHooks(gitDirOf(deps, ctx))
  const b = `${base(ctx)}/hooks/git`
  return settingsPage(
    deps,
    ctx,
    web,
    b,
    'Git hooks',
    <>
      <p>Programs the server runs as its own user at every push to this repository, after its own checks: a pre-receive or an update that fails refuses the push.</p>
      <div class="box">
        <ListTable label="Git hooks" columns={['Hook', 'State']}>
          {hooks.map((hook) => (
            <tr>
              <td>
                <a href={`${b}/${hook.name}`}>{hook.name}</a>
              </td>
              <td>{hook.isActive ? 'active' : 'not set'}</td>
            </tr>
          ))}
        </ListTable>
      </div>
    </>,
  )
}

/** One hook's program, edited in a text area (empty: removed); a refused form shows what was typed. */
async function gitHookPage(deps: AppDeps, ctx: RepoContext, web: WebContext, name: string, opts: { content?: string; error?: string; status?: number } = {}) {
  const hook = await getGitHook(gitDirOf(deps, ctx), name)
  const action = `${base(ctx)}/hooks/git/${hook.name}`
  return settingsPage(
    deps,
    ctx,
    web,
    `${base(ctx)}/hooks/git`,
    `Git hook ${hook.name}`,
    <form class="box" method="post" action={action}>
      <CsrfField ctx={web} />
      <label>
        Program (leave it empty to remove the hook)
        <textarea name="content" rows="16" spellcheck="false" maxlength={String(MAX_GIT_HOOK_CHARS)}>
          {opts.content ?? hook.content}
        </textarea>
      </label>
      <SubmitRow label="Update hook" />
    </form>,
    opts,
  )
}

// ---- LFS ----------------------------------------------------------------------------------------

const LfsObjectParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), oid: t.String({ maxLength: 64 }) })
const LfsLockParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), lid: t.String({ maxLength: 20 }) })

/** The LFS pages answer while the LFS server is on (WARREN_LFS_START_SERVER), as its endpoints do; 404 otherwise. */
function lfsOn(deps: AppDeps): void {
  if (!deps.config.lfsStartServer) throw notFound()
}

/**
 * Gitea's LFS settings page: the objects the repository has (newest first: oid, size, when), each
 * deleted from it by its administrators (the stored file too when no other repository has it).
 */
async function lfsPage(deps: AppDeps, ctx: RepoContext, web: WebContext, pageAt: number, opts: { error?: string; status?: number } = {}) {
  lfsOn(deps)
  const found = await listMetaObjects(deps, ctx.repo.id, { page: pageAt, limit: LISTED, offset: (pageAt - 1) * LISTED })
  const b = `${base(ctx)}/lfs`
  const intro = (
    <p>
      The Git LFS objects this repository has: {String(found.total)}. <a href={`${b}/locks`}>Locks</a>
    </p>
  )
  return tablePage(
    deps,
    ctx,
    web,
    { current: b, title: 'LFS', path: b, total: found.total, pageAt },
    opts,
    <ListTable label="LFS objects" columns={['Object', 'Size', 'Uploaded']} actions empty={found.rows.length === 0 && 'No LFS objects yet.'}>
      {found.rows.map((row) => (
        <tr>
          <td>
            <code title={row.oid}>{row.oid.slice(0, 16)}</code>
          </td>
          <td>{sizeText(row.size)}</td>
          <td>
            <TimeAt iso={isoTime(row.createdUnix)} />
          </td>
          <td>
            <ButtonForm ctx={web} action={`${b}/delete/${row.oid}`} label={`Delete ${row.oid.slice(0, 16)}`} danger />
          </td>
        </tr>
      ))}
    </ListTable>,
    intro,
  )
}

/** Gitea's LFS locks page: who holds which path, each lock released by the repository's administrators. */
async function lfsLocksPage(deps: AppDeps, ctx: RepoContext, web: WebContext, pageAt: number, opts: { error?: string; status?: number } = {}) {
  lfsOn(deps)
  const found = await listLockRows(deps, ctx.repo.id, { page: pageAt, limit: LISTED, offset: (pageAt - 1) * LISTED })
  const b = `${base(ctx)}/lfs/locks`
  return tablePage(
    deps,
    ctx,
    web,
    { current: `${base(ctx)}/lfs`, title: 'LFS locks', path: b, total: found.total, pageAt },
    opts,
    <ListTable label="LFS locks" columns={['Path', 'Held by', 'Since']} actions empty={found.rows.length === 0 && 'No locks.'}>
      {found.rows.map(({ lock, owner }) => (
        <tr>
          <td>
            <code>{lock.path}</code>
          </td>
          <td>
            <a href={`/${encodeURIComponent(owner)}`}>{owner}</a>
          </td>
          <td>
            <TimeAt iso={isoTime(lock.createdUnix)} />
          </td>
          <td>
            <ButtonForm ctx={web} action={`${b}/${lock.id}/unlock`} label={`Unlock ${lock.path}`} danger />
          </td>
        </tr>
      ))}
    </ListTable>,
  )
}

/** A settings page of one paged table (`intro` above it when given), its pager below: `total` rows, LISTED a page. */
function tablePage(
  deps: AppDeps,
  ctx: RepoContext,
  web: WebContext,
  at: { current: string; title: string; path: string; total: number; pageAt: number },
  opts: { error?: string; status?: number },
  table: Child,
  intro?: Child,
) {
  return settingsPage(
    deps,
    ctx,
    web,
    at.current,
    at.title,
    <>
      {intro ?? null}
      <div class="box">{table}</div>
      <Pager path={at.path} query={{}} page={at.pageAt} pages={pagesOf(at.total, LISTED)} />
    </>,
    opts,
  )
}

// ---- deploy keys --------------------------------------------------------------------------------

const DeployKeyForm = t.Object({ _csrf: CsrfText, title: FormText(255), content: FormText(64 * 1024), writable: FormCheck })
type DeployKeyValues = Partial<typeof DeployKeyForm.static>

async function deployKeysPage(deps: AppDeps, ctx: RepoContext, web: WebContext, pageAt: number, opts: { values?: DeployKeyValues; error?: string; status?: number } = {}) {
  const found = await listDeployKeys(deps, ctx.repo.id, { page: pageAt, limit: LISTED, offset: (pageAt - 1) * LISTED })
  const keys = await deployKeysToApi(deps, ctx, found.rows)
  const b = `${base(ctx)}/keys`
  const v = opts.values
  return settingsPage(
    deps,
    ctx,
    web,
    b,
    'Deploy keys',
    <>
      <div class="box">
        <ul class="entries" aria-label="Deploy keys">
          {keys.map((k) => (
            <li>
              <strong>{k.title}</strong> <code>{k.fingerprint}</code> <span class="muted">({k.read_only ? 'read-only' : 'read and write'})</span>{' '}
              <ButtonForm ctx={web} action={`${b}/delete`} label={`Delete ${k.title}`} fields={{ id: String(k.id) }} danger />
            </li>
          ))}
          {keys.length === 0 ? <li class="muted">No deploy keys yet.</li> : null}
        </ul>
      </div>
      <Pager path={b} query={{}} page={pageAt} pages={pagesOf(found.total, LISTED)} />
      <h3>Add a deploy key</h3>
      <form class="stack wide" method="post" action={b}>
        <CsrfField ctx={web} />
        <label>
          Title
          <input name="title" required maxlength="255" value={v?.title ?? ''} />
        </label>
        <label>
          Key
          <textarea name="content" rows="5" required>
            {v?.content ?? ''}
          </textarea>
        </label>
        <label class="check">
          <input type="checkbox" name="writable" checked={ticked(v?.writable)} />
          Allow pushes with this key
        </label>
        <SubmitRow label="Add deploy key" />
      </form>
    </>,
    opts,
  )
}

/** What a webhook page's form handler is given. */
type HookFormRequest = FormRequest & { repo: RepoContext; params: { id: string; delivery?: string } }

const numberOr404 = (text: string, what: string): number => {
  const n = pathNumber(text)
  if (!Number.isSafeInteger(n) || n <= 0) throw new ApiError(404, `${what} does not exist`)
  return n
}

/**
 * A repository's settings (Gitea's `/{owner}/{repo}/settings/...`), for its administrators: the
 * pipeline's `repo` need with the level (and archive rule) of the API route making the same
 * change; each form calls that route's service.
 */
export const repoSettingsPages = (deps: AppDeps, webApp: AreaApp) => {
  const page = (id: string) => ({ scope: 'repository' as const, detail: pageDetail(id) })
  /** A form of one webhook's page (`.../hooks/{id}/...`): the hook's page again with a refusal, and with what was typed when `keepValues`. */
  const hookForm =
    (act: (ctx: RepoContext, id: number, c: HookFormRequest) => Promise<Response>, keepValues = false) =>
    // Destructured: a context handed on whole has Elysia parse each request's cookies and headers.
    ({ request, caller, body, params, repo }: HookFormRequest) => {
      const c = { request, caller, body, params, repo }
      const id = numberOr404(c.params.id, 'hook')
      return formRoute(
        deps.config,
        c,
        () => act(c.repo, id, c),
        (web, error, status) => hookPage(deps, c.repo, web, id, { values: keepValues ? (c.body as HookValues) : undefined, error, status }),
      )
    }
  const deleteAction = async (ctx: RepoContext, id: number) => {
    await deleteHook(deps, { repo: ctx.repo }, id)
    return seeOther(`${base(ctx)}/hooks`, 'hook-deleted')
  }
  const replayAction = async (ctx: RepoContext, id: number, c: HookFormRequest) => {
    const hook = await getHook(deps, { repo: ctx.repo }, id)
    await redeliver(deps, hook, await getDelivery(deps, hook, c.params.delivery ?? ''))
    return seeOther(`${base(ctx)}/hooks/${id}`, 'redelivered')
  }
  /** A paged list page's handler: `render` with the request's web context and page number. */
  const paged =
    (render: (deps: AppDeps, ctx: RepoContext, web: WebContext, pageAt: number) => Promise<Response>) =>
    ({ request, repo: ctx, query }: { request: Request; repo: RepoContext; query: { page?: string } }) =>
      render(deps, ctx, webContext(deps.config, request, ctx.caller), pageNumber(query.page))
  /** A paged list page's needs: the repository's administrators, as the API's. */
  const listed = (id: string) => ({ ...page(id), repo: admin(), params: RepoParams, query: ListQuery })
  return (
    pageGroup(webApp)
      .get('/:owner/:repo/settings/collaboration', paged(collaborationPage), listed('webRepoCollaborators'))
      .post(
        '/:owner/:repo/settings/collaboration',
        ({ request, caller, body, repo: ctx }) =>
          formRoute(
            deps.config,
            { request, caller, body },
            async () => {
              await addCollaborator(deps, ctx.repo, await collaboratorUser(deps, (body.collaborator ?? '').trim()), body.permission)
              return seeOther(`${base(ctx)}/collaboration`, 'collaborator-added')
            },
            (web, error, status) => collaborationPage(deps, ctx, web, 1, { error, status }),
          ),
        { ...page('webRepoCollaboratorAdd'), repo: admin(), params: RepoParams, body: CollaboratorForm },
      )
      .post(
        '/:owner/:repo/settings/collaboration/delete',
        ({ request, caller, body, repo: ctx }) =>
          formRoute(
            deps.config,
            { request, caller, body },
            async () => {
              await removeCollaborator(deps, ctx.repo, await collaboratorUser(deps, body.collaborator ?? ''))
              return seeOther(`${base(ctx)}/collaboration`, 'collaborator-removed')
            },
            (web, error, status) => collaborationPage(deps, ctx, web, 1, { error, status }),
          ),
        { ...page('webRepoCollaboratorRemove'), repo: admin(), params: RepoParams, body: t.Object({ _csrf: CsrfText, collaborator: FormText(255) }) },
      )
      .post(
        '/:owner/:repo/settings/collaboration/team',
        ({ request, caller, body, repo: ctx }) =>
          formRoute(
            deps.config,
            { request, caller, body },
            async () => {
              const name = (body.team ?? '').trim()
              if (!name) throw new ApiError(422, 'Name the team to add.')
              await changeRepoTeam(deps, ctx, name, true)
              return seeOther(`${base(ctx)}/collaboration`, 'team-added')
            },
            (web, error, status) => collaborationPage(deps, ctx, web, 1, { error, status }),
          ),
        { ...page('webRepoTeamAdd'), repo: admin(), params: RepoParams, body: t.Object({ _csrf: CsrfText, team: FormText(255) }) },
      )
      .post(
        '/:owner/:repo/settings/collaboration/team/delete',
        ({ request, caller, body, repo: ctx }) =>
          formRoute(
            deps.config,
            { request, caller, body },
            async () => {
              await changeRepoTeam(deps, ctx, { id: numberOr404(body.id ?? '', 'team') }, false)
              return seeOther(`${base(ctx)}/collaboration`, 'team-removed')
            },
            (web, error, status) => collaborationPage(deps, ctx, web, 1, { error, status }),
          ),
        { ...page('webRepoTeamRemove'), repo: admin(), params: RepoParams, body: t.Object({ _csrf: CsrfText, id: FormText(20) }) },
      )
      .get('/:owner/:repo/settings/hooks', paged(hooksPage), listed('webRepoHooks'))
      .post(
        '/:owner/:repo/settings/hooks',
        ({ request, caller, body, repo: ctx }) =>
          formRoute(
            deps.config,
            { request, caller, body },
            async () => {
              const hook = await createHook(deps, { repo: ctx.repo }, { type: 'gitea', ...hookInputOf(body, false) })
              return seeOther(`${base(ctx)}/hooks/${hook.id}`, 'hook-added')
            },
            (web, error, status) => hooksPage(deps, ctx, web, 1, { values: body, error, status }),
          ),
        { ...page('webRepoHookAdd'), repo: admin(false), params: RepoParams, body: HookForm },
      )
      .get('/:owner/:repo/settings/lfs', paged(lfsPage), listed('webRepoLfs'))
      .post(
        '/:owner/:repo/settings/lfs/delete/:oid',
        ({ request, caller, body, params, repo: ctx }) =>
          formRoute(
            deps.config,
            { request, caller, body },
            async () => {
              lfsOn(deps)
              await deleteMetaObject(deps, ctx.repo.id, params.oid)
              return seeOther(`${base(ctx)}/lfs`, 'lfs-object-deleted')
            },
            (web, error, status) => lfsPage(deps, ctx, web, 1, { error, status }),
          ),
        { ...page('webRepoLfsDelete'), repo: admin(), params: LfsObjectParams, body: t.Object({ _csrf: CsrfText }) },
      )
      .get('/:owner/:repo/settings/lfs/locks', paged(lfsLocksPage), listed('webRepoLfsLocks'))
      .post(
        '/:owner/:repo/settings/lfs/locks/:lid/unlock',
        ({ request, caller, body, params, repo: ctx }) =>
          formRoute(
            deps.config,
            { request, caller, body },
            async () => {
              lfsOn(deps)
              // The repository's administrators release anyone's lock (Gitea's LFSUnlock: force).
              const released = await releaseLock(deps, ctx.repo.id, ctx.caller.user!.id, params.lid, true)
              if (released === 'not found') throw notFound('no such lock')
              if (released === 'not yours') throw forbidden('the lock is not yours')
              return seeOther(`${base(ctx)}/lfs/locks`, 'lfs-unlocked')
            },
            (web, error, status) => lfsLocksPage(deps, ctx, web, 1, { error, status }),
          ),
        { ...page('webRepoLfsUnlock'), repo: admin(), params: LfsLockParams, body: t.Object({ _csrf: CsrfText }) },
      )
      .get(
        '/:owner/:repo/settings/hooks/git',
        async ({ request, repo: ctx }) => gitHooksPage(deps, ctx, webContext(deps.config, request, ctx.caller)),
        { ...page('webRepoGitHooks'), repo: admin(), gitHooks: true, params: RepoParams, query: ListQuery },
      )
      .get(
        '/:owner/:repo/settings/hooks/git/:name',
        async ({ request, repo: ctx, params }) => gitHookPage(deps, ctx, webContext(deps.config, request, ctx.caller), params.name),
        { ...page('webRepoGitHook'), repo: admin(), gitHooks: true, params: GitHookParams, query: ListQuery },
      )
      .post(
        '/:owner/:repo/settings/hooks/git/:name',
        ({ request, caller, body, params, repo: ctx }) =>
          formRoute(
            deps.config,
            { request, caller, body },
            async () => {
              const hook = await setGitHook(gitDirOf(deps, ctx), params.name, body.content ?? '')
              return seeOther(`${base(ctx)}/hooks/git/${hook.name}`, 'saved')
            },
            (web, error, status) => gitHookPage(deps, ctx, web, params.name, { content: body.content, error, status }),
          ),
        { ...page('webRepoGitHookEdit'), repo: admin(false), gitHooks: true, params: GitHookParams, body: GitHookForm },
      )
      .get(
        '/:owner/:repo/settings/hooks/:id',
        async ({ request, repo: ctx, params }) => hookPage(deps, ctx, webContext(deps.config, request, ctx.caller), numberOr404(params.id, 'hook')),
        { ...page('webRepoHook'), repo: admin(), params: HookParams },
      )
      .post(
        '/:owner/:repo/settings/hooks/:id',
        hookForm(async (ctx, id, c) => {
          await editHook(deps, { repo: ctx.repo }, id, hookInputOf(c.body as HookValues, true))
          return seeOther(`${base(ctx)}/hooks/${id}`, 'saved')
        }, true),
        { ...page('webRepoHookEdit'), repo: admin(false), params: HookParams, body: HookForm },
      )
      // Gitea 1.23's address: the hook's id in the form.
      .post(
        '/:owner/:repo/settings/hooks/delete',
        ({ request, caller, body, repo }) => hookForm(deleteAction)({ request, caller, body, repo, params: { id: body.id ?? '' } }),
        { ...page('webRepoHookDelete'), repo: admin(false), params: RepoParams, body: t.Object({ _csrf: CsrfText, id: FormText(20) }) },
      )
      // Warren's older address, still answered the same.
      .post('/:owner/:repo/settings/hooks/:id/delete', hookForm(deleteAction), {
        ...page('webRepoHookDeleteOld'),
        repo: admin(false),
        params: HookParams,
        body: t.Object({ _csrf: CsrfText }),
      })
      .post(
        '/:owner/:repo/settings/hooks/:id/test',
        hookForm(async (ctx, id) => {
          await testHook(deps, ctx.repo, ctx.owner, ctx.caller.user!, await getHook(deps, { repo: ctx.repo }, id))
          return seeOther(`${base(ctx)}/hooks/${id}`, 'tested')
        }),
        { ...page('webRepoHookTest'), repo: admin(false), params: HookParams, body: t.Object({ _csrf: CsrfText }) },
      )
      // Gitea 1.23's address (a delivery by its uuid; its number too), and Warren's older one.
      .post('/:owner/:repo/settings/hooks/:id/replay/:delivery', hookForm(replayAction), {
        ...page('webRepoHookReplay'),
        repo: admin(false),
        params: DeliveryParams,
        body: t.Object({ _csrf: CsrfText }),
      })
      .post('/:owner/:repo/settings/hooks/:id/deliveries/:delivery/redeliver', hookForm(replayAction), {
        ...page('webRepoHookRedeliver'),
        repo: admin(false),
        params: DeliveryParams,
        body: t.Object({ _csrf: CsrfText }),
      })
      .get('/:owner/:repo/settings/keys', paged(deployKeysPage), listed('webRepoDeployKeys'))
      .post(
        '/:owner/:repo/settings/keys',
        ({ request, caller, body, repo: ctx }) =>
          formRoute(
            deps.config,
            { request, caller, body },
            async () => {
              await addDeployKey(deps, ctx.repo.id, { title: (body.title ?? '').trim(), key: (body.content ?? '').trim(), read_only: !ticked(body.writable) })
              return seeOther(`${base(ctx)}/keys`, 'key-added')
            },
            (web, error, status) => deployKeysPage(deps, ctx, web, 1, { values: body, error, status }),
          ),
        { ...page('webRepoDeployKeyAdd'), repo: admin(false), params: RepoParams, body: DeployKeyForm },
      )
      .post(
        '/:owner/:repo/settings/keys/delete',
        ({ request, caller, body, repo: ctx }) =>
          formRoute(
            deps.config,
            { request, caller, body },
            async () => {
              await deleteDeployKey(deps, ctx.repo.id, numberOr404(body.id ?? '', 'deploy key'))
              return seeOther(`${base(ctx)}/keys`, 'key-deleted')
            },
            (web, error, status) => deployKeysPage(deps, ctx, web, 1, { error, status }),
          ),
        { ...page('webRepoDeployKeyDelete'), repo: admin(false), params: RepoParams, body: t.Object({ _csrf: CsrfText, id: FormText(20) }) },
      )
  )
}
