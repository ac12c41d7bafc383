import { requireObjectIds, runGit, GitError, safeGitMessage, type GitRepo } from './run'
import { startGitOutput } from './stream'
import { commitHead, type BranchHead } from './commits'

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
 * commit) streamed; null when git cannot (an object is missing). Binary files as git's binary
 * patches, so the output applies.
 */
export function startDiffOrPatch(repo: GitRepo, base: string, head: string, kind: 'diff' | 'patch') {
  checkOid(base, head)
  const args =
    kind === 'diff'
      ? ['diff', '--no-color', '--no-ext-diff', '--binary', '-M', base, head]
      : ['format-patch', '--no-color', '--no-signature', '--stdout', '--binary', `${base}..${head}`]
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

/**
 * Parses `--raw --numstat -z` output (raw entries first, then numstat entries, in the same
 * order), from token `i` up to a token `stop` says ends the block; answers the files and the
 * index after them.
 */
function parseRawNumstat(tokens: string[], i: number, stop: (token: string) => boolean): { files: FileChange[]; next: number } {
  const files: FileChange[] = []
  // git log puts an empty field between a commit's header and its changes.
  while (i < tokens.length && tokens[i] === '') i++
  // Raw: ":<modes> <ids> <status>" then the path, or old and new paths for R/C.
  while (i < tokens.length && tokens[i]!.replace(/^\n/, '').startsWith(':')) {
    const meta = tokens[i]!.replace(/^\n/, '')
    const status = meta.slice(meta.lastIndexOf(' ') + 1)
    const letter = status[0] ?? 'M'
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
  while (i < tokens.length && !stop(tokens[i]!)) {
    const m = /^\n?(\d+|-)\t(\d+|-)\t([\s\S]*)$/.exec(tokens[i]!)
    if (!m) break
    const file = files[n++]
    if (file) {
      file.binary = m[1] === '-'
      file.additions = file.binary ? 0 : Number(m[1])
      file.deletions = file.binary ? 0 : Number(m[2])
    }
    i += m[3] === '' ? 3 : 1
  }
  return { files, next: i }
}

/** At most this many files are listed for one comparison (a pull request of more is not read file by file). */
export const MAX_CHANGED_FILES = 3000

/** The files changed from `base` to `head` (renames found), with their line counts; null when git cannot compare them. */
export async function changedFiles(repo: GitRepo, base: string, head: string, max = MAX_CHANGED_FILES): Promise<FileChange[] | null> {
  checkOid(base, head)
  const r = await runGit(['diff', '--raw', '--numstat', '-z', '-M', '--no-color', '--no-ext-diff', base, head], repo)
  if (r.code !== 0) return null
  return parseRawNumstat(r.stdout.toString('utf8').split('\0'), 0, () => false).files.slice(0, max)
}

/** A commit between two others, with the files it changed (against its first parent; none for merges). */
export interface ComparedCommit extends Omit<BranchHead, 'name'> {
  tree: string
  parents: string[]
  files: FileChange[]
}

const FIELDS = ['%H', '%T', '%P', '%an', '%ae', '%aI', '%cn', '%ce', '%cI', '%B']
// Each commit starts with \x01; every field ends with NUL; with -z the raw and numstat entries follow, NUL-separated.
const FORMAT = '--format=%x01' + FIELDS.join('%x00') + '%x00'
const startsCommit = (token: string) => token.replace(/^\n/, '').startsWith('\x01')

/** How many commits are reachable from `head` and not from `base`. */
export async function countCommits(repo: GitRepo, base: string, head: string): Promise<number> {
  checkOid(base, head)
  const r = await runGit(['rev-list', '--count', head, `^${base}`], repo)
  if (r.code !== 0) throw new GitError('failed', `git rev-list failed: ${safeGitMessage(r.stderr)}`, 'rev-list')
  return Number(r.stdout.toString('utf8').trim()) || 0
}

/** The commits reachable from `head` and not from `base`, newest first: `max` of them after skipping `skip`. */
export async function commitsBetween(repo: GitRepo, base: string, head: string, skip: number, max: number): Promise<ComparedCommit[]> {
  checkOid(base, head)
  if (max <= 0) return []
  const r = await runGit(
    ['log', '-z', FORMAT, '--raw', '--numstat', '--no-renames', '--no-color', `--skip=${Math.max(0, Math.floor(skip))}`, `--max-count=${Math.floor(max)}`, head, `^${base}`],
    repo,
  )
  if (r.code !== 0) throw new GitError('failed', `git log failed: ${safeGitMessage(r.stderr)}`, 'log')
  const tokens = r.stdout.toString('utf8').split('\0')
  const commits: ComparedCommit[] = []
  let i = 0
  while (i < tokens.length) {
    if (!startsCommit(tokens[i]!)) {
      i++
      continue
    }
    const [id, tree, parents, an, ae, ad, cn, ce, cd, message] = [tokens[i]!.replace(/^\n/, '').slice(1), ...tokens.slice(i + 1, i + FIELDS.length)] as string[]
    const { files, next } = parseRawNumstat(tokens, i + FIELDS.length, startsCommit)
    commits.push({ ...commitHead(id!, an, ae, ad, cn, ce, cd, message), tree: tree!, parents: parents ? parents.split(' ').filter(Boolean) : [], files })
    i = Math.max(next, i + FIELDS.length)
  }
  return commits
}
