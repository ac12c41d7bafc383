/** @jsxImportSource warren-jsx */
import type { Child, Html } from 'warren-jsx/jsx-runtime'
import { repoToApi, type ApiRepo } from '../../convert/repo'
import type { AppDeps } from '../../deps'
import { AccessMode, type RepoUnitKey } from '../../auth/access'
import { modeIn, type RepoContext } from '../../auth/repo-context'
import { findUrl, ownerUrl, repoUrl, searchUrl, srcUrl, topicSearchUrl } from '../links'
import { MAX_GREP_QUERY } from '../../git/grep'
import type { SourceAt } from '../source-data'
import type { WebContext } from '../context'
import { CreateRefForm } from './ref-forms'

/**
 * The repository's record as its pages show it (the API's converter): a unit the caller's teams
 * give them none of shows as off, so no tab or link of the page leads to its 404 (per-unit team
 * permissions; the pipeline still decides every request).
 */
export async function pageRepo(deps: AppDeps, ctx: RepoContext): Promise<ApiRepo> {
  const repo = await repoToApi(deps, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode)
  if (!ctx.access?.units) return repo
  const reads = (unit: RepoUnitKey) => modeIn(ctx, unit) >= AccessMode.Read
  return {
    ...repo,
    has_issues: repo.has_issues && reads('repo.issues'),
    has_pull_requests: repo.has_pull_requests && reads('repo.pulls'),
    has_wiki: repo.has_wiki && reads('repo.wiki'),
    has_releases: repo.has_releases && reads('repo.releases'),
    has_projects: repo.has_projects && reads('repo.projects'),
    has_packages: repo.has_packages && reads('repo.packages'),
  }
}

/**
 * The top of every repository page: its name, description, topics and counts, the code search box
 * (Gitea's, to `/{o}/{r}/search`; left out where the page is that search, `search: false`), and
 * the page's action buttons, if given.
 */
