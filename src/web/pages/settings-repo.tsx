/** @jsxImportSource warren-jsx */
import { Elysia, t } from 'elysia'
import type { Child } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pipeline, type RepoNeed } from '../../auth/pipeline'
import { AccessMode, accessModeName } from '../../auth/access'
import type { RepoContext } from '../../auth/repo-context'
import { repoToApi, type ApiRepo } from '../../convert/repo'
import { hookToApi } from '../../convert/hook'
import { deployKeysToApi } from '../../convert/deploy-key'
import { toApiUser } from '../../convert/user'
import { ApiError } from '../../lib/errors'
import { pathNumber } from '../../lib/path-number'
import { deleteRepository, editRepository } from '../../modules/repos/edit'
import { REPO_MERGE_STYLES } from '../../modules/repos/model'
import { addCollaborator, collaboratorModes, collaboratorUser, listCollaborators, removeCollaborator } from '../../modules/collaborators/service'
import { createHook, deleteHook, editHook, getDelivery, getHook, listHooks, redeliver, testHook } from '../../modules/hooks/service'
import { addDeployKey, deleteDeployKey, listDeployKeys } from '../../modules/deploy-keys/service'
import { pageDetail, webContext, type WebContext } from '../context'
import { branchNames } from '../source-data'
import { ButtonForm, CsrfField, CsrfText, FormCheck, FormList, FormText, formRoute, type FormRequest, listOf, Pager, pageNumber, seeOther, ticked, pagesOf, ListTable, settingsResponse, SubmitRow } from '../forms'
import { RepoHeader } from './repo-chrome'
import { HookDeliveries, HookFields, HookForm, hookInputOf, HookList, type HookValues } from './hook-settings'
import { repoUrl } from '../links'

/** Collaborators, hooks, deploy keys a page lists; branches the default-branch choice offers. */
const LISTED = 50
const MAX_BRANCH_CHOICES = 200

const RepoParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })
const HookParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), id: t.String({ maxLength: 20 }) })
const DeliveryParams = t.Object({ ...HookParams.properties, delivery: t.String({ maxLength: 40 }) })
const ListQuery = t.Object({ page: FormText(10), done: FormText(40) })

/** A settings page's need: the API's own for the same change (admin; `writes` as its route says). */
export const admin = (writes?: boolean): RepoNeed => (writes === undefined ? { level: 'admin' } : { level: 'admin', writes })

export const base = (ctx: RepoContext) => `${repoUrl(ctx.owner.name, ctx.repo.name)}/settings`

function menu(ctx: RepoContext): [string, string][] {
  const b = base(ctx)
  return [
    [b, 'Repository'],
    [`${b}/collaboration`, 'Collaborators'],
    [`${b}/branches`, 'Branches'],
    [`${b}/tags`, 'Tags'],
    [`${b}/hooks`, 'Webhooks'],
    [`${b}/keys`, 'Deploy keys'],
  ]
}

export async function settingsPage(deps: AppDeps, ctx: RepoContext, web: WebContext, current: string, title: string, body: Child, opts: { error?: string; status?: number } = {}) {
  const repo = await repoToApi(deps, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode)
  return settingsResponse(web, { title: `${title} · ${repo.full_name}`, header: <RepoHeader repo={repo} />, menu: 'Repository settings', items: menu(ctx), current }, title, body, opts)
}

// ---- the options and the danger zone ----------------------------------------------------------

const MERGE_FLAGS = [
  ['allow_merge_commits', 'Create a merge commit', 'allowMergeCommits'],
  ['allow_rebase', 'Rebase', 'allowRebase'],
  ['allow_rebase_explicit', 'Rebase, then create a merge commit', 'allowRebaseExplicit'],
  ['allow_squash_merge', 'Squash', 'allowSquashMerge'],
  ['allow_fast_forward_only_merge', 'Fast-forward only', 'allowFastForwardOnlyMerge'],
  ['allow_manual_merge', 'Mark as merged by hand', 'allowManualMerge'],
] as const

