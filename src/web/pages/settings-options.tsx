/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { AccessMode } from '../../auth/access'
import type { RepoContext } from '../../auth/repo-context'
import { repoToApi, type ApiRepo } from '../../convert/repo'
import { pushMirrorToApi } from '../../convert/push-mirror'
import { ApiError } from '../../lib/errors'
import { pathNumber } from '../../lib/path-number'
import { deleteRepository, editRepository } from '../../modules/repos/edit'
import { REPO_MERGE_STYLES } from '../../modules/repos/model'
import { cancelTransfer, startTransfer, transferOffer } from '../../modules/repos/transfer'
import { convertForkToRegular } from '../../modules/forks/service'
import { deleteWiki } from '../../modules/wiki/service'
import { editPullMirror, requestMirrorSync } from '../../modules/migrations/mirrors'
import { createPushMirror, getPushMirrorById, listPushMirrors, removePushMirror, setPushMirrorInterval, syncPushMirror } from '../../modules/migrations/push-mirrors'
import { requireMirrorsEnabled } from '../../modules/migrations/service'
import { changeAvatar } from '../../modules/avatars/service'
import { pageDetail, webContext, type WebContext } from '../context'
import { branchNames } from '../source-data'
import { ButtonForm, CsrfField, CsrfText, FormCheck, FormText, formRoute, ListTable, seeOther, SubmitRow, ticked } from '../forms'
import { repoUrl } from '../links'
import { replaceTopics } from '../../modules/topics/service'
import { admin, base, settingsPage } from './settings-repo'
import { AvatarForm, AvatarForms, avatarBytes } from './settings-user'

/*
 * A repository's options page (Gitea 1.23's `/{owner}/{repo}/settings`, templates/repo/settings/
 * options.tmpl) and the one form address its actions are posted to, `action` saying which
 * (Gitea's SettingsPost): each action calls the service of the API route making the same change,
 * so its rules, events and webhooks hold here too. The route's need is the API's admin one without
 * the archive rule (unarchiving, deleting and transferring work on an archived repository, as by
 * the API); the actions whose API routes refuse an archived repository refuse it here (`writes`).
 * Transfer, fork conversion, the wiki's and the repository's deletion are the owner's, as Gitea's
 * IsOwner checks them.
 */

/** Branches the default-branch choice offers; push mirrors the page lists. */
const MAX_BRANCH_CHOICES = 200
const LISTED_PUSH_MIRRORS = 50

const RepoParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })

const MERGE_FLAGS = [
  ['allow_merge_commits', 'Create a merge commit', 'allowMergeCommits'],
  ['allow_rebase', 'Rebase', 'allowRebase'],
  ['allow_rebase_explicit', 'Rebase, then create a merge commit', 'allowRebaseExplicit'],
  ['allow_squash_merge', 'Squash', 'allowSquashMerge'],
  ['allow_fast_forward_only_merge', 'Fast-forward only', 'allowFastForwardOnlyMerge'],
  ['allow_manual_merge', 'Mark as merged by hand', 'allowManualMerge'],
] as const

/** Gitea's RepoSettingForm, the fields of every action. */
const OptionsForm = t.Object({
  _csrf: CsrfText,
  action: FormText(24),
  repo_name: FormText(255),
  description: FormText(2048),
  website: FormText(1024),
  private: FormCheck,
  default_branch: FormText(255),
  has_issues: FormCheck,
  has_pull_requests: FormCheck,
  default_merge_style: FormText(32),
  confirm: FormText(600),
  new_owner_name: FormText(255),
  interval: FormText(64),
  mirror_address: FormText(2048),
  mirror_username: FormText(255),
  mirror_password: FormText(1024),
  push_mirror_id: FormText(20),
  push_mirror_address: FormText(2048),
  push_mirror_username: FormText(255),
  push_mirror_password: FormText(1024),
  push_mirror_interval: FormText(64),
  push_mirror_sync_on_commit: FormCheck,
  push_mirror_defer_sync: FormCheck,
  ...Object.fromEntries(MERGE_FLAGS.map(([name]) => [name, FormCheck])),
})
type OptionsValues = Record<string, string | undefined>

