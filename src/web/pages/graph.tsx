/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { type ApiRepo } from '../../convert/repo'
import { commitsToApi, type ApiCommit } from '../../convert/commit'
import { listBranchHeads } from '../../git/commits'
import { readRefState } from '../../git/ref-answers'
import type { GraphRow } from '../../git/commit-graph'
import { GitError } from '../../git/run'
import { MAX_COLUMNS, type LaneLine } from '../../lib/commit-lanes'
import { ApiError, apiErrorOfGit } from '../../lib/errors'
import { GRAPH_PAGE_SIZE, MAX_GRAPH_BRANCHES, MAX_GRAPH_PAGES, commitGraph, graphPageOf, graphRefsOf, type CommitGraph } from '../../modules/commits/graph'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { FormList, FormText, listOf, pagesOf } from '../forms'
import { historyUrl, repoUrl, srcUrl } from '../links'
import { RepoHeader, pageRepo } from './repo-chrome'
import { CodeNav, Pager, When } from './code-nav'
import { Author, commitUrl, shortSha, subjectOf } from './commits'

/** Branches offered as choices (the first by name, and those chosen). */
const BRANCH_CHOICES = 50
/** Refs named on a row (a commit may carry many tags). */
const REFS_PER_ROW = 5
/** Colours the lanes take in turn (the stylesheet's `.lane-N`). */
export const LANE_COLOURS = 12

// The drawing's grid: a row's height (the list's rows are as high: the stylesheet's .graph-rows li), a column's width, a dot's radius.
const ROW = 28
const COLUMN = 14
const DOT = 4

const GraphQuery = t.Object({
  page: FormText(32),
  mode: FormText(20),
  branch: FormList(100, 300),
  'hide-pr-refs': FormText(8),
  'div-only': FormText(8),
})

/** Gitea's FormBool: strconv.ParseBool's true spellings. */
const isTrue = (value: string | undefined) => /^(1|t|true)$/i.test(value ?? '')

const xOf = (column: number) => COLUMN / 2 + column * COLUMN
const yOf = (row: number) => row * ROW + ROW / 2

/** One line as a path: straight down, or a curve into another column. */
function lineOf(line: LaneLine, y1: number, y2: number): string {
  const x1 = xOf(line.from)
  const x2 = xOf(line.to)
  if (x1 === x2) return `M${x1} ${y1}V${y2}`
  const mid = (y1 + y2) / 2
  return `M${x1} ${y1}C${x1} ${mid} ${x2} ${mid} ${x2} ${y2}`
}

/**
 * The lanes of a page drawn as one SVG beside the list (Gitea's svgcontainer): each flow's lines
 * as one path, each commit a dot, in the flow's colour class (one colour for all in monochrome,
 * by the stylesheet). Rows are ROW high, as the list's.
 */
function LaneDrawing(props: { rows: GraphRow[]; below: LaneLine[] }): Html {
  const { rows, below } = props
  const paths = new Map<number, string[]>()
  const add = (line: LaneLine, y1: number, y2: number) => {
    const list = paths.get(line.flow) ?? []
    list.push(lineOf(line, y1, y2))
    paths.set(line.flow, list)
  }
  let columns = 1
  rows.forEach((row, r) => {
    for (const line of row.above) {
      add(line, r === 0 ? 0 : yOf(r - 1), yOf(r))
      columns = Math.max(columns, line.from + 1, line.to + 1)
    }
    columns = Math.max(columns, row.column + 1)
  })
  const last = rows.length - 1
  for (const line of below) {
    add(line, yOf(last), rows.length * ROW)
    columns = Math.max(columns, line.from + 1, line.to + 1)
  }
  const width = columns * COLUMN
  const height = rows.length * ROW
  const colour = (flow: number) => `lane-${(flow - 1) % LANE_COLOURS}`
  return (
    <svg class="graph-lanes" width={String(width)} height={String(height)} viewBox={`0 0 ${width} ${height}`} aria-hidden="true" focusable="false">
      {[...paths].map(([flow, d]) => (
        <path class={colour(flow)} d={d.join('')} />
      ))}
      {rows.map((row, r) => (
        <circle class={`${colour(row.flow)}${row.parents.length > 1 ? ' merge' : ''}`} cx={String(xOf(row.column))} cy={String(yOf(r))} r={String(DOT)} />
      ))}
    </svg>
  )
}

