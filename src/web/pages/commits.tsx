/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Child, Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { type ApiRepo } from '../../convert/repo'
import { commitsToApi, type ApiCommit } from '../../convert/commit'
import { normaliseTreePath } from '../../git/blob'
import { emptyTreeOf } from '../../git/merge'
import { ApiError, apiErrorOfGit } from '../../lib/errors'
import { GitError } from '../../git/run'
import { pageOf } from '../../lib/pagination'
import { wildcardOf } from '../../modules/files/model'
import { commitDiff, commitDownloadOf, getCommit, listCommits } from '../../modules/commits/service'
import { filesWritable } from '../../modules/contents/write'
import { MAX_SEARCH_RESULTS, MAX_SEARCH_TEXT, commitSearchOf, searchCommits } from '../../modules/commits/search'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { errorPage } from '../errors'
import { DiffView } from '../diff'
import { readDiff } from '../diff-data'
import { cherryPickUrl, historyUrl, refPath, repoUrl, srcUrl } from '../links'
import { resolveSource, type SourceAt, type SourceKind } from '../source-data'
import { RepoHeader, pageRepo } from './repo-chrome'
import { CodeNav, Pager, When } from './code-nav'
import { FormText, pagesOf, seeOther } from '../forms'
import { checksOf, ChecksIcon, ChecksList } from './commit-checks'
import type { CommitChecks } from '../../convert/status'
import { numeric } from '../../lib/validate'

/** Commits a history page lists. */
export const COMMITS_PER_PAGE = 30
const KINDS = new Set(['branch', 'tag', 'commit'])
const MAX_SOURCE_PATH = 4096

const RepoParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })
const HistoryParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), kind: t.String({ maxLength: 10 }) }, { additionalProperties: true })
const ShaParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), sha: t.String({ maxLength: 256 }) })
/** A history address's query: its page; on `…/search`, Gitea's `q` and `all`. */
const HistoryQuery = t.Object({ page: t.Optional(numeric()), q: FormText(4096), all: FormText(8) })

export const shortSha = (sha: string) => sha.slice(0, 10)
export const subjectOf = (message: string) => message.split('\n', 1)[0]!
export const commitUrl = (repo: ApiRepo, sha: string) => `${repoUrl(repo.owner.login, repo.name)}/commit/${sha}`

/** Who made a commit: their account's page when the address is a verified one of an account, else the name from git. */
export function Author(props: { commit: ApiCommit }): Html {
  const c = props.commit
  return c.author ? <a href={`/${encodeURIComponent(c.author.login)}`}>{c.author.login}</a> : <span>{c.commit.author.name}</span>
}

/**
 * A commit's signature as the list shows it (Gitea's shield): "Verified" naming the signer and
 * key, "Unverified" for a signature no key of the committer's verifies; nothing for an unsigned
 * commit or a record without its verification.
 */
export function SignatureMark(props: { commit: ApiCommit }): Html {
  const v = props.commit.commit.verification
  if (!v || !v.signature) return <></>
  return v.verified ? (
    <span class="label signature signature-verified" title={`Signed by ${v.reason}`}>
      Verified
    </span>
  ) : (
    <span class="label signature signature-unverified" title="Signed, but by no key of the committer that Warren knows">
      Unverified
    </span>
  )
}

/** The commit page's signature fact: who signed with which key, or why it is not verified. */
function SignatureFact(props: { commit: ApiCommit }): Html {
  const v = props.commit.commit.verification
  if (!v || !v.signature) return <></>
  const keyId = v.reason.split(' / ')[1] ?? ''
  return (
    <>
      <dt>Signature</dt>
      <dd>
        <SignatureMark commit={props.commit} />{' '}
        {v.verified && v.signer ? (
          <>
            Signed by <a href={`/${encodeURIComponent(v.signer.username)}`}>{v.signer.username}</a> · {keyId.startsWith('SHA256:') ? 'SSH key' : 'GPG key ID'} <code>{keyId}</code>
          </>
        ) : (
          <span class="muted">No known key of the committer verifies this signature.</span>
        )}
      </dd>
    </>
  )
}

/** A list of commits (a history page, a comparison, a pull request's): subject and short id linking to the commit, its signature, its checks' combined state (`checks`: the page's, checksOf), author, time. */
export function CommitList(props: { repo: ApiRepo; commits: ApiCommit[]; checks?: Map<string, CommitChecks> }): Html {
  return (
    <ol class="box entries commits">
      {props.commits.map((c) => (
        <li>
          <a href={commitUrl(props.repo, c.sha)}>{subjectOf(c.commit.message)}</a> <SignatureMark commit={c} />
          <ChecksIcon checks={props.checks?.get(c.sha)} href={`${commitUrl(props.repo, c.sha)}#checks`} />
          <div class="muted">
            <Author commit={c} /> committed <When iso={c.commit.committer.date} /> ·{' '}
            <a href={commitUrl(props.repo, c.sha)}>
              <code>{shortSha(c.sha)}</code>
            </a>
          </div>
        </li>
      ))}
    </ol>
  )
}

