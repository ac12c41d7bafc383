import { git, GitError, isObjectId, requireObjectIds, safeGitMessage, startGit, type GitRepo } from './run'
import { readTokens } from './tokens'
import { WeightedCache } from '../lib/weighted-cache'

/**
 * Who committed what, week by week, in a commit's history (Gitea 1.23's GetContributorStats, read
 * by the repository's Contributors, Code frequency and Recent commits pages and their `/data`
 * answers): `git log --shortstat --no-merges` from the commit, each commit's author (by e-mail),
 * the week of its author date (the Sunday on or before the date in the author's own time zone, as
 * Gitea's `%as`), its lines added and deleted.
 *
 * - **Bounded:** the newest MAX_COMMITS commits are read (git stopped there, the result marked
 *   `partial`); git runs under the long time limit; each author's weeks are kept as one typed
 *   array of four numbers a week, so a result holds at most 2 × MAX_COMMITS weeks.
 * - **Off the request:** a generation runs on for every request that waits for it (none is tied to
 *   a request's abort): `statsWithin` answers null when it is not done within the wait, and the
 *   next request finds it done or still running; at most GENERATIONS_AT_ONCE run at a time.
 * - **Kept:** by commit id (a commit's history never changes), bounded by the weeks held; a
 *   failure is kept FAILURE_KEPT_MS so a repository git cannot read is not read again at each view.
 * - **Incremental:** the last result of each repository is remembered; a newer commit whose
 *   history holds it is read only as far as it (`git log new ^old`) and added to it.
 */

/** One author's (or the total's) weeks: [day of the week's Sunday since 1970, additions, deletions, commits] × n, by day. */
export type Weeks = Int32Array

export interface AuthorStats {
  /** The author's address (git's `%aE`), lower-cased. */
  email: string
  /** The name of the oldest commit read with this address (Gitea keeps the first of its `--reverse` walk). */
  name: string
  commits: number
  additions: number
  deletions: number
  weeks: Weeks
}

export interface ContributorStats {
  /** The commit whose history this is. */
  commit: string
  authors: AuthorStats[]
  total: Omit<AuthorStats, 'email' | 'name'>
  /** Only the newest MAX_COMMITS commits were read. */
  partial: boolean
}

/** Commits read at most from one history. */
export const MAX_COMMITS = 100_000
/** Generations running at once, over every repository (each is one git log computing diffs). */
const GENERATIONS_AT_ONCE = 2
/** How long a failed generation is answered from memory before git is asked again. */
const FAILURE_KEPT_MS = 10 * 60 * 1000
/** Longest name or address kept (git stores longer ones; they are cut). */
const MAX_TOKEN_CHARS = 1024
/** Marks the start of a commit's fields in git's output: what comes before it in its token is the previous commit's shortstat. */
const MARK = '\x01'
const DAY_MS = 86_400_000

/** Results kept, weighed by the weeks they hold (16 bytes each): at most 32 MiB of weeks. */
const kept = new WeightedCache<ContributorStats>(2_000_000, (s) => 8 + s.total.weeks.length / 4 + s.authors.reduce((n, a) => n + 4 + a.weeks.length / 4, 0))
/** The last result of each repository (by its folder), for the next commit's incremental read. */
const lastOf = new WeightedCache<string>(10_000, () => 1)
const failures = new Map<string, { error: Error; until: number }>()
const running = new Map<string, Promise<ContributorStats>>()
let active = 0
const waiting: (() => void)[] = []

/**
 * The stats of `commit`'s history in `repo`, when they are ready within `waitMs` (null otherwise,
 * at once for a wait of 0 unless they are kept: the generation goes on, and a later call finds it). Throws the generation's failure (a
 * GitError). `maxCommits`: MAX_COMMITS unless said (tests say less).
 */
