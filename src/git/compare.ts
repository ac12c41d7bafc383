import { GitError, objectStoreOf, requireObjectIds, startGit, type GitRepo } from './run'
import { startGitOutput } from './stream'
import { readTokens } from './tokens'
import { countHistory, historyPage, type ComparedCommit } from './commit-page'
import { WeightedCache } from '../lib/weighted-cache'
import { readPeeledRefs } from './ref-files'
import { isSafeRefName } from './ref-name'

export type { ComparedCommit }

/**
 * Comparing two commits (a pull request's merge base and head): the diff or the patch series
 * streamed, the files changed with their line counts, the commits between them with theirs.
 * Every id handed in is one git printed (or the database recorded from git): checked against a
 * strict pattern, never read as an option. Work grows with the change, so it runs under the
 * long git time limit (streams) or the quick one (lists, bounded below).
 */

const checkOid = (...ids: string[]) => requireObjectIds('compare', ...ids)

/**
 * `git diff base head` (`diff`) or `git format-patch --stdout base..head` (`patch`, one mail per
 * commit) streamed; null when git cannot (an object is missing). As Gitea: a patch always carries
 * binary files as git's binary patches (so it applies); a diff only with `binary` (else git's
 * "Binary files differ").
 */
export function startDiffOrPatch(repo: GitRepo, base: string, head: string, kind: 'diff' | 'patch', binary = false) {
  checkOid(base, head)
  const args =
    kind === 'diff'
      ? ['diff', '--no-color', '--no-ext-diff', ...(binary ? ['--binary'] : []), '-M', base, head]
      : ['format-patch', '--no-color', '--no-signature', '--stdout', '--binary', `${base}..${head}`]
  return startGitOutput(repo, args)
}

/**
 * One commit's diff against its first parent, or its patch (`format-patch`, as Gitea's
 * GetRawDiff), streamed; a root commit's against the empty tree. Null when git cannot (no such
 * object).
 */
export function startCommitDiff(repo: GitRepo, commit: string, parent: string | null, kind: 'diff' | 'patch') {
  if (parent) return startDiffOrPatch(repo, parent, commit, kind)
  checkOid(commit)
  const args =
    kind === 'diff'
      ? ['diff-tree', '-p', '--root', '--no-color', '--no-ext-diff', '--binary', '-M', commit]
      : ['format-patch', '--no-color', '--no-signature', '--stdout', '--binary', '--root', commit]
  return startGitOutput(repo, args)
}

/** A file changed between two commits. */
export interface FileChange {
  path: string
  /** The path before a rename or copy (else undefined). */
  previousPath?: string
  /** git's letter: A(dded), D(eleted), M(odified), T(ype changed), R(enamed), C(opied). */
  status: string
  additions: number
  deletions: number
  binary: boolean
}

/** At most this many files are listed for one comparison (a pull request of more is not read file by file). */
export const MAX_CHANGED_FILES = 3000
/** Longest path kept (Linux's PATH_MAX; a longer one is cut there). */
const MAX_PATH_CHARS = 4096

/**
 * `git diff <options> base head` read as it arrives, its entries counted by `isEntry` (raw or
 * numstat ones, below), and stopped when entry `max + 1` begins: git computes no more than that.
 * Answers the tokens of the first `max` entries and whether more followed; null when git cannot
 * compare them. `isEntry` sees every token in order and keeps its own place, so a path is never
 * taken for an entry.
 */
async function diffEntries(repo: GitRepo, options: string[], base: string, head: string, max: number, isEntry: (token: string) => boolean) {
  const tokens: string[] = []
  let entries = 0
  let more = false
  const proc = startGit(['diff', '-z', '-M', '--no-color', '--no-ext-diff', ...options, base, head], repo)
  const read = await readTokens(
    proc,
    (token) => {
      if (isEntry(token) && ++entries > max) {
        more = true
        return false
      }
      tokens.push(token)
    },
    MAX_PATH_CHARS,
  )
  return read.code === 0 ? { tokens, more } : null
}

/** Counts raw entries (":<modes> <ids> <status>", then one path, or two for R/C), paths skipped by position. */
function rawEntries(): (token: string) => boolean {
  let paths = 0
  return (token) => {
    if (paths > 0) return paths--, false
    if (!token.startsWith(':')) return false
    const letter = token[token.lastIndexOf(' ') + 1]
    paths = letter === 'R' || letter === 'C' ? 2 : 1
    return true
  }
}

/** Counts numstat entries ("<added>\t<deleted>\t<path>", or "<added>\t<deleted>\t" then two paths), paths skipped by position. */
function numstatEntries(): (token: string) => boolean {
  let paths = 0
  return (token) => {
    if (paths > 0) return paths--, false
    const m = /^(\d+|-)\t(\d+|-)\t/.exec(token)
    if (!m) return false
    if (token.length === m[0].length) paths = 2
    return true
  }
}

