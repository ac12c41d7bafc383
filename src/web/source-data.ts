import type { AppDeps } from '../deps'
import { gitRepoOf, type RepoContext } from '../auth/repo-context'
import { blobSize, objectBytes } from '../git/objects'
import { resolveRefPrefix, type RefKind } from '../git/refs'
import { entryAt, folderTree, treeEntries, type TreeEntry } from '../git/tree'
import { branchHeads } from '../modules/branches/service'
import { MAX_POINTER_SIZE, storedObjectOf } from '../modules/lfs/pointer'
import { objectPath } from '../modules/lfs/store'

/**
 * What the repository pages read from git, through the same readers as the contents and raw APIs:
 * the commit a `src/{branch|tag|commit}/...` path names, a folder's entries, a file's bytes within
 * the view's bound.
 */

export type SourceKind = 'branch' | 'tag' | 'commit'

const KINDS: Record<SourceKind, (RefKind | 'commit')[]> = { branch: ['heads'], tag: ['tags'], commit: ['commit'] }

/** Where a source path points: its commit, the ref's name as given, and the path inside the tree. */
export interface SourceAt {
  kind: SourceKind
  ref: string
  commit: string
  path: string[]
}

/** The ref (longest match) and path of the segments after `src/{kind}/`, or null. */
export async function resolveSource(deps: AppDeps, ctx: RepoContext, kind: SourceKind, segments: string[]): Promise<SourceAt | null> {
  const hit = await resolveRefPrefix(gitRepoOf(deps, ctx), segments, KINDS[kind])
  return hit && { kind, ref: hit.ref, commit: hit.sha, path: hit.rest }
}

/** The default branch's head, or null (an empty repository). */
export async function defaultSource(deps: AppDeps, ctx: RepoContext): Promise<SourceAt | null> {
  return await resolveSource(deps, ctx, 'branch', ctx.repo.defaultBranch.split('/'))
}

/**
 * The default branch's head and the switcher's first `max` branches (a repository's home), from
 * one listing of the branches when the default branch is among them; null `at` for an empty
 * repository (or a default branch that does not exist).
 */
export async function homeSource(deps: AppDeps, ctx: RepoContext, max: number): Promise<{ at: SourceAt | null; branches: { names: string[]; total: number } }> {
  const { rows, total } = await branchHeads(deps, ctx, { page: 1, limit: max, offset: 0 })
  const head = rows.find((b) => b.name === ctx.repo.defaultBranch)
  const at: SourceAt | null = head ? { kind: 'branch', ref: head.name, commit: head.id, path: [] } : total > rows.length ? await defaultSource(deps, ctx) : null
  return { at, branches: { names: rows.map((b) => b.name), total } }
}

/** Folders first, then files, each by name (as Gitea lists them). */
const byKindThenName = (a: TreeEntry, b: TreeEntry) => Number(b.kind === 'dir') - Number(a.kind === 'dir') || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)

/** A folder's entries at `path` (null when it is not a folder), at most `max`. */
export async function folderEntries(deps: AppDeps, ctx: RepoContext, at: SourceAt, max: number): Promise<{ entries: TreeEntry[]; total: number } | null> {
  const git = gitRepoOf(deps, ctx)
  const tree = await folderTree(git, at.commit, at.path)
  const entries = tree ? await treeEntries(git, tree) : null
  if (!entries) return null
  return { entries: [...entries].sort(byKindThenName).slice(0, max), total: entries.length }
}

/** `lfs`: the content is the LFS object the file's pointer stands for (`fileAt`'s `lfs`). */
export type FileContent =
  | { kind: 'text'; text: string; size: number; oid: string; lfs?: true }
  | { kind: 'binary' | 'too-large' | 'long-lines'; size: number; lfs?: true }
  | { kind: 'other'; entry: TreeEntry }

/** Longest line a file view shows: a file with a longer one (minified code, data) links to its raw form instead. */
export const MAX_VIEW_LINE = 10_000

/** Whether some line of `text` is longer than `max` (one pass). */
function hasLineLongerThan(text: string, max: number): boolean {
  for (let at = 0; at < text.length; ) {
    const end = text.indexOf('\n', at)
    const stop = end < 0 ? text.length : end
    if (stop - at > max) return true
    at = stop + 1
  }
  return false
}

/** Whether bytes look binary (a NUL in the first 8000, git's own test). */
const looksBinary = (bytes: Uint8Array) => bytes.subarray(0, 8000).includes(0)

/**
 * The entry at `at.path` when it is not a folder, with its text when it is a text file within
 * `maxBytes`. `maxLine`: a longer line makes it `long-lines` (the view's bound by default);
 * `utf8`: bytes that are not valid UTF-8 make it `binary`, and a byte order mark is kept (the
 * editor, which writes the text back as it was given).
 */
export async function fileAt(deps: AppDeps, ctx: RepoContext, at: SourceAt, maxBytes: number, opts: { maxLine?: number; utf8?: boolean; lfs?: boolean } = {}): Promise<FileContent | null> {
  const git = gitRepoOf(deps, ctx)
  const entry = await entryAt(git, at.commit, at.path)
  if (!entry || entry.kind === 'dir') return null
  if (entry.kind !== 'file' && entry.kind !== 'executable') return { kind: 'other', entry }
  let size = (await blobSize(git, entry.oid)) ?? 0
  if (size > maxBytes) return { kind: 'too-large', size }
  const obj = await objectBytes(git, entry.oid)
  if (!obj) return null
  let body: Uint8Array = obj.body
  // The file view shows the LFS object a pointer stands for, as Gitea's ("Stored with Git LFS").
  const pointer = opts.lfs && size <= MAX_POINTER_SIZE ? await storedObjectOf(deps, ctx.repo, body) : null
  const lfs = pointer ? ({ lfs: true } as const) : {}
  if (pointer) {
    size = pointer.size
    if (size > maxBytes) return { kind: 'too-large', size, ...lfs }
    body = new Uint8Array(await Bun.file(objectPath(deps, pointer.oid)).arrayBuffer())
  }
  if (looksBinary(body)) return { kind: 'binary', size, ...lfs }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: opts.utf8 ?? false, ignoreBOM: opts.utf8 ?? false }).decode(body)
  } catch {
    return { kind: 'binary', size, ...lfs }
  }
  if (hasLineLongerThan(text, opts.maxLine ?? MAX_VIEW_LINE)) return { kind: 'long-lines', size, ...lfs }
  return { kind: 'text', text, size, oid: entry.oid, ...lfs }
}

/** The repository's branches for the switcher (the first `max` by name). */
export async function branchNames(deps: AppDeps, ctx: RepoContext, max: number): Promise<{ names: string[]; total: number }> {
  const { rows, total } = await branchHeads(deps, ctx, { page: 1, limit: max, offset: 0 })
  return { names: rows.map((b) => b.name), total }
}