/** A folder's latest commit (the repository home's line): the commit's record and its checks, read together. */
export async function latestCommitOf(deps: AppDeps, ctx: RepoContext, sha: string): Promise<{ commit: ApiCommit; checks: CommitChecks | undefined }> {
  const [row, checks] = await Promise.all([getCommit(deps, ctx, sha, { stats: false, files: false }), checksOf(deps, ctx, [sha])])
  const [commit] = await commitsToApi(deps, ctx, [row], ctx.caller.user)
  return { commit: commit!, checks: checks.get(sha) }
}

/** The latest commit line above a folder's list (Gitea's latest_commit.tmpl): author, subject, its checks' combined state, short id, time, the history's link. */
export function LatestCommit(props: { repo: ApiRepo; latest: { commit: ApiCommit; checks: CommitChecks | undefined }; history: string }): Html {
  const c = props.latest.commit
  const url = commitUrl(props.repo, c.sha)
  return (
    <p class="box notice latest-commit">
      <Author commit={c} /> <a href={url}>{subjectOf(c.commit.message)}</a> <ChecksIcon checks={props.latest.checks} href={`${url}#checks`} /> ·{' '}
      <a href={url}>
        <code>{shortSha(c.sha)}</code>
      </a>{' '}
      · <When iso={c.commit.committer.date} /> · <a href={props.history}>History</a>
    </p>
  )
}

/** The history page's tools: Gitea's commit search (a GET to `{history}/search`: `q`, `all`) and the link to the commit graph. */
function HistoryTools(props: { repo: ApiRepo; kind: SourceKind; ref: string; q?: string; all?: boolean }): Html {
  const { repo } = props
  const owner = repo.owner.login
  return (
    <div class="history-tools">
      <form class="row commit-search" method="get" action={`${historyUrl(owner, repo.name, props.kind, props.ref, [])}/search`} role="search" aria-label="Commits">
        <label class="sr-only" for="commit-search-q">
          Search commits
        </label>
        <input id="commit-search-q" type="search" name="q" value={props.q ?? ''} maxlength={String(MAX_SEARCH_TEXT)} placeholder="Search commits" />
        <label>
          <input type="checkbox" name="all" value="true" checked={props.all ?? false} /> All branches
        </label>
        <button class="secondary" type="submit">
          Search
        </button>
      </form>
      <a href={`${repoUrl(owner, repo.name)}/graph`}>Commit graph</a>
    </div>
  )
}

/** The history page's frame: header, tabs, the heading, the tools; `body` under them. */
function historyFrame(web: WebContext, repo: ApiRepo, title: string, heading: Child, tools: Child, body: Child, status = 200, feed?: Parameters<typeof Layout>[0]['feed']) {
  return htmlResponse(
    <Layout ctx={web} title={title} feed={feed}>
      <RepoHeader repo={repo} />
      <CodeNav repo={repo} current="commits" />
      <h2>{heading}</h2>
      {tools}
      {body}
    </Layout>,
    status,
  )
}

/** What a history address asks: the page, and a search's text and scope. */
type HistoryQuery = { page?: number; q?: string; all?: string }

