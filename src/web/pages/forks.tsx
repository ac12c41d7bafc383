/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Child } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import type { RepoContext } from '../../auth/repo-context'
import { forkRepository, listForks } from '../../modules/forks/service'
import { listMarkers } from '../../modules/stars/service'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { CsrfField, CsrfText, FormText, formRoute, Notices, Pager, pageNumber, pagesOf } from '../forms'
import { repoUrl } from '../links'
import { RepoHeader, pageRepo } from './repo-chrome'
import { ownerAndNameFields } from './repo-actions'
import { OwnerList } from './explore'
import { ownerNames, RepoList } from './people'

/** People and forks a list page shows at a time (Gitea's ItemsPerPage). */
const PER_PAGE = 20

const RepoParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })
const PageQuery = t.Object({ page: FormText(10) })

/** Gitea's fork form (CreateRepoForm's fields it reads): the owner, the fork's name and description. */
const ForkForm = t.Object({ _csrf: CsrfText, owner: FormText(255), repo_name: FormText(100), description: FormText(2048) })
type ForkValues = Partial<typeof ForkForm.static>

/** A page of the repository: its header, a heading and what it lists. */
async function repoListPage(deps: AppDeps, web: WebContext, ctx: RepoContext, title: string, body: Child, status = 200): Promise<Response> {
  const repo = await pageRepo(deps, ctx)
  return htmlResponse(
    <Layout ctx={web} title={`${title} · ${repo.full_name}`}>
      <RepoHeader repo={repo} />
      <h2>{title}</h2>
      {body}
    </Layout>,
    status,
  )
}

async function forkPage(deps: AppDeps, web: WebContext, ctx: RepoContext, user: UserRow, opts: { values?: ForkValues; error?: string; status?: number } = {}) {
  const v = opts.values
  const base = repoUrl(ctx.owner.name, ctx.repo.name)
  return await repoListPage(
    deps,
    web,
    ctx,
    `Fork ${ctx.owner.name}/${ctx.repo.name}`,
    <>
      <Notices ctx={web} error={opts.error} />
      <form class="stack wide" method="post" action={`${base}/fork`}>
        <CsrfField ctx={web} />
        {await ownerAndNameFields(deps, user, { field: 'owner', chosen: v?.owner ?? user.name }, { field: 'repo_name', value: v?.repo_name ?? ctx.repo.name })}
        <label>
          Description
          <textarea name="description" rows="3" maxlength="2048">
            {v?.description ?? ctx.repo.description}
          </textarea>
        </label>
        <div>
          <button class="primary" type="submit">
            Fork repository
          </button>
        </div>
      </form>
    </>,
    opts.status,
  )
}

const MARK_PAGES = { stars: ['star', 'Stargazers', 'Nobody has starred this repository yet.'], watchers: ['watch', 'Watchers', 'Nobody watches this repository yet.'] } as const

/**
 * `/{o}/{r}/fork` (Gitea's fork form: owner among the user and the organisations where they may
 * create repositories, name, description; the forks service decides), and the lists of the
 * repository header's counts: `/{o}/{r}/stars`, `/{o}/{r}/watchers` (people) and `/{o}/{r}/forks`
 * (the forks the visitor may read), paged.
 */
export const forkPages = (deps: AppDeps, webApp: AreaApp) => {
  const app = pageGroup(webApp)
    .get('/:owner/:repo/fork', async ({ request, repo: ctx, user }) => await forkPage(deps, webContext(deps.config, request, ctx.caller), ctx, user), {
      scope: 'repository',
      repo: { level: 'read' },
      signed: true,
      params: RepoParams,
      detail: pageDetail('webForkForm'),
    })
    .post(
      '/:owner/:repo/fork',
      ({ request, caller, body, user, repo: ctx }) => {
        return formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            const ownerName = (body.owner ?? user.name).trim()
            const fork = await forkRepository(deps, user, ctx.repo, ctx.owner, {
              organization: ownerName.toLowerCase() === user.lowerName ? null : ownerName,
              name: body.repo_name?.trim() || null,
              description: body.description ?? null,
            })
            return repoUrl(ownerName, fork.name)
          },
          async (web, error, status) => await forkPage(deps, web, ctx, user, { values: body, error, status }),
        )
      },
      // Reading is enough, and an archived repository may be forked (as the API's route).
      { scope: 'repository', repo: { level: 'read', writes: false }, signed: true, params: RepoParams, body: ForkForm, detail: pageDetail('webFork') },
    )
    .get(
      '/:owner/:repo/forks',
      async ({ request, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const page = pageNumber(query.page)
        const found = await listForks(deps, ctx.caller.user, ctx.repo, { page, limit: PER_PAGE, offset: (page - 1) * PER_PAGE })
        const owners = await ownerNames(deps, found.rows, [])
        return await repoListPage(
          deps,
          web,
          ctx,
          'Forks',
          <>
            <RepoList owners={owners} rows={found.rows} total={found.rows.length} empty="This repository has no forks yet." />
            <Pager path={web.path} page={page} pages={pagesOf(found.total, PER_PAGE)} />
          </>,
        )
      },
      { scope: 'repository', repo: { level: 'read' }, params: RepoParams, query: PageQuery, detail: pageDetail('webForks') },
    )
  for (const [path, [mark, title, empty]] of Object.entries(MARK_PAGES))
    app.get(
      `/:owner/:repo/${path}`,
      async ({ request, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const page = pageNumber(query.page)
        const found = await listMarkers(deps, mark, ctx.caller.user, ctx.repo.id, { page, limit: PER_PAGE, offset: (page - 1) * PER_PAGE })
        return await repoListPage(
          deps,
          web,
          ctx,
          title,
          <>
            <OwnerList rows={found.rows} empty={empty} label={title} />
            <Pager path={web.path} page={page} pages={pagesOf(found.total, PER_PAGE)} />
          </>,
        )
      },
      { scope: 'repository', repo: { level: 'read' }, params: RepoParams, query: PageQuery, detail: pageDetail(path === 'stars' ? 'webStargazers' : 'webWatchers') },
    )
  return app
}
