import { isObjectId, runGit, type GitRepo } from './run'
import { commitHead, type BranchHead } from './commits'

/** A commit with the files it changed against its first parent (push payloads). */
export interface LoggedCommit extends Omit<BranchHead, 'name'> {
  added: string[]
  removed: string[]
  modified: string[]
}

const FIELDS = ['%H', '%an', '%ae', '%aI', '%cn', '%ce', '%cI', '%B']
// Each commit starts with \x01 (in the first field's token); every field ends with NUL, and with
// -z the name-status pairs that follow are NUL-separated too ("\nA", path, "M", path ...).
const FORMAT = '--format=%x01' + FIELDS.join('%x00')

function parse(out: string): LoggedCommit[] {
  const tokens = out.split('\0')
  const commits: LoggedCommit[] = []
  let i = 0
  while (i < tokens.length) {
    const head = tokens[i]!.replace(/^\n/, '')
    if (!head.startsWith('\x01')) {
      i++
      continue
    }
    const [id, an, ae, ad, cn, ce, cd, msg] = [head.slice(1), ...tokens.slice(i + 1, i + FIELDS.length)] as string[]
    i += FIELDS.length
    const commit: LoggedCommit = {
      ...commitHead(id!, an, ae, ad, cn, ce, cd, msg),
      added: [],
      removed: [],
      modified: [],
    }
    // Status / path pairs until the next commit.
    while (i + 1 < tokens.length) {
      const status = tokens[i]!.replace(/^\n/, '')
      if (!/^[A-Z]$/.test(status)) break
      const path = tokens[i + 1]!
      if (status === 'A') commit.added.push(path)
      else if (status === 'D') commit.removed.push(path)
      else commit.modified.push(path)
      i += 2
    }
    commits.push(commit)
  }
  return commits
}

/**
 * The newest `max` commits reachable from `to` and not from `from` (when given), newest first,
 * with their changed files; and how many such commits there are in all (counted up to `countUpTo`).
 */
export async function logCommits(
  repo: GitRepo,
  to: string,
  from: string | null,
  max: number,
  countUpTo: number,
): Promise<{ commits: LoggedCommit[]; total: number }> {
  if (!isObjectId(to) || (from !== null && !isObjectId(from))) return { commits: [], total: 0 }
  const range = from ? [to, `^${from}`] : [to]
  const log = await runGit(['log', '-z', FORMAT, '--name-status', '--no-renames', `--max-count=${max}`], { ...repo, values: range })
  if (log.code !== 0) return { commits: [], total: 0 }
  const commits = parse(log.stdout.toString('utf8'))
  // Fewer than asked for, or no more to count than were listed: the list is the count.
  if (commits.length < max || countUpTo <= max) return { commits, total: commits.length }
  const count = await runGit(['rev-list', '--count', `--max-count=${countUpTo}`], { ...repo, values: range })
  return { commits, total: count.code === 0 ? Number(count.stdout.toString('utf8').trim()) || commits.length : commits.length }
}
