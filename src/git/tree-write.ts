import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { git, requireObjectIds, runGit, safeGitMessage, type GitRepo } from './run'

/**
 * New trees made without a work tree: blobs written with `hash-object -w --stdin`, and a tree
 * built in a temporary index file of its own (GIT_INDEX_FILE, outside the repository, removed
 * afterwards): `read-tree` of the base commit, the changes through `update-index --index-info`
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

/** One change of a tree: a path set to a blob with a mode, or removed. */
export type TreeChange = { path: string; mode: '100644' | '100755'; oid: string } | { path: string; remove: true }

/** What git answered when a tree could not be made from the changes (a patch that does not apply). */
export class TreeRefused extends Error {}

/** Runs `work` with a fresh index file holding `base`'s tree (empty when null); removes the file after. */
async function withIndex<T>(repo: GitRepo, base: string | null, work: (env: Record<string, string>) => Promise<T>): Promise<T> {
  const file = join(tmpdir(), `warren-index-${randomUUID()}`)
  const env = { GIT_INDEX_FILE: file }
  try {
    if (base) {
      requireObjectIds('read-tree', base)
      await git(['read-tree', base], { ...repo, env })
    }
    return await work(env)
  } finally {
    rmSync(file, { force: true })
    rmSync(file + '.lock', { force: true })
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
 * the other names checkouts would read as `.git`).
 */
export async function treeWithChanges(repo: GitRepo, base: string | null, changes: TreeChange[]): Promise<string> {
  const clash = fileAndFolder(changes)
  if (clash) throw new TreeRefused(`a file cannot also be a folder [path: ${clash[0]}, ${clash[1]}]`)
  const zero = '0'.repeat(40)
  const lines = [
    ...changes.filter((c) => 'remove' in c).map((c) => `0 ${zero}\t${c.path}\n`),
    ...changes.flatMap((c) => ('remove' in c ? [] : [`${c.mode} ${c.oid}\t${c.path}\n`])),
  ]
  return withIndex(repo, base, async (env) => {
    const r = await runGit(['update-index', '--index-info'], { ...repo, env, input: lines.join('') })
    if (r.code !== 0) throw new TreeRefused(safeGitMessage(r.stderr))
    const ignored = /^Ignoring path (.*)$/m.exec(r.stderr)
    if (ignored) throw new TreeRefused(`invalid path [path: ${ignored[1]!.slice(0, 200)}]`)
    return writeTree(repo, env)
  })
}

/** The tree of `base` with `patch` applied (`git apply --cached`); TreeRefused when it does not apply. */
export async function treeWithPatch(repo: GitRepo, base: string | null, patch: string): Promise<string> {
  return withIndex(repo, base, async (env) => {
    const r = await runGit(['apply', '--cached', '--whitespace=nowarn', '-'], { ...repo, env, input: patch })
    if (r.code !== 0) throw new TreeRefused(safeGitMessage(r.stderr))
    return writeTree(repo, env)
  })
}
