import { objectBytes, objectInfo } from './objects'
import { isObjectId, startGit, type GitRepo } from './run'
import { readTokens } from './tokens'

/**
 * Trees, two ways, one entry type:
 * - a single level parsed in process (`treeEntries`, `entryAt`, `folderTree`): the tree object
 *   read through the batch reader (./objects.ts) from git's binary form and kept by id (an id
 *   names the same tree forever) in a bounded cache, so a path read twice costs one round trip
 *   for its folder's id;
 * - a walk read as it arrives (`walkTree`: `git ls-tree -z -l`, with `recursive` every entry
 *   below, trees included, each by its whole path), each entry handed to a reader that keeps
 *   what it wants and stops git when it has enough: a tree of a million files costs what is
 *   read of it.
 */

export type EntryKind = 'file' | 'executable' | 'symlink' | 'dir' | 'submodule'

export interface TreeEntry {
  kind: EntryKind
  /** The mode as git prints it: 100644, 100755, 120000, 040000 or 160000. */
  mode: string
  oid: string
  /** From the root of the tree read: a single level's entries by their names. */
  path: string
  /** Bytes of a blob when the reading knew them (a walk; 0 for folders and submodules); a parsed tree's have none (objects.ts `blobSize`). */
  size?: number
}

const MODE_OF_KIND: Record<EntryKind, string> = { file: '100644', executable: '100755', symlink: '120000', dir: '040000', submodule: '160000' }

/** An entry's kind from its mode as stored, as git reads it (a regular file with the owner's execute bit is executable). */
function kindOfMode(mode: string): EntryKind {
  const bits = parseInt(mode, 8)
  const type = bits & 0o170000
  if (type === 0o040000) return 'dir'
  if (type === 0o120000) return 'symlink'
  if (type === 0o160000) return 'submodule'
  return bits & 0o100 ? 'executable' : 'file'
}

/** The git object type of an entry: blob, tree, or commit (a submodule). */
export const objectTypeOf = (kind: EntryKind): 'blob' | 'tree' | 'commit' => (kind === 'dir' ? 'tree' : kind === 'submodule' ? 'commit' : 'blob')

/** Trees kept parsed, and the most entries they may hold together. */
const TREE_CACHE_TREES = 512
const TREE_CACHE_ENTRIES = 200_000
const treeCache = new Map<string, TreeEntry[]>()
let cachedEntries = 0

function remember(oid: string, entries: TreeEntry[]): void {
  if (entries.length > TREE_CACHE_ENTRIES / 4) return
  treeCache.set(oid, entries)
  cachedEntries += entries.length
  while (treeCache.size > TREE_CACHE_TREES || cachedEntries > TREE_CACHE_ENTRIES) {
    const [first, dropped] = treeCache.entries().next().value!
    treeCache.delete(first)
    cachedEntries -= dropped.length
  }
}

/** A tree object's entries (`<mode> <name>\0<binary id>` each), in git's order. */
function parseTree(body: Buffer, idBytes: number): TreeEntry[] {
  const entries: TreeEntry[] = []
  let at = 0
  while (at < body.length) {
    const space = body.indexOf(32, at)
    const nul = body.indexOf(0, space)
    if (space < 0 || nul < 0 || nul + 1 + idBytes > body.length) break
    const kind = kindOfMode(body.toString('latin1', at, space))
    entries.push({ kind, mode: MODE_OF_KIND[kind], oid: body.toString('hex', nul + 1, nul + 1 + idBytes), path: body.toString('utf8', space + 1, nul) })
    at = nul + 1 + idBytes
  }
  return entries
}

/** The entries of tree `oid` (cached), or null when it is not a tree. */
export async function treeEntries(repo: GitRepo, oid: string): Promise<TreeEntry[] | null> {
  const hit = treeCache.get(oid)
  if (hit) return hit
  const obj = await objectBytes(repo, oid)
  if (!obj || obj.info.type !== 'tree') return null
  const entries = parseTree(obj.body, oid.length / 2)
  remember(oid, entries)
  return entries
}

/** The tree id of folder `dir` (segments) in `commit`, or null when there is no such folder. */
export async function folderTree(repo: GitRepo, commit: string, dir: string[]): Promise<string | null> {
  if (!isObjectId(commit)) return null
  const info = await objectInfo(repo, dir.length ? `${commit}:${dir.join('/')}` : `${commit}^{tree}`)
  return info && info.type === 'tree' ? info.oid : null
}

/** The entry at `path` (segments, at least one) in `commit`, or null. */
export async function entryAt(repo: GitRepo, commit: string, path: string[]): Promise<TreeEntry | null> {
  if (path.length === 0) return null
  const tree = await folderTree(repo, commit, path.slice(0, -1))
  if (!tree) return null
  const name = path[path.length - 1]!
  return (await treeEntries(repo, tree))?.find((e) => e.path === name) ?? null
}

/** Longest path kept (Linux's PATH_MAX; a longer one is cut there). */
const MAX_PATH_CHARS = 4096

const ENTRY = /^(\d{6}) (?:blob|tree|commit) ([0-9a-f]{40,64}) +(-|\d+)\t/

/**
 * Walks the tree (or the tree of the commit) `oid`, calling `onEntry` for each entry in git's
 * order until it answers false: its own entries, with `recursive` every entry below them, or with
 * `folders` (fixed paths from the root, no trailing slash) the entries directly inside those
 * folders (a folder the tree lacks lists nothing). Answers whether git listed the tree (false: no
 * such tree-ish).
 */
export async function walkTree(
  repo: GitRepo,
  oid: string,
  opts: { recursive?: boolean; folders?: readonly string[] },
  onEntry: (entry: Required<TreeEntry>) => boolean | void,
): Promise<boolean> {
  if (!isObjectId(oid)) return false
  const args = ['ls-tree', '-z', '-l', '--full-tree', ...(opts.recursive ? ['-r', '-t'] : [])]
  const proc = opts.folders?.length ? startGit(args, { ...repo, values: [oid, '--', ...opts.folders.map((f) => `${f}/`)] }) : startGit([...args, oid], repo)
  const read = await readTokens(
    proc,
    (token) => {
      const m = ENTRY.exec(token)
      if (!m) return
      const kind = kindOfMode(m[1]!)
      return onEntry({ kind, mode: m[1]!, oid: m[2]!, path: token.slice(m[0].length), size: m[3] === '-' ? 0 : Number(m[3]) })
    },
    MAX_PATH_CHARS + 128,
  )
  return read.code === 0
}

/** The regular files directly inside `folders` of commit `sha` (walkTree's `folders`), at most `max` of them, in git's path order. */
export async function filesInFolders(repo: GitRepo, sha: string, folders: readonly string[], max: number): Promise<Required<TreeEntry>[]> {
  const files: Required<TreeEntry>[] = []
  if (folders.length === 0 || max <= 0) return files
  await walkTree(repo, sha, { folders }, (entry) => {
    if (entry.kind !== 'file' && entry.kind !== 'executable') return
    files.push(entry)
    return files.length < max
  })
  return files
}