/** The credentials a refused form is never shown again with. */
const SECRET_FIELDS = ['mirror_username', 'mirror_password', 'push_mirror_username', 'push_mirror_password'] as const
const withoutSecrets = (values: OptionsValues): OptionsValues => Object.fromEntries(Object.entries(values).filter(([k]) => !(SECRET_FIELDS as readonly string[]).includes(k)))

const isOwner = (ctx: RepoContext) => ctx.mode >= AccessMode.Owner

async function optionsPage(deps: AppDeps, ctx: RepoContext, web: WebContext, opts: { values?: OptionsValues; error?: string; status?: number } = {}) {
  const repo: ApiRepo = await repoToApi(deps, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode)
  const branches = await branchNames(deps, ctx, MAX_BRANCH_CHOICES)
  const given = opts.values ? withoutSecrets(opts.values) : undefined
  // What was typed is shown again in the form it came from only.
  const v = given?.action === 'update' ? given : undefined
  const other = given?.action !== 'update' ? given : undefined
  const check = (name: string, current: boolean) => (v ? ticked(v[name]) : current)
  const full = `${ctx.owner.name}/${ctx.repo.name}`
  const b = base(ctx)
  const mirrors = deps.config.mirrorEnabled
  const pushMirrors = mirrors ? await listPushMirrors(deps, ctx.repo, { page: 1, limit: LISTED_PUSH_MIRRORS, offset: 0 }) : null
  const offer = isOwner(ctx) ? await transferOffer(deps, ctx.repo.id, null) : null
  return settingsPage(
    deps,
    ctx,
    web,
    b,
    'Repository settings',
    <>
      <form class="stack wide" method="post" action={b}>
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
              {branches.names.map((name) => (
                <option value={name} selected={(v?.default_branch ?? repo.default_branch) === name}>
                  {name}
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
      <form class="stack wide" method="post" action={`${repoUrl(ctx.owner.name, ctx.repo.name)}/topics`} aria-labelledby="topics-heading">
        <h3 id="topics-heading">Topics</h3>
        <CsrfField ctx={web} />
        <label>
          Topics, separated by commas (at most 25: letters, digits and dashes, each up to 35 characters)
          <input name="topics" maxlength="1024" value={other?.action === 'topics' ? (other.topics ?? '') : (repo.topics ?? []).join(', ')} />
        </label>
        <SubmitRow label="Save topics" />
      </form>
      <AvatarForms ctx={web} src={repo.avatar_url} alt={`${repo.full_name}'s avatar`} uploaded={!!ctx.repo.avatar} action={`${b}/avatar`} />
      {mirrors && repo.mirror ? <PullMirrorSection web={web} repo={repo} action={b} values={other} /> : null}
      {pushMirrors ? <PushMirrorSection web={web} action={b} mirrors={pushMirrors.rows.map((row) => pushMirrorToApi(ctx.repo, row))} ids={pushMirrors.rows.map((row) => row.id)} archived={repo.archived} values={other} /> : null}
      <section class="danger-zone" aria-labelledby="danger">
        <h3 id="danger">Danger zone</h3>
        {isOwner(ctx) ? (
          <p>
            {repo.archived ? 'Unarchive: pushes, issues and pull requests are open again. ' : 'Archive: the repository becomes read-only. '}
            <ButtonForm ctx={web} action={b} label={repo.archived ? 'Unarchive this repository' : 'Archive this repository'} fields={{ action: repo.archived ? 'unarchive' : 'archive' }} danger />
          </p>
        ) : null}
        {isOwner(ctx) && repo.fork ? (
          <ConfirmedForm web={web} action={b} kind="convert_fork" name={repo.name} label="Convert to a regular repository" id="convert">
            <p>This repository is a fork of {repo.parent?.full_name ?? 'another repository'}. Converting it makes it a regular repository; this cannot be undone.</p>
          </ConfirmedForm>
        ) : null}
        {isOwner(ctx) ? (
          offer ? (
            <p>
              This repository is being transferred to <a href={`/${encodeURIComponent(offer.recipient.name)}`}>{offer.recipient.name}</a>, who has not accepted yet.{' '}
              <ButtonForm ctx={web} action={b} label="Cancel the transfer" fields={{ action: 'cancel_transfer' }} danger />
            </p>
          ) : (
            <ConfirmedForm web={web} action={b} kind="transfer" name={repo.name} label="Transfer ownership" id="transfer">
              <p>Transfer this repository to another user or to an organisation. A user other than you must accept it first.</p>
              <label>
                New owner
                <input name="new_owner_name" required maxlength="255" autocomplete="off" value={other?.action === 'transfer' ? (other.new_owner_name ?? '') : ''} />
              </label>
            </ConfirmedForm>
          )
        ) : null}
        {isOwner(ctx) && repo.has_wiki ? (
          <ConfirmedForm web={web} action={b} kind="delete-wiki" name={repo.name} label="Delete the wiki" id="wiki">
            <p>Deleting the wiki removes its pages and their history for good, and turns the wiki off.</p>
          </ConfirmedForm>
        ) : null}
        {isOwner(ctx) ? (
          <form class="stack" method="post" action={b}>
            <CsrfField ctx={web} />
            <input type="hidden" name="action" value="delete" />
            <p>Deleting removes the repository, its issues, pull requests and releases for good.</p>
            <label>
              Type <strong>{full}</strong> to confirm
              <input name="confirm" required autocomplete="off" />
            </label>
            <SubmitRow label="Delete this repository" danger />
          </form>
        ) : (
          <p class="muted">Only the repository's owner may archive, transfer or delete it.</p>
        )}
      </section>
    </>,
    opts,
  )
}

/** A danger-zone form whose action needs the repository's name typed again (Gitea's `repo_name`). */
function ConfirmedForm(props: { web: WebContext; action: string; kind: string; name: string; label: string; id: string; children?: unknown }) {
  return (
    <form class="stack" method="post" action={props.action} aria-labelledby={`${props.id}-title`}>
      <h4 id={`${props.id}-title`}>{props.label}</h4>
      <CsrfField ctx={props.web} />
      <input type="hidden" name="action" value={props.kind} />
      {props.children as never}
      <label>
        Repository name (<strong>{props.name}</strong>), typed again
        <input name="repo_name" required autocomplete="off" />
      </label>
      <SubmitRow label={props.label} danger />
    </form>
  )
}

/** A pull mirror's settings: its interval and address (credentials never shown; left blank, kept), and a sync now. */
function PullMirrorSection(props: { web: WebContext; repo: ApiRepo; action: string; values?: OptionsValues }) {
  const { repo } = props
  const v = props.values?.action === 'mirror' ? props.values : undefined
  return (
    <section aria-labelledby="mirror-settings">
      <h3 id="mirror-settings">Mirror settings</h3>
      <p>
        Pulled from <code>{repo.original_url}</code>; last updated {repo.mirror_updated.startsWith('0001') ? 'never' : repo.mirror_updated}.{' '}
        {repo.archived ? null : <ButtonForm ctx={props.web} action={props.action} label="Synchronize now" fields={{ action: 'mirror-sync' }} />}
      </p>
      <form class="stack" method="post" action={props.action}>
        <CsrfField ctx={props.web} />
        <input type="hidden" name="action" value="mirror" />
        <label>
          Mirror interval (such as 8h0m0s; 0 turns periodic updates off)
          <input name="interval" maxlength="64" value={v?.interval ?? repo.mirror_interval} />
        </label>
        <label>
          Remote address
          <input name="mirror_address" type="url" maxlength="2048" required value={v?.mirror_address ?? repo.original_url} />
        </label>
        <label>
          Username (blank: unchanged)
          <input name="mirror_username" maxlength="255" autocomplete="off" />
        </label>
        <label>
          Password or token (blank: unchanged)
          <input name="mirror_password" type="password" maxlength="1024" autocomplete="new-password" />
        </label>
        <SubmitRow label="Update mirror settings" />
      </form>
    </section>
  )
}

/** The push mirrors: each with its interval, last push and error, its interval form, a sync now and a removal; then the form adding one. */
function PushMirrorSection(props: { web: WebContext; action: string; mirrors: ReturnType<typeof pushMirrorToApi>[]; ids: number[]; archived: boolean; values?: OptionsValues }) {
  const { web, action } = props
  const v = props.values?.action === 'push-mirror-add' ? props.values : undefined
  return (
    <section aria-labelledby="push-mirrors">
      <h3 id="push-mirrors">Push mirrors</h3>
      <div class="box">
        <ListTable label="Push mirrors" columns={['Remote address', 'Interval', 'Last push', 'Last error']} actions empty={props.mirrors.length === 0 && 'No push mirrors yet.'}>
          {props.mirrors.map((m, i) => {
            const id = String(props.ids[i])
            return (
              <tr>
                <td>
                  <code>{m.remote_address}</code>
                </td>
                <td>
                  {props.archived ? (
                    m.interval
                  ) : (
                    <form class="row" method="post" action={action}>
                      <CsrfField ctx={web} />
                      <input type="hidden" name="action" value="push-mirror-update" />
                      <input type="hidden" name="push_mirror_id" value={id} />
                      <label>
                        <span class="sr-only">Interval of the push mirror to {m.remote_address}</span>
                        <input name="push_mirror_interval" maxlength="64" size="8" value={m.interval} />
                      </label>
                      <button class="secondary" type="submit">
                        Change
                      </button>
                    </form>
                  )}
                </td>
                <td>{m.last_update ?? 'never'}</td>
                <td>{m.last_error || '—'}</td>
                <td>
                  {props.archived ? null : (
                    <>
                      <ButtonForm ctx={web} action={action} label={`Synchronize ${m.remote_address} now`} fields={{ action: 'push-mirror-sync', push_mirror_id: id }} />{' '}
                      <ButtonForm ctx={web} action={action} label={`Remove ${m.remote_address}`} fields={{ action: 'push-mirror-remove', push_mirror_id: id }} danger />
                    </>
                  )}
                </td>
              </tr>
            )
          })}
        </ListTable>
      </div>
      {props.archived ? null : (
        <form class="stack" method="post" action={action} aria-labelledby="push-mirror-add">
          <h4 id="push-mirror-add">Add a push mirror</h4>
          <CsrfField ctx={web} />
          <input type="hidden" name="action" value="push-mirror-add" />
          <label>
            Remote address (http, https or git)
            <input name="push_mirror_address" maxlength="2048" required value={v?.push_mirror_address ?? ''} />
          </label>
          <label>
            Username
            <input name="push_mirror_username" maxlength="255" autocomplete="off" />
          </label>
          <label>
            Password or token
            <input name="push_mirror_password" type="password" maxlength="1024" autocomplete="new-password" />
          </label>
          <label>
            Interval (such as 8h0m0s; 0: only when asked or on commit)
            <input name="push_mirror_interval" maxlength="64" value={v?.push_mirror_interval ?? '8h0m0s'} />
          </label>
          <label class="check">
            <input type="checkbox" name="push_mirror_sync_on_commit" checked={ticked(v?.push_mirror_sync_on_commit)} />
            Push after every change of the branches and tags
          </label>
          <SubmitRow label="Add push mirror" />
        </form>
      )}
    </section>
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

/**
 * The repository's name typed again: Gitea's `repo_name` (the name as it is), or Warren's
 * deletion form's `confirm` (the full name, in any case); 422 otherwise, nothing changed.
 */
function requireConfirmation(ctx: RepoContext, body: OptionsValues): void {
  const full = `${ctx.owner.name}/${ctx.repo.name}`
  if (body.repo_name?.trim() === ctx.repo.name || (body.confirm ?? '').trim().toLowerCase() === full.toLowerCase()) return
  throw new ApiError(422, `Type the repository's name to confirm: ${body.action === 'delete' ? full : ctx.repo.name}.`)
}

/** Owner-only actions refused to administrators (Gitea's IsOwner), before anything is read. */
function requireOwner(ctx: RepoContext, what: string): void {
  if (!isOwner(ctx)) throw new ApiError(403, `Only the repository owner may ${what}.`)
}

/** The pipeline's archive rule for the actions whose API routes change an archived repository's content (423). */
function requireUnarchived(ctx: RepoContext): void {
  if (ctx.repo.isArchived) throw new ApiError(423, 'repo is archived')
}

const pushMirrorOf = (deps: AppDeps, ctx: RepoContext, body: OptionsValues) => {
  const id = pathNumber(body.push_mirror_id ?? '')
  if (!Number.isSafeInteger(id) || id <= 0) throw new ApiError(404, 'push mirror does not exist')
  return getPushMirrorById(deps, ctx.repo, id)
}

async function optionsAction(deps: AppDeps, ctx: RepoContext, body: OptionsValues): Promise<Response> {
  const actor = ctx.caller.user!
  const b = base(ctx)
  switch (body.action) {
    case 'update': {
      const branches = await branchNames(deps, ctx, 1)
      const repo = await editRepository(deps, ctx.repo, ctx.owner, ctx.mode, editOf(body, branches.total > 0), actor)
      return seeOther(`${repoUrl(ctx.owner.name, repo.name)}/settings`, 'saved')
    }
    case 'archive':
    case 'unarchive':
      await editRepository(deps, ctx.repo, ctx.owner, ctx.mode, { archived: body.action === 'archive' }, actor)
      return seeOther(b, body.action === 'archive' ? 'archived' : 'unarchived')
    case 'delete':
      requireOwner(ctx, 'delete it')
      requireConfirmation(ctx, body)
      await deleteRepository(deps, ctx.repo, ctx.mode, actor)
      return seeOther(`/${encodeURIComponent(ctx.owner.name)}`)
    case 'transfer': {
      requireOwner(ctx, 'transfer it')
      requireConfirmation(ctx, body)
      const done = await startTransfer(deps, ctx.repo, ctx.owner, actor, ctx.mode, (body.new_owner_name ?? '').trim(), undefined)
      // Moved: on to its settings at the new owner while the doer still administers it there, else to its new home.
      if (done.pending) return seeOther(b, 'transfer-started')
      return seeOther(repoUrl(done.owner.name, done.repo.name), 'transferred')
    }
    case 'cancel_transfer':
      await cancelTransfer(deps, ctx.repo, ctx.mode)
      return seeOther(b, 'transfer-cancelled')
    case 'convert_fork':
      requireOwner(ctx, 'convert it')
      requireConfirmation(ctx, body)
      await convertForkToRegular(deps, ctx.repo, ctx.mode)
      return seeOther(b, 'fork-converted')
    case 'delete-wiki':
      requireOwner(ctx, 'delete its wiki')
      requireConfirmation(ctx, body)
      requireUnarchived(ctx)
      await deleteWiki(deps, ctx)
      return seeOther(b, 'wiki-deleted')
    case 'mirror':
      requireUnarchived(ctx)
      requireMirrorsEnabled(deps)
      await editPullMirror(deps, ctx.repo, actor, {
        interval: body.interval ?? '',
        address: body.mirror_address ?? '',
        username: body.mirror_username?.trim(),
        password: body.mirror_password,
      })
      return seeOther(b, 'saved')
    case 'mirror-sync':
      requireUnarchived(ctx)
      requireMirrorsEnabled(deps)
      await requestMirrorSync(deps, ctx.repo.id)
      return seeOther(b, 'mirror-sync-queued')
    case 'push-mirror-add':
      requireUnarchived(ctx)
      requireMirrorsEnabled(deps)
      await createPushMirror(deps, ctx.repo, {
        remoteAddress: body.push_mirror_address ?? '',
        remoteUsername: body.push_mirror_username?.trim(),
        remotePassword: body.push_mirror_password,
        interval: body.push_mirror_interval,
        syncOnCommit: ticked(body.push_mirror_sync_on_commit),
      })
      return seeOther(b, 'push-mirror-added')
    case 'push-mirror-remove':
      requireUnarchived(ctx)
      requireMirrorsEnabled(deps)
      await removePushMirror(deps, await pushMirrorOf(deps, ctx, body))
      return seeOther(b, 'push-mirror-removed')
    case 'push-mirror-sync':
      requireUnarchived(ctx)
      requireMirrorsEnabled(deps)
      syncPushMirror(deps, await pushMirrorOf(deps, ctx, body))
      return seeOther(b, 'push-mirror-sync-queued')
    case 'push-mirror-update': {
      requireUnarchived(ctx)
      requireMirrorsEnabled(deps)
      const row = await pushMirrorOf(deps, ctx, body)
      await setPushMirrorInterval(deps, row, body.push_mirror_interval ?? '', !ticked(body.push_mirror_defer_sync))
      return seeOther(b, 'saved')
    }
    default:
      throw new ApiError(422, 'Unknown action')
  }
}

/**
 * `/{owner}/{repo}/settings` (the options page and its actions) and `/settings/avatar`,
 * `/settings/avatar/delete` (the repository's avatar through modules/avatars, as the API's
 * `/repos/{o}/{r}/avatar`: administrators, archived repositories too).
 */
export const repoOptionsPages = (deps: AppDeps, webApp: AreaApp) => {
  const page = (id: string) => ({ scope: 'repository' as const, detail: pageDetail(id) })
  return pageGroup(webApp)
    .get('/:owner/:repo/settings', async ({ request, repo: ctx }) => optionsPage(deps, ctx, webContext(deps.config, request, ctx.caller)), {
      ...page('webRepoSettings'),
      repo: admin(false),
      params: RepoParams,
    })
    .post(
      '/:owner/:repo/settings',
      ({ request, caller, body, repo }) => formRoute(deps.config, { request, caller, body }, () => optionsAction(deps, repo, body as OptionsValues), (web, error, status) => optionsPage(deps, repo, web, { values: body as OptionsValues, error, status })),
      { ...page('webRepoSettingsSave'), repo: admin(false), params: RepoParams, body: OptionsForm },
    )
    // Gitea's topics form (`/{o}/{r}/topics`, its administrators): the whole list at once, as the API's PUT.
    .post(
      '/:owner/:repo/topics',
      ({ request, caller, body, repo }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            const names = (body.topics ?? '').split(/[,\s]+/).filter((name) => name !== '')
            await replaceTopics(deps, repo.repo, names)
            return seeOther(base(repo), 'topics-saved')
          },
          (web, error, status) => optionsPage(deps, repo, web, { values: { action: 'topics', topics: body.topics }, error, status }),
        ),
      // Refused on an archived repository (423), as the API's PUT.
      { ...page('webRepoTopics'), repo: admin(), params: RepoParams, body: t.Object({ _csrf: CsrfText, topics: FormText(1024) }) },
    )
    .post(
      '/:owner/:repo/settings/avatar',
      ({ request, caller, body, repo }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await changeAvatar(deps, 'repo', repo.repo.id, await avatarBytes(body.avatar))
            return seeOther(base(repo), 'repo-avatar-saved')
          },
          (web, error, status) => optionsPage(deps, repo, web, { error, status }),
        ),
      { ...page('webRepoAvatarSave'), repo: admin(false), params: RepoParams, body: AvatarForm },
    )
    .post(
      '/:owner/:repo/settings/avatar/delete',
      ({ request, caller, body, repo }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await changeAvatar(deps, 'repo', repo.repo.id, null)
            return seeOther(base(repo), 'repo-avatar-deleted')
          },
          (web, error, status) => optionsPage(deps, repo, web, { error, status }),
        ),
      { ...page('webRepoAvatarDelete'), repo: admin(false), params: RepoParams, body: t.Object({ _csrf: CsrfText }) },
    )
}
