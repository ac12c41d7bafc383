import { git, GitError, safeGitMessage, startGit, type GitRepo } from './run'
import { readTokens } from './tokens'
import { refAnswer } from './ref-answers'

/**
 * What was committed in a period (Gitea's GetCodeActivityStats, the repository Activity page's
 * code summary): on one branch, first parents only, merges left out, the commits since a time,
 * their distinct authors (by e-mail), the distinct files they changed and the lines added and
 * deleted (`git log --numstat -z`, read token by token as it arrives); and the commits of every
 * branch since then (`git rev-list --count --branches`). Bounded: at most MAX_COMMITS commits and
 * MAX_FILES distinct paths are kept, git stopped there and the result marked `partial`.
 */

export interface CodeActivity {
  /** Commits on the branch since the time (merges left out). */
  commits: number
  /** Commits on every branch since the time (merges left out). */
  commitsAllBranches: number
  /** Distinct authors of the branch's commits, by e-mail. */
  authors: number
  /** Distinct files the branch's commits changed. */
  files: number
  additions: number
  deletions: number
  /** The branch's log was cut at MAX_COMMITS commits or MAX_FILES files: the numbers are at least these. */
  partial: boolean
}

/** Commits of the branch read at most. */
export const MAX_COMMITS = 10_000
/** Distinct paths counted at most. */
export const MAX_FILES = 50_000
/** Longest path or e-mail kept (longer ones are cut, and still counted). */
const MAX_TOKEN_CHARS = 4096
/** Marks a commit's token (its author's e-mail) in the log's output: no path holds it at the start of a numstat line. */
const COMMIT_MARK = '\x01'

/**
 * The code activity of `branch` (a branch name, unchecked: passed after `--end-of-options`)
 * since `sinceUnix`; a branch that does not exist (an empty repository) has none. Both git
 * commands run under the long time limit and die with the request (`repo.signal`). `bounds`:
 * MAX_COMMITS and MAX_FILES unless said (tests say less).
 */
export async function codeActivity(repo: GitRepo, branch: string, sinceUnix: number, bounds = { commits: MAX_COMMITS, files: MAX_FILES }): Promise<CodeActivity> {
  // The time as git's own --max-age, a unix time (`--since=@N` goes through approxidate, which reads a small N as something else).
  const since = `--max-age=${Math.max(0, Math.floor(sinceUnix))}`
  // What it counts depends on the refs alone (the walks start at them; commits never change under
  // an id): kept under their state (ref-answers.ts) and served again, without git, while it holds.
  const request = JSON.stringify(['code-activity', branch, since, bounds.commits, bounds.files])
  return refAnswer(repo.gitDir, request, async () => ({ value: await readCodeActivity(repo, branch, since, bounds), ok: true, weight: 200 }))
}

/** codeActivity from git (`since`: its --max-age). */
async function readCodeActivity(repo: GitRepo, branch: string, since: string, bounds: { commits: number; files: number }): Promise<CodeActivity> {
  const all = git(['rev-list', '--count', '--no-merges', '--branches', since], { ...repo, budget: 'long' })
  const proc = startGit(['log', '-z', '--no-merges', '--first-parent', '--no-renames', '--ignore-missing', '--no-color', `--format=${COMMIT_MARK}%aE`, '--numstat', since], {
    ...repo,
    budget: 'long',
    values: [`refs/heads/${branch}`],
  })
  const authors = new Set<string>()
  const files = new Set<string>()
  let commits = 0
  let additions = 0
  let deletions = 0
  let partial = false
  // Marks the result cut and stops git (readTokens kills it when the reader answers false).
  const cut = () => {
    partial = true
    return false
  }
  // Tokens: a commit's `\x01{email}`, then one `{added}\t{deleted}\t{path}` per file (the first
  // after a newline); binary files count `-` lines.
  const reading = readTokens(
    proc,
    (token) => {
      if (token.startsWith(COMMIT_MARK)) {
        if (commits >= bounds.commits) return cut()
        commits++
        authors.add(token.slice(1).toLowerCase())
        return true
      }
      const line = token.startsWith('\n') ? token.slice(1) : token
      const tab = line.indexOf('\t')
      const tab2 = tab < 0 ? -1 : line.indexOf('\t', tab + 1)
      if (tab2 < 0) return true
      additions += Number(line.slice(0, tab)) || 0
      deletions += Number(line.slice(tab + 1, tab2)) || 0
      const path = line.slice(tab2 + 1)
      if (!files.has(path)) {
        if (files.size >= bounds.files) return cut()
        files.add(path)
      }
      return true
    },
    MAX_TOKEN_CHARS,
  )
  const [read, counted] = await Promise.all([reading, all])
  if (read.code !== 0) throw new GitError('failed', `git log failed: ${safeGitMessage(read.stderr)}`, 'log')
  const commitsAllBranches = Number(counted.trim()) || 0
  return { commits, commitsAllBranches: Math.max(commitsAllBranches, commits), authors: authors.size, files: files.size, additions, deletions, partial }
}