/** The page of a repository's history, from `at` (the branch, tag or commit) and within `path`; its search when the path is `search` (Gitea's). */
async function historyPage(deps: AppDeps, ctx: RepoContext, web: WebContext, kind: SourceKind, segments: string[], query: HistoryQuery) {
  const repo = await pageRepo(deps, ctx)
  if (ctx.repo.isEmpty)
    return historyFrame(web, repo, `Commits · ${repo.full_name}`, 'Commits', <a href={`${repoUrl(repo.owner.login, repo.name)}/graph`}>Commit graph</a>, <p class="notice muted">This repository is empty: it has no commits yet.</p>)
  const at = await resolveSource(deps, ctx, kind, segments)
  if (!at) return errorPage(404, 'no such ref', web)
  if (at.path.length === 1 && at.path[0] === 'search') return searchPage(deps, ctx, web, repo, at, query)
  const page = pageOf({ page: query.page, limit: COMMITS_PER_PAGE })
  const path = at.path.join('/')
  let found
  try {
    found = await listCommits(deps, ctx, { sha: at.commit, path: path || undefined }, page, { stats: false, files: false })
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return errorPage(404, e.message, web)
    throw e
  }
  const [commits, checks] = await Promise.all([commitsToApi(deps, ctx, found.rows, ctx.caller.user, { verification: true }), checksOf(deps, ctx, found.rows.map((c) => c.id))])
  const where = at.kind === 'commit' ? shortSha(at.ref) : at.ref
  return historyFrame(
    web,
    repo,
    `Commits · ${where}${path ? ` · ${path}` : ''} · ${repo.full_name}`,
    <>
      Commits on <a href={srcUrl(repo.owner.login, repo.name, at.kind, at.ref, at.path)}>{where}{path ? ` / ${path}` : ''}</a>{' '}
      <span class="muted">({found.total})</span>
    </>,
    <HistoryTools repo={repo} kind={at.kind} ref={at.ref} />,
    <>
      <CommitList repo={repo} commits={commits} checks={checks} />
      <Pager path={web.path} page={page.page} pages={pagesOf(found.total, page.limit)} labels={['Newer', 'Older']} />
    </>,
    200,
    // A branch's history (or a file's on a branch) has Gitea's feed of its latest commits.
    at.kind === 'branch' ? { title: path ? `Latest commits for file ${path}` : `Latest commits for branch ${at.ref}`, rss: `${repoUrl(repo.owner.login, repo.name)}/rss/branch/${refPath(at.ref)}${path ? '/' + refPath(path) : ''}` } : undefined,
  )
}

/**
 * Gitea's commit search, `/{o}/{r}/commits/{kind}/{ref}/search?q=&all=` (modules/commits/search.ts):
 * the commits from the ref (with `all`, every branch and tag too) whose message has a keyword,
 * by the `author:` / `committer:` given, within `after:` / `before:`, at most MAX_SEARCH_RESULTS,
 * in the history's list; no text goes back to the history, a text that cannot be searched is a
 * 422 with its reason.
 */
async function searchPage(deps: AppDeps, ctx: RepoContext, web: WebContext, repo: ApiRepo, at: SourceAt, query: HistoryQuery) {
  const q = (query.q ?? '').trim()
  if (!q) return seeOther(historyUrl(repo.owner.login, repo.name, at.kind, at.ref, []))
  const all = /^(1|t|true|on)$/i.test(query.all ?? '')
  let problem: ApiError | null = null
  let found: ApiCommit[] | null = null
  let checks: Map<string, CommitChecks> | undefined
  try {
    found = await commitsToApi(deps, ctx, await searchCommits(deps, ctx, at.commit, commitSearchOf(q), all), ctx.caller.user, { verification: true })
    checks = await checksOf(deps, ctx, found.map((c) => c.sha))
  } catch (e) {
    if (e instanceof GitError && e.kind !== 'failed') problem = apiErrorOfGit(e)
    else if (e instanceof ApiError && e.status < 500) problem = e
    else throw e
  }
  const where = at.kind === 'commit' ? shortSha(at.ref) : at.ref
  return historyFrame(
    web,
    repo,
    `Search commits “${q.slice(0, 60)}” · ${where} · ${repo.full_name}`,
    <>
      Commits on <a href={historyUrl(repo.owner.login, repo.name, at.kind, at.ref, [])}>{where}</a>
      {all ? ' and every branch' : ''} matching “{q}” {found ? <span class="muted">({found.length === MAX_SEARCH_RESULTS ? `the first ${found.length}` : found.length})</span> : null}
    </>,
    <HistoryTools repo={repo} kind={at.kind} ref={at.ref} q={q} all={all} />,
    problem ? (
      <p class="error" role="alert">
        {problem.message.replace(/^\[q\]: /, '')}
      </p>
    ) : found!.length ? (
      <CommitList repo={repo} commits={found!} checks={checks} />
    ) : (
      <p class="notice muted">No commits match “{q}”.</p>
    ),
    problem?.status ?? 200,
  )
}

/**
 * `/{o}/{r}/commits/{branch|tag|commit}/{ref}/{path}` (and `/commits`: the default branch): the
 * history, paged, through the commits API's own service; `/{o}/{r}/commit/{sha}`: one commit
 * with its message, author, parents and diff (`{sha}.diff` / `.patch`: the API's download).
 */
