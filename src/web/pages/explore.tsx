/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Child } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import { reposToApi } from '../../convert/repo'
import { searchRepositories } from '../../modules/repos/queries'
import { searchUsers } from '../../modules/users/service'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { FormText, Pager, pageNumber, pagesOf } from '../forms'
import { ownerUrl, repoUrl } from '../links'

/** Results per page (Gitea's explore pages show 20 at a time; the API's search allows 50). */
const PER_PAGE = 20

const TABS: [string, string][] = [
  ['/explore/repos', 'Repositories'],
  ['/explore/users', 'Users'],
  ['/explore/organizations', 'Organisations'],
]

const ExploreQuery = t.Object({ q: FormText(255), page: FormText(10), topic: FormText(8) })

function explorePage(ctx: WebContext, current: string, q: string, results: Child, paging: { page: number; total: number; keep?: Record<string, string | undefined> }) {
  const label = TABS.find(([href]) => href === current)![1]
  return htmlResponse(
    <Layout ctx={ctx} title={`Explore ${label.toLowerCase()}`}>
      <h1>Explore</h1>
      <nav class="counts" aria-label="Explore">
        {TABS.map(([href, name]) => (
          <a href={href} aria-current={href === current ? 'page' : undefined}>
            {name}
          </a>
        ))}
      </nav>
      <form class="row" method="get" action={current} role="search">
        <label>
          Search {label.toLowerCase()}
          <input type="search" name="q" value={q} maxlength="255" />
        </label>
        <button class="secondary" type="submit">
          Search
        </button>
      </form>
      <p class="muted">
        {paging.total} {paging.total === 1 ? 'result' : 'results'}
      </p>
      {results}
      <Pager path={current} query={{ q, ...paging.keep }} page={paging.page} pages={pagesOf(paging.total, PER_PAGE)} />
    </Layout>,
  )
}

export function OwnerList(props: { rows: UserRow[]; empty: string; label: string }) {
  return (
    <div class="box">
      <ul class="entries" aria-label={props.label}>
        {props.rows.map((u) => (
          <li>
            <a href={ownerUrl(u.name)}>{u.name}</a>
            {u.fullName ? <span class="muted"> · {u.fullName}</span> : null}
            {u.description ? <div class="muted">{u.description}</div> : null}
          </li>
        ))}
        {props.rows.length === 0 ? <li class="muted">{props.empty}</li> : null}
      </ul>
    </div>
  )
}

const pageAt = (n: number) => ({ page: n, limit: PER_PAGE, offset: (n - 1) * PER_PAGE })

/**
 * `/explore/repos`, `/explore/users`, `/explore/organizations`: the API's searches
 * (`/repos/search`, `/users/search`) with the same visibility rule, paged.
 */
export const explorePages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get('/explore', () => new Response(null, { status: 303, headers: { location: '/explore/repos' } }), { scope: 'none', caller: true, detail: pageDetail('webExplore') })
    .get(
      '/explore/repos',
      async ({ request, caller, query }) => {
        const q = (query.q ?? '').trim()
        const page = pageNumber(query.page)
        // `topic=1` (a topic's link): the repositories carrying the topics named, Gitea's TopicOnly.
        const topic = query.topic === '1' || query.topic === 'true'
        const found = await searchRepositories(deps, caller.user, { q, topic }, pageAt(page))
        const repos = await reposToApi(deps, caller.user, found.rows)
        return explorePage(
          webContext(deps.config, request, caller),
          '/explore/repos',
          q,
          <div class="box">
            <ul class="entries" aria-label="Repositories">
              {repos.map((r) => (
                <li>
                  <a href={repoUrl(r.owner.login, r.name)}>{r.full_name}</a>
                  {r.private ? <span class="muted"> (private)</span> : null}
                  {r.archived ? <span class="muted"> (archived)</span> : null}
                  <span class="muted"> · {r.stars_count} stars</span>
                  {r.description ? <div class="muted">{r.description}</div> : null}
                </li>
              ))}
              {repos.length === 0 ? <li class="muted">No repositories found.</li> : null}
            </ul>
          </div>,
          { page, total: found.total, keep: topic ? { topic: '1' } : undefined },
        )
      },
      { scope: 'repository', caller: true, query: ExploreQuery, detail: pageDetail('webExploreRepos') },
    )
    .get(
      '/explore/users',
      async ({ request, caller, query }) => {
        const q = (query.q ?? '').trim()
        const page = pageNumber(query.page)
        const found = await searchUsers(deps, caller.user, q, undefined, pageAt(page))
        return explorePage(webContext(deps.config, request, caller), '/explore/users', q, <OwnerList rows={found.rows} empty="No users found." label="Users" />, {
          page,
          total: found.total,
        })
      },
      { scope: 'user', caller: true, query: ExploreQuery, detail: pageDetail('webExploreUsers') },
    )
    .get(
      '/explore/organizations',
      async ({ request, caller, query }) => {
        const q = (query.q ?? '').trim()
        const page = pageNumber(query.page)
        const found = await searchUsers(deps, caller.user, q, undefined, pageAt(page), 1)
        return explorePage(
          webContext(deps.config, request, caller),
          '/explore/organizations',
          q,
          <OwnerList rows={found.rows} empty="No organisations found." label="Organisations" />,
          { page, total: found.total },
        )
      },
      { scope: 'organization', caller: true, query: ExploreQuery, detail: pageDetail('webExploreOrgs') },
    )