export async function statsWithin(repo: GitRepo, commit: string, waitMs: number, maxCommits = MAX_COMMITS): Promise<ContributorStats | null> {
  requireObjectIds('log', commit)
  const key = `${commit}:${maxCommits}`
  const found = kept.get(key)
  if (found) return found
  const failed = failures.get(key)
  if (failed && failed.until > Date.now()) throw failed.error
  let generation = running.get(key)
  if (!generation) {
    // The generation belongs to no request: it is not stopped when the one that started it goes.
    const { signal: _, ...detached } = repo
    generation = generate(detached, commit, maxCommits)
      .then(
        (stats) => {
          kept.set(key, stats)
          lastOf.set(repo.gitDir, key)
          failures.delete(key)
          return stats
        },
        (e: Error) => {
          failures.set(key, { error: e, until: Date.now() + FAILURE_KEPT_MS })
          if (failures.size > 1000) for (const [k, f] of failures) if (f.until <= Date.now()) failures.delete(k)
          throw e
        },
      )
      .finally(() => running.delete(key))
    running.set(key, generation)
  }
  // Not waiting: null until a later call finds it kept.
  if (waitMs <= 0) {
    generation.catch(() => {})
    return null
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), waitMs)))
  try {
    return await Promise.race([generation, late])
  } finally {
    clearTimeout(timer)
  }
}

/** One generation, in its turn among GENERATIONS_AT_ONCE. */
async function generate(repo: GitRepo, commit: string, maxCommits: number): Promise<ContributorStats> {
  // A slot, or the one a finished generation hands on.
  if (active >= GENERATIONS_AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve))
  else active++
  try {
    const base = await ancestorStats(repo, commit, maxCommits)
    const read = await readHistory(repo, commit, base ? base.commit : null, base ? maxCommits - base.total.commits : maxCommits)
    return finish(commit, read, base)
  } finally {
    const next = waiting.shift()
    if (next) next()
    else active--
  }
}

/** The repository's last result, when its commit is in `commit`'s history and was read whole or as far as the bound allows more. */
async function ancestorStats(repo: GitRepo, commit: string, maxCommits: number): Promise<ContributorStats | null> {
  const lastKey = lastOf.get(repo.gitDir)
  const last = lastKey ? kept.get(lastKey) : undefined
  if (!last || last.partial || last.commit === commit || !lastKey!.endsWith(`:${maxCommits}`)) return null
  const r = await git(['merge-base', '--is-ancestor', last.commit, commit], repo).then(
    () => true,
    () => false,
  )
  return r ? last : null
}

interface Tally {
  name: string
  commits: number
  additions: number
  deletions: number
  /** By the week's day number: [additions, deletions, commits]. */
  weeks: Map<number, number[]>
}

const newTally = (name = ''): Tally => ({ name, commits: 0, additions: 0, deletions: 0, weeks: new Map() })

/** The day number (days since 1970-01-01) of the Sunday on or before a `YYYY-MM-DD` date; null for a date that is none. */
export function weekOf(date: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date)
  if (!m) return null
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))
  if (!Number.isFinite(ms)) return null
  const day = Math.floor(ms / DAY_MS)
  // 1970-01-01 was a Thursday: day 0 has weekday 4.
  return day - ((((day + 4) % 7) + 7) % 7)
}

/** The lines a `--shortstat` line says were added and deleted (git's C locale). */
function shortstat(text: string): [number, number] {
  const added = /(\d+) insertions?\(\+\)/.exec(text)
  const deleted = /(\d+) deletions?\(-\)/.exec(text)
  return [added ? Number(added[1]) : 0, deleted ? Number(deleted[1]) : 0]
}

/**
 * Reads `commit`'s history (without `stop`'s, when given), newest first, at most `limit` commits:
 * the tallies by lower-cased address and the total, and whether the bound cut it.
 */