export const commitPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/:owner/:repo/commits',
      async ({ request, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        return historyPage(deps, ctx, web, 'branch', ctx.repo.defaultBranch.split('/'), query)
      },
      { scope: 'repository', repo: { level: 'read' }, params: RepoParams, query: HistoryQuery, detail: pageDetail('webCommitsDefault') },
    )
    .get(
      '/:owner/:repo/commits/:kind/*',
      async ({ request, params, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const wildcard = wildcardOf(params)
        const segments = wildcard.length <= MAX_SOURCE_PATH ? normaliseTreePath(wildcard) : null
        if (!KINDS.has(params.kind) || !segments) return errorPage(404, 'no such ref', web)
        return historyPage(deps, ctx, web, params.kind as SourceKind, segments, query)
      },
      { scope: 'repository', repo: { level: 'read' }, params: HistoryParams, query: HistoryQuery, detail: pageDetail('webCommits') },
    )
    .get(
      '/:owner/:repo/commit/:sha',
      async ({ request, params, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const { sha: name, kind } = commitDownloadOf(params.sha)
        if (kind) return commitDiff(deps, ctx, name, kind)
        let found
        try {
          found = await getCommit(deps, ctx, name, { stats: true, files: false })
        } catch (e) {
          if (e instanceof ApiError && (e.status === 404 || e.status === 422)) return errorPage(404, e.message, web)
          throw e
        }
        const [repo, [commit], checks] = await Promise.all([
          pageRepo(deps, ctx),
          commitsToApi(deps, ctx, [found], ctx.caller.user, { verification: true }),
          checksOf(deps, ctx, [found.id]),
        ])
        const diff = await readDiff(gitRepoOf(deps, ctx), found.parents[0] ?? (await emptyTreeOf(gitRepoOf(deps, ctx))), found.id)
        const message = commit!.commit.message
        const subject = subjectOf(message)
        const rest = message.slice(subject.length).trim()
        const owner = repo.owner.login
        return htmlResponse(
          <Layout ctx={web} title={`${subject} · ${shortSha(found.id)} · ${repo.full_name}`}>
            <RepoHeader repo={repo} />
            <CodeNav repo={repo} current="commits" />
            <article class="box commit">
              <header>
                <h2 class="commit-subject">
                  {subject}
                  {checks.get(found.id)?.state ? <> <ChecksIcon checks={checks.get(found.id)} href="#checks" /></> : null}
                </h2>
              </header>
              {rest ? <pre class="commit-message">{rest}</pre> : null}
              <dl class="commit-facts">
                <dt>Author</dt>
                <dd>
                  <Author commit={commit!} /> <span class="muted">&lt;{commit!.commit.author.email}&gt;</span>, <When iso={commit!.commit.author.date} />
                </dd>
                {commit!.commit.committer.email !== commit!.commit.author.email || commit!.commit.committer.name !== commit!.commit.author.name ? (
                  <>
                    <dt>Committer</dt>
                    <dd>
                      {commit!.commit.committer.name}, <When iso={commit!.commit.committer.date} />
                    </dd>
                  </>
                ) : null}
                <SignatureFact commit={commit!} />
                <dt>Commit</dt>
                <dd>
                  <code>{found.id}</code> · <a href={srcUrl(owner, repo.name, 'commit', found.id)}>Browse files</a>
                </dd>
                <dt>{found.parents.length === 1 ? 'Parent' : 'Parents'}</dt>
                <dd>
                  {found.parents.length === 0
                    ? 'none (the first commit)'
                    : found.parents.map((p, i) => (
                        <>
                          {i > 0 ? ' · ' : ''}
                          <a href={commitUrl(repo, p)}>
                            <code>{shortSha(p)}</code>
                          </a>
                        </>
                      ))}
                </dd>
              </dl>
              {checks.has(found.id) ? (
                <div id="checks" class="notice">
                  <ChecksList checks={checks.get(found.id)} />
                </div>
              ) : null}
              {filesWritable(ctx) && !ctx.repo.isEmpty ? (
                <p class="repo-actions">
                  <a class="button" href={cherryPickUrl(owner, repo.name, found.id, ctx.repo.defaultBranch)}>
                    Cherry-pick
                  </a>
                  <a class="button" href={cherryPickUrl(owner, repo.name, found.id, ctx.repo.defaultBranch, true)}>
                    Revert
                  </a>
                </p>
              ) : null}
            </article>
            {diff ? (
              <DiffView diff={diff} viewUrl={(path) => srcUrl(owner, repo.name, 'commit', found.id, path.split('/'))} rawUrl={`${commitUrl(repo, found.id)}.diff`} />
            ) : (
              <p class="notice muted">The changes of this commit cannot be shown.</p>
            )}
          </Layout>,
        )
      },
      { scope: 'repository', repo: { level: 'read' }, params: ShaParams, detail: pageDetail('webCommit') },
    )
