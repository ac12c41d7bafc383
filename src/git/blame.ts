import { objectStoreOf, runGit, requireObjectIds, type GitRepo } from './run'
import { LITERAL_PATHS } from './commit-log'
import { objectInfo } from './objects'
import { WeightedCache } from '../lib/weighted-cache'

/** A commit as blame names it: who made it, when (seconds), its subject. */
export interface BlameCommit {
  sha: string
  author: string
  time: number
  summary: string
}

/** Each line of a file at a commit with the commit that last changed it (`git blame --porcelain`). */
export interface Blame {
  lines: { sha: string; text: string }[]
  commits: Map<string, BlameCommit>
}

/**
 * The blame of `path` at `commit` (git's own, run as a process with the repository's limits and
 * the long time budget: never on the event loop), or null when git cannot (no such file). The
 * caller bounds the file's size first: the output is a few header lines a group of lines besides
 * the file's own bytes. A blame is kept (`kept`) and answered again without git: what it says
 * depends only on the commit, the path and the names git maps authors to, which a bare
 * repository reads from HEAD's `.mailmap` (its blob id is in the key).
 */
export async function blameOf(repo: GitRepo, commit: string, path: string): Promise<Blame | null> {
  requireObjectIds('blame', commit)
  const mailmap = (await objectInfo(repo, 'HEAD:.mailmap'))?.oid ?? ''
  const key = JSON.stringify([objectStoreOf(repo), commit, path, mailmap])
  const hit = kept.get(key)
  if (hit) return hit
  // blame takes no --end-of-options (git 2.39): the commit is an object id and the path follows `--`.
  const r = await runGit(['blame', '--porcelain', commit, '--', path], { ...repo, env: LITERAL_PATHS, budget: 'long' })
  if (r.code !== 0) return null
  const blame = parsePorcelain(r.stdout.toString('utf8'))
  kept.set(key, blame)
  return blame
}

/** Blames by commit, path and mailmap, weighed by their text (about); callers only read them. */
const kept = new WeightedCache<Blame>(8 * 1024 * 1024, (b) => b.lines.reduce((n, l) => n + 50 + l.text.length, 0) + b.commits.size * 200)

const HEADER = /^([0-9a-f]{40,64}) \d+ \d+(?: \d+)?$/

/** `git blame --porcelain`'s output: a header per line (details after a commit's first one), then the line after a tab. */
export function parsePorcelain(out: string): Blame {
  const lines: Blame['lines'] = []
  const commits = new Map<string, BlameCommit>()
  let current: BlameCommit | null = null
  for (const line of out.split('\n')) {
    if (line.startsWith('\t')) {
      if (current) lines.push({ sha: current.sha, text: line.slice(1) })
      continue
    }
    const header = HEADER.exec(line)
    if (header) {
      const sha = header[1]!
      current = commits.get(sha) ?? { sha, author: '', time: 0, summary: '' }
      commits.set(sha, current)
      continue
    }
    if (!current) continue
    const space = line.indexOf(' ')
    const key = space < 0 ? line : line.slice(0, space)
    const value = space < 0 ? '' : line.slice(space + 1)
    if (key === 'author') current.author = value
    else if (key === 'author-time') current.time = Number(value) || 0
    else if (key === 'summary') current.summary = value
  }
  return { lines, commits }
}
