import { isObjectId, runGit, type GitRepo } from './run'
import type { BranchHead } from './commits'
import { readLog } from './commit-log'
import { commitFiles } from './commit-files'

/** A commit with the files it changed against its first parent (push payloads), at most `maxFiles` of them. */
export interface LoggedCommit extends Omit<BranchHead, 'name'> {
  added: string[]
  removed: string[]
  modified: string[]
}

/**
 * The newest `max` commits reachable from `to` and not from `from` (when given), newest first,
 * with their changed files (at most `maxFiles` each: Gitea's payload commit has no mark for a cut
 * list, so a commit of more lists its first ones); and how many such commits there are in all
 * (counted up to `countUpTo`).
 */
export async function logCommits(
  repo: GitRepo,
  to: string,
  from: string | null,
  max: number,
  countUpTo: number,
  maxFiles: number,
): Promise<{ commits: LoggedCommit[]; total: number }> {
  if (!isObjectId(to) || (from !== null && !isObjectId(from))) return { commits: [], total: 0 }
  const range = from ? [to, `^${from}`] : [to]
  const entries = await readLog(repo, [`--max-count=${Math.max(0, Math.floor(max))}`], { values: range }).catch(() => null)
  if (!entries) return { commits: [], total: 0 }
  const lists = await commitFiles(repo, entries.map((e) => e.id), maxFiles)
  const commits = entries.map(({ tree: _tree, parents: _parents, additions: _a, deletions: _d, ...head }) => {
    const commit: LoggedCommit = { ...head, added: [], removed: [], modified: [] }
    for (const f of lists.get(head.id)?.files ?? []) {
      if (f.status === 'A') commit.added.push(f.path)
      else if (f.status === 'D') commit.removed.push(f.path)
      else commit.modified.push(f.path)
    }
    return commit
  })
  // Fewer than asked for, or no more to count than were listed: the list is the count.
  if (commits.length < max || countUpTo <= max) return { commits, total: commits.length }
  const count = await runGit(['rev-list', '--count', `--max-count=${countUpTo}`], { ...repo, values: range })
  return { commits, total: count.code === 0 ? Number(count.stdout.toString('utf8').trim()) || commits.length : commits.length }
}
