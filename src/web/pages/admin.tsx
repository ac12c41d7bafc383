/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Child, Html } from 'warren-jsx/jsx-runtime'
import type { Page, Paged } from '../../lib/pagination'
import type { WebContext } from '../context'
import { FormText, Pager, pageNumber, pagesOf, ListTable, settingsResponse } from '../forms'

const PER_PAGE = 50

/** The site administration's menu: one entry a page, at Gitea 1.23's addresses. */
export const ADMIN_MENU: [string, string][] = [
  ['/-/admin', 'Dashboard'],
  ['/-/admin/users', 'User accounts'],
  ['/-/admin/orgs', 'Organisations'],
  ['/-/admin/repos', 'Repositories'],
  ['/-/admin/repos/unadopted', 'Unadopted repositories'],
  ['/-/admin/emails', 'E-mail addresses'],
  ['/-/admin/packages', 'Packages'],
  ['/-/admin/hooks', 'Webhooks'],
  ['/-/admin/monitor/cron', 'Cron tasks'],
  ['/-/admin/config', 'Configuration'],
]

/** A page of the site administration: the menu beside the body, the notices and a refused form's error above it. */
export function adminPage(web: WebContext, current: string, title: string, body: Child, opts: { error?: string; status?: number } = {}): Response {
  return settingsResponse(web, { title: `${title} · Site administration`, header: <h1>Site administration</h1>, menu: 'Site administration', items: ADMIN_MENU, current }, title, body, opts)
}

/** A list's search box (GET), its value kept, with the list's own filters (`children`) beside it. */
function SearchBox(props: { action: string; label: string; q: string; children?: Child }) {
  return (
    <form class="row" method="get" action={props.action} role="search">
      <label>
        {props.label}
        <input type="search" name="q" value={props.q} maxlength="255" />
      </label>
      {props.children}
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
  /** The list's filters in its search form, and their values the paging links keep. */
  filters?: Html
  keep?: Record<string, string | undefined>
  /** Links above the list (Gitea's "Create user account"). */
  actionsAbove?: Html
  /** A record's row (`q`: the search, for forms that come back to it). */
  row: (record: R, q: string) => Html
}

/** A list's body: its search box, how many it found, the table, the paging links. */
export function AdminList<R>(props: { spec: AdminListSpec<R>; q: string; page: Page; found: Paged<R> }): Html {
  const { spec, q, found } = props
  return (
    <>
      {spec.intro ? <p class="muted">{spec.intro}</p> : null}
      {spec.actionsAbove ?? null}
      <SearchBox action={spec.path} label={spec.searchLabel} q={q}>
        {spec.filters ?? null}
      </SearchBox>
      <p class="muted">
        {found.total} {spec.noun}
      </p>
      <div class="box">
        <ListTable label={spec.title} columns={spec.columns} actions={spec.actions} empty={found.rows.length ? false : spec.empty}>
          {found.rows.map((record) => spec.row(record, q))}
        </ListTable>
      </div>
      <Pager path={spec.path} query={{ ...spec.keep, q }} page={props.page.page} pages={pagesOf(found.total, PER_PAGE)} />
    </>
  )
}

/** A list page of the site administration: the page asked (`query`) of the list, searched, in the admin frame. */
export async function adminListPage<R>(web: WebContext, query: { q?: string; page?: string }, spec: AdminListSpec<R>, opts: { error?: string; status?: number } = {}): Promise<Response> {
  const { q, page } = listAsked(query)
  const found = await spec.search(q, page)
  return adminPage(web, spec.path, spec.title, <AdminList spec={spec} q={q} page={page} found={found} />, opts)
}

/** A list page's query: a search and a page number. */
export const AdminQuery = t.Object({ q: FormText(255), page: FormText(10), done: FormText(40) })
