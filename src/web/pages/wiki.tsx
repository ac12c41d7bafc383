/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import { trustedHtml, type Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { RepoContext } from '../../auth/repo-context'
import { type ApiRepo } from '../../convert/repo'
import { ApiError } from '../../lib/errors'
import { pageOf } from '../../lib/pagination'
import { renderMarkdownAll } from '../../modules/markdown/service'
import { pageNameOf } from '../../modules/wiki/paths'
import { createPage, deletePage, editPage, getPage, listPages, pageRevisions, REVISIONS_PER_PAGE, wikiExists, type WikiPageRead } from '../../modules/wiki/service'
import { MAX_PAGE_NAME, MAX_WIKI_TITLE } from '../../modules/wiki/model'
import { AccessMode } from '../../auth/access'
import { MAX_TEXT, numeric } from '../../lib/validate'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { errorPage } from '../errors'
import { repoUrl } from '../links'
import { RepoHeader, pageRepo } from './repo-chrome'
import { CodeNav, Pager, When } from './code-nav'
import { ButtonForm, CsrfText, FormText, formRoute, pageNumber, pagesOf } from '../forms'
import { CsrfField, multiline } from './issue-parts'

const RepoParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })
const WikiPageParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), page: t.String({ maxLength: MAX_PAGE_NAME }) })
const PageQuery = t.Object({ page: t.Optional(numeric()) })
/** Gitea's `?action=_new` (on /wiki) and `?action=_edit` (on a page). */
const ActionQuery = t.Object({ action: FormText(16), page: FormText(10) })
/** Gitea's NewWikiForm. */
const WikiForm = t.Object({ _csrf: CsrfText, title: FormText(MAX_WIKI_TITLE), content: FormText(MAX_TEXT), message: FormText(MAX_TEXT) })

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

const textOf = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

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

/** A page read for the web, or the 404 page when there is no such page. */
async function pageOrMissing(deps: AppDeps, ctx: RepoContext, web: WebContext, webPath: string): Promise<WikiPageRead | Response> {
  try {
    return await getPage(deps, ctx, webPath)
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return errorPage(404, 'no such wiki page', web)
    throw e
  }
}

/** A page of the wiki: its title, last change, content, and the wiki's sidebar and footer when it has them. */
async function pageView(deps: AppDeps, ctx: RepoContext, request: Request, web: WebContext, repo: ApiRepo, webPath: string): Promise<Response> {
  const page = await pageOrMissing(deps, ctx, web, webPath)
  if (page instanceof Response) return page
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
          <a href={`${base}/wiki/${webPath}?action=_revision`}>Revisions</a> · <a href={`${base}/wiki/_pages`}>All pages</a>
          {ctx.mode >= AccessMode.Write && !ctx.repo.isArchived ? (
            <>
              {' · '}
              <a href={`${base}/wiki/${webPath}?action=_edit`}>Edit</a> · <a href={`${base}/wiki?action=_new`}>New page</a>
            </>
          ) : null}
        </p>
        {ctx.mode >= AccessMode.Write && !ctx.repo.isArchived ? <ButtonForm ctx={web} action={`${base}/wiki/${webPath}?action=_delete`} label={`Delete ${page.title}`} danger /> : null}
      </header>
      <article class="box" aria-label={page.title}>
        {page.content.length === 0 ? <p class="notice muted">This page is empty, or too large to show.</p> : <Markdown body={content!} />}
      </article>
      {page.sidebar.length ? (
        <aside class="box" aria-label="Sidebar">
          <Markdown body={sidebar!} />
        </aside>
      ) : null}
      {page.footer.length ? (
        <footer class="box" aria-label="Footer">
          <Markdown body={footer!} />
        </footer>
      ) : null}
    </>,
  )
}

/** Gitea's revisions of a page (`?action=_revision`): the commits that changed it, newest first, REVISIONS_PER_PAGE a page. */
async function revisionsView(deps: AppDeps, ctx: RepoContext, web: WebContext, repo: ApiRepo, webPath: string, pageAt: number): Promise<Response> {
  const page = await pageOrMissing(deps, ctx, web, webPath)
  if (page instanceof Response) return page
  const { commits, count } = await pageRevisions(deps, ctx, webPath, pageAt)
  const here = `${repoUrl(repo.owner.login, repo.name)}/wiki/${webPath}`
  return wikiFrame(
    web,
    repo,
    `${page.title} · Revisions`,
    <>
      <h2>
        <a href={here}>{page.title}</a> · {count} revision{count === 1 ? '' : 's'}
      </h2>
      <ol class="entries" aria-label="Revisions">
        {commits.map((c) => (
          <li>
            <code>{c.id.slice(0, 10)}</code> {c.message.split('\n')[0]} <span class="muted">· {c.authorName}, <When iso={new Date(c.committerDate).toISOString()} /></span>
          </li>
        ))}
      </ol>
      <Pager path={here} query={{ action: '_revision' }} page={pageAt} pages={pagesOf(count, REVISIONS_PER_PAGE)} />
    </>,
  )
}

