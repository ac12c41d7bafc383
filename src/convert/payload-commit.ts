import type { AppDeps } from '../deps'
import type { Config } from '../config'
import type { RepoRow } from '../db/schema'
import type { BranchHead } from '../git/commits'
import { logCommits, type LoggedCommit } from '../git/log'
import { readLog } from '../git/commit-log'
import { ZERO_ID } from '../git/run'
import { gitOfRow } from '../auth/repo-context'
import type { CommitVerification } from '../auth/commit-verification'
import { webUrl } from '../lib/urls'
import { usersByEmails } from './people'

/** What a PayloadCommit shows of a commit; the files it changed when git listed them (push payloads). */
export type CommitSummary = Omit<BranchHead, 'name'> & Partial<Pick<LoggedCommit, 'added' | 'removed' | 'modified'>>

/** A lower-case e-mail address → the user name of the account that verified it (usersByEmails). */
export type UsernamesByEmail = Map<string, string>

/** The user names behind the authors' and committers' addresses of `commits`, in one query. */
export async function commitUsernames(deps: AppDeps, commits: readonly CommitSummary[]): Promise<UsernamesByEmail> {
  const accounts = await usersByEmails(deps, commits.flatMap((c) => [c.authorEmail, c.committerEmail]))
  return new Map([...accounts].map(([email, user]) => [email, user.name]))
}

/**
 * Gitea's PayloadCommit: a branch's head in the Branch record, and each commit of a push payload
 * (there with the files it added, removed and modified). `username` is the account owning the
 * address, as usersByEmails finds it: empty when no account verified it.
 */
export function toApiPayloadCommit(
  config: Config,
  repo: Pick<RepoRow, 'ownerName' | 'name'>,
  c: CommitSummary,
  usernames: UsernamesByEmail,
  /** Null in push payloads, whose commits Gitea does not verify. */
  verification: CommitVerification | null,
) {
  const person = (name: string, email: string) => ({ name, email, username: usernames.get(email.toLowerCase()) ?? '' })
  return {
    id: c.id,
    message: c.message,
    url: webUrl(config, `${repo.ownerName}/${repo.name}/commit/${c.id}`),
    author: person(c.authorName, c.authorEmail),
    committer: person(c.committerName, c.committerEmail),
    verification,
    timestamp: c.authorDate,
    ...(c.added ? { added: c.added, removed: c.removed ?? [], modified: c.modified ?? [] } : {}),
  }
}
export type ApiPayloadCommit = ReturnType<typeof toApiPayloadCommit>

// ---- the commits of a push (push payloads, activity feeds) ---------------------------------

/** Gitea's FEED_MAX_COMMIT_NUM: commits listed in a push payload. */
export const PUSH_MAX_COMMITS = 5
/** Commits of a new branch looked at (Gitea 1.3 took the 10 newest). */
const NEW_BRANCH_COMMITS = 10
/** Counting pushed commits stops here (total_commits of a giant push). */
const MAX_COUNTED_COMMITS = 100_000

export interface PushPrepared {
  commits: LoggedCommit[]
  total: number
  head: LoggedCommit | null
  /** Gitea's PushCommits.CompareURL: the comparison's path (compareUrlPath), '' when there is none. */
  compare: string
}

/** Gitea's ComposeCompareURL: the path, below the site's root, of the comparison of `base` with `head`. */
export const compareUrlPath = (repo: Pick<RepoRow, 'ownerName' | 'name'>, base: string, head: string): string =>
  `${encodeURIComponent(repo.ownerName)}/${encodeURIComponent(repo.name)}/compare/${base}...${head}`

/**
 * What a new branch's comparison starts from (Gitea's pushUpdates): the first parent of the oldest
 * of the commits listed (its 10 newest), else, when they reach the root, the default branch by
 * name, unless it is that branch (then none: the zero id).
 */
async function newBranchBase(deps: AppDeps, repo: RepoRow, branch: string, listed: readonly LoggedCommit[]): Promise<string> {
  const oldest = listed[listed.length - 1]
  const parent = oldest ? (await readLog(gitOfRow(deps, repo), ['--max-count=1'], { values: [oldest.id] }).catch(() => []))[0]?.parents[0] : undefined
  return parent ?? (branch === repo.defaultBranch ? ZERO_ID : repo.defaultBranch)
}

/**
 * The commits of a ref change, as push payloads list them, and its comparison (Gitea's
 * pushUpdates: an updated branch's from its old id, a new branch's from newBranchBase, a new
 * tag's from the zero id; none for a deletion).
 */
export async function pushCommits(deps: AppDeps, repo: RepoRow, ref: string, before: string, after: string): Promise<PushPrepared> {
  if (after === ZERO_ID) return { commits: [], total: 0, head: null, compare: '' }
  const git = gitOfRow(deps, repo)
  if (!ref.startsWith('refs/heads/')) {
    const head = (await logCommits(git, after, null, 1, 1, deps.config.maxCommitFiles).catch(() => null))?.commits[0] ?? null
    return { commits: [], total: 0, head, compare: ref.startsWith('refs/tags/') ? compareUrlPath(repo, ZERO_ID, after) : '' }
  }
  const created = before === ZERO_ID
  const found = await logCommits(git, after, created ? null : before, created ? NEW_BRANCH_COMMITS : PUSH_MAX_COMMITS, created ? NEW_BRANCH_COMMITS : MAX_COUNTED_COMMITS, deps.config.maxCommitFiles).catch(
    () => ({ commits: [] as LoggedCommit[], total: 0 }),
  )
  const base = created ? await newBranchBase(deps, repo, ref.slice('refs/heads/'.length), found.commits) : before
  return {
    commits: found.commits.slice(0, PUSH_MAX_COMMITS),
    total: found.total,
    head: found.commits[0] ?? null,
    compare: base === ZERO_ID ? '' : compareUrlPath(repo, base, after),
  }
}
