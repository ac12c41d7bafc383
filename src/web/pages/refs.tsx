/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import { trustedHtml, type Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { RepoContext } from '../../auth/repo-context'
import { type ApiRepo } from '../../convert/repo'
import { releasesToApi, type ApiRelease } from '../../convert/release'
import type { ReleaseRow } from '../../db/schema'
import { ApiError } from '../../lib/errors'
import { pageOf, type Page, type Paged } from '../../lib/pagination'
import { refNameOf, RepoWildcardParams } from '../../modules/files/model'
import { branchHeads } from '../../modules/branches/service'
import type { BranchHead } from '../../git/commits'
import type { TagInfo } from '../../git/tags'
import { listRepoTags } from '../../modules/tags/service'
import { getReleaseByTag, listReleases } from '../../modules/releases/service'
import { renderAll } from './conversation'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { errorPage } from '../errors'
import { refPath, repoUrl, srcUrl } from '../links'
import { RepoHeader, pageRepo } from './repo-chrome'
import { CodeNav, Pager, When } from './code-nav'
import { CsrfText, FormCheck, FormText, formRoute, Notices, pagesOf, seeOther, ticked } from '../forms'
import { AccessMode } from '../../auth/access'
import { notFound } from '../../lib/errors'
import { normaliseTreePath } from '../../git/blob'
import { MAX_BRANCH_NAME } from '../../modules/branches/model'
import { createBranch, deleteBranch, deletedBranch, latestDeletion, renameBranch, restoreBranch, type DeletedBranch } from '../../modules/branches/changes'
import { createTag, deleteTag } from '../../modules/tags/service'
import { resolveSource, type SourceKind } from '../source-data'
import { BranchForms, refsWritable, RestoreBranchForm, TagForms } from './ref-forms'
import { checksOf, ChecksIcon } from './commit-checks'
import { commitUrl } from './commits'
import type { CommitChecks } from '../../convert/status'
import { numeric } from '../../lib/validate'

const RepoParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })
const TagParams = RepoWildcardParams
const PageQuery = t.Object({ page: t.Optional(numeric()) })
/** The branches page's: `deleted`, a deletion just made, offered for restoring. */
const BranchesQuery = t.Object({ page: t.Optional(numeric()), deleted: t.Optional(numeric()) })

/** Longest name of an existing branch or tag a form names (a new one: MAX_BRANCH_NAME, the API's). */
const MAX_REF_NAME = 1024
const KINDS = new Set(['branch', 'tag', 'commit'])
const CreateParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), kind: t.String({ maxLength: 10 }) }, { additionalProperties: true })
/** Gitea's NewBranchForm: the new name, a tag instead of a branch, the folder the switcher was on. */
const CreateForm = t.Object({ _csrf: CsrfText, new_branch_name: FormText(MAX_BRANCH_NAME), create_tag: FormCheck, current_path: FormText(4096) })
/** Gitea's DeleteBranchPost reads `name` from the query or the form; DeleteTag its `id` (here the tag's name: tags have no rows). */
const NameQuery = t.Object({ name: FormText(MAX_REF_NAME) })
const NameForm = t.Object({ _csrf: CsrfText, name: FormText(MAX_REF_NAME) })
const IdQuery = t.Object({ id: FormText(MAX_REF_NAME) })
const IdForm = t.Object({ _csrf: CsrfText, id: FormText(MAX_REF_NAME) })
/** Gitea's RestoreBranchPost: the deletion's id (`branch_id`), its name for the messages. */
const RestoreForm = t.Object({ _csrf: CsrfText, branch_id: FormText(20), name: FormText(MAX_REF_NAME) })
/** Gitea's RenameBranchForm. */
const RenameForm = t.Object({ _csrf: CsrfText, from: FormText(MAX_REF_NAME), to: FormText(MAX_BRANCH_NAME) })

// Signed-in writers of a repository that is not archived (Gitea's reqRepoCodeWriter, RepoMustNotBeArchived); the services refuse the rest as the API's routes do.
const WRITER = { scope: 'repository', repo: { level: 'write', writes: true }, signed: true } as const

const REFS_PER_PAGE = 50
const RELEASES_PER_PAGE = 10

const subjectOf = (message: string) => message.split('\n', 1)[0]!

