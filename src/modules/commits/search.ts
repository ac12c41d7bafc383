import type { AppDeps } from '../../deps'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { searchLog, type CommitSearch } from '../../git/commit-search'
import { listedCommit, type ComparedCommit } from '../../git/commit-page'
import { unprocessable } from '../../lib/errors'
import { queryTime } from './service'

/**
 * Gitea 1.23's commit search of a history page (`/{o}/{r}/commits/{kind}/{ref}/search?q=&all=`):
 * the words of `q` as git.NewSearchCommitsOptions reads them (`author:`, `committer:`, `after:`,
 * `before:`, the rest keywords of the message), searched literally in any case
 * (git/commit-search.ts), at most MAX_SEARCH_RESULTS commits as Gitea's `-100`.
 */

export const MAX_SEARCH_RESULTS = 100
/** Longest search text (characters, trimmed). */
export const MAX_SEARCH_TEXT = 200
/** Words of each kind that count. */
const MAX_WORDS = 10

/** The search `q` asks for (trimmed, not empty); 422 with the reason when it is too long, holds control characters or a date that is not one. */
export function commitSearchOf(q: string): CommitSearch {
  if (q.length > MAX_SEARCH_TEXT) throw unprocessable(`The search text is too long: at most ${MAX_SEARCH_TEXT} characters.`, 'q')
  if (/[\x00-\x08\x0a-\x1f\x7f]/.test(q)) throw unprocessable('The search text may not hold control characters or line breaks.', 'q')
  const search = { keywords: [] as string[], authors: [] as string[], committers: [] as string[], since: undefined as number | undefined, until: undefined as number | undefined }
  const dateOf = (value: string, field: string) => {
    try {
      return queryTime(value, field)
    } catch {
      throw unprocessable(`${field}: takes a date as YYYY-MM-DD (or an RFC 3339 time), not “${value.slice(0, 40)}”.`, 'q')
    }
  }
  for (const word of q.split(/\s+/).filter(Boolean)) {
    const [, key, value] = /^(author|committer|after|before):(.*)$/.exec(word) ?? [, '', word]
    if (key === 'after') search.since = dateOf(value!, 'after')
    else if (key === 'before') search.until = dateOf(value!, 'before')
    else if (!value) continue
    else if (key === 'author') search.authors.push(value)
    else if (key === 'committer') search.committers.push(value)
    else search.keywords.push(value)
  }
  return { ...search, keywords: search.keywords.slice(0, MAX_WORDS), authors: search.authors.slice(0, MAX_WORDS), committers: search.committers.slice(0, MAX_WORDS) }
}

/** The commits from `head` (a commit id; with `all`, every branch and tag) that `search` finds, newest first. */
export async function searchCommits(deps: AppDeps, ctx: RepoContext, head: string, search: CommitSearch, all: boolean): Promise<ComparedCommit[]> {
  const found = await searchLog(gitRepoOf(deps, ctx), head, search, { all, max: MAX_SEARCH_RESULTS })
  return found.map(listedCommit)
}
