/** @jsxImportSource warren-jsx */
import { Elysia, t } from 'elysia'
import type { Child } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import type { Caller, UserRow } from '../../auth/caller'
import { toApiUser } from '../../convert/user'
import { searchUsers } from '../../modules/users/service'
import type { Page } from '../../lib/pagination'
import { pageDetail, webContext, type WebContext } from '../context'
import { FormText, Pager, pageNumber, pagesOf, ListTable, settingsResponse } from '../forms'
import { ownerUrl } from '../links'

const PER_PAGE = 50

/** The site administration's menu: one entry a page, at Gitea 1.23's addresses. */
export const ADMIN_MENU: [string, string][] = [
  ['/-/admin', 'Dashboard'],
  ['/-/admin/users', 'User accounts'],
  ['/-/admin/orgs', 'Organisations'],
  ['/-/admin/repos', 'Repositories'],
  ['/-/admin/repos/unadopted', 'Unadopted repositories'],
  ['/-/admin/emails', 'E-mail addresses'],
  ['/-/admin/hooks', 'Webhooks'],
  ['/-/admin/config', 'Configuration'],
]

/** A page of the site administration: the menu beside the body, the notices and a refused form's error above it. */
export function adminPage(web: WebContext, current: string, title: string, body: Child, opts: { error?: string; status?: number } = {}): Response {
  return settingsResponse(web, { title: `${title} · Site administration`, header: <h1>Site administration</h1>, menu: 'Site administration', items: ADMIN_MENU, current }, title, body, opts)
}

/** A list's search box (GET), its value kept. */
function SearchBox(props: { action: string; label: string; q: string }) {
  return (
    <form class="row" method="get" action={props.action} role="search">
      <label>
        {props.label}
        <input type="search" name="q" value={props.q} maxlength="255" />
      </label>
      <button class="secondary" type="submit">
        Search
      </button>
    </form>
  )
}

/** What a list page was asked: its search (trimmed) and its page. */
export function listAsked(query: { q?: string; page?: string }): { q: string; page: Page } {
  const page = pageNumber(query.page)
  return { q: (query.q ?? '').trim(), page: { page, limit: PER_PAGE, offset: (page - 1) * PER_PAGE } }
}

/** A list page of the site administration: its search box, how many it found, the table, the paging links. */
export function adminListPage(
  web: WebContext,
  list: { path: string; title: string; searchLabel: string; q: string; page: Page; total: number; noun: string; intro?: string },
  table: Child,
  opts: { error?: string; status?: number } = {},
): Response {
  return adminPage(
    web,
    list.path,
    list.title,
    <>
      {list.intro ? <p class="muted">{list.intro}</p> : null}
      <SearchBox action={list.path} label={list.searchLabel} q={list.q} />
      <p class="muted">
        {list.total} {list.noun}
      </p>
      <div class="box">{table}</div>
      <Pager path={list.path} query={{ q: list.q }} page={list.page.page} pages={pagesOf(list.total, PER_PAGE)} />
    </>,
    opts,
  )
}

async function usersPage(deps: AppDeps, request: Request, caller: Caller, admin: UserRow, query: { q?: string; page?: string }) {
  const { q, page } = listAsked(query)
  // A site administrator sees every account through the one visibility rule.
  const found = await searchUsers(deps, admin, q, undefined, page)
  const rows = found.rows.map((u) => toApiUser(deps.config, u, admin))
  return adminListPage(
    webContext(deps.config, request, caller),
    { path: '/-/admin/users', title: 'User accounts', searchLabel: 'Search users', q, page, total: found.total, noun: 'accounts' },
    <ListTable label="User accounts" columns={['ID', 'Username', 'E-mail', 'Admin', 'Active', 'Visibility', 'Created']} empty={rows.length ? false : 'No accounts match.'}>
      {rows.map((u) => (
        <tr>
          <td>{u.id}</td>
          <td>
            <a href={ownerUrl(u.login)}>{u.login}</a>
            {u.full_name ? <span class="muted"> · {u.full_name}</span> : null}
          </td>
          <td>{u.email}</td>
          <td>{u.is_admin ? 'yes' : 'no'}</td>
          <td>{u.active ? 'yes' : 'no'}</td>
          <td>{u.visibility}</td>
          <td>{u.created.slice(0, 10)}</td>
        </tr>
      ))}
    </ListTable>,
  )
}

/** A list page's query: a search and a page number. */
export const AdminQuery = t.Object({ q: FormText(255), page: FormText(10), done: FormText(40) })

/** The site administrator's user list: `/-/admin/users` (Gitea 1.23's URL) and `/admin/users`; the pipeline's siteAdmin need refuses everyone else. */
export const adminPages = (deps: AppDeps) => {
  const app = new Elysia({ name: 'web-admin', detail: { hide: true } }).use(pipeline(deps, { session: true }))
  for (const path of ['/-/admin/users', '/admin/users'])
    app.get(path, async ({ request, caller, user, query }) => usersPage(deps, request, caller, user, query), {
      siteAdmin: true,
      query: AdminQuery,
      detail: pageDetail(path === '/admin/users' ? 'webAdminUsersOld' : 'webAdminUsers'),
    })
  return app
}