export function RepoHeader(props: { repo: ApiRepo; actions?: Child; search?: boolean }): Html {
  const { repo } = props
  const owner = repo.owner.login
  return (
    <section aria-label="Repository">
      <h1>
        <a href={ownerUrl(owner)}>{owner}</a> / <a href={repoUrl(owner, repo.name)}>{repo.name}</a>
        {repo.private ? <span class="muted"> (private)</span> : null}
        {repo.archived ? <span class="muted"> (archived)</span> : null}
      </h1>
      {repo.fork && repo.parent ? (
        <p class="muted">
          forked from <a href={repoUrl(repo.parent.owner.login, repo.parent.name)}>{repo.parent.full_name}</a>
        </p>
      ) : null}
      {repo.mirror && /^(https?|git):\/\//.test(repo.original_url) ? <p class="muted">mirror of {repo.original_url}</p> : null}
      {repo.description ? <p>{repo.description}</p> : null}
      {repo.topics?.length ? (
        <ul class="topics" aria-label="Topics">
          {repo.topics.map((t) => (
            <li>
              <a href={topicSearchUrl(t)}>{t}</a>
            </li>
          ))}
        </ul>
      ) : null}
      <ul class="counts" aria-label="Counts">
        <li>
          <a href={`${repoUrl(owner, repo.name)}/stars`}>{repo.stars_count} stars</a>
        </li>
        <li>
          <a href={`${repoUrl(owner, repo.name)}/forks`}>{repo.forks_count} forks</a>
        </li>
        <li>
          <a href={`${repoUrl(owner, repo.name)}/watchers`}>{repo.watchers_count} watchers</a>
        </li>
        {repo.has_issues ? (
          <li>
            <a href={`${repoUrl(owner, repo.name)}/issues`}>{repo.open_issues_count} open issues</a>
          </li>
        ) : null}
        {repo.has_pull_requests ? (
          <li>
            <a href={`${repoUrl(owner, repo.name)}/pulls`}>{repo.open_pr_counter} open pull requests</a>
          </li>
        ) : null}
      </ul>
      {props.search === false ? null : <CodeSearchForm repo={props.repo} />}
      {props.actions}
    </section>
  )
}

/** The code search's form (a GET: no CSRF); `q` and `fuzzy` as given when the page is the search's. */
export function CodeSearchForm(props: { repo: ApiRepo; q?: string; fuzzy?: boolean; full?: boolean }): Html {
  const { repo } = props
  return (
    <form class="row code-search" method="get" action={searchUrl(repo.owner.login, repo.name)} role="search" aria-label="Code">
      <label class={props.full ? undefined : 'sr-only'} for={props.full ? 'code-search-q' : 'code-search-box'}>
        Search this repository's code
      </label>
      <input id={props.full ? 'code-search-q' : 'code-search-box'} type="search" name="q" value={props.q ?? ''} maxlength={String(MAX_GREP_QUERY)} placeholder="Search code" />
      {props.full ? (
        <>
          <label class="sr-only" for="code-search-fuzzy">
            Match
          </label>
          <select id="code-search-fuzzy" name="fuzzy">
            <option value="true" selected={props.fuzzy !== false}>
              Any word (fuzzy)
            </option>
            <option value="false" selected={props.fuzzy === false}>
              The exact text
            </option>
          </select>
        </>
      ) : null}
      <button class="secondary" type="submit">
        Search
      </button>
    </form>
  )
}

/**
 * The branch switcher: a list of links inside a disclosure (works without JavaScript); for
 * writers (`create`), the form making a branch or tag from what is shown.
 */
export function BranchSwitcher(props: { repo: ApiRepo; at: SourceAt; branches: { names: string[]; total: number }; create?: WebContext }): Html {
  const { repo, at, branches } = props
  return (
    <details class="branches">
      <summary>
        {at.kind === 'commit' ? 'Commit' : at.kind === 'tag' ? 'Tag' : 'Branch'}: <strong>{at.kind === 'commit' ? at.ref.slice(0, 10) : at.ref}</strong>
      </summary>
      <ul aria-label="Branches">
        {branches.names.map((name) => (
          <li>
            <a href={srcUrl(repo.owner.login, repo.name, 'branch', name, at.path)} aria-current={at.kind === 'branch' && name === at.ref ? 'true' : undefined}>
              {name}
            </a>
          </li>
        ))}
      </ul>
      {branches.total > branches.names.length ? <p class="muted">{branches.total - branches.names.length} more branches not shown</p> : null}
      {props.create ? <CreateRefForm web={props.create} base={repoUrl(repo.owner.login, repo.name)} kind={at.kind} from={at.ref} currentPath={at.path.join('/')} /> : null}
    </details>
  )
}

/** The link to Gitea's "Go to file" at the ref shown (src/web/pages/find-file.tsx), beside a folder's listing. */
export function FindFileLink(props: { repo: ApiRepo; at: SourceAt }): Html {
  return (
    <p class="actions">
      <a href={findUrl(props.repo.owner.login, props.repo.name, props.at.kind, props.at.ref)}>Go to file</a>
    </p>
  )
}

/** The HTTP and SSH clone URLs, in read-only fields that select easily. */
export function CloneUrls(props: { repo: ApiRepo }): Html {
  return (
    <div class="clone">
      <label>
        Clone over HTTP
        <input readonly value={props.repo.clone_url} />
      </label>
      <label>
        Clone over SSH
        <input readonly value={props.repo.ssh_url} />
      </label>
    </div>
  )
}

/** `owner / repo / a / b`: each folder of the path a link. */
export function Breadcrumb(props: { repo: ApiRepo; at: SourceAt }): Html {
  const { repo, at } = props
  const owner = repo.owner.login
  return (
    <nav class="breadcrumb" aria-label="Path">
      <a href={srcUrl(owner, repo.name, at.kind, at.ref)}>{repo.name}</a>
      {at.path.map((name, i) => (
        <>
          {' / '}
          {i === at.path.length - 1 ? <span aria-current="page">{name}</span> : <a href={srcUrl(owner, repo.name, at.kind, at.ref, at.path.slice(0, i + 1))}>{name}</a>}
        </>
      ))}
    </nav>
  )
}
