/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Child, Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { AccessMode } from '../../auth/access'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { type ApiRepo } from '../../convert/repo'
import { commitsToApi } from '../../convert/commit'
import { pullToApi, type ApiPull } from '../../convert/pull'
import { branchExists } from '../../git/refs'
import { ApiError } from '../../lib/errors'
import { RepoWildcardParams, wildcardOf } from '../../modules/files/model'
import { compare, parseBasehead, type Comparison } from '../../modules/commits/service'
import { createPull } from '../../modules/pulls/service'
import { pullTemplate } from '../../modules/issue-templates/service'
import { pullCommitCount, pullCommits } from '../../modules/pulls/compare'
import { findPull } from '../../modules/pulls/service'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { formRoute, pageNumber, pagesOf, Pager } from '../forms'
import { pageOf } from '../../lib/pagination'
import { errorPage } from '../errors'
import { DiffView } from '../diff'
import { readDiff } from '../diff-data'
import { refPath, repoUrl, srcUrl } from '../links'
import { RepoHeader, pageRepo } from './repo-chrome'
import { CodeNav } from './code-nav'
import { CommitList, COMMITS_PER_PAGE } from './commits'
import { checksOf } from './commit-checks'
import { askedLine, lineNotes, loadLineComments } from './line-notes'
import { numeric } from '../../lib/validate'

const WildParams = RepoWildcardParams
const PullParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), index: numeric({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) })
/** `comment`: the line a form is opened under (line-notes.tsx's `askedLine`). */
const FilesQuery = t.Object({ comment: t.Optional(t.String({ maxLength: 32 })) })
const CommitsQuery = t.Object({ page: t.Optional(t.String({ maxLength: 16 })) })
const FormText = (max: number) => t.Optional(t.String({ maxLength: max }))
const PullForm = t.Object({ title: FormText(255), body: FormText(65536), _csrf: FormText(128) })


/** What a pull request's commits and files pages say when its head and base cannot be compared. */
const UNCOMPARED = 'The changes of this pull request cannot be shown yet: its head and base share no history, or it was not checked yet.'

/** `promise`'s value, or null when it was refused with a 404 (a pull request not compared yet). */
async function unlessNotFound<T>(promise: Promise<T>): Promise<T | null> {
  try {
    return await promise
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null
    throw e
  }
}

/** A pull request's commit count and ends (merge base, head), or null when it has none yet. */
export const commitCountOf = (deps: AppDeps, ctx: RepoContext, index: number) => unlessNotFound(pullCommitCount(deps, ctx, index))

/** A pull request's tabs (Gitea's): its conversation, its commits (base..head, counted when known) and the files it changes. */
export function PullTabs(props: { url: string; tab: 'conversation' | 'commits' | 'files'; commits: number | null; files: number }): Html {
  const tab = (name: typeof props.tab, href: string, label: string, count: number | null) => (
    <li>
      <a href={href} aria-current={props.tab === name ? 'page' : undefined}>
        {label}
        {count === null ? null : <span class="muted"> ({count})</span>}
      </a>
    </li>
  )
  return (
    <nav class="code-nav" aria-label="Pull request">
      <ul>
        {tab('conversation', props.url, 'Conversation', null)}
        {tab('commits', `${props.url}/commits`, 'Commits', props.commits)}
        {tab('files', `${props.url}/files`, 'Files changed', props.files)}
      </ul>
    </nav>
  )
}

/** The frame of a pull request's commits and files pages: its title, state, ends and tabs. */
function PullFrame(props: { web: WebContext; repo: ApiRepo; pull: ApiPull; tab: 'commits' | 'files'; commits: number | null; children?: Child }): Html {
  const { repo, pull } = props
  const state = pull.merged ? 'Merged' : pull.state === 'closed' ? 'Closed' : pull.mergeable ? 'Open · can be merged' : 'Open · cannot be merged automatically (yet)'
  return (
    <Layout ctx={props.web} title={`${props.tab === 'files' ? 'Files' : 'Commits'} · ${pull.title} · #${pull.number} · ${repo.full_name}`}>
      <RepoHeader repo={repo} />
      <CodeNav repo={repo} current="pulls" />
      <h2>
        {pull.title} <span class="muted">#{pull.number}</span>
      </h2>
      <p>
        <span class="label">{state}</span> {pull.user.login} wants to merge <code>{pull.head.label}</code> into <code>{pull.base.label}</code>
      </p>
      <PullTabs url={`${repoUrl(repo.owner.login, repo.name)}/pulls/${pull.number}`} tab={props.tab} commits={props.commits} files={pull.changed_files} />
      {props.children}
    </Layout>
  )
}

/** The base and head names of a compare path (`base...head`), decoded; null when it cannot be decoded. */
function specOf(wildcard: string, defaultBranch: string) {
  try {
    return parseBasehead(decodeURIComponent(wildcard), defaultBranch)
  } catch {
    return null
  }
}

/**
 * Whether the comparison may open a pull request: from their merge base, the base a branch of this
 * repository, the head a branch of it or of a fork (the comparison found a fork's head by its
 * branch; the pull request service then asks for write access to it).
 */