/** The frame of the ref pages: the header, the tabs, the page's heading and body. */
function refsPage(web: WebContext, repo: ApiRepo, current: 'branches' | 'tags' | 'releases', title: string, body: Html, status = 200) {
  return htmlResponse(
    <Layout ctx={web} title={`${title} · ${repo.full_name}`} feed={current === 'branches' ? undefined : { title: `${current === 'tags' ? 'Tags' : 'Releases'} for ${repo.full_name}`, rss: `${repoUrl(repo.owner.login, repo.name)}/${current}.rss` }}>
      <RepoHeader repo={repo} />
      <CodeNav repo={repo} current={current} />
      {body}
    </Layout>,
    status,
  )
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
  // Their notes rendered in one batch (as a conversation's texts, kept by the markdown service); past its budget, as written.
  const html = await renderAll(deps, ctx, records.map((r) => r.body), client)
  return records.map((release, i): { release: ApiRelease; notes: Html | string } => ({ release, notes: html[i] != null ? trustedHtml(html[i]!) : release.body }))
}

/** A refused form shown on its list again: the message and the service's status. */
interface Refusal {
  error: string
  status: number
}

/** What a list of refs shows: its tab and title, its listing, each row (for writers with its forms). */
interface RefList<T, X = undefined> {
  current: 'branches' | 'tags'
  title: string
  list: (page: Page) => Promise<Paged<T>>
  /** What the page's rows need read together (the branches' checks), once for the page. */
  extra?: (rows: T[]) => Promise<X>
  row: (item: T, repo: ApiRepo, base: string, writable: boolean, extra: X | undefined) => Html
  /** Shown above the list (a deletion's restore offer). */
  above?: Html
}

/** A page of a list of refs, with its count, notices (or a refused form's message) and paging. */
async function refListPage<T, X = undefined>(deps: AppDeps, web: WebContext, ctx: RepoContext, spec: RefList<T, X>, pageNo: number | undefined, refused?: Refusal): Promise<Response> {
  const page = pageOf({ page: pageNo, limit: REFS_PER_PAGE })
  const [repo, found] = await Promise.all([pageRepo(deps, ctx), spec.list(page)])
  const extra = spec.extra ? await spec.extra(found.rows) : undefined
  const base = repoUrl(repo.owner.login, repo.name)
  const writable = refsWritable(ctx)
  return refsPage(
    web,
    repo,
    spec.current,
    spec.title,
    <>
      <h2>
        {spec.title} <span class="muted">({found.total})</span>
      </h2>
      <Notices ctx={web} error={refused?.error} />
      {spec.above ?? null}
      {found.total === 0 ? <p class="notice muted">This repository has no {spec.current} yet.</p> : null}
      <ul class="box entries">{found.rows.map((item) => <li>{spec.row(item, repo, base, writable, extra)}</li>)}</ul>
      <Pager path={web.path} page={page.page} pages={pagesOf(found.total, page.limit)} />
    </>,
    refused?.status,
  )
}

/** `/{o}/{r}/branches`: a page of branches; for writers each with its forms (ref-forms.tsx). */
const branchesPage = (deps: AppDeps, web: WebContext, ctx: RepoContext, pageNo: number | undefined, refused?: Refusal, deleted?: DeletedBranch | null) =>
  refListPage<BranchHead, Map<string, CommitChecks>>(
    deps,
    web,
    ctx,
    {
      current: 'branches',
      title: 'Branches',
      // Each branch's head commit's checks, read for the page at once.
      extra: (rows) => checksOf(deps, ctx, rows.map((b) => b.id)),
      above: deleted && refsWritable(ctx) ? <RestoreBranchForm web={web} base={repoUrl(ctx.owner.name, ctx.repo.name)} deleted={deleted} /> : undefined,
      list: (page) => branchHeads(deps, ctx, page),
      row: (b, repo, base, writable, checks) => (
        <>
          <a href={srcUrl(repo.owner.login, repo.name, 'branch', b.name)}>{b.name}</a>
          {b.name === repo.default_branch ? <span class="label">default</span> : null}
          <div class="muted">
            {subjectOf(b.message)}
            {checks?.get(b.id)?.state ? <> <ChecksIcon checks={checks.get(b.id)} href={`${commitUrl(repo, b.id)}#checks`} /></> : null} · {b.authorName} · <When iso={b.committerDate} /> · <a href={`${base}/commits/branch/${refPath(b.name)}`}>Commits</a>
            {b.name !== repo.default_branch ? (
              <>
                {' · '}
                <a href={`${base}/compare/${refPath(repo.default_branch)}...${refPath(b.name)}`}>Compare</a>
              </>
            ) : null}
          </div>
          {writable ? <BranchForms web={web} base={base} branch={b.name} isDefault={b.name === repo.default_branch} /> : null}
        </>
      ),
    },
    pageNo,
    refused,
  )

