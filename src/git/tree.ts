import { isObjectId, startGit, type GitRepo } from './run'
import { readTokens } from './tokens'

/**
 * A tree's entries read as they arrive (`git ls-tree -z -l`, with `recursive` every entry below
 * it, trees included, each by its whole path), handed one by one to a reader that keeps what it
 * wants and stops git when it has enough: a tree of a million files costs what is read of it.
 */

export interface TreeEntry {
  /** The mode as git prints it (six octal digits). */
  mode: string
  type: 'blob' | 'tree' | 'commit'
  oid: string
  /** Bytes of a blob (0 for trees and submodules). */
  size: number
  path: string
}

/** Longest path kept (Linux's PATH_MAX; a longer one is cut there). */
const MAX_PATH_CHARS = 4096

const ENTRY = /^(\d{6}) (blob|tree|commit) ([0-9a-f]{40,64}) +(-|\d+)\t/

/**
 * Walks the tree (or the tree of the commit) `oid`, calling `onEntry` for each entry in git's
 * order until it answers false. Answers whether git listed the tree (false: no such tree-ish).
 */
export async function walkTree(repo: GitRepo, oid: string, recursive: boolean, onEntry: (entry: TreeEntry) => boolean | void): Promise<boolean> {
  if (!isObjectId(oid)) return false
  const args = ['ls-tree', '-z', '-l', '--full-tree', ...(recursive ? ['-r', '-t'] : []), oid]
  const read = await readTokens(
    startGit(args, repo),
    (token) => {
      const m = ENTRY.exec(token)
      if (!m) return
      const entry: TreeEntry = { mode: m[1]!, type: m[2] as TreeEntry['type'], oid: m[3]!, size: m[4] === '-' ? 0 : Number(m[4]), path: token.slice(m[0].length) }
      return onEntry(entry)
    },
    MAX_PATH_CHARS + 128,
  )
  return read.code === 0
}
