import { isObjectId, startGit, type GitRepo } from './run'
import { readTokens } from './tokens'

/**
 * The files each of a few commits changed against its first parent (none for merges, every file
 * for a root commit), as commit records and push payloads list them: at most `maxFiles` per
 * commit, read from one `git diff-tree --stdin` for all of them and stopped as soon as a commit
 * has more. A commit of 100,000 files thus costs its first `maxFiles` entries, not a buffer of
 * all of them, and git never computes the rest.
 */

/** A file a commit changed: git's status letter (A, D, M, T) and whether its content stayed the same (a mode change). */
export interface CommitFile {
  path: string
  status: string
  sameContent: boolean
}

export interface CommitFileList {
  files: CommitFile[]
  /** The commit changed more files than were listed. */
  truncated: boolean
}

/** Longest path kept (Linux's PATH_MAX; a longer one is cut there). */
const MAX_PATH_CHARS = 4096
/** At most this many characters of paths are listed for one commit, whatever their number. */
export const MAX_COMMIT_PATH_CHARS = 256 * 1024

/**
 * The changed files of each commit in `ids` (full object ids), by id. Whenever a commit has more
 * than `maxFiles` (or more than MAX_COMMIT_PATH_CHARS of paths), its list is cut there and marked,
 * git is stopped, and a new `diff-tree` takes up the commits after it: at most one process per
 * cut-off commit, each reading at most `maxFiles + 1` entries of any one commit.
 */
export async function commitFiles(repo: GitRepo, ids: readonly string[], maxFiles: number): Promise<Map<string, CommitFileList>> {
  const lists = new Map<string, CommitFileList>()
  let rest = ids.filter(isObjectId)
  while (rest.length > 0) {
    let current: CommitFileList | null = null
    let currentId = ''
    let chars = 0
    let meta: string | null = null
    const proc = startGit(['diff-tree', '-r', '-z', '--stdin', '--raw', '--no-renames', '--root', '--no-color', '--no-ext-diff'], {
      ...repo,
      input: rest.join('\n') + '\n',
    })
    // Tokens: a commit's id, then for each file its raw entry (":<modes> <ids> <status>") and its path.
    const read = await readTokens(
      proc,
      (token) => {
        if (meta !== null) {
          const [, , oldId, newId, status] = meta.slice(1).split(' ')
          meta = null
          if (!current) return true
          if (current.files.length >= maxFiles || chars + token.length > MAX_COMMIT_PATH_CHARS) {
            current.truncated = true
            return false
          }
          chars += token.length
          current.files.push({ path: token, status: (status ?? 'M')[0]!, sameContent: oldId === newId })
        } else if (token.startsWith(':')) meta = token
        else if (isObjectId(token)) {
          currentId = token
          chars = 0
          lists.set(token, (current = { files: [], truncated: false }))
        }
        return true
      },
      MAX_PATH_CHARS,
    )
    const at = rest.indexOf(currentId)
    if (!read.stopped || at < 0) break
    rest = rest.slice(at + 1)
  }
  return lists
}