const OptionsForm = t.Object({
  _csrf: CsrfText,
  action: FormText(16),
  repo_name: FormText(255),
  description: FormText(2048),
  website: FormText(1024),
  private: FormCheck,
  default_branch: FormText(255),
  has_issues: FormCheck,
  has_pull_requests: FormCheck,
  default_merge_style: FormText(32),
  confirm: FormText(600),
  ...Object.fromEntries(MERGE_FLAGS.map(([name]) => [name, FormCheck])),
})
type OptionsValues = Record<string, string | undefined>

async function optionsPage(deps: AppDeps, ctx: RepoContext, web: WebContext, opts: { values?: OptionsValues; error?: string; status?: number } = {}) {
  const repo: ApiRepo = await repoToApi(deps, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode)
  const branches = await branchNames(deps, ctx, MAX_BRANCH_CHOICES)
  const v = opts.values
  const check = (name: string, current: boolean) => (v ? ticked(v[name]) : current)
  const full = `${ctx.owner.name}/${ctx.repo.name}`
  return settingsPage(
    deps,
    ctx,
    web,
    base(ctx),
    'Repository settings',
    <>
      <form class="stack wide" method="post" action={base(ctx)}>
        <CsrfField ctx={web} />
        <input type="hidden" name="action" value="update" />
        <label>
          Repository name
          <input name="repo_name" required maxlength="100" value={v?.repo_name ?? repo.name} />
        </label>
        <label>
          Description
          <textarea name="description" rows="3" maxlength="2048">
            {v?.description ?? repo.description}
          </textarea>
        </label>
        <label>
          Website
          <input name="website" type="url" maxlength="1024" value={v?.website ?? repo.website} />
        </label>
        <label class="check">
          <input type="checkbox" name="private" checked={check('private', repo.private)} />
          Private: only the owner, its members and collaborators see it
        </label>
        {branches.names.length ? (
          <label>
            Default branch
            <select name="default_branch">
              {branches.names.map((b) => (
                <option value={b} selected={(v?.default_branch ?? repo.default_branch) === b}>
                  {b}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <fieldset>
          <legend>Units</legend>
          <label class="check">
            <input type="checkbox" name="has_issues" checked={check('has_issues', repo.has_issues)} />
            Issues
          </label>
          <label class="check">
            <input type="checkbox" name="has_pull_requests" checked={check('has_pull_requests', repo.has_pull_requests)} />
            Pull requests
          </label>
        </fieldset>
        <fieldset>
          <legend>Merge styles allowed</legend>
          {MERGE_FLAGS.map(([name, label]) => (
            <label class="check">
              <input type="checkbox" name={name} checked={check(name, Boolean((repo as unknown as Record<string, unknown>)[name]))} />
              {label}
            </label>
          ))}
          <label>
            Default merge style
            <select name="default_merge_style">
              {REPO_MERGE_STYLES.map((style) => (
                <option value={style} selected={(v?.default_merge_style ?? repo.default_merge_style) === style}>
                  {style}
                </option>
              ))}
            </select>
          </label>
        </fieldset>
        <SubmitRow label="Update settings" />
      </form>
      <section class="danger-zone" aria-labelledby="danger">
        <h3 id="danger">Danger zone</h3>
        {ctx.mode >= AccessMode.Owner ? (
          <p>
            {repo.archived ? 'Unarchive: pushes, issues and pull requests are open again. ' : 'Archive: the repository becomes read-only. '}
            <ButtonForm ctx={web} action={base(ctx)} label={repo.archived ? 'Unarchive this repository' : 'Archive this repository'} fields={{ action: repo.archived ? 'unarchive' : 'archive' }} danger />
          </p>
        ) : null}
        <form class="stack" method="post" action={base(ctx)}>
          <CsrfField ctx={web} />
          <input type="hidden" name="action" value="delete" />
          <p>Deleting removes the repository, its issues, pull requests and releases for good.</p>
          <label>
            Type <strong>{full}</strong> to confirm
            <input name="confirm" required autocomplete="off" />
          </label>
          <SubmitRow label="Delete this repository" danger />
        </form>
      </section>
    </>,
    opts,
  )
}

/** The options form as the API's EditRepoOption (what `editRepository` takes). */
function editOf(body: OptionsValues, branchesExist: boolean) {
  const flags = Object.fromEntries(MERGE_FLAGS.map(([name, , key]) => [key, ticked(body[name])]))
  return {
    name: (body.repo_name ?? '').trim(),
    description: body.description ?? '',
    website: (body.website ?? '').trim(),
    private: ticked(body.private),
    defaultBranch: branchesExist && body.default_branch ? body.default_branch : undefined,
    hasIssues: ticked(body.has_issues),
    hasPullRequests: ticked(body.has_pull_requests),
    defaultMergeStyle: body.default_merge_style || undefined,
    ...flags,
  }
}

async function optionsAction(deps: AppDeps, ctx: RepoContext, body: OptionsValues): Promise<Response> {
  const actor = ctx.caller.user
  switch (body.action) {
    case 'update': {
      const branches = await branchNames(deps, ctx, 1)
      const repo = await editRepository(deps, ctx.repo, ctx.owner, ctx.mode, editOf(body, branches.total > 0), actor)
      return seeOther(`${repoUrl(ctx.owner.name, repo.name)}/settings`, 'saved')
    }
    case 'archive':
    case 'unarchive':
      await editRepository(deps, ctx.repo, ctx.owner, ctx.mode, { archived: body.action === 'archive' }, actor)
      return seeOther(base(ctx), body.action === 'archive' ? 'archived' : 'unarchived')
    case 'delete': {
      const full = `${ctx.owner.name}/${ctx.repo.name}`
      if ((body.confirm ?? '').trim().toLowerCase() !== full.toLowerCase()) throw new ApiError(422, `Type the repository's full name, ${full}, to delete it.`)
      await deleteRepository(deps, ctx.repo, ctx.mode, actor)
      return seeOther(`/${encodeURIComponent(ctx.owner.name)}`)
    }
    default:
      throw new ApiError(422, 'Unknown action')
  }
}

// ---- collaborators ------------------------------------------------------------------------------

const PERMISSIONS = ['read', 'write', 'admin'] as const
const CollaboratorForm = t.Object({ _csrf: CsrfText, collaborator: FormText(255), permission: FormText(8) })

async function collaborationPage(deps: AppDeps, ctx: RepoContext, web: WebContext, pageAt: number, opts: { error?: string; status?: number } = {}) {
  const viewer = ctx.caller.user
  const found = await listCollaborators(deps, viewer, ctx.repo, { page: pageAt, limit: LISTED, offset: (pageAt - 1) * LISTED })
  const modes = await collaboratorModes(deps, ctx.repo, found.rows.map((u) => u.id))
  const b = `${base(ctx)}/collaboration`
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
    </>,
    opts,
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
export const repoSettingsPages = (deps: AppDeps) => {
  const page = (id: string) => ({ scope: 'repository' as const, detail: pageDetail(id) })
  /** A form of one webhook's page (`.../hooks/{id}/...`): the hook's page again with a refusal, and with what was typed when `keepValues`. */
  const hookForm =
    (act: (ctx: RepoContext, id: number, c: HookFormRequest) => Promise<Response>, keepValues = false) =>
    (c: HookFormRequest) => {
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
  return (
    new Elysia({ name: 'web-settings-repo', detail: { hide: true } })
      .use(pipeline(deps, { session: true }))
      .get('/:owner/:repo/settings', async ({ request, repo: ctx }) => optionsPage(deps, ctx, webContext(deps.config, request, ctx.caller)), {
        ...page('webRepoSettings'),
        repo: admin(false),
        params: RepoParams,
      })
      .post(
        '/:owner/:repo/settings',
        (c) => formRoute(deps.config, c, () => optionsAction(deps, c.repo, c.body as OptionsValues), (web, error, status) => optionsPage(deps, c.repo, web, { values: c.body as OptionsValues, error, status })),
        // Unarchiving and deleting work on an archived repository, as the API's edit and delete.
        { ...page('webRepoSettingsSave'), repo: admin(false), params: RepoParams, body: OptionsForm },
      )
      .get(
        '/:owner/:repo/settings/collaboration',
        async ({ request, repo: ctx, query }) => collaborationPage(deps, ctx, webContext(deps.config, request, ctx.caller), pageNumber(query.page)),
        { ...page('webRepoCollaborators'), repo: admin(), params: RepoParams, query: ListQuery },
      )
      .post(
        '/:owner/:repo/settings/collaboration',
        ({ repo: ctx, ...c }) =>
          formRoute(
            deps.config,
            c,
            async () => {
              await addCollaborator(deps, ctx.repo, await collaboratorUser(deps, (c.body.collaborator ?? '').trim()), c.body.permission)
              return seeOther(`${base(ctx)}/collaboration`, 'collaborator-added')
            },
            (web, error, status) => collaborationPage(deps, ctx, web, 1, { error, status }),
          ),
        { ...page('webRepoCollaboratorAdd'), repo: admin(), params: RepoParams, body: CollaboratorForm },
      )
      .post(
        '/:owner/:repo/settings/collaboration/delete',
        ({ repo: ctx, ...c }) =>
          formRoute(
            deps.config,
            c,
            async () => {
              await removeCollaborator(deps, ctx.repo, await collaboratorUser(deps, c.body.collaborator ?? ''))
              return seeOther(`${base(ctx)}/collaboration`, 'collaborator-removed')
            },
            (web, error, status) => collaborationPage(deps, ctx, web, 1, { error, status }),
          ),
        { ...page('webRepoCollaboratorRemove'), repo: admin(), params: RepoParams, body: t.Object({ _csrf: CsrfText, collaborator: FormText(255) }) },
      )
      .get(
        '/:owner/:repo/settings/hooks',
        async ({ request, repo: ctx, query }) => hooksPage(deps, ctx, webContext(deps.config, request, ctx.caller), pageNumber(query.page)),
        { ...page('webRepoHooks'), repo: admin(), params: RepoParams, query: ListQuery },
      )
      .post(
        '/:owner/:repo/settings/hooks',
        ({ repo: ctx, ...c }) =>
          formRoute(
            deps.config,
            c,
            async () => {
              const hook = await createHook(deps, { repo: ctx.repo }, { type: 'gitea', ...hookInputOf(c.body, false) })
              return seeOther(`${base(ctx)}/hooks/${hook.id}`, 'hook-added')
            },
            (web, error, status) => hooksPage(deps, ctx, web, 1, { values: c.body, error, status }),
          ),
        { ...page('webRepoHookAdd'), repo: admin(false), params: RepoParams, body: HookForm },
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
        (c) => hookForm(deleteAction)({ ...c, params: { id: c.body.id ?? '' } }),
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
      .get(
        '/:owner/:repo/settings/keys',
        async ({ request, repo: ctx, query }) => deployKeysPage(deps, ctx, webContext(deps.config, request, ctx.caller), pageNumber(query.page)),
        { ...page('webRepoDeployKeys'), repo: admin(), params: RepoParams, query: ListQuery },
      )
      .post(
        '/:owner/:repo/settings/keys',
        ({ repo: ctx, ...c }) =>
          formRoute(
            deps.config,
            c,
            async () => {
              await addDeployKey(deps, ctx.repo.id, { title: (c.body.title ?? '').trim(), key: (c.body.content ?? '').trim(), read_only: !ticked(c.body.writable) })
              return seeOther(`${base(ctx)}/keys`, 'key-added')
            },
            (web, error, status) => deployKeysPage(deps, ctx, web, 1, { values: c.body, error, status }),
          ),
        { ...page('webRepoDeployKeyAdd'), repo: admin(false), params: RepoParams, body: DeployKeyForm },
      )
      .post(
        '/:owner/:repo/settings/keys/delete',
        ({ repo: ctx, ...c }) =>
          formRoute(
            deps.config,
            c,
            async () => {
              await deleteDeployKey(deps, ctx.repo.id, numberOr404(c.body.id ?? '', 'deploy key'))
              return seeOther(`${base(ctx)}/keys`, 'key-deleted')
            },
            (web, error, status) => deployKeysPage(deps, ctx, web, 1, { error, status }),
          ),
        { ...page('webRepoDeployKeyDelete'), repo: admin(false), params: RepoParams, body: t.Object({ _csrf: CsrfText, id: FormText(20) }) },
      )
  )
}
