/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Child, Html } from 'warren-jsx/jsx-runtime'
import type { Caller } from '../auth/caller'
import type { Config } from '../config'
import { ApiError } from '../lib/errors'
import { csrfMatches, htmlResponse, webContext, type WebContext } from './context'
import { Layout } from './layout'
import { errorPage } from './errors'

/*
 * What every settings and account form shares: bounded form fields, the CSRF field, the notice a
 * 303 comes back with, the error shown on the form's page again, paging links and the side menu.
 */

/** A text field of a form (absent when the browser sends none). */
export const FormText = (max: number) => t.Optional(t.String({ maxLength: max }))
/** A checkbox: present ("on") when ticked. */
export const FormCheck = t.Optional(t.String({ maxLength: 8 }))
/** Several values of one name (checkboxes): one string or a bounded list of them. */
export const FormList = (maxItems: number, maxLength: number) =>
  t.Optional(t.Union([t.String({ maxLength }), t.Array(t.String({ maxLength }), { maxItems })]))
/** The CSRF token every form carries. */
export const CsrfText = FormText(128)

export const ticked = (value: string | undefined): boolean => value === 'on' || value === 'true' || value === '1'
export const listOf = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value])

export const FORM_EXPIRED = 'The form has expired or did not come from this site. Reload the page and try again.'

/**
 * The notices a form's 303 comes back with, named by a key in the query (`?done=`): fixed texts,
 * so a link can never make a page say something of its own.
 */
