/** @jsxImportSource warren-jsx */
import { Elysia, t } from 'elysia'
import { trustedHtml, type Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import type { RepoContext } from '../../auth/repo-context'
import { repoToApi, type ApiRepo } from '../../convert/repo'
import { releasesToApi, type ApiRelease } from '../../convert/release'
import type { ReleaseRow } from '../../db/schema'
import { ApiError } from '../../lib/errors'
import { pageOf } from '../../lib/pagination'
import { refNameOf, RepoWildcardParams } from '../../modules/files/model'
import { branchHeads } from '../../modules/branches/service'
import { listRepoTags } from '../../modules/tags/service'
import { getReleaseByTag, listReleases } from '../../modules/releases/service'
import { renderMarkdown } from '../../modules/markdown/service'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { errorPage } from '../errors'
import { refPath, repoUrl, srcUrl } from '../links'
import { RepoHeader } from './repo-chrome'
import { CodeNav, Pager, When } from './code-nav'
import { Notices, pagesOf } from '../forms'
import { AccessMode } from '../../auth/access'

const RepoParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })
const TagParams = RepoWildcardParams
const PageQuery = t.Object({ page: t.Optional(t.Numeric()) })

const REFS_PER_PAGE = 50
const RELEASES_PER_PAGE = 10

const subjectOf = (message: string) => message.split('\n', 1)[0]!

/** The frame of the ref pages: the header, the tabs, the page's heading and body. */
function refsPage(web: WebContext, repo: ApiRepo, current: 'branches' | 'tags' | 'releases', title: string, body: Html) {
  return htmlResponse(
    <Layout ctx={web} title={`${title} · ${repo.full_name}`}>
      <RepoHeader repo={repo} />
      <CodeNav repo={repo} current={current} />
      {body}
    </Layout>,
  )
}

/** A release's notes as markdown rendered in the pool (sanitised); past its budget, the text as it is. */
async function notesOf(deps: AppDeps, ctx: RepoContext, release: ApiRelease, client: string): Promise<Html | string> {
  try {
    return trustedHtml(await renderMarkdown(deps.config, release.body, { mode: 'gfm', context: `${ctx.owner.name}/${ctx.repo.name}`, branch: ctx.repo.defaultBranch }, client))
  } catch (e) {
    if (e instanceof ApiError) return release.body
    throw e
  }
}

function ReleaseView(props: { repo: ApiRepo; release: ApiRelease; notes: Html | string; heading: 'h1' | 'h2'; editable: boolean }): Html {
  const { repo, release } = props
  const base = repoUrl(repo.owner.login, repo.name)
  const title = release.name || release.tag_name
  return (
    <article class="box release" aria-label={title}>
      <header>
        {props.heading === 'h1' ? <h2>{title}</h2> : <h3><a href={`${base}/releases/tag/${refPath(release.tag_name)}`}>{title}</a></h3>}
        {release.draft ? <span class="label">Draft</span> : null}
        {release.prerelease ? <span class="label">Pre-release</span> : null}
        <span class="muted">
          <a href={srcUrl(repo.owner.login, repo.name, 'tag', release.tag_name)}>{release.tag_name}</a> · {release.author.login} · <When iso={release.published_at} />
          {props.editable ? (
            <>
              {' · '}
              <a href={`${base}/releases/edit/${refPath(release.tag_name)}`} aria-label={`Edit release ${release.tag_name}`}>
                Edit
              </a>
            </>
          ) : null}
        </span>
      </header>
      {typeof props.notes === 'string' ? <pre class="markdown">{props.notes}</pre> : <div class="markdown">{props.notes}</div>}
      <section class="assets" aria-label={`Assets of ${title}`}>
        <h4>Assets</h4>
        <ul class="entries">
          {release.assets.map((a) => (
            <li>
              <a href={a.browser_download_url}>{a.name}</a> <span class="muted">({a.size} bytes, {a.download_count} downloads)</span>
            </li>
          ))}
          <li>
            <a href={release.zipball_url}>Source code (zip)</a>
          </li>
          <li>
            <a href={release.tarball_url}>Source code (tar.gz)</a>
          </li>
        </ul>
      </section>
    </article>
  )
}

/** Whether the visitor may use the release forms (the pipeline's mode; the forms' routes check again). */
const releaseWriter = (ctx: RepoContext) => !!ctx.caller.user && ctx.mode >= AccessMode.Write && !ctx.repo.isArchived

async function releaseRecords(deps: AppDeps, ctx: RepoContext, rows: ReleaseRow[], client: string) {
  const records = await releasesToApi(deps, ctx.repo, rows, ctx.caller.user)
  return await Promise.all(records.map(async (release) => ({ release, notes: await notesOf(deps, ctx, release, client) })))
}

/**
 * `/{o}/{r}/branches`, `/{o}/{r}/tags`, `/{o}/{r}/releases` (paged) and
 * `/{o}/{r}/releases/tag/{tag}` (a release's html_url): through the branches, tags and releases
 * services and converters, drafts only for writers as the API shows them.
 */
