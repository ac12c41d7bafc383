import { readLog, type LogEntry } from './commit-log'
import { dateArgs } from './commit-page'
import { GitError, requireObjectIds, type GitRepo } from './run'

/**
 * Commits searched by their message, author and committer (Gitea 1.23's SearchCommits on a
 * repository's history page): `git log` from a commit (or every branch and tag too, `all`) with
 * `--fixed-strings` and `-i`, so every text is matched literally in any case, at most `max`
 * commits, git stopped there. A keyword that is a commit id's beginning also finds that commit
 * (Gitea's too), with the same author, committer and date limits.
 *
 * The texts reach git only as the values of `--grep=`, `--author=` and `--committer=`, in the
 * same argument as the option's name (git reads the rest of that argument as the pattern, never
 * as an option of its own): git log reads no patterns from stdin, and a pattern after
 * `--end-of-options` would be read as a revision. The caller bounds and checks them
 * (no control characters, a bounded number).
 */

export interface CommitSearch {
  /** Any of them in the message. */
  keywords: readonly string[]
  /** Any of them in the author's name or e-mail (all given kinds must match). */
  authors: readonly string[]
  committers: readonly string[]
  /** Committed at or after / at or before (Unix seconds). */
  since?: number
  until?: number
}

const HEX_PREFIX = /^[0-9a-f]{4,64}$/i

/** The limits but the message's: authors, committers, dates; literal and in any case. */
const limitArgs = (s: CommitSearch): string[] => [
  '--regexp-ignore-case',
  '--fixed-strings',
  ...s.authors.map((a) => `--author=${a}`),
  ...s.committers.map((c) => `--committer=${c}`),
  ...dateArgs(s),
]

/** The commits from `head` (an object id; with `all`, every branch and tag too) that `search` finds, newest first, at most `max`. GitError when git fails. */
export async function searchLog(repo: GitRepo, head: string, search: CommitSearch, opts: { all: boolean; max: number }): Promise<LogEntry[]> {
  requireObjectIds('log', head)
  const max = Math.max(0, Math.floor(opts.max))
  const found = await readLog(repo, [`--max-count=${max}`, ...limitArgs(search), ...search.keywords.map((k) => `--grep=${k}`), ...(opts.all ? ['--branches', '--tags'] : []), head])
  const ids = new Set(found.map((c) => c.id))
  for (const keyword of search.keywords) {
    if (found.length >= max || !HEX_PREFIX.test(keyword)) continue
    // An unknown or ambiguous id is no commit of the search.
    const [hit] = await readLog(repo, ['--max-count=1', '--no-walk', ...limitArgs(search)], { values: [`${keyword}^{commit}`] }).catch((e) => {
      if (e instanceof GitError && e.kind === 'failed') return []
      throw e
    })
    if (hit && !ids.has(hit.id)) {
      ids.add(hit.id)
      found.push(hit)
    }
  }
  return found
}
