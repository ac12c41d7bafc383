/** @jsxImportSource warren-jsx */
import { Elysia, t } from 'elysia'
import type { Child, Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import { toApiUser } from '../../convert/user'
import { searchUsers } from '../../modules/users/service'
import type { Page, Paged } from '../../lib/pagination'
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
function listAsked(query: { q?: string; page?: string }): { q: string; page: Page } {
  const page = pageNumber(query.page)
  return { q: (query.q ?? '').trim(), page: { page, limit: PER_PAGE, offset: (page - 1) * PER_PAGE } }
}

/** A list of the site administration: what it is, how it is searched, and how a row of it reads. */
export interface AdminListSpec<R> {
  path: string
  /** The page's title, also the table's label. */
  title: string
  searchLabel: string
  /** What the count counts ("12 accounts"). */
  noun: string
  intro?: string
  /** A page of the records matching the search, through the API's service. */
  search: (q: string, page: Page) => Promise<Paged<R>>
  columns: string[]
  /** Whether a last column holds each row's actions. */
  actions?: boolean
  /** The row shown when nothing matches. */
  empty: string
  /** A record's row (`q`: the search, for forms that come back to it). */
  row: (record: R, q: string) => Html
}

/** A list's body: its search box, how many it found, the table, the paging links. */
export function AdminList<R>(props: { spec: AdminListSpec<R>; q: string; page: Page; found: Paged<R> }): Html {
  const { spec, q, found } = props
  return (
    <>
      {spec.intro ? <p class="muted">{spec.intro}</p> : null}
      <SearchBox action={spec.path} label={spec.searchLabel} q={q} />
      <p class="muted">
        {found.total} {spec.noun}
      </p>
      <div class="box">
        <ListTable label={spec.title} columns={spec.columns} actions={spec.actions} empty={found.rows.length ? false : spec.empty}>
          {found.rows.map((record) => spec.row(record, q))}
        </ListTable>
      </div>
      <Pager path={spec.path} query={{ q }} page={props.page.page} pages={pagesOf(found.total, PER_PAGE)} />
    </>
  )
}

/** A list page of the site administration: the page asked (`query`) of the list, searched, in the admin frame. */
export async function adminListPage<R>(web: WebContext, query: { q?: string; page?: string }, spec: AdminListSpec<R>, opts: { error?: string; status?: number } = {}): Promise<Response> {
  const { q, page } = listAsked(query)
  const found = await spec.search(q, page)
  return adminPage(web, spec.path, spec.title, <AdminList spec={spec} q={q} page={page} found={found} />, opts)
}

/** The user accounts: a site administrator sees every account through the one visibility rule. */
const usersList = (deps: AppDeps, admin: UserRow): AdminListSpec<UserRow> => ({
  path: '/-/admin/users',
  title: 'User accounts',
  searchLabel: 'Search users',
  noun: 'accounts',
  search: (q, page) => searchUsers(deps, admin, q, undefined, page),
  columns: ['ID', 'Username', 'E-mail', 'Admin', 'Active', 'Visibility', 'Created'],
  empty: 'No accounts match.',
  row: (row) => {
    const u = toApiUser(deps.config, row, admin)
    return (
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
    )
  },
})

/** A list page's query: a search and a page number. */
export const AdminQuery = t.Object({ q: FormText(255), page: FormText(10), done: FormText(40) })

/** The site administrator's user list: `/-/admin/users` (Gitea 1.23's URL) and `/admin/users`; the pipeline's siteAdmin need refuses everyone else. */
export const adminPages = (deps: AppDeps) => {
  const app = new Elysia({ name: 'web-admin', detail: { hide: true } }).use(pipeline(deps, { session: true }))
  for (const path of ['/-/admin/users', '/admin/users'])
    app.get(path, async ({ request, caller, user, query }) => adminListPage(webContext(deps.config, request, caller), query, usersList(deps, user)), {
      scope: 'admin', siteAdmin: true,
      query: AdminQuery,
      detail: pageDetail(path === '/admin/users' ? 'webAdminUsersOld' : 'webAdminUsers'),
    })
  return app
}