/** The page form (Gitea's new and edit pages), for writers of a repository that is not archived. */
function pageForm(web: WebContext, ctx: RepoContext, repo: ApiRepo, heading: string, action: string, values: { title: string; content: string }): Response {
  if (ctx.mode < AccessMode.Write || ctx.repo.isArchived) return errorPage(403, 'Only writers of a repository that is not archived may change its wiki.', web)
  return wikiFrame(
    web,
    repo,
    heading,
    <>
      <h2>{heading}</h2>
      <form class="stack wide" method="post" action={action}>
        <CsrfField ctx={web} />
        <label>
          Title
          <input name="title" required maxlength={String(MAX_WIKI_TITLE)} value={values.title} />
        </label>
        <label>
          Content
          <textarea name="content" rows="16">
            {values.content}
          </textarea>
        </label>
        <label>
          Commit message
          <input name="message" maxlength="1024" />
        </label>
        <button type="submit">Save page</button>
      </form>
    </>,
  )
}

/** The form's text as the page's bytes (line breaks as `\n`). */
const bytesOf = (text: string | undefined) => new TextEncoder().encode(multiline(text))

/**
 * The wiki's pages at Gitea's URLs: `/{o}/{r}/wiki` (its Home page, or word that it has none),
 * `/{o}/{r}/wiki/_pages` (every page, paged) and `/{o}/{r}/wiki/{page}` (a page by its web path,
 * as the API's `sub_url` and `html_url` name it), for readers of a repository whose wiki is on;
 * for its writers, Gitea's forms: `/wiki?action=_new` and `/wiki/{page}?action=_edit`, posted to
 * the same addresses (the wiki service's createPage and editPage, then to the page), and
 * `/wiki/{page}?action=_delete` (deletePage); a page's revisions at `/wiki/{page}?action=_revision`.
 */
export const wikiPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/:owner/:repo/wiki',
      async ({ request, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const repo = await pageRepo(deps, ctx)
        if (query.action === '_new') return pageForm(web, ctx, repo, 'New page', `${repoUrl(repo.owner.login, repo.name)}/wiki?action=_new`, { title: '', content: '' })
        if (!(await wikiExists(deps, ctx)))
          return wikiFrame(
            web,
            repo,
            'Wiki',
            <p class="notice muted">
              This wiki has no pages yet.
              {/* Its writers start it from here (Gitea's "Create the first page"), as the page form allows. */}
              {ctx.mode >= AccessMode.Write && !ctx.repo.isArchived ? (
                <>
                  {' '}
                  <a href={`${repoUrl(repo.owner.login, repo.name)}/wiki?action=_new`}>Create the first page</a>
                </>
              ) : null}
            </p>,
          )
        return await pageView(deps, ctx, request, web, repo, 'Home')
      },
      { scope: 'repository', repo: { level: 'read', unit: 'wiki' }, params: RepoParams, query: ActionQuery, detail: pageDetail('webWiki') },
    )
    .post(
      '/:owner/:repo/wiki',
      ({ request, body, repo: ctx, user }) =>
        formRoute(deps.config, { request, caller: ctx.caller, body }, async () => {
          const webPath = await createPage(deps, ctx, user, { title: body.title, content: bytesOf(body.content), message: body.message })
          return `${repoUrl(ctx.owner.name, ctx.repo.name)}/wiki/${webPath}`
        }),
      { scope: 'repository', repo: { level: 'write', unit: 'wiki' }, signed: true, params: RepoParams, body: WikiForm, detail: pageDetail('webWikiCreate') },
    )
    .get(
      '/:owner/:repo/wiki/_pages',
      async ({ request, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const page = pageOf({ page: query.page, limit: PAGES_PER_PAGE })
        const repo = await pageRepo(deps, ctx)
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
      async ({ request, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const repo = await pageRepo(deps, ctx)
        const webPath = pageNameOf(request)
        if (query.action === '_revision') return await revisionsView(deps, ctx, web, repo, webPath, pageNumber(query.page))
        if (query.action !== '_edit') return await pageView(deps, ctx, request, web, repo, webPath)
        const page = await pageOrMissing(deps, ctx, web, webPath)
        if (page instanceof Response) return page
        const action = `${repoUrl(repo.owner.login, repo.name)}/wiki/${webPath}?action=_edit`
        return pageForm(web, ctx, repo, `Edit ${page.title}`, action, { title: page.title, content: textOf(page.content) })
      },
      { scope: 'repository', repo: { level: 'read', unit: 'wiki' }, params: WikiPageParams, query: ActionQuery, detail: pageDetail('webWikiPage') },
    )
    .post(
      '/:owner/:repo/wiki/:page',
      ({ request, body, query, repo: ctx, user }) =>
        formRoute(deps.config, { request, caller: ctx.caller, body }, async () => {
          // Gitea's `?action=_delete`: the page goes (a commit without its file), then to the wiki.
          if (query.action === '_delete') {
            await deletePage(deps, ctx, user, pageNameOf(request))
            return `${repoUrl(ctx.owner.name, ctx.repo.name)}/wiki/_pages`
          }
          const webPath = await editPage(deps, ctx, user, pageNameOf(request), { title: body.title, content: bytesOf(body.content), message: body.message })
          return `${repoUrl(ctx.owner.name, ctx.repo.name)}/wiki/${webPath}`
        }),
      { scope: 'repository', repo: { level: 'write', unit: 'wiki' }, signed: true, params: WikiPageParams, query: ActionQuery, body: WikiForm, detail: pageDetail('webWikiEdit') },
    )
