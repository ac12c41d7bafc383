import { GitError, objectStoreOf, runGit, safeGitMessage, type GitRepo } from './run'
import { LITERAL_PATHS, logValues, readLog, type LogEntry } from './commit-log'
import { commitFiles, type CommitFile } from './commit-files'
import { WeightedCache } from '../lib/weighted-cache'

/**
 * A page of history as commit records show it: `git log` of some revisions (a branch, `head
 * ^base`), optionally only the commits touching some paths or within dates, with each commit's
 * line counts and (when asked) its changed files; and the number of such commits, counted by
 * `git rev-list --count` with the same limits. One log parser (commit-log.ts), one file lister
 * (commit-files.ts), whatever lists commits: a repository's history, a pull request's commits, a
 * comparison.
 *
 * Where every revision is a full object id (the services resolve names first), what the filter
 * selects never changes: the count and the pages are then kept (`counts`, `pages`, least recently
 * used first out) and a request for the same history again runs no git (a list of commits was two
 * git processes a request, `rev-list --count` walking the whole history).
 */

/** A commit with its line counts and the files it changed (against its first parent; none for merges). */
export interface ComparedCommit extends LogEntry {
  /** Null when not asked for. */
  files: CommitFile[] | null
  /** More files changed than `files` lists. */
  filesTruncated: boolean
  /** Whether `additions` / `deletions` were read (false: not asked for). */
  stats: boolean
}

/** A commit as a list shows it: without its line counts or files. */
export const listedCommit = (e: LogEntry): ComparedCommit => ({ ...e, files: null, filesTruncated: false, stats: false })

/** Which commits of the revisions are listed and counted. */
export interface HistoryFilter {
  /** Revisions (user values are safe here: they follow `--end-of-options`). */
  revisions: readonly string[]
  /** Only commits touching these paths (read literally). */
  paths?: readonly string[]
  /** Only commits committed at or after / at or before these times (Unix seconds). */
  since?: number
  until?: number
}

/** The times git's date parser reads without guessing (it takes a bare number or a year past 2099 for something else). */
const EARLIEST = Date.UTC(1970, 0, 2) / 1000
const LATEST = Date.UTC(2099, 11, 31) / 1000

/** A time as `YYYY-MM-DD HH:MM:SS +0000`, within what git reads. */
const gitTime = (seconds: number) =>
  new Date(Math.min(LATEST, Math.max(EARLIEST, Math.floor(seconds))) * 1000).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, ' +0000')

/** `--since` / `--until` of a filter's times. */
export const dateArgs = (f: Pick<HistoryFilter, 'since' | 'until'>): string[] => [
  ...(f.since !== undefined ? [`--since=${gitTime(f.since)}`] : []),
  ...(f.until !== undefined ? [`--until=${gitTime(f.until)}`] : []),
]

/** A revision that names one commit for good: a full object id, or its exclusion (`^id`). */
const FIXED_REVISION = /^\^?([0-9a-f]{40}|[0-9a-f]{64})$/

/** The key a filter's answers are kept under in `repo`, with `rest` (the page, the options); null when a revision is a name, whose history moves. */
function keyOf(repo: GitRepo, filter: HistoryFilter, rest: unknown): string | null {
  if (!filter.revisions.every((r) => FIXED_REVISION.test(r))) return null
  return JSON.stringify([objectStoreOf(repo), filter.revisions, filter.paths ?? [], filter.since ?? null, filter.until ?? null, rest])
}

/** Counts of fixed histories (see above), by keyOf. */
const counts = new WeightedCache<number>(20_000, () => 1)

let hits = 0

/** How many counts and pages were answered kept, without git, since the process started (tests). */
export const keptHistoryAnswers = (): number => hits

/** How many commits `filter` names (at most `upTo` counted, when given). GitError when git fails. */
export async function countHistory(repo: GitRepo, filter: HistoryFilter, upTo?: number): Promise<number> {
  const key = keyOf(repo, filter, upTo ?? null)
  const kept = key !== null ? counts.get(key) : undefined
  if (kept !== undefined) {
    hits++
    return kept
  }
  const cap = upTo !== undefined ? [`--max-count=${Math.max(0, Math.floor(upTo))}`] : []
  const values = logValues({ values: filter.revisions, paths: filter.paths })
  const r = await runGit(['rev-list', '--count', ...cap, ...dateArgs(filter)], { ...repo, values, env: LITERAL_PATHS })
  if (r.code !== 0) throw new GitError('failed', `git rev-list failed: ${safeGitMessage(r.stderr)}`, 'rev-list')
  const n = Number(r.stdout.toString('utf8').trim()) || 0
  if (key !== null) counts.set(key, n)
  return n
}

/** Pages of fixed histories (see above), by keyOf, weighed by their characters (about). */
const pages = new WeightedCache<ComparedCommit[]>(8 * 1024 * 1024, (page) =>
  page.reduce((n, c) => n + 400 + c.message.length + (c.files?.reduce((m, f) => m + 100 + f.path.length, 0) ?? 0), 0),
)

/**
 * The commits `filter` names, newest first: `max` of them after skipping `skip`, with their line
 * counts (`stats`) and their changed files (`files`, at most `maxFiles` each, see commit-files.ts).
 */
export async function historyPage(
  repo: GitRepo,
  filter: HistoryFilter,
  page: { skip: number; max: number },
  opts: { files: boolean; maxFiles: number; stats?: boolean },
): Promise<ComparedCommit[]> {
  if (page.max <= 0) return []
  const stats = opts.stats ?? true
  const skip = Math.max(0, Math.floor(page.skip))
  const max = Math.floor(page.max)
  const key = keyOf(repo, filter, [skip, max, opts.files, opts.files ? opts.maxFiles : 0, stats])
  const kept = key !== null ? pages.get(key) : undefined
  // Each caller gets records of its own (the lists inside are shared, and read only).
  if (kept) {
    hits++
    return kept.map((c) => ({ ...c }))
  }
  const args = [`--skip=${skip}`, `--max-count=${max}`, ...dateArgs(filter)]
  const entries = await readLog(repo, args, { values: filter.revisions, paths: filter.paths, stats })
  const lists = opts.files ? await commitFiles(repo, entries.map((e) => e.id), opts.maxFiles) : null
  const made = entries.map((e) => {
    const list = lists?.get(e.id)
    return { ...e, files: lists ? list?.files ?? [] : null, filesTruncated: list?.truncated ?? false, stats }
  })
  if (key !== null) pages.set(key, made.map((c) => ({ ...c })))
  return made
}