/** `/{o}/{r}/tags`: a page of tags, newest first; for writers each with its forms. */
const tagsPage = (deps: AppDeps, web: WebContext, ctx: RepoContext, pageNo: number | undefined, refused?: Refusal) =>
  refListPage<TagInfo>(
    deps,
    web,
    ctx,
    {
      current: 'tags',
      title: 'Tags',
      list: (page) => listRepoTags(deps, ctx, page),
      row: (tag, repo, base, writable) => (
        <>
          <a href={srcUrl(repo.owner.login, repo.name, 'tag', tag.name)}>{tag.name}</a>
          <div class="muted">
            {subjectOf(tag.message)} · <When iso={new Date(tag.created).toISOString()} /> ·{' '}
            <a href={`${base}/commit/${tag.commit}`}>
              <code>{tag.commit.slice(0, 10)}</code>
            </a>{' '}
            · <a href={`${base}/archive/${refPath(tag.name)}.zip`}>zip</a> · <a href={`${base}/archive/${refPath(tag.name)}.tar.gz`}>tar.gz</a>
          </div>
          {writable ? <TagForms web={web} base={base} tag={tag.name} /> : null}
        </>
      ),
    },
    pageNo,
    refused,
  )

/**
 * `/{o}/{r}/branches`, `/{o}/{r}/tags`, `/{o}/{r}/releases` (paged) and
 * `/{o}/{r}/releases/tag/{tag}` (a release's html_url): through the branches, tags and releases
 * services and converters, drafts only for writers as the API shows them. For writers, Gitea
 * 1.23's ref forms: `POST /branches/_new/{branch|tag|commit}/{name}` (a branch, or with
 * `create_tag` a tag, from that ref), `/branches/delete?name=`, `/settings/rename_branch`,
 * `/tags/delete?id=` (the tag's name), each through the branches and tags services the API
 * uses, so every ref moves through the one push path (protection, events, webhooks); a refusal
 * is shown on the list again with its message and status. A branch just deleted is offered for
 * restoring (`?deleted=`), `POST /branches/restore` with `branch_id`: the id of the outbox's
 * `ref.deleted` event that recorded it (modules/branches' `restoreBranch`).
 */