/**
 * The files changed from `base` to `head` (renames found), with their line counts: at most `max`,
 * read by two git processes (the raw entries and the line counts, in the same order) each stopped
 * after `max` entries; `truncated` when there were more. Null when git cannot compare them.
 */
export async function changedFiles(repo: GitRepo, base: string, head: string, max = MAX_CHANGED_FILES): Promise<{ files: FileChange[]; truncated: boolean } | null> {
  checkOid(base, head)
  // What two commit ids differ by never changes: kept, each caller given records of its own.
  const key = `${objectStoreOf(repo)}\0${base}\0${head}\0${max}`
  const kept = changes.get(key)
  if (kept) {
    changesHits++
    return { files: kept.files.map((f) => ({ ...f })), truncated: kept.truncated }
  }
  const read = await readChangedFiles(repo, base, head, max)
  if (read) changes.set(key, { files: read.files.map((f) => ({ ...f })), truncated: read.truncated })
  return read
}

/** The files of comparisons (changedFiles), by repository, ids and bound, weighed by their characters (about). */
const changes = new WeightedCache<{ files: FileChange[]; truncated: boolean }>(8 * 1024 * 1024, (c) => c.files.reduce((n, f) => n + 60 + f.path.length + (f.previousPath?.length ?? 0), 300))

let changesHits = 0

/** How many comparisons' files were answered kept, without git, since the process started (tests). */
export const keptChangedFiles = (): number => changesHits

/** changedFiles from git. */
async function readChangedFiles(repo: GitRepo, base: string, head: string, max: number): Promise<{ files: FileChange[]; truncated: boolean } | null> {
  const [raw, numstat] = await Promise.all([
    diffEntries(repo, ['--raw'], base, head, max, rawEntries()),
    diffEntries(repo, ['--numstat'], base, head, max, numstatEntries()),
  ])
  if (!raw || !numstat) return null
  const files: FileChange[] = []
  const tokens = raw.tokens
  // Raw: ":<modes> <ids> <status>" then the path, or old and new paths for R/C.
  for (let i = 0; i < tokens.length && tokens[i]!.startsWith(':'); ) {
    const meta = tokens[i]!
    const letter = meta.slice(meta.lastIndexOf(' ') + 1)[0] ?? 'M'
    if (letter === 'R' || letter === 'C') {
      files.push({ path: tokens[i + 2] ?? '', previousPath: tokens[i + 1] ?? '', status: letter, additions: 0, deletions: 0, binary: false })
      i += 3
    } else {
      files.push({ path: tokens[i + 1] ?? '', status: letter, additions: 0, deletions: 0, binary: false })
      i += 2
    }
  }
  // Numstat: "<added>\t<deleted>\t<path>", or "<added>\t<deleted>\t" then old and new paths.
  let n = 0
  for (let i = 0; i < numstat.tokens.length && n < files.length; n++) {
    const m = /^(\d+|-)\t(\d+|-)\t([\s\S]*)$/.exec(numstat.tokens[i]!)
    if (!m) break
    const file = files[n]!
    file.binary = m[1] === '-'
    file.additions = file.binary ? 0 : Number(m[1])
    file.deletions = file.binary ? 0 : Number(m[2])
    i += m[3] === '' ? 3 : 1
  }
  return { files, truncated: raw.more }
}

/** How many commits are reachable from `head` and not from `base`. */
export async function countCommits(repo: GitRepo, base: string, head: string): Promise<number> {
  checkOid(base, head)
  return countHistory(repo, { revisions: [head, `^${base}`] })
}

/**
 * How many commits the ref `head` has that the ref `base` has not (full ref names, `refs/...`), in
 * one git process; null when either ref is missing (or git fails).
 */
export async function countBetweenRefs(repo: GitRepo, base: string, head: string): Promise<number | null> {
  if (!base.startsWith('refs/') || !head.startsWith('refs/')) throw new Error(`countBetweenRefs takes full ref names: ${base}, ${head}`)
  // Read from the ref files where they tell, the count is then of two commit ids (kept: commit-page.ts).
  const ids = isSafeRefName(base) && isSafeRefName(head) ? await readPeeledRefs(repo.gitDir, [base, head]) : null
  const [baseId, headId] = [ids?.get(base), ids?.get(head)]
  if (ids && !(baseId && headId)) return null
  const revisions = baseId && headId ? [headId, `^${baseId}`] : [head, `^${base}`]
  return countHistory(repo, { revisions }).catch((e) => {
    if (e instanceof GitError) return null
    throw e
  })
}

/**
 * The commits reachable from `head` and not from `base`, newest first: `max` of them after
 * skipping `skip`, with their line counts, and with `files` their changed files (at most
 * `maxFiles` each, see commit-files.ts).
 */
export async function commitsBetween(
  repo: GitRepo,
  base: string,
  head: string,
  skip: number,
  max: number,
  opts: { files: boolean; maxFiles: number },
): Promise<ComparedCommit[]> {
  checkOid(base, head)
  return historyPage(repo, { revisions: [head, `^${base}`] }, { skip, max }, opts)
}
