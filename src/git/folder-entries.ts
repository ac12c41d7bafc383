import { startGit, type GitRepo } from './run'
import { readTokens } from './tokens'

/** A file directly inside a folder of a commit (`git ls-tree -l`). */
export interface FolderFile {
  /** Path from the root of the tree. */
  path: string
  /** Blob id. */
  id: string
  size: number
}

/** Longest path read: git allows longer, no folder Warren reads holds one. */
const MAX_PATH_CHARS = 4096

/**
 * The regular files directly inside `folders` (fixed paths, relative to the root, no trailing
 * slash) of commit `sha`, in git's path order, at most `max` of them: git's output is read as it
 * arrives and git is stopped at the bound. A folder the commit lacks lists nothing.
 */
export async function filesInFolders(repo: GitRepo, sha: string, folders: readonly string[], max: number): Promise<FolderFile[]> {
  const files: FolderFile[] = []
  if (folders.length === 0 || max <= 0) return files
  const proc = startGit(['ls-tree', '-z', '-l', '--full-name'], { ...repo, values: [sha, '--', ...folders.map((f) => `${f}/`)] })
  await readTokens(
    proc,
    (token) => {
      // `<mode> SP <type> SP <id> SP+ <size> TAB <path>`
      const tab = token.indexOf('\t')
      const [mode, type, id, size] = token.slice(0, tab).split(/ +/)
      if (tab < 0 || type !== 'blob' || (mode !== '100644' && mode !== '100755')) return true
      files.push({ path: token.slice(tab + 1), id: id!, size: Number(size) })
      return files.length < max
    },
    MAX_PATH_CHARS,
  )
  return files
}