async function readHistory(repo: GitRepo, commit: string, stop: string | null, limit: number): Promise<{ byEmail: Map<string, Tally>; total: Tally; partial: boolean }> {
  const byEmail = new Map<string, Tally>()
  const total = newTally()
  let partial = false
  if (stop !== null && !isObjectId(stop)) throw new GitError('failed', 'not an object id', 'log')
  // Fields of a commit: `\x01{date}`, `{email}`, `{name}`, each ended by a NUL; its shortstat (if
  // it changed anything) follows the name's NUL as `\n {n} files changed, ...\n`, so it reaches
  // the reader at the start of the next commit's first token, before its mark (or alone, last).
  const proc = startGit(['log', '-z', '--no-merges', '--shortstat', '--no-renames', '--no-color', `--format=${MARK}%as%x00%aE%x00%aN`], {
    ...repo,
    budget: 'long',
    values: stop ? [commit, `^${stop}`] : [commit],
  })
  let field = 0
  let current: { tally: Tally; week: number | null } | null = null
  let email = ''
  let date = ''
  let commits = 0
  const count = (stat: string) => {
    if (!current) return
    const [added, deleted] = stat ? shortstat(stat) : [0, 0]
    for (const tally of [current.tally, total]) {
      tally.commits++
      tally.additions += added
      tally.deletions += deleted
      if (current.week === null) continue
      const week = tally.weeks.get(current.week)
      if (week) {
        week[0]! += added
        week[1]! += deleted
        week[2]!++
      } else tally.weeks.set(current.week, [added, deleted, 1])
    }
    current = null
  }
  const read = await readTokens(
    proc,
    (token) => {
      if (field === 0) {
        const mark = token.indexOf(MARK)
        // The previous commit's shortstat, then this commit's date; no mark: the last commit's shortstat.
        count(mark < 0 ? token : token.slice(0, mark))
        if (mark < 0) return true
        if (commits >= limit) {
          partial = true
          return false
        }
        commits++
        date = token.slice(mark + 1)
        field = 1
      } else if (field === 1) {
        email = token.toLowerCase()
        field = 2
      } else {
        let tally = byEmail.get(email)
        if (!tally) byEmail.set(email, (tally = newTally()))
        // Newest first: the name left is the oldest commit's, as Gitea's.
        tally.name = token
        current = { tally, week: weekOf(date) }
        field = 0
      }
      return true
    },
    MAX_TOKEN_CHARS,
  )
  count('')
  if (read.code !== 0) throw new GitError('failed', `git log failed: ${safeGitMessage(read.stderr)}`, 'log')
  return { byEmail, total, partial }
}

/** A tally's weeks as the typed array, in order of day. */
function weeksArray(weeks: Map<number, number[]>): Weeks {
  const days = [...weeks.keys()].sort((a, b) => a - b)
  const out = new Int32Array(days.length * 4)
  days.forEach((day, i) => {
    const [a, d, c] = weeks.get(day)!
    out.set([day, Math.min(a!, 2 ** 31 - 1), Math.min(d!, 2 ** 31 - 1), c!], i * 4)
  })
  return out
}

/** Several authors' weeks as one (an account's addresses): summed week by week. */
export function mergeWeeks(all: readonly Weeks[]): Weeks {
  const tally = newTally()
  for (const weeks of all) addInto(tally, { commits: 0, additions: 0, deletions: 0, weeks })
  return weeksArray(tally.weeks)
}

/** Adds a kept author's (or total's) weeks into a tally. */
function addInto(tally: Tally, from: Omit<AuthorStats, 'email' | 'name'>): void {
  tally.commits += from.commits
  tally.additions += from.additions
  tally.deletions += from.deletions
  for (let i = 0; i < from.weeks.length; i += 4) {
    const day = from.weeks[i]!
    const week = tally.weeks.get(day)
    if (week) {
      week[0]! += from.weeks[i + 1]!
      week[1]! += from.weeks[i + 2]!
      week[2]! += from.weeks[i + 3]!
    } else tally.weeks.set(day, [from.weeks[i + 1]!, from.weeks[i + 2]!, from.weeks[i + 3]!])
  }
}

/** The result: what was read, added to the older result it continues (whose names are the older ones). */
function finish(commit: string, read: { byEmail: Map<string, Tally>; total: Tally; partial: boolean }, base: ContributorStats | null): ContributorStats {
  if (base) {
    addInto(read.total, base.total)
    for (const older of base.authors) {
      let tally = read.byEmail.get(older.email)
      if (!tally) read.byEmail.set(older.email, (tally = newTally()))
      tally.name = older.name
      addInto(tally, older)
    }
  }
  const stats = (t: Tally) => ({ commits: t.commits, additions: t.additions, deletions: t.deletions, weeks: weeksArray(t.weeks) })
  return {
    commit,
    authors: [...read.byEmail].map(([email, t]) => ({ email, name: t.name, ...stats(t) })),
    total: stats(read.total),
    partial: read.partial,
  }
}