async function opensPull(deps: AppDeps, ctx: RepoContext, found: Comparison) {
  const { spec, headAt } = found
  if (spec.direct || !ctx.repo.hasPullRequests || !ctx.caller.user) return false
  const git = gitRepoOf(deps, ctx)
  const forkHead = headAt.owner !== ctx.owner.name || headAt.repo !== ctx.repo.name
  return (await branchExists(git, spec.base)) && (forkHead || (await branchExists(git, headAt.name)))
}

function PullRequestForm(props: { web: WebContext; action: string; title: string; body: string; error?: string }): Html {
  return (
    <section class="box" aria-labelledby="new-pull">
      <header>
        <h2 id="new-pull">Open a pull request</h2>
      </header>
      <form class="stack wide notice" method="post" action={props.action}>
        {props.error ? (
          <p class="error" role="alert">
            {props.error}
          </p>
        ) : null}
        <input type="hidden" name="_csrf" value={props.web.csrf ?? ''} />
        <label>
          Title
          <input name="title" required maxlength="255" value={props.title} />
        </label>
        <label>
          Description
          <textarea name="body" rows="6">
            {props.body}
          </textarea>
        </label>
        <div>
          <button class="primary" type="submit">
            Create pull request
          </button>
        </div>
      </form>
    </section>
  )
}

/** The compare page: the two ends, the commits between them, the pull request form, the diff. */
async function comparePage(deps: AppDeps, ctx: RepoContext, web: WebContext, wildcard: string, form: { title: string; body: string; error?: string } | null, status = 200) {
  const spec = specOf(wildcard, ctx.repo.defaultBranch)
  if (!spec) return errorPage(404, 'no such refs', web)
  let found
  try {
    found = await compare(deps, ctx, wildcard, false, { changed: false })
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return errorPage(404, e.message, web)
    throw e
  }
  const [repo, commits, diff, canOpen] = await Promise.all([
    pageRepo(deps, ctx),
    commitsToApi(deps, ctx, found.commits, ctx.caller.user, { verification: true, git: found.git }),
    readDiff(found.git, found.from, found.head),
    opensPull(deps, ctx, found),
  ])
  const owner = repo.owner.login
  const base = repoUrl(owner, repo.name)
  const { headAt } = found
  const headHere = headAt.owner === owner && headAt.repo === repo.name
  const headLabel = headHere ? headAt.name : `${headAt.owner}/${headAt.repo}:${headAt.name}`
  // The commits listed are the head's: they link to its repository's pages (a fork's, whose objects the base does not hold).
  const headRepo = headHere ? repo : { ...repo, name: headAt.repo, owner: { ...repo.owner, login: headAt.owner } }
  const firstSubject = commits.length ? commits[commits.length - 1]!.commit.message.split('\n', 1)[0]! : ''
  // Gitea's compare page: a new pull request's description starts from the base branch's pull request template.
  const template = canOpen && !form && found.total > 0 ? await pullTemplate(deps, ctx, spec.base) : null
  return htmlResponse(
    <Layout ctx={web} title={`Comparing ${spec.base}${spec.direct ? '..' : '...'}${headLabel} · ${repo.full_name}`}>
      <RepoHeader repo={repo} />
      <CodeNav repo={repo} current="compare" />
      <h2>
        Comparing <a href={srcUrl(owner, repo.name, 'branch', spec.base)}>{spec.base}</a> {spec.direct ? '..' : '...'} <a href={srcUrl(headAt.owner, headAt.repo, 'branch', headAt.name)}>{headLabel}</a>
      </h2>
      {found.total === 0 ? (
        <p class="notice muted">
          {headLabel} has no commits that {spec.base} does not have.
        </p>
      ) : canOpen ? (
        <PullRequestForm web={web} action={`${base}/compare/${refPath(spec.base)}...${refPath(spec.head)}`} title={form?.title ?? firstSubject} body={form?.body ?? template?.content ?? ''} error={form?.error} />
      ) : !ctx.caller.user && repo.has_pull_requests ? (
        <p class="notice">
          <a href={`/user/login?redirect_to=${encodeURIComponent(web.path)}`}>Sign in</a> to open a pull request.
        </p>
      ) : null}
      <h3>
        Commits <span class="muted">({found.total})</span>
      </h3>
      <CommitList repo={headRepo} commits={commits} />
      {found.total > commits.length ? <p class="muted">{found.total - commits.length} more commits are not listed.</p> : null}
      <h3>Files</h3>
      {diff ? <DiffView diff={diff} viewUrl={(path) => srcUrl(headAt.owner, headAt.repo, 'commit', found.head, path.split('/'))} /> : <p class="notice muted">The changes cannot be shown.</p>}
    </Layout>,
    status,
  )
}

