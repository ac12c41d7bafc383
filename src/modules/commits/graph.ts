import type { AppDeps } from '../../deps'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { countGraph, readGraphPage, type GraphPage, type GraphScope } from '../../git/commit-graph'
import { readLog } from '../../git/commit-log'
import { listedCommit, type ComparedCommit } from '../../git/commit-page'
import { existingRefs } from '../../git/refs'
import { isSafeRefName } from '../../git/ref-name'
import { refAnswer, type RefState } from '../../git/ref-answers'
import type { GitRepo } from '../../git/run'
import { badRequest, notFound } from '../../lib/errors'

/**
 * Gitea 1.23's commit graph (`/{o}/{r}/graph`): the commits of every branch, tag and pull request
 * ref, or of the chosen branches (`branch`, several allowed), a page of GRAPH_PAGE_SIZE at a time
 * with their lanes (git/commit-graph.ts), each commit read in full for its row. Pages are counted
 * up to MAX_GRAPH_PAGES: a page costs git the commits before it.
 */

/** Commits a page draws (Gitea's GraphMaxCommitNum). */
export const GRAPH_PAGE_SIZE = 100
/** The deepest page (GRAPH_PAGE_SIZE commits each). */
export const MAX_GRAPH_PAGES = 500
/** Branches one graph may be limited to. */
export const MAX_GRAPH_BRANCHES = 20

/** The refs a graph may be limited to: branches, and (by their full names, as Gitea's choices) tags and pull request heads. */
const CHOOSABLE = /^refs\/(heads|tags|pull)\//

/** `?page=`: 1 when absent; 400 unless a whole number from 1 to MAX_GRAPH_PAGES. */
export function graphPageOf(value: string | undefined): number {
  if (value === undefined || value === '') return 1
  const n = /^\d{1,6}$/.test(value) ? Number(value) : NaN
  if (!(n >= 1 && n <= MAX_GRAPH_PAGES)) throw badRequest(`page must be a whole number from 1 to ${MAX_GRAPH_PAGES}`)
  return n
}

/**
 * The full ref names of `?branch=` (Gitea's: a name without `refs/` is a branch's), each checked
 * (a valid name: 400; a ref that does not exist: 404), duplicates dropped.
 */
export async function graphRefsOf(deps: AppDeps, ctx: RepoContext, names: readonly string[]): Promise<string[]> {
  if (names.length > MAX_GRAPH_BRANCHES) throw badRequest(`at most ${MAX_GRAPH_BRANCHES} branches can be shown at once`)
  const refs = [...new Set(names.filter((n) => n !== '').map((n) => (n.startsWith('refs/') ? n : `refs/heads/${n}`)))]
  for (const ref of refs) if (!CHOOSABLE.test(ref) || !isSafeRefName(ref.replace(CHOOSABLE, ''))) throw badRequest(`not a branch name: ${ref.replace(/^refs\/heads\//, '').slice(0, 100)}`)
  if (!refs.length) return refs
  const found = await existingRefs(gitRepoOf(deps, ctx), refs)
  const missing = refs.find((r) => !found.has(r))
  if (missing) throw notFound(`branch does not exist: ${missing.replace(/^refs\/heads\//, '').slice(0, 100)}`)
  return refs
}

export interface CommitGraph extends GraphPage {
  /** The page's commits in full (the rows' order). */
  commits: ComparedCommit[]
  /** Commits in the graph, counted up to MAX_GRAPH_PAGES pages (and one more). */
  total: number
}

/**
 * A page (1-based, already checked) of the graph of `scope`; `ctx.repo` not empty. What it shows
 * depends on the refs alone (the walk starts at them and names them; objects never change under an
 * id): kept under their state, as git's ref advertisement is (git/ref-answers.ts), and served again
 * without git (three processes a page) while it holds.
 */
export async function commitGraph(deps: AppDeps, ctx: RepoContext, scope: GraphScope, page: number, state?: RefState): Promise<Readonly<CommitGraph>> {
  const git = gitRepoOf(deps, ctx)
  const request = JSON.stringify(['graph', scope.refs, scope.hidePullRefs, page])
  return refAnswer(
    git.gitDir,
    request,
    async () => {
      const graph = await graphOf(git, scope, page)
      return { value: graph, ok: true, weight: graphWeight(graph) }
    },
    state,
  )
}

/** What a graph page weighs kept (its characters, about: a row's lanes, a commit's fields). */
const graphWeight = (g: CommitGraph): number =>
  g.rows.reduce((n, r) => n + 150 + 60 * r.above.length + 60 * r.parents.length + r.refs.reduce((m, ref) => m + 20 + ref.length, 0), 0) + g.commits.reduce((n, c) => n + 400 + c.message.length, 0)

/** commitGraph from git. */
async function graphOf(git: GitRepo, scope: GraphScope, page: number): Promise<CommitGraph> {
  const total = await countGraph(git, scope, MAX_GRAPH_PAGES * GRAPH_PAGE_SIZE + 1)
  const skip = (page - 1) * GRAPH_PAGE_SIZE
  if (skip >= total) return { rows: [], below: [], cut: false, commits: [], total }
  const graph = await readGraphPage(git, scope, { skip, max: GRAPH_PAGE_SIZE })
  // The page's commits in full, in the rows' order (no walk: just these).
  const entries = graph.rows.length ? await readLog(git, ['--no-walk=unsorted'], { values: graph.rows.map((r) => r.id) }) : []
  return { ...graph, commits: entries.map(listedCommit), total }
}