export const refPages = (deps: AppDeps) =>
  new Elysia({ name: 'web-refs', detail: { hide: true } })
    .use(pipeline(deps, { session: true }))
    .get(
      '/:owner/:repo/branches',
      async ({ request, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const page = pageOf({ page: query.page, limit: REFS_PER_PAGE })
        const [repo, found] = await Promise.all([repoToApi(deps, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode), branchHeads(deps, ctx, page)])
        const owner = repo.owner.login
        const base = repoUrl(owner, repo.name)
        return refsPage(
          web,
          repo,
          'branches',
          'Branches',
          <>
            <h2>
              Branches <span class="muted">({found.total})</span>
            </h2>
            {found.total === 0 ? <p class="notice muted">This repository has no branches yet.</p> : null}
            <ul class="box entries">
              {found.rows.map((b) => (
                <li>
                  <a href={srcUrl(owner, repo.name, 'branch', b.name)}>{b.name}</a>
                  {b.name === repo.default_branch ? <span class="label">default</span> : null}
                  <div class="muted">
                    {subjectOf(b.message)} · {b.authorName} · <When iso={b.committerDate} /> · <a href={`${base}/commits/branch/${refPath(b.name)}`}>Commits</a>
                    {b.name !== repo.default_branch ? (
                      <>
                        {' · '}
                        <a href={`${base}/compare/${refPath(repo.default_branch)}...${refPath(b.name)}`}>Compare</a>
                      </>
                    ) : null}
                  </div>
                </li>
              ))}
            </ul>
            <Pager path={web.path} page={page.page} pages={pagesOf(found.total, page.limit)} />
          </>,
        )
      },
      { scope: 'repository', repo: { level: 'read' }, params: RepoParams, query: PageQuery, detail: pageDetail('webBranches') },
    )
    .get(
      '/:owner/:repo/tags',
      async ({ request, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const page = pageOf({ page: query.page, limit: REFS_PER_PAGE })
        const [repo, found] = await Promise.all([repoToApi(deps, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode), listRepoTags(deps, ctx, page)])
        const owner = repo.owner.login
        const base = repoUrl(owner, repo.name)
        return refsPage(
          web,
          repo,
          'tags',
          'Tags',
          <>
            <h2>
              Tags <span class="muted">({found.total})</span>
            </h2>
            {found.total === 0 ? <p class="notice muted">This repository has no tags yet.</p> : null}
            <ul class="box entries">
              {found.rows.map((tag) => (
                <li>
                  <a href={srcUrl(owner, repo.name, 'tag', tag.name)}>{tag.name}</a>
                  <div class="muted">
                    {subjectOf(tag.message)} · <When iso={new Date(tag.created).toISOString()} /> ·{' '}
                    <a href={`${base}/commit/${tag.commit}`}>
                      <code>{tag.commit.slice(0, 10)}</code>
                    </a>{' '}
                    · <a href={`${base}/archive/${refPath(tag.name)}.zip`}>zip</a> · <a href={`${base}/archive/${refPath(tag.name)}.tar.gz`}>tar.gz</a>
                  </div>
                </li>
              ))}
            </ul>
            <Pager path={web.path} page={page.page} pages={pagesOf(found.total, page.limit)} />
          </>,
        )
      },
      { scope: 'repository', repo: { level: 'read' }, params: RepoParams, query: PageQuery, detail: pageDetail('webTags') },
    )
    .get(
      '/:owner/:repo/releases',
      async ({ request, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const page = pageOf({ page: query.page, limit: RELEASES_PER_PAGE })
        const [repo, found] = await Promise.all([repoToApi(deps, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode), listReleases(deps, ctx, page, {})])
        const shown = await releaseRecords(deps, ctx, found.rows, deps.auth.clientAddress(request) ?? '')
        return refsPage(
          web,
          repo,
          'releases',
          'Releases',
          <>
            <h2>
              Releases <span class="muted">({found.total})</span>
            </h2>
            <Notices ctx={web} />
            {releaseWriter(ctx) ? (
              <p>
                <a class="button primary" href={`${repoUrl(repo.owner.login, repo.name)}/releases/new`}>
                  New release
                </a>
              </p>
            ) : null}
            {found.total === 0 ? <p class="notice muted">This repository has no releases yet.</p> : null}
            {shown.map(({ release, notes }) => (
              <ReleaseView repo={repo} release={release} notes={notes} heading="h2" editable={releaseWriter(ctx)} />
            ))}
            <Pager path={web.path} page={page.page} pages={pagesOf(found.total, page.limit)} />
          </>,
        )
      },
      { scope: 'repository', repo: { level: 'read', unit: 'releases' }, params: RepoParams, query: PageQuery, detail: pageDetail('webReleases') },
    )
    .get(
      '/:owner/:repo/releases/tag/*',
      async ({ request, params, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const tag = refNameOf(params)
        if (!tag) return errorPage(404, 'no such release', web)
        let row: ReleaseRow
        try {
          row = await getReleaseByTag(deps, ctx, tag)
        } catch (e) {
          if (e instanceof ApiError && e.status === 404) return errorPage(404, e.message, web)
          throw e
        }
        const repo = await repoToApi(deps, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode)
        const [shown] = await releaseRecords(deps, ctx, [row], deps.auth.clientAddress(request) ?? '')
        return refsPage(web, repo, 'releases', shown!.release.name || tag, <ReleaseView repo={repo} release={shown!.release} notes={shown!.notes} heading="h1" editable={releaseWriter(ctx)} />)
      },
      { scope: 'repository', repo: { level: 'read', unit: 'releases' }, params: TagParams, detail: pageDetail('webRelease') },
    )
