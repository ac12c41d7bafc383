/** @jsxImportSource warren-jsx */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import type { Caller, UserRow } from '../../auth/caller'
import { toApiUser } from '../../convert/user'
import { searchUsers } from '../../modules/users/service'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext } from '../context'
import { FormText, Pager, pageNumber, pagesOf, ListTable } from '../forms'
import { ownerUrl } from '../links'

const PER_PAGE = 50

async function usersPage(deps: AppDeps, request: Request, caller: Caller, admin: UserRow, query: { q?: string; page?: string }, path: string) {
  const q = (query.q ?? '').trim()
  const page = pageNumber(query.page)
  // A site administrator sees every account through the one visibility rule.
  const found = await searchUsers(deps, admin, q, undefined, { page, limit: PER_PAGE, offset: (page - 1) * PER_PAGE })
  const rows = found.rows.map((u) => toApiUser(deps.config, u, admin))
  return htmlResponse(
    <Layout ctx={webContext(deps.config, request, caller)} title="User accounts">
      <h1>Site administration · User accounts</h1>
      <form class="row" method="get" action={path} role="search">
        <label>
          Search users
          <input type="search" name="q" value={q} maxlength="255" />
        </label>
        <button class="secondary" type="submit">
          Search
        </button>
      </form>
      <p class="muted">{found.total} accounts</p>
      <div class="box">
        <ListTable label="User accounts" columns={['ID', 'Username', 'E-mail', 'Admin', 'Active', 'Visibility', 'Created']}>
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
          </ListTable>
      </div>
      <Pager path={path} query={{ q }} page={page} pages={pagesOf(found.total, PER_PAGE)} />
    </Layout>,
  )
}

const AdminQuery = t.Object({ q: FormText(255), page: FormText(10) })

/** The site administrator's user list: `/-/admin/users` (Gitea 1.23's URL) and `/admin/users`; the pipeline's siteAdmin need refuses everyone else. */
export const adminPages = (deps: AppDeps) => {
  const app = new Elysia({ name: 'web-admin', detail: { hide: true } }).use(pipeline(deps, { session: true }))
  for (const path of ['/-/admin/users', '/admin/users'])
    app.get(path, async ({ request, caller, user, query }) => usersPage(deps, request, caller, user, query, path), {
      siteAdmin: true,
      query: AdminQuery,
      detail: pageDetail(path === '/admin/users' ? 'webAdminUsersOld' : 'webAdminUsers'),
    })
  return app
}
