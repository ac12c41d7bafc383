import { createHash, randomUUID } from 'node:crypto'
import { rmSync, statSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { git, GitError, requireObjectIds, runGit, safeGitMessage, type GitRepo } from './run'
import { objectInfo } from './objects'
import { treeEntries } from './tree'

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

/**
 * Writes each of `blobs` as a blob; answers their ids, in order. Several go through one git
 * process (`hash-object -w --no-filters --stdin-paths`, each blob first a file of its own in a
 * temporary folder, removed afterwards) rather than a process each: five files of a change were
 * five processes started at once, on two cores most of such a change's time.
 */
export async function writeBlobs(repo: GitRepo, blobs: Uint8Array[]): Promise<string[]> {
  if (blobs.length <= 1) return await Promise.all(blobs.map((bytes) => writeBlob(repo, bytes)))
  const folder = await mkdtemp(join(tmpdir(), 'warren-blobs-'))
  try {
    const paths = blobs.map((_, i) => join(folder, String(i)))
    await Promise.all(blobs.map((bytes, i) => writeFile(paths[i]!, bytes)))
    const oids = (await git(['hash-object', '-w', '--no-filters', '--stdin-paths'], { ...repo, input: paths.join('\n') + '\n' })).trim().split('\n')
    if (oids.length !== blobs.length) throw new GitError('failed', `hash-object named ${oids.length} blobs of ${blobs.length}`, 'hash-object')
    requireObjectIds('hash-object', ...oids)
    return oids
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
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

/** TreeRefused for a file set inside another set file (fileAndFolder). */
function refuseFileAndFolder(changes: TreeChange[]): void {
  const clash = fileAndFolder(changes)
  if (clash) throw new TreeRefused(`a file cannot also be a folder [path: ${clash[0]}, ${clash[1]}]`)
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
  // Changes known at once on a branch with a commit: built folder by folder where that may be.
  if (base && Array.isArray(changes)) {
    refuseFileAndFolder(changes)
    const tree = await treeByFolders(repo, base, changes, written)
    if (tree) return tree
  }
  return withIndex(repo, base, changes, async (env, changes) => {
    refuseFileAndFolder(changes)
    // As long as the repository's ids (SHA-256's are 64 digits: 40 zeros are malformed there).
    const zero = '0'.repeat(base?.length ?? 40)
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

/** A name git stores as given, for certain: ASCII letters, digits, `_`, `-` and inner dots (none a `.git` in any checkout's reading). */
const PLAIN_NAME = /^[A-Za-z0-9_-](?:[A-Za-z0-9._-]*[A-Za-z0-9_-])?$/

/** The type mktree's listing gives an entry, by its mode as a tree object spells it (octal, no leading zero); `blob` for the others. */
const TYPE_OF_MODE: Record<string, string> = { '40000': 'tree', '160000': 'commit' }

interface Listed {
  mode: string
  oid: string
}

/**
 * The tree of `base` (a commit) with `changes` made, built folder by folder: each folder a change
 * reaches (and each above it) listed anew from its entries in the base's tree, then all of them
 * written by one `git mktree -z --batch`, deepest first, their ids made here beforehand (the hash
 * of each tree's listing, as git names it) so a parent lists its new child's; git's answers are
 * checked against them. Reads and writes only the folders changed, whatever the size of the
 * repository (an index holds every file: at 5,000 files its update and write-tree were most of a
 * contents write). Null when this way cannot be taken and the index's must (treeWithChanges): a
 * name set that is not plainly storable (update-index has git's own rules for those), a folder
 * whose names are not UTF-8, folders of more than MAX_ENTRIES_LISTED entries in all, or a change
 * that would leave the root empty.
 */
async function treeByFolders(repo: GitRepo, base: string, changes: TreeChange[], written?: Promise<unknown>): Promise<string | null> {
  for (const c of changes) if (!('remove' in c) && !c.path.split('/').every((name) => PLAIN_NAME.test(name))) return null
  const rootInfo = await objectInfo(repo, `${base}^{tree}`)
  if (!rootInfo || rootInfo.type !== 'tree') return null
  const sha1 = rootInfo.oid.length === 40
  // The folders reached, each with what changes in it (a child folder's new tree comes later).
  const folders = new Map<string, { sets: Map<string, Listed>; removes: Set<string>; children: Set<string> }>()
  const folderOf = (path: string) => {
    let f = folders.get(path)
    if (!f) {
      folders.set(path, (f = { sets: new Map(), removes: new Set(), children: new Set() }))
      if (path !== '') folderOf(path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '').children.add(path)
    }
    return f
  }
  folderOf('')
  for (const c of changes) {
    const parts = c.path.split('/')
    const f = folderOf(parts.slice(0, -1).join('/'))
    const name = parts[parts.length - 1]!
    if ('remove' in c) f.removes.add(name)
    else f.sets.set(name, { mode: String(Number.parseInt(c.mode, 8).toString(8)), oid: c.oid })
  }
  // Each folder's entries in the base (none where it is new).
  const baseOf = new Map<string, Map<string, Listed>>()
  let entriesListed = 0
  for (const path of [...folders.keys()].sort((a, b) => depthOf(a) - depthOf(b))) {
    let oid: string | null = rootInfo.oid
    if (path !== '') {
      const cut = path.lastIndexOf('/')
      const parent = baseOf.get(cut < 0 ? '' : path.slice(0, cut))
      const entry = parent?.get(path.slice(cut + 1))
      oid = entry?.mode === '40000' ? entry.oid : null
    }
    const listed = new Map<string, Listed>()
    if (oid) {
      const entries = await treeEntries(repo, oid)
      if (!entries || (entriesListed += entries.length) > MAX_ENTRIES_LISTED) return null
      for (const e of entries) {
        if (e.path.includes('\uFFFD')) return null
        listed.set(e.path, { mode: String(Number.parseInt(e.mode, 8).toString(8)), oid: e.oid })
      }
    }
    baseOf.set(path, listed)
  }
  // Deepest first: each folder's new listing and id; an emptied folder leaves its parent.
  const made = new Map<string, string | null>()
  const records: string[] = []
  for (const path of [...folders.keys()].sort((a, b) => depthOf(b) - depthOf(a))) {
    const f = folders.get(path)!
    const listed = new Map(baseOf.get(path))
    for (const name of f.removes) listed.delete(name)
    for (const [name, entry] of f.sets) listed.set(name, entry)
    for (const child of f.children) {
      const oid = made.get(child)
      const name = child.slice(child.lastIndexOf('/') + 1)
      if (oid) listed.set(name, { mode: '40000', oid })
      else listed.delete(name)
    }
    if (listed.size === 0) {
      if (path === '') return null
      made.set(path, null)
      continue
    }
    const entries = [...listed].map(([name, e]) => ({ name: Buffer.from(name, 'utf8'), ...e }))
    const key = (e: (typeof entries)[number]) => (e.mode === '40000' ? Buffer.concat([e.name, SLASH]) : e.name)
    entries.sort((a, b) => Buffer.compare(key(a), key(b)))
    const body = Buffer.concat(entries.flatMap((e) => [Buffer.from(`${e.mode} `), e.name, NUL, Buffer.from(e.oid, 'hex')]))
    const oid = createHash(sha1 ? 'sha1' : 'sha256').update(`tree ${body.length}\0`).update(body).digest('hex')
    made.set(path, oid)
    records.push(entries.map((e) => `${e.mode.padStart(6, '0')} ${TYPE_OF_MODE[e.mode] ?? 'blob'} ${e.oid}\t${e.name.toString('utf8')}\0`).join('') + '\0')
  }
  const r = await runGit(['mktree', '-z', '--missing', '--batch'], { ...repo, input: records.join('') })
  if (r.code !== 0) throw new GitError('failed', `git mktree failed: ${safeGitMessage(r.stderr)}`, 'mktree')
  const answered = r.stdout.toString('utf8').trim().split('\n')
  const expected = [...made.values()].filter((oid): oid is string => oid !== null)
  if (answered.join() !== expected.join()) throw new Error(`git named the trees otherwise than their listings' hashes (${answered.join(', ')} against ${expected.join(', ')})`)
  await written
  return made.get('')!
}

/**
 * The most entries treeByFolders lists (and sorts and hashes on the event loop) for one change:
 * past it (a folder of thousands of files) the index's way, whose work is git's, in its own process.
 */
const MAX_ENTRIES_LISTED = 2000

const depthOf = (path: string) => (path === '' ? 0 : path.split('/').length)
const SLASH = Buffer.from('/')
const NUL = Buffer.from([0])

/** The tree of `base` with `patch` applied (`git apply --cached`); TreeRefused when it does not apply. */
export async function treeWithPatch(repo: GitRepo, base: string | null, patch: string): Promise<string> {
  return withIndex(repo, base, patch, async (env) => {
    const r = await runGit(['apply', '--cached', '--whitespace=nowarn', '-'], { ...repo, env, input: patch })
    if (r.code !== 0) throw new TreeRefused(safeGitMessage(r.stderr))
    return writeTree(repo, env)
  })
}