/**
 * `/{o}/{r}/compare/{base}...{head}` (the commits API's comparison, its diff through the diff
 * component; a signed-in reader of a repository with pull requests sees the form opening one,
 * whose POST calls the pull request service the API calls, then goes to `/pulls/{n}`), and
 * `/{o}/{r}/pulls/{n}/files`: a pull request's diff (merge base to head) with its review line
 * comments and, for a signed-in reader, a comment form per line (line-notes.tsx), its merge state,
 * its tabs; `/{o}/{r}/pulls/{n}/commits`: its commits (merge base to head, newest first, paged) from
 * the service the API's GET …/pulls/{n}/commits lists them with.
 */
export const comparePages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/:owner/:repo/compare/*',
      ({ request, params, repo: ctx }) => comparePage(deps, ctx, webContext(deps.config, request, ctx.caller), wildcardOf(params), null),
      { scope: 'repository', repo: { level: 'read' }, params: WildParams, detail: pageDetail('webCompare') },
    )
    .post(
      '/:owner/:repo/compare/*',
      ({ request, caller, body, params, user, repo: ctx }) => {
        const wildcard = wildcardOf(params)
        const title = (body.title ?? '').trim()
        const text = body.body ?? ''
        // Only a comparison from the merge base opens a pull request (nothing changes here).
        const spec = specOf(wildcard, ctx.repo.defaultBranch)
        if (!spec || spec.direct) return errorPage(404, 'no such refs', webContext(deps.config, request, caller))
        return formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            // The head as the comparison names it: a branch here, `owner:branch` or `owner/repo:branch` of a fork.
            const { issue } = await createPull(deps, ctx, user, { head: spec.head, base: spec.base, title, body: text })
            return `${repoUrl(ctx.owner.name, ctx.repo.name)}/pulls/${issue.index}`
          },
          (web, error, status) => comparePage(deps, ctx, web, wildcard, { title, body: text, error }, status),
        )
      },
      { scope: 'repository', repo: { unit: 'pulls' }, signed: true, params: WildParams, body: PullForm, detail: pageDetail('webComparePull') },
    )
    .get(
      '/:owner/:repo/pulls/:index/files',
      async ({ request, params, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const item = await findPull(deps, ctx.repo.id, params.index)
        const [repo, record, ends] = await Promise.all([
          pageRepo(deps, ctx),
          pullToApi(deps, ctx, item, ctx.caller.user),
          commitCountOf(deps, ctx, params.index),
        ])
        const [diff, comments] = await Promise.all([
          ends ? readDiff(gitRepoOf(deps, ctx), ends.base, ends.head) : null,
          loadLineComments(deps, ctx, item, deps.auth.clientAddress(request) ?? ''),
        ])
        const owner = repo.owner.login
        const conversation = `${repoUrl(owner, repo.name)}/pulls/${record.number}`
        const commenting = !!ctx.caller.user && record.state === 'open' && !record.merged && (!record.is_locked || ctx.mode >= AccessMode.Write)
        const lines = diff ? lineNotes({ diff, comments, web, conversation, commenting, asked: askedLine(query.comment) }) : null
        return htmlResponse(
          <PullFrame web={web} repo={repo} pull={record} tab="files" commits={ends?.total ?? null}>
            {commenting ? <p class="muted">A line's number opens a form commenting on it.</p> : null}
            {lines?.apart}
            {diff && ends ? (
              <DiffView diff={diff} viewUrl={(path) => srcUrl(owner, repo.name, 'commit', ends.head, path.split('/'))} rawUrl={`${conversation}.diff`} notes={lines?.notes} />
            ) : (
              <p class="notice muted">{UNCOMPARED}</p>
            )}
          </PullFrame>,
        )
      },
      { scope: 'repository', repo: { level: 'read', unit: 'pulls' }, params: PullParams, query: FilesQuery, detail: pageDetail('webPullFiles') },
    )
    .get(
      '/:owner/:repo/pulls/:index/commits',
      async ({ request, params, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const item = await findPull(deps, ctx.repo.id, params.index)
        const page = pageOf({ page: pageNumber(query.page), limit: COMMITS_PER_PAGE })
        const [repo, record, found] = await Promise.all([
          pageRepo(deps, ctx),
          pullToApi(deps, ctx, item, ctx.caller.user),
          unlessNotFound(pullCommits(deps, ctx, params.index, page, { files: false })),
        ])
        // The checks of a pull request's commits are the base repository's (where they are posted for the pull request).
        const [commits, checks] = found ? await Promise.all([commitsToApi(deps, ctx, found.rows, ctx.caller.user, { verification: true }), checksOf(deps, ctx, found.rows.map((c) => c.id))]) : [[], undefined]
        return htmlResponse(
          <PullFrame web={web} repo={repo} pull={record} tab="commits" commits={found?.total ?? null}>
            {found ? (
              <>
                <CommitList repo={repo} commits={commits} checks={checks} />
                <Pager path={web.path} page={page.page} pages={pagesOf(found.total, page.limit)} labels={['Newer', 'Older']} />
              </>
            ) : (
              <p class="notice muted">{UNCOMPARED}</p>
            )}
          </PullFrame>,
        )
      },
      { scope: 'repository', repo: { level: 'read', unit: 'pulls' }, params: PullParams, query: CommitsQuery, detail: pageDetail('webPullCommits') },
    )