const NOTICES: Record<string, string> = {
  saved: 'Your changes were saved.',
  'avatar-saved': 'Your avatar was changed.',
  'avatar-deleted': 'Your avatar was deleted: the default one is shown.',
  password: 'Your password was changed.',
  'key-added': 'The key was added.',
  'key-deleted': 'The key was deleted.',
  'key-verified': 'The key was verified.',
  'state-unchanged': 'Your comment was posted, but the state was not changed: an issue with open dependencies cannot be closed, a merged pull request keeps its state, and a pull request cannot be reopened while another open one joins the same branches.',
  'token-deleted': 'The token was deleted.',
  'collaborator-added': 'The collaborator was added.',
  'collaborator-removed': 'The collaborator was removed.',
  'hook-added': 'The webhook was added.',
  'topics-saved': 'The topics were saved.',
  'version-deleted': "The version's text was deleted from the history.",
  'lfs-object-deleted': 'The LFS object was deleted from this repository.',
  'lfs-unlocked': 'The lock was released.',
  'hook-deleted': 'The webhook was deleted.',
  redelivered: 'The delivery was sent again.',
  tested: 'A test delivery was queued.',
  archived: 'The repository is archived: it is read-only now.',
  unarchived: 'The repository is no longer archived.',
  'repo-deleted': 'The repository was deleted.',
  'transfer-started': 'The transfer was started: the new owner must accept it.',
  transferred: 'The repository was transferred.',
  'transfer-cancelled': 'The transfer was cancelled.',
  'transfer-accepted': 'The transfer was accepted: the repository is yours now.',
  'transfer-rejected': 'The transfer was rejected.',
  'fork-converted': 'The fork is a regular repository now.',
  'wiki-deleted': "The wiki was deleted.",
  'mirror-sync-queued': 'The mirror is being synchronized; its new state shows once it is done.',
  'push-mirror-added': 'The push mirror was added.',
  'push-mirror-removed': 'The push mirror was removed.',
  'push-mirror-sync-queued': 'The push mirror is being pushed to; its last push shows once it is done.',
  'repo-avatar-saved': "The repository's avatar was changed.",
  'repo-avatar-deleted': "The repository's avatar was deleted.",
  'team-added': 'The team was given access to the repository.',
  'team-removed': "The team's access to the repository was taken away.",
  'job-started': 'The job was started; its run shows in the list once it has begun.',
  'repo-adopted': 'The files were adopted as a repository.',
  'unadopted-deleted': 'The unadopted files were deleted.',
  'email-activated': 'The address was activated.',
  'email-deactivated': 'The address was deactivated.',
  'member-added': 'The member was added.',
  'member-removed': 'The member was removed.',
  'team-created': 'The team was created.',
  'team-saved': 'The team was updated.',
  'team-deleted': 'The team was deleted.',
  'team-repo-added': 'The repository was added to the team.',
  'team-repo-removed': 'The repository was removed from the team.',
  'team-repos-added': "Every repository of the organisation was added to the team.",
  'team-repos-removed': "The team's repositories were all removed.",
  'label-added': 'The label was created.',
  'label-deleted': 'The label was deleted.',
  'labels-initialized': 'The labels of the label set were added.',
  'milestone-added': 'The milestone was created.',
  'milestone-closed': 'The milestone was closed.',
  'milestone-opened': 'The milestone was reopened.',
  'milestone-deleted': 'The milestone was deleted.',
  'project-deleted': 'The project was deleted.',
  blocked: 'The user was blocked.',
  unblocked: 'The user was unblocked.',
  'note-saved': 'The note was saved.',
  'org-created': 'The organisation was created.',
  'org-deleted': 'The organisation was deleted.',
  'org-avatar-saved': "The organisation's avatar was changed.",
  'org-avatar-deleted': "The organisation's avatar was deleted: the default one is shown.",
  migrated: 'The repository was migrated.',
  committed: 'Your changes were committed.',
  'file-deleted': 'The file was deleted.',
  'branch-rule-saved': 'The branch protection rule was saved.',
  'branch-rule-deleted': 'The branch protection rule was deleted.',
  'branch-rules-ordered': 'The branch protection rules were reordered.',
  'tag-rule-added': 'The tag protection rule was added.',
  'tag-rule-saved': 'The tag protection rule was saved.',
  'tag-rule-deleted': 'The tag protection rule was deleted.',
  'release-published': 'The release was published.',
  'release-draft-saved': 'The release was saved as a draft.',
  'release-saved': 'The release was updated.',
  'release-deleted': 'The release was deleted; its tag stays.',
  'branch-created': 'The branch was created.',
  'tag-created': 'The tag was created.',
  'branch-deleted': 'The branch was deleted.',
  'branch-renamed': 'The branch was renamed.',
  'branch-restored': 'The branch was restored.',
  'branch-updated': 'The branch was updated: the base branch is in it now.',
  'merge-scheduled': 'The merge is scheduled: the pull request is merged when all checks succeed.',
  'merge-unscheduled': 'The scheduled merge was cancelled.',
  'tag-deleted': 'The tag was deleted.',
  'email-added': 'The address was added. A site administrator activates it.',
  'email-added-mailed': 'The address was added: follow the link mailed to it to verify it.',
  'password-reset': 'Your password was changed: sign in with it.',
  'account-activated': 'Your account is activated: sign in.',
  'test-mail-queued': 'The test mail was queued: it is sent in the background; the log says when it cannot be.',
  'email-deleted': 'The address was deleted.',
  'email-primary': 'Your primary address was changed.',
  'org-left': 'You left the organisation.',
  'user-created': 'The account was created.',
  'user-saved': 'The account was updated.',
  'user-deleted': 'The account was deleted.',
  'user-avatar-saved': "The user's avatar was changed.",
  'user-avatar-deleted': "The user's avatar was deleted: the default one is shown.",
  'package-linked': 'The package was linked to the repository.',
  'package-unlinked': 'The package was unlinked from its repository.',
  'package-version-deleted': 'The version was deleted.',
  'twofa-disabled': 'Two-factor authentication was disabled.',
  'twofa-scratch-used':
    'You have used your scratch token, and a new one was made that nobody has seen. Regenerate it here to have one again, or disable two-factor authentication and enroll your device again.',
}

/** The name of a notice a form's 303 may come back with. */
export type Notice = keyof typeof NOTICES

/** A form's answer after it changed something: back to a page, with a notice. */
export function seeOther(path: string, done?: Notice): Response {
  const location = done ? `${path}${path.includes('?') ? '&' : '?'}done=${done}` : path
  return new Response(null, { status: 303, headers: { location } })
}

/** A service's refusal as a form says it: without the API's `[Field]: ` prefix. */
export const withoutFieldPrefix = (message: string): string => message.replace(/^\[[^\]]*\]: /, '')

