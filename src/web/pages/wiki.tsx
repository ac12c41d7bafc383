/** @jsxImportSource warren-jsx */
import { Elysia, t } from 'elysia'
import { trustedHtml, type Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import type { RepoContext } from '../../auth/repo-context'
import { repoToApi, type ApiRepo } from '../../convert/repo'
import { ApiError } from '../../lib/errors'
import { pageOf } from '../../lib/pagination'
import { renderMarkdownAll } from '../../modules/markdown/service'
import { pageNameOf } from '../../modules/wiki/paths'
import { getPage, listPages, type WikiPageRead } from '../../modules/wiki/service'
import { MAX_PAGE_NAME } from '../../modules/wiki/model'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { errorPage } from '../errors'
import { repoUrl } from '../links'
import { RepoHeader } from './repo-chrome'
import { CodeNav, Pager, When } from './code-nav'
import { pagesOf } from '../forms'

const RepoParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })
const WikiPageParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), page: t.String({ maxLength: MAX_PAGE_NAME }) })
const PageQuery = t.Object({ page: t.Optional(t.Numeric()) })

const PAGES_PER_PAGE = 50

/** The frame of the wiki's pages: the header, the tabs, the page's heading and body. */
function wikiFrame(web: WebContext, repo: ApiRepo, title: string, body: Html) {
  return htmlResponse(
    <Layout ctx={web} title={`${title} · Wiki · ${repo.full_name}`}>
      <RepoHeader repo={repo} />
      <CodeNav repo={repo} current="wiki" />
      {body}
    </Layout>,
  )
}

const textOf = (base64: string) => Buffer.from(base64, 'base64').toString('utf8')

/** A page, its sidebar and its footer as markdown rendered in one batch in the pool (relative links into the wiki); past its budget, the texts as they are. */
async function renderedParts(deps: AppDeps, ctx: RepoContext, page: WikiPageRead, client: string): Promise<(Html | string)[]> {
  const texts = [page.content, page.sidebar, page.footer].map(textOf)
  try {
    const html = await renderMarkdownAll(deps.config, texts, { mode: 'gfm', context: `${ctx.owner.name}/${ctx.repo.name}`, wiki: true }, client)
    return html.map((h) => trustedHtml(h))
  } catch (e) {
    if (e instanceof ApiError) return texts
    throw e
  }
}

const Markdown = (props: { body: Html | string; label?: string }): Html =>
  typeof props.body === 'string' ? <pre class="markdown">{props.body}</pre> : <div class="markdown" aria-label={props.label}>{props.body}</div>

/** A page of the wiki: its title, last change, content, and the wiki's sidebar and footer when it has them. */
async function pageView(deps: AppDeps, ctx: RepoContext, request: Request, web: WebContext, repo: ApiRepo, webPath: string): Promise<Response> {
  let page: WikiPageRead
  try {
    page = await getPage(deps, ctx, webPath)
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return errorPage(404, 'no such wiki page', web)
    throw e
  }
  const [content, sidebar, footer] = await renderedParts(deps, ctx, page, deps.auth.clientAddress(request) ?? '')
  const base = repoUrl(repo.owner.login, repo.name)
  const last = page.lastCommit
  return wikiFrame(
    web,
    repo,
    page.title,
    <>
      <header class="wiki-head">
        <h2>{page.title}</h2>
        <p class="muted">
          {last ? (
            <>
              {last.authorName} edited <When iso={new Date(last.committerDate).toISOString()} /> · {page.commitCount} revision{page.commitCount === 1 ? '' : 's'} ·{' '}
            </>
          ) : null}
          <a href={`${base}/wiki/_pages`}>All pages</a>
        </p>
      </header>
      <article class="box" aria-label={page.title}>
        {page.content === '' ? <p class="notice muted">This page is empty, or too large to show.</p> : <Markdown body={content!} />}
      </article>
      {page.sidebar ? (
        <aside class="box" aria-label="Sidebar">
          <Markdown body={sidebar!} />
        </aside>
      ) : null}
      {page.footer ? (
        <footer class="box" aria-label="Footer">
          <Markdown body={footer!} />
        </footer>
      ) : null}
    </>,
  )
}

/**
 * The wiki's pages at Gitea's URLs: `/{o}/{r}/wiki` (its Home page, or word that it has none),
 * `/{o}/{r}/wiki/_pages` (every page, paged) and `/{o}/{r}/wiki/{page}` (a page by its web path,
 * as the API's `sub_url` and `html_url` name it), for readers of a repository whose wiki is on.
 */
export const wikiPages = (deps: AppDeps) =>
  new Elysia({ name: 'web-wiki', detail: { hide: true } })
    .use(pipeline(deps, { session: true }))
    .get(
      '/:owner/:repo/wiki',
      async ({ request, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const repo = await repoToApi(deps, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode)
        try {
          await listPages(deps, ctx, pageOf({ limit: 1 }))
        } catch (e) {
          if (!(e instanceof ApiError && e.status === 404)) throw e
          return wikiFrame(web, repo, 'Wiki', <p class="notice muted">This wiki has no pages yet.</p>)
        }
        return await pageView(deps, ctx, request, web, repo, 'Home')
      },
      { scope: 'repository', repo: { level: 'read', unit: 'wiki' }, params: RepoParams, detail: pageDetail('webWiki') },
    )
    .get(
      '/:owner/:repo/wiki/_pages',
      async ({ request, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const page = pageOf({ page: query.page, limit: PAGES_PER_PAGE })
        const repo = await repoToApi(deps, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode)
        let found
        try {
          found = await listPages(deps, ctx, page)
        } catch (e) {
          if (!(e instanceof ApiError && e.status === 404)) throw e
          found = { rows: [], total: 0 }
        }
        const base = repoUrl(repo.owner.login, repo.name)
        return wikiFrame(
          web,
          repo,
          'Pages',
          <>
            <h2>
              Pages <span class="muted">({found.total})</span>
            </h2>
            {found.total === 0 ? <p class="notice muted">This wiki has no pages yet.</p> : null}
            <ul class="box entries">
              {found.rows.map((p) => (
                <li>
                  <a href={`${base}/wiki/${p.webPath}`}>{p.title}</a>
                  {p.lastCommit ? (
                    <div class="muted">
                      {p.lastCommit.message.split('\n', 1)[0]} · {p.lastCommit.authorName} · <When iso={new Date(p.lastCommit.committerDate).toISOString()} />
                    </div>
                  ) : null}
                </li>
              ))}
            </ul>
            <Pager path={web.path} page={page.page} pages={pagesOf(found.total, page.limit)} />
          </>,
        )
      },
      { scope: 'repository', repo: { level: 'read', unit: 'wiki' }, params: RepoParams, query: PageQuery, detail: pageDetail('webWikiPages') },
    )
    .get(
      '/:owner/:repo/wiki/:page',
      async ({ request, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const repo = await repoToApi(deps, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode)
        return await pageView(deps, ctx, request, web, repo, pageNameOf(request))
      },
      { scope: 'repository', repo: { level: 'read', unit: 'wiki' }, params: WikiPageParams, detail: pageDetail('webWikiPage') },
    )
