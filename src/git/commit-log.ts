import { GitError, safeGitMessage, startGit, type GitRepo } from './run'
import { MAX_FIELD_CHARS, readTokens } from './tokens'
import { commitHead, type BranchHead } from './commits'

/**
 * `git log` read as it arrives, one record per commit: its fields, and (with `stats`) the lines it
 * adds and deletes against its first parent, from `--shortstat`, one line per commit whatever the
 * number of files (git counts them; the files themselves are never printed here: see
 * commit-files.ts). Callers bound the number of commits (`--max-count`); each field is kept to
 * MAX_FIELD_CHARS, so a page of commits holds a bounded amount whatever the repository holds.
 */

export interface LogEntry extends Omit<BranchHead, 'name'> {
  tree: string
  parents: string[]
  /** Lines added and deleted against the first parent (0 for merges, and without `stats`). */
  additions: number
  deletions: number
}

const FIELDS = ['%H', '%T', '%P', '%an', '%ae', '%aI', '%cn', '%ce', '%cI', '%B']
// Each commit starts with \x01 and every field ends with NUL (a message cannot hold one). What
// follows the last field up to the next \x01 is git's own text (the separator, the shortstat
// line), so \x01 is looked for there only, never inside a field.
const FORMAT = '--format=%x01' + FIELDS.join('%x00') + '%x00'


const INSERTIONS = /(\d+) insertions?\(\+\)/
const DELETIONS = /(\d+) deletions?\(-\)/

/** What `git log` lists besides its revisions: user values, and the paths commits must touch. */
export interface LogOptions {
  /** Revisions as the user gave them (after `--end-of-options`). */
  values?: readonly string[]
  /** Only commits touching these paths, read literally (no pathspec magic, no globs). */
  paths?: readonly string[]
  stats?: boolean
}

/** The values of a `git log` or `git rev-list` of `opts`: the revisions, then `--` and the paths. */
export const logValues = (opts: LogOptions): readonly string[] | undefined =>
  opts.paths?.length ? [...(opts.values ?? []), '--', ...opts.paths] : opts.values

/** git reads the paths of logValues literally: a path is never taken for pathspec magic. */
export const LITERAL_PATHS = { GIT_LITERAL_PATHSPECS: '1' }

/**
 * The commits `git log <args> [--end-of-options <values> [-- <paths>]]` lists, in its order.
 * GitError when git fails (an unknown object) or is killed.
 */
export async function readLog(repo: GitRepo, args: readonly string[], opts: LogOptions = {}): Promise<LogEntry[]> {
  const stats = opts.stats ? ['--shortstat', '--no-renames'] : []
  const proc = startGit(['log', '-z', FORMAT, '--no-color', ...stats, ...args], { ...repo, values: logValues(opts), env: LITERAL_PATHS })
  const entries: LogEntry[] = []
  let fields: string[] | null = null
  let current: LogEntry | null = null
  const trailer = (text: string) => {
    if (!current || !opts.stats) return
    current.additions += Number(INSERTIONS.exec(text)?.[1] ?? 0)
    current.deletions += Number(DELETIONS.exec(text)?.[1] ?? 0)
  }
  const read = await readTokens(
    proc,
    (token) => {
      if (fields) {
        fields.push(token)
        if (fields.length < FIELDS.length) return
        const [id, tree, parents, an, ae, ad, cn, ce, cd, message] = fields as [string, ...string[]]
        fields = null
        current = { ...commitHead(id, an, ae, ad, cn, ce, cd, message), tree: tree ?? '', parents: (parents ?? '').split(' ').filter(Boolean), additions: 0, deletions: 0 }
        entries.push(current)
        return
      }
      const start = token.indexOf('\x01')
      if (start === -1) return trailer(token)
      trailer(token.slice(0, start))
      fields = [token.slice(start + 1)]
    },
    MAX_FIELD_CHARS,
  )
  if (read.code !== 0) throw new GitError('failed', `git log failed: ${safeGitMessage(read.stderr)}`, 'log')
  return entries
}