/** The notice of `?done=` on the page's own URL, and the error of a refused form, if any. */
export function Notices(props: { ctx: WebContext; error?: string }): Html {
  const done = new URL(props.ctx.path, 'http://x').searchParams.get('done')
  const notice = done ? NOTICES[done] : undefined
  return (
    <>
      {notice ? (
        <p class="notice-ok" role="status">
          {notice}
        </p>
      ) : null}
      {props.error ? (
        <p class="error" role="alert">
          {props.error}
        </p>
      ) : null}
    </>
  )
}

/** A page of one form or message under its title (signing in, its second step, the mailed codes' pages), with the page's notices and `error`; `headers` set a pre-session cookie when new. */
export function titledPage(ctx: WebContext, title: string, body: Child, opts: { error?: string; status?: number; headers?: Record<string, string> } = {}): Response {
  return htmlResponse(
    <Layout ctx={ctx} title={title}>
      <h1>{title}</h1>
      <Notices ctx={ctx} error={opts.error} />
      {body}
    </Layout>,
    opts.status ?? 200,
    opts.headers,
  )
}

export function CsrfField(props: { ctx: WebContext }): Html {
  return <input type="hidden" name="_csrf" value={props.ctx.csrf ?? ''} />
}

/** A settings form's submit button on its own row (`danger` for a destructive one). */
export function SubmitRow(props: { label: string; danger?: boolean }): Html {
  return (
    <div>
      <button class={props.danger ? 'danger' : 'primary'} type="submit">
        {props.label}
      </button>
    </div>
  )
}

/** A one-button form (delete, star, redeliver): POST with the CSRF token and hidden fields. */
export function ButtonForm(props: { ctx: WebContext; action: string; label: string; fields?: Record<string, string>; danger?: boolean; labelledBy?: string }): Html {
  return (
    <form class="inline" method="post" action={props.action}>
      <CsrfField ctx={props.ctx} />
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" class={props.danger ? 'danger' : 'secondary'}>
        {props.label}
      </button>
    </form>
  )
}

/**
 * Runs a form's action. Without the session's CSRF token it is refused with a 403 page and
 * nothing changes; a refusal of the service it calls (a 4xx ApiError) shows the form's page
 * again with the service's message (`again`), or else an error page saying why.
 */
export async function formAction(
  request: Request,
  caller: Caller,
  ctx: WebContext,
  given: unknown,
  act: () => Promise<Response>,
  again?: (error: string, status: number) => Response | Promise<Response>,
): Promise<Response> {
  if (!csrfMatches(request, caller, given)) return errorPage(403, FORM_EXPIRED, ctx)
  try {
    return await act()
  } catch (e) {
    if (!(e instanceof ApiError) || e.status < 400 || e.status >= 500) throw e
    return again ? await again(e.message, e.status) : errorPage(e.status, e.message, ctx, e.headers)
  }
}

/** What a form's POST handler is given: its request, the caller its needs resolved, its body with the CSRF field. */
export interface FormRequest {
  request: Request
  caller: Caller
  body: { _csrf?: string }
}

/**
 * A form's POST, the one way every form is handled: the page's context, then `formAction` (the
 * CSRF check: without the token, a 403 page and nothing changes), then `act`, the service call,
 * answering where the browser goes next (a path: 303 See Other there; a `seeOther` with its
 * notice; or a page of its own). A refusal of the service (its 4xx) shows the form's page again
 * with the message and that status (`again`), or an error page saying why.
 */
export function formRoute(
  config: Config,
  form: FormRequest,
  act: (web: WebContext) => Promise<Response | string>,
  again?: (web: WebContext, error: string, status: number) => Response | Promise<Response>,
): Promise<Response> {
  const web = webContext(config, form.request, form.caller)
  return formAction(
    form.request,
    form.caller,
    web,
    form.body._csrf,
    async () => {
      const next = await act(web)
      return typeof next === 'string' ? seeOther(next) : next
    },
    again && ((error, status) => again(web, error, status)),
  )
}

/** The page a list shows (1-based) from `?page=`; anything else is the first. */
export function pageNumber(value: string | undefined): number {
  const n = Number(value)
  return Number.isSafeInteger(n) && n >= 1 && n <= 100_000 ? n : 1
}

/**
 * The links of a paged list: previous, the pages around the current one, the first and last,
 * next; and where the reader is ("Page 2 of 9"). The list's other query values are kept (those in
 * `path`'s own query and those in `query`).
 */
