/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Child, Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { gitRepoOf } from '../../auth/repo-context'
import { type ApiRepo } from '../../convert/repo'
import { GitError } from '../../git/run'
import { MAX_GREP_PER_FILE, grepCommit, grepQueryProblem, type GrepFile, type GrepLine, type GrepResult } from '../../git/grep'
import { apiErrorOfGit } from '../../lib/errors'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext } from '../context'
import { FormText, Pager, pageNumber, pagesOf } from '../forms'
import { repoUrl, searchUrl, srcUrl } from '../links'
import { defaultSource } from '../source-data'
import { CodeSearchForm, RepoHeader, pageRepo } from './repo-chrome'
import { CodeNav } from './code-nav'

/** Files a page shows (Gitea's RepoSearchPagingNum). */
const FILES_PER_PAGE = 10

/** The query as read (the search text's own bound is checked on the page, with its message). */
const SearchQuery = t.Object({ q: FormText(4096), fuzzy: FormText(8), page: FormText(10) })

/** Gitea's `fuzzy` (its FormOptionalBool, true unless said false). */
const isFuzzy = (value: string | undefined): boolean => !/^(0|f|false)$/i.test(value ?? '')

/**
 * Gitea's code search of a repository without a code indexer (`/{o}/{r}/search?q=&fuzzy=&page=`):
 * `git grep` on the default branch's head (git/grep.ts), fixed text in any case, binary files
 * left out, each file's matching lines with a line of context, the words marked, each line's
 * number a link to it in the file view; paged by files as Gitea pages them, of the first files
 * git finds. For the repository's readers (the pipeline's read need: 404 otherwise).
 */
export const codeSearchPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp).get(
    '/:owner/:repo/search',
    async ({ request, query, repo: ctx }) => {
      const web = webContext(deps.config, request, ctx.caller)
      const repo = await pageRepo(deps, ctx)
      const q = (query.q ?? '').trim()
      const fuzzy = isFuzzy(query.fuzzy)
      const page = pageNumber(query.page)
      const problem = q ? grepQueryProblem(q) : null
      const at = await defaultSource(deps, ctx)
      let found: GrepResult | null = null
      let failed: { status: number; message: string } | null = null
      if (q && !problem && at) {
        try {
          found = await grepCommit(gitRepoOf(deps, ctx), at.commit, q, { fuzzy })
        } catch (e) {
          if (!(e instanceof GitError) || e.kind === 'failed') throw e
          failed = { status: apiErrorOfGit(e).status, message: e.kind === 'timeout' ? 'The search took too long. A longer, more particular text finds fewer lines sooner.' : 'The search was stopped.' }
        }
      }
      const shown = found?.files.slice((page - 1) * FILES_PER_PAGE, page * FILES_PER_PAGE) ?? []
      return htmlResponse(
        <Layout ctx={web} title={q ? `Search “${q.slice(0, 60)}” · ${repo.full_name}` : `Search · ${repo.full_name}`}>
          <RepoHeader repo={repo} search={false} />
          <CodeNav repo={repo} current="code" />
          <h2>Search code</h2>
          <CodeSearchForm repo={repo} q={q} fuzzy={fuzzy} full />
          {problem || failed ? (
            <p class="error" role="alert">
              {problem ?? failed!.message}
            </p>
          ) : null}
          {!at ? <p class="notice muted">This repository is empty: there is no code to search yet.</p> : null}
          {found ? (
            <section aria-label="Results">
              <p>
                {found.files.length} {found.files.length === 1 ? 'file' : 'files'} {found.more ? '(at least) ' : ''}matching “<strong>{q}</strong>” in{' '}
                <a href={repoUrl(repo.owner.login, repo.name)}>{repo.full_name}</a> on <code>{at!.ref}</code>
              </p>
              {found.more ? <p class="notice muted">More files match than are listed here: only the first {found.files.length} are. A longer, more particular text finds fewer.</p> : null}
              {found.files.length === 0 ? <p class="notice muted">No results: nothing in this repository's code matches “{q}”.</p> : null}
              {shown.map((file) => (
                <FileResult repo={repo} branch={at!.ref} file={file} />
              ))}
              <Pager path={searchUrl(repo.owner.login, repo.name)} query={{ q, fuzzy: fuzzy ? undefined : 'false' }} page={page} pages={pagesOf(found.files.length, FILES_PER_PAGE)} />
            </section>
          ) : null}
        </Layout>,
        problem ? 422 : failed?.status ?? 200,
      )
    },
    { scope: 'repository', repo: { level: 'read' }, query: SearchQuery, detail: pageDetail('webRepoSearch') },
  )

/** One file's matching lines: its path (a link to the file), then its lines, a gap marked where they skip. */
function FileResult(props: { repo: ApiRepo; branch: string; file: GrepFile }): Html {
  const { repo, branch, file } = props
  const path = file.path.split('/')
  const view = srcUrl(repo.owner.login, repo.name, 'branch', branch, path)
  const rows: Child[] = []
  file.lines.forEach((line, i) => {
    const before = file.lines[i - 1]
    if (before && line.number > before.number + 1)
      rows.push(
        <tr class="gap">
          <td colspan="2">
            <span class="sr-only">Lines skipped</span>…
          </td>
        </tr>,
      )
    rows.push(
      <tr class={line.matches.length ? 'hit' : undefined}>
        <td class="blame-num">
          <a href={`${view}#L${line.number}`}>{line.number}</a>
        </td>
        <td class="blame-code">
          <Marked line={line} />
        </td>
      </tr>,
    )
  })
  return (
    <div class="box code-result">
      <header>
        <strong>{file.path}</strong>
        <a href={view}>View file</a>
      </header>
      <table class="blame">
        <caption class="sr-only">Matching lines of {file.path}</caption>
        <tbody>{rows}</tbody>
      </table>
      {file.more ? <p class="notice muted">Only the first {MAX_GREP_PER_FILE} matching lines of this file are shown.</p> : null}
    </div>
  )
}

/** A line's text with its matches in <mark> (every piece escaped by the JSX runtime); a cut line ends with an ellipsis. */
function Marked(props: { line: GrepLine }): Html {
  const { text, matches, cut } = props.line
  const parts: Child[] = []
  let at = 0
  for (const [start, end] of matches) {
    parts.push(text.slice(at, start), <mark>{text.slice(start, end)}</mark>)
    at = end
  }
  parts.push(text.slice(at))
  if (cut) parts.push(<span class="muted" title="The line goes on">…</span>)
  return <>{parts}</>
}
