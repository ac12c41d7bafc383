import type { AppDeps } from '../deps'
import type { Config } from '../config'
import type { UserRow } from '../auth/caller'
import { gitOfRow, type RepoContext } from '../auth/repo-context'
import { commitVerifications, type CommitVerification } from '../auth/commit-verification'
import type { GitRepo } from '../git/run'
import type { ComparedCommit, FileChange } from '../git/compare'
import type { CommitFile } from '../git/commit-files'
import { apiUrl, webUrl } from '../lib/urls'
import { repoPath as repoPathOf, type RepoRef } from './issue'
import { usersByEmails } from './people'
import { userConverter, type ApiUser } from './user'

/** A path inside a repository, each segment URL-encoded (Gitea's PathEscapeSegments). */
const escapeSegments = (path: string) => path.split('/').map(encodeURIComponent).join('/')

/** Gitea's ChangedFile status words for git's letters (`changed`: modified or type changed). */
const STATUS_WORDS: Record<string, string> = { A: 'added', D: 'deleted', R: 'renamed', C: 'copied' }

/** A file's status as Gitea words it: `unchanged` for a modification of no line (a mode change). */
const statusWord = (f: FileChange) => STATUS_WORDS[f.status] ?? (f.additions === 0 && f.deletions === 0 && !f.binary ? 'unchanged' : 'changed')

/** The same words for a commit's own files, whose content stayed the same exactly when no line changed. */
const commitFileStatus = (f: CommitFile) => STATUS_WORDS[f.status] ?? (f.sameContent ? 'unchanged' : 'changed')

/** The ChangedFile record (Gitea's): URLs at `commit`, the head of the comparison. */
export function toApiChangedFile(config: Config, repo: RepoRef, commit: string, f: FileChange) {
  const repoPath = repoPathOf(repo)
  const path = escapeSegments(f.path)
  return {
    filename: f.path,
    ...(f.status === 'R' && f.previousPath !== undefined ? { previous_filename: f.previousPath } : {}),
    status: statusWord(f),
    additions: f.additions,
    deletions: f.deletions,
    changes: f.additions + f.deletions,
    html_url: webUrl(config, `${repoPath}/src/commit/${commit}/${path}`),
    contents_url: apiUrl(config, `repos/${repoPath}/contents/${path}?ref=${commit}`),
    raw_url: webUrl(config, `${repoPath}/raw/commit/${commit}/${path}`),
  }
}
export type ApiChangedFile = ReturnType<typeof toApiChangedFile>

/**
 * The Commit record (Gitea's `Commit`, with `stats` and `files` against the first parent).
 * `accountOf` gives the account owning an e-mail address (the record's `author` / `committer`:
 * null when none does). `files` is null when not asked for (Gitea's `files=false`); a list cut at
 * the configured number of files says so in `files_truncated` (Warren's: Gitea lists them all).
 */
export function toApiCommit(config: Config, repo: RepoRef, c: ComparedCommit, accountOf: (email: string) => ApiUser | null, verification: CommitVerification | null) {
  const repoPath = repoPathOf(repo)
  const commitUrl = (sha: string) => apiUrl(config, `repos/${repoPath}/git/commits/${sha}`)
  return {
    url: commitUrl(c.id),
    sha: c.id,
    created: c.committerDate,
    html_url: webUrl(config, `${repoPath}/commit/${c.id}`),
    commit: {
      url: commitUrl(c.id),
      author: { name: c.authorName, email: c.authorEmail, date: c.authorDate },
      committer: { name: c.committerName, email: c.committerEmail, date: c.committerDate },
      message: c.message,
      tree: { url: apiUrl(config, `repos/${repoPath}/git/trees/${c.tree}`), sha: c.tree, created: c.committerDate },
      verification,
    },
    author: accountOf(c.authorEmail),
    committer: accountOf(c.committerEmail),
    parents: c.parents.map((sha) => ({ url: commitUrl(sha), sha })),
    files: c.files && c.files.map((f) => ({ filename: f.path, status: commitFileStatus(f) })),
    ...(c.files ? { files_truncated: c.filesTruncated } : {}),
    stats: c.stats ? { total: c.additions + c.deletions, additions: c.additions, deletions: c.deletions } : null,
  }
}
export type ApiCommit = ReturnType<typeof toApiCommit>

/** What commitsToApi adds: each commit's signature verification (Gitea's `verification` switch, off unless asked), its objects read from `git` (the repository's own unless given: a comparison with a fork reads both). */
export interface CommitRecordOptions {
  verification?: boolean
  git?: GitRepo
}

/**
 * Commit records (one query for the accounts, whatever their number; with `verification`, each
 * commit's signature checked by auth/commit-verification.ts, the keys read once per committer).
 */
export async function commitsToApi(deps: AppDeps, ctx: Pick<RepoContext, 'repo'>, commits: ComparedCommit[], viewer: UserRow | null, opts: CommitRecordOptions = {}) {
  const [accounts, verifications] = await Promise.all([
    usersByEmails(deps, commits.flatMap((c) => [c.authorEmail, c.committerEmail])),
    opts.verification ? commitVerifications(deps, opts.git ?? gitOfRow(deps, ctx.repo), commits.map((c) => c.id)) : null,
  ])
  const userToApi = userConverter(deps.config, viewer)
  const records = new Map<string, ApiUser | null>()
  const accountOf = (email: string) => {
    const key = email.toLowerCase()
    let record = records.get(key)
    if (record === undefined) {
      const user = accounts.get(key)
      records.set(key, (record = user ? userToApi(user) : null))
    }
    return record
  }
  return commits.map((c) => toApiCommit(deps.config, ctx.repo, c, accountOf, verifications?.get(c.id) ?? null))
}

/** ChangedFile records of a pull request's files, at its head commit. */
export const filesToApi = (deps: AppDeps, ctx: Pick<RepoContext, 'repo'>, head: string, files: FileChange[]) =>
  files.map((f) => toApiChangedFile(deps.config, ctx.repo, head, f))