export const refPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/:owner/:repo/branches',
      async ({ request, query, repo: ctx }) => {
        const deleted = query.deleted && refsWritable(ctx) ? await deletedBranch(deps, ctx, query.deleted) : null
        return await branchesPage(deps, webContext(deps.config, request, ctx.caller), ctx, query.page, undefined, deleted)
      },
      { scope: 'repository', repo: { level: 'read' }, params: RepoParams, query: BranchesQuery, detail: pageDetail('webBranches') },
    )
    .get(
      '/:owner/:repo/tags',
      async ({ request, query, repo: ctx }) => await tagsPage(deps, webContext(deps.config, request, ctx.caller), ctx, query.page),
      { scope: 'repository', repo: { level: 'read' }, params: RepoParams, query: PageQuery, detail: pageDetail('webTags') },
    )
    .post(
      '/:owner/:repo/branches/_new/:kind/*',
      ({ request, caller, body, params, user, repo: ctx }) => {
        const again = (web: WebContext, error: string, status: number) =>
          ticked(body.create_tag) ? tagsPage(deps, web, ctx, 1, { error, status }) : branchesPage(deps, web, ctx, 1, { error, status })
        return formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            const kind = params.kind
            const from = refNameOf(params)
            const at = KINDS.has(kind) && from ? await resolveSource(deps, ctx, kind as SourceKind, from.split('/')) : null
            if (!at || at.path.length) throw notFound(`The ${KINDS.has(kind) ? kind : 'ref'} to start from does not exist [name: ${from ?? ''}]`)
            const name = (body.new_branch_name ?? '').trim()
            if (ticked(body.create_tag)) {
              await createTag(deps, ctx, user, { tag_name: name, target: at.commit })
              return seeOther(srcUrl(ctx.owner.name, ctx.repo.name, 'tag', name), 'tag-created')
            }
            await createBranch(deps, ctx, user, { new_branch_name: name, old_ref_name: at.commit })
            // Back to the folder or file the switcher was on, now on the new branch (Gitea's CurrentPath).
            const rest = normaliseTreePath(body.current_path ?? '') ?? []
            return seeOther(srcUrl(ctx.owner.name, ctx.repo.name, 'branch', name, rest), 'branch-created')
          },
          again,
        )
      },
      { ...WRITER, params: CreateParams, body: CreateForm, detail: pageDetail('webBranchCreate') },
    )
    .post(
      '/:owner/:repo/branches/delete',
      ({ request, caller, body, query, user, repo: ctx }) => {
        const name = query.name ?? body.name ?? ''
        return formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await deleteBranch(deps, ctx, user, name)
            // Back to the list, which offers the deletion just recorded for restoring.
            const deletion = await latestDeletion(deps, ctx, user, name)
            return seeOther(`${repoUrl(ctx.owner.name, ctx.repo.name)}/branches${deletion ? `?deleted=${deletion.id}` : ''}`, 'branch-deleted')
          },
          (web, error, status) => branchesPage(deps, web, ctx, 1, { error: `Branch ${name} was not deleted: ${error}`, status }),
        )
      },
      { ...WRITER, params: RepoParams, query: NameQuery, body: NameForm, detail: pageDetail('webBranchDelete') },
    )
    .post(
      '/:owner/:repo/branches/restore',
      ({ request, caller, body, user, repo: ctx }) => {
        return formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await restoreBranch(deps, ctx, user, Number(body.branch_id ?? ''))
            return seeOther(`${repoUrl(ctx.owner.name, ctx.repo.name)}/branches`, 'branch-restored')
          },
          (web, error, status) => branchesPage(deps, web, ctx, 1, { error: `Branch ${body.name ?? ''} was not restored: ${error}`, status }),
        )
      },
      { ...WRITER, params: RepoParams, body: RestoreForm, detail: pageDetail('webBranchRestore') },
    )
    .post(
      '/:owner/:repo/settings/rename_branch',
      ({ request, caller, body, user, repo: ctx }) => {
        return formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await renameBranch(deps, ctx, user, body.from ?? '', (body.to ?? '').trim())
            return seeOther(`${repoUrl(ctx.owner.name, ctx.repo.name)}/branches`, 'branch-renamed')
          },
          (web, error, status) => branchesPage(deps, web, ctx, 1, { error: `Branch ${body.from ?? ''} was not renamed: ${error}`, status }),
        )
      },
      { ...WRITER, params: RepoParams, body: RenameForm, detail: pageDetail('webBranchRename') },
    )
    .post(
      '/:owner/:repo/tags/delete',
      ({ request, caller, body, query, user, repo: ctx }) => {
        const name = query.id ?? body.id ?? ''
        return formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await deleteTag(deps, ctx, user, name)
            return seeOther(`${repoUrl(ctx.owner.name, ctx.repo.name)}/tags`, 'tag-deleted')
          },
          (web, error, status) => tagsPage(deps, web, ctx, 1, { error: `Tag ${name} was not deleted: ${error}`, status }),
        )
      },
      { ...WRITER, params: RepoParams, query: IdQuery, body: IdForm, detail: pageDetail('webTagDelete') },
    )
    .get(
      '/:owner/:repo/releases',
      async ({ request, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const page = pageOf({ page: query.page, limit: RELEASES_PER_PAGE })
        const [repo, found] = await Promise.all([pageRepo(deps, ctx), listReleases(deps, ctx, page, {})])
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
        const repo = await pageRepo(deps, ctx)
        const [shown] = await releaseRecords(deps, ctx, [row], deps.auth.clientAddress(request) ?? '')
        return refsPage(web, repo, 'releases', shown!.release.name || tag, <ReleaseView repo={repo} release={shown!.release} notes={shown!.notes} heading="h1" editable={releaseWriter(ctx)} />)
      },
      { scope: 'repository', repo: { level: 'read', unit: 'releases' }, params: TagParams, detail: pageDetail('webRelease') },
    )