export function Pager(props: { path: string; query?: Record<string, string | undefined>; page: number; pages: number; label?: string; labels?: [string, string] }): Html {
  const { page } = props
  const pages = Math.max(1, props.pages)
  if (pages <= 1) return <></>
  const [before, after] = props.labels ?? ['Previous', 'Next']
  const url = new URL(props.path, 'http://pager.invalid')
  for (const [k, v] of Object.entries(props.query ?? {})) if (v) url.searchParams.set(k, v)
  const href = (n: number) => {
    url.searchParams.set('page', String(n))
    return url.pathname + url.search
  }
  const shown: number[] = []
  for (let p = Math.max(1, page - 2); p <= Math.min(pages, page + 2); p++) shown.push(p)
  return (
    <nav class="pager" aria-label={props.label ?? 'Pages'}>
      {page > 1 ? (
        <a href={href(page - 1)} rel="prev">
          {before}
        </a>
      ) : null}
      {shown.length && shown[0]! > 1 ? <a href={href(1)}>1</a> : null}
      {shown.length && shown[0]! > 2 ? <span aria-hidden="true">…</span> : null}
      {shown.map((p) => (p === page ? <span aria-current="page">{p}</span> : <a href={href(p)}>{p}</a>))}
      {shown.length && shown[shown.length - 1]! < pages - 1 ? <span aria-hidden="true">…</span> : null}
      {shown.length && shown[shown.length - 1]! < pages ? <a href={href(pages)}>{pages}</a> : null}
      {page < pages ? (
        <a href={href(page + 1)} rel="next">
          {after}
        </a>
      ) : null}
      <span class="muted">
        Page {page} of {pages}
      </span>
    </nav>
  )
}

/** How many pages `total` items make at `limit` a page (at least one). */
export const pagesOf = (total: number, limit: number): number => Math.max(1, Math.ceil(total / Math.max(1, limit)))

/** The files a multipart form's field brought: those with a name (a file input left empty sends a nameless part). */
export function formFiles(value: unknown): File[] {
  const all = Array.isArray(value) ? value : value === undefined ? [] : [value]
  return all.filter((f): f is File => f instanceof Blob && typeof (f as File).name === 'string' && (f as File).name !== '')
}

/** A list of records as a table: its accessible name, its column headers, an unnamed last column of actions when asked, and the row saying the list is `empty` when it is. */
export function ListTable(props: { label: string; columns: string[]; actions?: boolean; empty?: string | false; children?: Child }): Html {
  return (
    <table class="list" aria-label={props.label}>
      <thead>
        <tr>
          {props.columns.map((column) => (
            <th scope="col">{column}</th>
          ))}
          {props.actions ? (
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          ) : null}
        </tr>
      </thead>
      <tbody>
        {props.children}
        {props.empty ? (
          <tr>
            <td colspan={String(props.columns.length + (props.actions ? 1 : 0))} class="muted">
              {props.empty}
            </td>
          </tr>
        ) : null}
      </tbody>
    </table>
  )
}

/**
 * A page of a settings area: the page's title, its heading (`header`), the area's menu beside the
 * body, the body's title, the notices and the error of a refused form.
 */
export function settingsResponse(
  web: WebContext,
  area: { title: string; header: Child; menu: string; items: [string, string][]; current: string },
  title: string,
  body: Child,
  opts: { error?: string; status?: number } = {},
): Response {
  return htmlResponse(
    <Layout ctx={web} title={area.title}>
      {area.header}
      <SettingsFrame title={area.menu} items={area.items} current={area.current}>
        <h2>{title}</h2>
        <Notices ctx={web} error={opts.error} />
        {body}
      </SettingsFrame>
    </Layout>,
    opts.status ?? 200,
  )
}

/** A settings area: its menu beside the page. */
export function SettingsFrame(props: { title: string; items: [string, string][]; current: string; children?: Child }): Html {
  return (
    <div class="settings">
      <nav class="settings-menu" aria-label={props.title}>
        <ul>
          {props.items.map(([href, label]) => (
            <li>
              <a href={href} aria-current={href === props.current ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div class="settings-body">{props.children}</div>
    </div>
  )
}
