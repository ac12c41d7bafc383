import { objectBytes, objectInfo } from './object-reader'
import { isObjectId, type GitRepo } from './run'
import { isSafeRefName } from './refs'

/**
 * Trees and refs read in process through the batch reader (./object-reader.ts): a commit's
 * entry at a path, a folder's entries, a ref's commit. Trees are parsed from git's binary form
 * and kept by id (an id names the same tree forever) in a bounded cache, so a path read twice
 * costs one round trip for its folder's id.
 */

export type EntryKind = 'file' | 'executable' | 'symlink' | 'dir' | 'submodule'

export interface TreeEntry {
  name: string
  mode: string
  kind: EntryKind
  oid: string
}

const KIND_OF_MODE: Record<string, EntryKind> = {
  '100644': 'file',
  '100755': 'executable',
  '100664': 'file',
  '120000': 'symlink',
  '40000': 'dir',
  '160000': 'submodule',
}

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
function parseTree(body: Uint8Array, idBytes: number): TreeEntry[] {
  const entries: TreeEntry[] = []
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  let at = 0
  while (at < buf.length) {
    const space = buf.indexOf(32, at)
    const nul = buf.indexOf(0, space)
    if (space < 0 || nul < 0 || nul + 1 + idBytes > buf.length) break
    const mode = buf.toString('latin1', at, space)
    const name = buf.toString('utf8', space + 1, nul)
    const oid = buf.toString('hex', nul + 1, nul + 1 + idBytes)
    entries.push({ name, mode, kind: KIND_OF_MODE[mode] ?? 'file', oid })
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
  return (await treeEntries(repo, tree))?.find((e) => e.name === name) ?? null
}

/** Blob sizes by id (an id's size never changes), bounded. */
const SIZE_CACHE = 100_000
const sizes = new Map<string, number>()

/** Size of a blob (null when `oid` is not one in `repo`); cached once known. */
export async function blobSize(repo: GitRepo, oid: string): Promise<number | null> {
  const hit = sizes.get(oid)
  if (hit !== undefined) return hit
  const info = await objectInfo(repo, oid)
  if (info?.type !== 'blob') return null
  sizes.set(oid, info.size)
  if (sizes.size > SIZE_CACHE) sizes.delete(sizes.keys().next().value!)
  return info.size
}

export type RefCommitKind = 'branch' | 'tag' | 'commit'

/** A ref as Gitea's contents API reads it: a branch, then a tag, then a commit id (4–64 hex digits). */
export async function refCommit(repo: GitRepo, ref: string): Promise<{ kind: RefCommitKind; commit: string } | null> {
  if (isSafeRefName(ref)) {
    for (const [kind, prefix] of [['branch', 'refs/heads/'], ['tag', 'refs/tags/']] as const) {
      const info = await objectInfo(repo, `${prefix}${ref}^{commit}`)
      if (info?.type === 'commit') return { kind, commit: info.oid }
    }
  }
  if (/^[0-9a-f]{4,64}$/i.test(ref)) {
    const info = await objectInfo(repo, `${ref.toLowerCase()}^{commit}`)
    if (info?.type === 'commit') return { kind: 'commit', commit: info.oid }
  }
  return null
}
