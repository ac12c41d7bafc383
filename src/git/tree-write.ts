import { createHash, randomUUID } from 'node:crypto'
import { rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { git, requireObjectIds, runGit, safeGitMessage, type GitRepo } from './run'
import { objectInfo } from './objects'

/**
 * New trees made without a work tree: blobs written with `hash-object -w --stdin`, and a tree
 * built in a temporary index file of its own (GIT_INDEX_FILE, outside the repository, removed
 * afterwards, or kept for the next change on the tree it holds: keptIndexes): `read-tree` of the
 * base commit (while the blobs are written), the changes through `update-index --index-info`
 * (or a patch through `apply --cached`), then `write-tree`. Paths reach git on stdin, one per
 * line, and were checked by the caller (no '..', no `.git`, no control characters), since
 * `update-index` skips an invalid path without failing.
 */

/** Writes `bytes` as a blob; answers its id. */
export async function writeBlob(repo: GitRepo, bytes: Uint8Array): Promise<string> {
  const oid = (await git(['hash-object', '-w', '--stdin'], { ...repo, input: bytes })).trim()
  requireObjectIds('hash-object', oid)
  return oid
}

/** Past this many bytes a blob's id is git's to tell (blobIdOf): hashing it here would hold the event loop longer. */
const MAX_HASHED_HERE = 1024 * 1024

/**
 * The id git gives `bytes` as a blob, made here (the hash of `blob <size>\0` and the bytes, as git
 * names every object) in a repository whose object ids are as long as `sample`'s (40 hex digits:
 * SHA-1; 64: SHA-256), so that a tree can be built while git writes the blob; null past
 * MAX_HASHED_HERE bytes. The caller still checks it against git's (writeBlob).
 */
export function blobIdOf(sample: string, bytes: Uint8Array): string | null {
  if (bytes.length > MAX_HASHED_HERE || (sample.length !== 40 && sample.length !== 64)) return null
  return createHash(sample.length === 40 ? 'sha1' : 'sha256').update(`blob ${bytes.length}\0`).update(bytes).digest('hex')
}

/** One change of a tree: a path set to a blob with a mode, or removed. */
export type TreeChange = { path: string; mode: '100644' | '100755'; oid: string } | { path: string; remove: true }

/** What git answered when a tree could not be made from the changes (a patch that does not apply). */
export class TreeRefused extends Error {}

/**
 * Index files kept after a tree was written, one a repository (the last tree written there, which
 * the file holds), at most KEPT_INDEXES in all, none larger than MAX_KEPT_INDEX_BYTES: the next
 * change whose base commit has that tree (the same branch edited again) starts from that file,
 * without `read-tree` (for a large tree the costliest step), and git's cache of its trees in it is
 * still valid for `write-tree`. A tree never changes under its id, so the file is right whenever
 * its tree is the base's. A change takes the file out while it works on it; a second change at the
 * same time reads its base's tree as before.
 */
const keptIndexes = new Map<string, { tree: string; file: string }>()
const KEPT_INDEXES = 16
const MAX_KEPT_INDEX_BYTES = 8 * 1024 * 1024
let keptIndexHits = 0

/** How many trees were written from a kept index, without `read-tree`, since the process started (tests). */
export const keptIndexesUsed = (): number => keptIndexHits

const removeIndex = (file: string) => {
  rmSync(file, { force: true })
  rmSync(file + '.lock', { force: true })
}

/** Removes the kept index files (a cache: the next change reads its base's tree); at the latest when the process exits, as they are of no use to another. */
export function releaseKeptIndexes(): void {
  for (const kept of keptIndexes.values()) removeIndex(kept.file)
  keptIndexes.clear()
}
let removedAtExit = false

/** Keeps `file` (holding `tree`) as `repo`'s index, in place of the one kept before; the oldest others out past KEPT_INDEXES. */
function keepIndex(repo: GitRepo, tree: string, file: string): boolean {
  const size = statSync(file, { throwIfNoEntry: false })?.size
  if (size === undefined || size > MAX_KEPT_INDEX_BYTES) return false
  if (!removedAtExit) {
    removedAtExit = true
    process.once('exit', releaseKeptIndexes)
  }
  const old = keptIndexes.get(repo.gitDir)
  if (old) removeIndex(old.file)
  keptIndexes.delete(repo.gitDir)
  keptIndexes.set(repo.gitDir, { tree, file })
  for (const [gitDir, kept] of keptIndexes) {
    if (keptIndexes.size <= KEPT_INDEXES) break
    keptIndexes.delete(gitDir)
    removeIndex(kept.file)
  }
  return true
}

/**
 * The tree `work` writes with an index file holding `base`'s tree (empty when null) and what
 * `input` comes to: the repository's kept index when it holds that tree, else a fresh file
 * `read-tree` fills while `input` is made (the blobs being written); both are awaited before
 * `work` starts, or before a failure of either is thrown. The file is kept for the next change
 * (keptIndexes) once `work` wrote its tree, else removed.
 */
async function withIndex<I>(repo: GitRepo, base: string | null, input: I | Promise<I>, work: (env: Record<string, string>, input: I) => Promise<string>): Promise<string> {
  if (base) requireObjectIds('read-tree', base)
  const kept = keptIndexes.get(repo.gitDir)
  keptIndexes.delete(repo.gitDir)
  let reuse: typeof kept | null = null
  if (kept) {
    const baseTree = base ? await objectInfo(repo, `${base}^{tree}`).catch(() => null) : null
    if (baseTree?.oid === kept.tree) reuse = kept
    else removeIndex(kept.file)
  }
  const file = reuse?.file ?? join(tmpdir(), `warren-index-${randomUUID()}`)
  const env = { GIT_INDEX_FILE: file }
  let keptFile = false
  try {
    if (reuse) keptIndexHits++
    const [read, made] = await Promise.allSettled([base && !reuse ? git(['read-tree', base], { ...repo, env }) : null, input])
    if (read.status === 'rejected') throw read.reason
    if (made.status === 'rejected') throw made.reason
    const tree = await work(env, made.value)
    keptFile = keepIndex(repo, tree, file)
    return tree
  } finally {
    if (!keptFile) removeIndex(file)
  }
}

async function writeTree(repo: GitRepo, env: Record<string, string>): Promise<string> {
  const tree = (await git(['write-tree'], { ...repo, env })).trim()
  requireObjectIds('write-tree', tree)
  return tree
}

/**
 * A path set beside a path set inside it (`a` and `a/b`): the index would take both, and
 * write-tree would make a tree holding a blob and a tree of one name, which git itself calls
 * broken (fsck's duplicateEntries). The first such pair, or null.
 */
function fileAndFolder(changes: TreeChange[]): [string, string] | null {
  const set = new Set(changes.flatMap((c) => ('remove' in c ? [] : [c.path])))
  for (const path of set)
    for (let at = path.indexOf('/'); at > 0; at = path.indexOf('/', at + 1)) if (set.has(path.slice(0, at))) return [path.slice(0, at), path]
  return null
}

/**
 * The tree of `base` (a commit, or null for none) with `changes` made: removals first, then the
 * new entries. TreeRefused for a file set inside another set file, and for a path git will not
 * store (`update-index` leaves it out, saying so on stderr, and succeeds: `.git.`, `git~1` and
 * the other names checkouts would read as `.git`). `changes` may still be in the making (their
 * blobs being written): `base`'s tree is read meanwhile. `written`: the writing of blobs the
 * changes name by ids known beforehand (blobIdOf), which the index takes before they exist;
 * awaited before the tree is written (write-tree checks that every object is there).
 */
export async function treeWithChanges(repo: GitRepo, base: string | null, changes: TreeChange[] | Promise<TreeChange[]>, written?: Promise<unknown>): Promise<string> {
  return withIndex(repo, base, changes, async (env, changes) => {
    const clash = fileAndFolder(changes)
    if (clash) throw new TreeRefused(`a file cannot also be a folder [path: ${clash[0]}, ${clash[1]}]`)
    const zero = '0'.repeat(40)
    const lines = [
      ...changes.filter((c) => 'remove' in c).map((c) => `0 ${zero}\t${c.path}\n`),
      ...changes.flatMap((c) => ('remove' in c ? [] : [`${c.mode} ${c.oid}\t${c.path}\n`])),
    ]
    const r = await runGit(['update-index', '--index-info'], { ...repo, env, input: lines.join('') })
    if (r.code !== 0) throw new TreeRefused(safeGitMessage(r.stderr))
    const ignored = /^Ignoring path (.*)$/m.exec(r.stderr)
    if (ignored) throw new TreeRefused(`invalid path [path: ${ignored[1]!.slice(0, 200)}]`)
    await written
    return writeTree(repo, env)
  })
}

/** The tree of `base` with `patch` applied (`git apply --cached`); TreeRefused when it does not apply. */
export async function treeWithPatch(repo: GitRepo, base: string | null, patch: string): Promise<string> {
  return withIndex(repo, base, patch, async (env) => {
    const r = await runGit(['apply', '--cached', '--whitespace=nowarn', '-'], { ...repo, env, input: patch })
    if (r.code !== 0) throw new TreeRefused(safeGitMessage(r.stderr))
    return writeTree(repo, env)
  })
}
