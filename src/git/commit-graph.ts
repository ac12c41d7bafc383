import { GitError, runGit, safeGitMessage, startGit, type GitRepo } from './run'
import { MAX_FIELD_CHARS, readTokens } from './tokens'
import { CommitLanes, type LaneLine, type LaneRow } from '../lib/commit-lanes'

/**
 * A page of a repository's commit graph (Gitea's `/{o}/{r}/graph`): `git log --date-order` of
 * every branch, tag and pull request ref (or of some refs), printing only each commit's id, its
 * parents and the refs naming it, read as it arrives; the lanes are laid out here
 * (lib/commit-lanes.ts) as the commits pass, those before the page only advancing the lanes.
 * git stops at the page's last commit (`--max-count`), so a page costs the commits up to its end
 * and no more; the caller bounds the page number.
 */

/** Which refs the graph walks. */
export interface GraphScope {
  /** Full ref names (checked to exist by the caller; passed as values), or null: every ref but notes. */
  refs: readonly string[] | null
  /** Leave pull request refs out of the walk (with `refs: null`) and unnamed on the rows. */
  hidePullRefs: boolean
}

export interface GraphRow extends LaneRow {
  parents: string[]
  /** Full names of the refs at this commit (branches, tags, pull request heads). */
  refs: string[]
}

export interface GraphPage {
  rows: GraphRow[]
  /** The lines leaving the last row for commits past the page. */
  below: LaneLine[]
  /** Some lanes were past the columns drawn (lib/commit-lanes.ts MAX_COLUMNS). */
  cut: boolean
}

/** The walk's revisions: every ref but notes (and pull request refs when hidden), or the scope's refs as values. */
function walkOf(scope: GraphScope): { args: string[]; values?: readonly string[] } {
  if (scope.refs) return { args: [], values: scope.refs }
  return { args: ['--exclude=refs/notes/*', ...(scope.hidePullRefs ? ['--exclude=refs/pull/*'] : []), '--all'] }
}

/** How many commits the graph of `scope` holds, counted up to `upTo`. GitError when git fails. */
export async function countGraph(repo: GitRepo, scope: GraphScope, upTo: number): Promise<number> {
  const walk = walkOf(scope)
  const r = await runGit(['rev-list', '--count', `--max-count=${Math.max(0, Math.floor(upTo))}`, ...walk.args], { ...repo, values: walk.values })
  if (r.code !== 0) throw new GitError('failed', `git rev-list failed: ${safeGitMessage(r.stderr)}`, 'rev-list')
  return Number(r.stdout.toString('utf8').trim()) || 0
}

/** `%D` of `--decorate=full`: "tag: refs/tags/v1, refs/heads/main" (a ref name holds no space or comma-space). */
const refsOf = (decoration: string): string[] =>
  decoration
    ? decoration
        .split(', ')
        .map((r) => r.replace(/^tag: /, ''))
        .filter((r) => r.startsWith('refs/'))
    : []

/**
 * The rows `skip` to `skip + max` of the graph of `scope`, newest first in date order (children
 * before parents), with their lanes; GitError when git fails (or runs out of time).
 */
export async function readGraphPage(repo: GitRepo, scope: GraphScope, page: { skip: number; max: number }): Promise<GraphPage> {
  const skip = Math.max(0, Math.floor(page.skip))
  const end = skip + Math.max(0, Math.floor(page.max))
  const walk = walkOf(scope)
  const decorate = ['refs/heads/', 'refs/tags/', ...(scope.hidePullRefs ? [] : ['refs/pull/'])].map((p) => `--decorate-refs=${p}`)
  const proc = startGit(['log', '-z', '--date-order', '--no-color', '--decorate=full', ...decorate, `--max-count=${end}`, '--format=%H%x00%P%x00%D', ...walk.args], {
    ...repo,
    values: walk.values,
  })
  const lanes = new CommitLanes()
  const rows: GraphRow[] = []
  let fields: string[] = []
  let seen = 0
  const read = await readTokens(
    proc,
    (token) => {
      fields.push(token)
      if (fields.length < 3) return
      const [id, parentList, decoration] = fields as [string, string, string]
      fields = []
      // An id cut short (a list of parents past MAX_FIELD_CHARS) is left out, not waited for.
      const parents = parentList ? parentList.split(' ').filter((p) => p.length === id.length) : []
      const keep = seen++ >= skip
      const row = lanes.add(id, parents, keep)
      if (row) rows.push({ ...row, parents, refs: refsOf(decoration) })
    },
    MAX_FIELD_CHARS,
  )
  if (read.code !== 0) throw new GitError('failed', `git log failed: ${safeGitMessage(read.stderr)}`, 'log')
  return { rows, below: rows.length ? lanes.below() : [], cut: lanes.cut }
}