/** The refs a row names that have files to show: a branch's, a tag's. */
const FILE_REFS = [
  { prefix: 'refs/heads/', kind: 'branch', label: 'Branch ' },
  { prefix: 'refs/tags/', kind: 'tag', label: 'Tag ' },
] as const

/** A ref's label on its row: a branch or a tag (to its files), a pull request head (to the pull request). */
function RefLabel(props: { repo: ApiRepo; ref: string }): Html {
  const { repo, ref } = props
  const owner = repo.owner.login
  const files = FILE_REFS.find((r) => ref.startsWith(r.prefix))
  if (files) {
    const name = ref.slice(files.prefix.length)
    return (
      <a class={`ref ref-${files.kind}`} href={srcUrl(owner, repo.name, files.kind, name)}>
        <span class="sr-only">{files.label}</span>
        {name}
      </a>
    )
  }
  const pull = /^refs\/pull\/(\d+)\/head$/.exec(ref)?.[1]
  const tracker = repo.has_pull_requests ? 'pulls' : repo.has_issues ? 'issues' : null
  if (pull && tracker)
    return (
      <a class="ref ref-pull" href={`${repoUrl(owner, repo.name)}/${tracker}/${pull}`}>
        <span class="sr-only">Pull request </span>#{pull}
      </a>
    )
  return <span class="ref">{ref.replace(/^refs\//, '')}</span>
}

/** The list beside the drawing: a row per commit with its refs, short id, subject, author and date. */
function GraphRows(props: { repo: ApiRepo; rows: GraphRow[]; commits: Map<string, ApiCommit> }): Html {
  const { repo } = props
  return (
    <ol class="graph-rows">
      {props.rows.map((row) => {
        const c = props.commits.get(row.id)
        const more = row.refs.length - REFS_PER_ROW
        return (
          <li id={`commit-${row.id}`}>
            <a class="sha" href={commitUrl(repo, row.id)}>
              <code>{shortSha(row.id)}</code>
            </a>
            {row.refs.length ? (
              <span class="refs">
                {row.refs.slice(0, REFS_PER_ROW).map((ref) => (
                  <RefLabel repo={repo} ref={ref} />
                ))}
                {more > 0 ? <span class="muted">+{more}</span> : null}
              </span>
            ) : null}
            <span class="subject">{c ? subjectOf(c.commit.message) : ''}</span>
            {c ? (
              <span class="by muted">
                <Author commit={c} /> · <When iso={c.commit.author.date} />
              </span>
            ) : null}
          </li>
        )
      })}
    </ol>
  )
}

/** The graph's choices as a GET form (no script): the branches to show, pull request refs hidden, colour or monochrome. */
function GraphForm(props: { repo: ApiRepo; branches: string[]; selected: string[]; hidePullRefs: boolean; monochrome: boolean }): Html {
  const shortOf = (ref: string) => ref.replace(/^refs\/heads\//, '')
  const chosen = new Set(props.selected.map(shortOf))
  const names = [...new Set([...props.selected.map(shortOf), ...props.branches])]
  return (
    <form class="graph-form" method="get" action={`${repoUrl(props.repo.owner.login, props.repo.name)}/graph`} aria-label="Graph options">
      <details open={chosen.size ? true : undefined}>
        <summary>Branches{chosen.size ? ` (${chosen.size} chosen)` : ': all'}</summary>
        <fieldset>
          <legend class="sr-only">Show only these branches (at most {MAX_GRAPH_BRANCHES})</legend>
          <ul class="side-choices">
            {names.map((name, i) => (
              <li>
                <input type="checkbox" id={`graph-branch-${i}`} name="branch" value={name} checked={chosen.has(name)} />{' '}
                <label for={`graph-branch-${i}`}>{name}</label>
              </li>
            ))}
          </ul>
        </fieldset>
      </details>
      <label>
        <input type="checkbox" name="hide-pr-refs" value="true" checked={props.hidePullRefs} /> Hide pull request refs
      </label>
      <label for="graph-mode">Colours</label>
      <select id="graph-mode" name="mode">
        <option value="color" selected={!props.monochrome}>
          Colour
        </option>
        <option value="monochrome" selected={props.monochrome}>
          Monochrome
        </option>
      </select>
      <button class="secondary" type="submit">
        Show
      </button>
    </form>
  )
}

/**
 * Gitea 1.23's commit graph, `/{o}/{r}/graph?page=&mode=&branch=&hide-pr-refs=`, for the
 * repository's readers: every ref's commits (or the chosen branches'), GRAPH_PAGE_SIZE a page,
 * drawn on the server (modules/commits/graph.ts); a bad page or branch is the page with its
 * reason and a 4xx, an empty repository an empty state.
 */
async function graphPage(deps: AppDeps, ctx: RepoContext, web: WebContext, query: typeof GraphQuery.static): Promise<Response> {
  const repo = await pageRepo(deps, ctx)
  const monochrome = (query.mode ?? '').trim().toLowerCase() === 'monochrome'
  const hidePullRefs = isTrue(query['hide-pr-refs'])
  const asked = listOf(query.branch)
  let problem: ApiError | null = null
  let graph: Readonly<CommitGraph> | null = null
  let selected: string[] = []
  let page = 1
  let branches: string[] = []
  if (!ctx.repo.isEmpty) {
    // The graph and the branch choices are both kept under the ref state: read once for both.
    const git = gitRepoOf(deps, ctx)
    const state = await readRefState(git.gitDir)
    try {
      page = graphPageOf(query.page)
      selected = await graphRefsOf(deps, ctx, asked)
      graph = await commitGraph(deps, ctx, { refs: selected.length ? selected : null, hidePullRefs }, page, state)
    } catch (e) {
      if (e instanceof GitError && e.kind !== 'failed') problem = apiErrorOfGit(e)
      else if (e instanceof ApiError && e.status < 500) problem = e
      else throw e
    }
    branches = (await listBranchHeads(git, { offset: 0, limit: BRANCH_CHOICES }, state)).heads.map((h) => h.name)
  }
  const commits = new Map((graph ? await commitsToApi(deps, ctx, graph.commits, ctx.caller.user) : []).map((c) => [c.sha, c]))
  const owner = repo.owner.login
  const pages = graph ? Math.min(MAX_GRAPH_PAGES, pagesOf(graph.total, GRAPH_PAGE_SIZE)) : 1
  return htmlResponse(
    <Layout ctx={web} title={`Commit graph · ${repo.full_name}`}>
      <RepoHeader repo={repo} />
      <CodeNav repo={repo} current="commits" />
      <h2>
        Commit graph{' '}
        <a class="small" href={historyUrl(owner, repo.name, 'branch', repo.default_branch, [])}>
          History of {repo.default_branch}
        </a>
      </h2>
      {ctx.repo.isEmpty ? (
        <p class="notice muted">This repository is empty: it has no commits yet.</p>
      ) : (
        <>
          <GraphForm repo={repo} branches={branches} selected={selected.length ? selected : asked.filter(Boolean)} hidePullRefs={hidePullRefs} monochrome={monochrome} />
          {problem ? (
            <p class="error" role="alert">
              {problem.message}
            </p>
          ) : null}
          {graph && !graph.rows.length ? (
            <p class="notice muted">
              No commits on page {page}: the graph has {graph.total} {graph.total === 1 ? 'commit' : 'commits'}, {GRAPH_PAGE_SIZE} a page. <a href={`${repoUrl(owner, repo.name)}/graph`}>The first page</a>
            </p>
          ) : null}
          {graph?.rows.length ? (
            <section class={`box graph${monochrome ? ' monochrome' : ''}`} aria-label="Commits by lane">
              <div class="graph-scroll">
                <LaneDrawing rows={graph.rows} below={graph.below} />
                <GraphRows repo={repo} rows={graph.rows} commits={commits} />
              </div>
            </section>
          ) : null}
          {graph?.cut ? <p class="notice muted">The graph is wider than {MAX_COLUMNS} lanes: the lanes past them are left out, their commits drawn in the last column.</p> : null}
          {graph && graph.total > MAX_GRAPH_PAGES * GRAPH_PAGE_SIZE ? (
            <p class="notice muted">The graph shows the newest {MAX_GRAPH_PAGES * GRAPH_PAGE_SIZE} commits; the history and the commit pages show every one.</p>
          ) : null}
          {graph ? <Pager path={web.path} page={page} pages={pages} labels={['Newer', 'Older']} /> : null}
        </>
      )}
    </Layout>,
    problem?.status ?? 200,
  )
}

export const graphPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get('/:owner/:repo/graph', async ({ request, query, repo: ctx }) => graphPage(deps, ctx, webContext(deps.config, request, ctx.caller), query), {
      scope: 'repository',
      repo: { level: 'read' },
      query: GraphQuery,
      detail: pageDetail('webRepoGraph'),
    })
