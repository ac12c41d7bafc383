import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { avatarUrl, gitIdentityOf } from '../../convert/user'
import { usersByEmails } from '../../convert/people'
import { resolveCommit } from '../../git/objects'
import { mergeWeeks, statsWithin, type AuthorStats, type ContributorStats, type Weeks } from '../../git/contributor-stats'
import { notFound } from '../../lib/errors'
import { PageCache, pageCacheOf } from '../../db/page-cache'
import { emailAddresses, users } from '../../db/schema'

/**
 * The contributors of a repository's default branch (Gitea 1.23's contributors graph,
 * services/repository/contributors_graph.go): git's weekly stats of the branch's history
 * (git/contributor-stats.ts), each address's author found by its activated address (convert/people
 * `usersByEmails`, as every commit record), an account's addresses counted as one contributor.
 * For the Contributors, Code frequency and Recent commits pages and their `/data` answers.
 */

/** How long a request waits for stats being made before it answers that they are (Gitea's awaitGenerationTime). */
export const STATS_WAIT_MS = 5000

export interface Contributor {
  /** Gitea's key of the contributor: the account's address as others may see it, else the commits' address. */
  key: string
  name: string
  user: UserRow | null
  avatarLink: string
  commits: number
  additions: number
  deletions: number
  weeks: Weeks
}

/**
 * A history's contributors as converted once, kept while the accounts are unchanged (the one page
 * cache: the users and their addresses decide who is whom): `answers` keeps what the pages and
 * `/data` make of them (a ranking, the JSON), each made once per kept value. A history of 40,000
 * authors took 0.2 s of the event loop at every request when each made it again.
 */
export interface KeptContributors {
  contributors: Contributor[]
  answers: Map<string, unknown>
}

export type RepoContributors =
  | { ready: true; contributors: Contributor[]; total: Omit<AuthorStats, 'email' | 'name'>; partial: boolean; commit: string; answers: Map<string, unknown> }
  | { ready: false }

/** Converted histories kept (each may hold tens of thousands of contributors). */
const CONVERTED_KEPT = 8
const convertedOf = (deps: AppDeps) => pageCacheOf(deps.db, 'contributors', () => new PageCache<Promise<KeptContributors>>(deps.db, { maxCost: CONVERTED_KEPT, tables: [users, emailAddresses] }))

/** What `make` answers for a kept history, made once while it is kept (a page's ranking, the `/data` JSON). */
export function keptAnswer<T>(found: { answers: Map<string, unknown> }, key: string, make: () => T): T {
  if (!found.answers.has(key)) found.answers.set(key, make())
  return found.answers.get(key) as T
}

/** The stats of the repository's default branch, or `ready: false` while they are being made; 404 for a repository without commits (Gitea's MustBeNotEmpty). */
export async function repoContributors(deps: AppDeps, ctx: RepoContext, waitMs = STATS_WAIT_MS): Promise<RepoContributors> {
  const git = gitRepoOf(deps, ctx)
  const commit = ctx.repo.isEmpty ? null : await resolveCommit(git, `refs/heads/${ctx.repo.defaultBranch}`)
  if (!commit) throw notFound('the repository has no commits on its default branch')
  const stats = await statsWithin(git, commit, waitMs)
  if (!stats) return { ready: false }
  const kept = await convertedOf(deps).getOrMake(`${commit}:${stats.total.commits}:${stats.partial}`, async () => ({ contributors: await contributorsOf(deps, stats), answers: new Map() }))
  return { ready: true, ...kept, total: stats.total, partial: stats.partial, commit }
}

/** The authors of `stats` as contributors: one per account (its addresses together), one per address of nobody. */
async function contributorsOf(deps: AppDeps, stats: ContributorStats): Promise<Contributor[]> {
  const owners = await usersByEmails(deps, stats.authors.map((a) => a.email))
  const byKey = new Map<string, { contributor: Contributor; parts: AuthorStats[] }>()
  for (const author of stats.authors) {
    const user = owners.get(author.email) ?? null
    const key = user ? `user:${user.id}` : `email:${author.email}`
    let entry = byKey.get(key)
    if (!entry) {
      const contributor: Contributor = user
        ? { key: gitIdentityOf(deps.config, user).email, name: user.fullName.trim() || user.name, user, avatarLink: avatarUrl(deps.config, user), commits: 0, additions: 0, deletions: 0, weeks: author.weeks }
        : { key: author.email, name: author.name, user: null, avatarLink: avatarUrl(deps.config, { email: author.email, lowerName: '', avatar: '' }), commits: 0, additions: 0, deletions: 0, weeks: author.weeks }
      byKey.set(key, (entry = { contributor, parts: [] }))
    }
    entry.contributor.commits += author.commits
    entry.contributor.additions += author.additions
    entry.contributor.deletions += author.deletions
    entry.parts.push(author)
  }
  return [...byKey.values()].map(({ contributor, parts }) => (parts.length === 1 ? contributor : { ...contributor, weeks: mergeWeeks(parts.map((p) => p.weeks)) }))
}

/** Gitea's WeekData map of some weeks: by the week's Sunday in unix milliseconds. */
export function weeksRecord(weeks: Weeks): Record<string, { week: number; additions: number; deletions: number; commits: number }> {
  const out: Record<string, { week: number; additions: number; deletions: number; commits: number }> = {}
  for (let i = 0; i < weeks.length; i += 4) {
    const week = weeks[i]! * 86_400_000
    out[String(week)] = { week, additions: weeks[i + 1]!, deletions: weeks[i + 2]!, commits: weeks[i + 3]! }
  }
  return out
}
