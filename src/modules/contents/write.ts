import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { forbidden, notFound, unprocessable, conflict } from '../../lib/errors'
import type { GitRepo } from '../../git/run'
import { isSafeRefName } from '../../git/ref-name'
import { objectInfo } from '../../git/objects'
import { entryAt, folderTree, treeEntries, type TreeEntry } from '../../git/tree'
import { changeOntoTree, commitTree, emptyTreeOf } from '../../git/merge'
import { blobIdOf, TreeRefused, treeWithChanges, treeWithPatch, writeBlobs, type TreeChange } from '../../git/tree-write'
import { moveRef } from '../../push'
import { ZERO_ID } from '../../events/push-events'
import { toApiContents, toApiFilesResponse, type ApiContents, type WrittenCommit } from '../../convert/contents'
import { AccessMode } from '../../auth/access'
import { commitMessage, commitPeople, decodeBase64, tooLarge } from './commit-options'
import type { FileOptions } from './model'
import { treePath } from './paths'

/**
 * Contents writes: one commit made with git plumbing (./commit-options.ts for who and what it
 * says, git/tree-write.ts for the tree) on the branch `branch` (the default one when absent), or
 * on `new_branch` made from it, moved through the one push path (moveRef: the push decision,
 * then a compare-and-swap from the commit the checks were made on, recorded as the caller's push,
 * so push events, webhooks and pull request re-checks follow as for a `git push`). Every check
 * runs before anything is written (Gitea's codes: 404 for a missing branch or file, 422 for a
 * stale sha, an existing file or branch, a bad path); a branch moved meanwhile answers 409 and
 * leaves it as the other push made it. An empty repository's first commit creates the branch.
 */

export interface FileChange {
  operation: 'create' | 'update' | 'delete'
  path: string
  from_path?: string
  /** base64 */
  content?: string
  /** The bytes themselves (the web's forms), instead of `content`. */
  bytes?: Uint8Array
  sha?: string
}

/** A change checked against the base commit, its bytes decoded. */
interface Planned {
  operation: FileChange['operation']
  path: string
  fromPath: string
  bytes: Uint8Array | null
  mode: '100644' | '100755'
}

/** The branch written from and the one written to, with the commit the writes build on. */
interface Target {
  git: GitRepo
  branch: string
  newBranch: string
  /** null: an empty repository (the first commit). */
  base: string | null
}

/** A mirror's files are the remote's: the contents writes refuse it (403), whoever asks. */
export function checkWritable(ctx: RepoContext): void {
  if (ctx.repo.isMirror) throw forbidden('mirror repository is read-only')
}

/**
 * Whether the caller may write files here at all, as the pages offer it (their New file, Edit and
 * Delete links): write access, not archived (the pipeline's 423), not a mirror (checkWritable).
 * Branch protection is left to the one push path, which answers when the commit is made.
 */
export const filesWritable = (ctx: RepoContext): boolean => ctx.mode >= AccessMode.Write && !ctx.repo.isArchived && !ctx.repo.isMirror

async function targetOf(deps: AppDeps, ctx: RepoContext, opts: FileOptions, deleting: boolean): Promise<Target> {
  checkWritable(ctx)
  const git = gitRepoOf(deps, ctx)
  const branch = opts.branch?.trim() || ctx.repo.defaultBranch
  const newBranch = opts.new_branch?.trim() || branch
  if (!isSafeRefName(newBranch)) throw unprocessable(`invalid branch name [name: ${newBranch.slice(0, 255)}]`, 'new_branch')
  const head = isSafeRefName(branch) ? await objectInfo(git, `refs/heads/${branch}^{commit}`) : null
  const base = head?.type === 'commit' ? head.oid : null
  // No such branch: only an empty repository's first commit (which deletes nothing) may make it.
  if (!base && !(ctx.repo.isEmpty && !deleting && !(await objectInfo(git, 'HEAD')))) throw notFound(`branch does not exist [name: ${branch.slice(0, 255)}]`)
  if (newBranch !== branch && (await objectInfo(git, `refs/heads/${newBranch}`))) throw unprocessable(`branch already exists [name: ${newBranch}]`)
  return { git, branch, newBranch, base }
}

/** Whether `entry` is a file the contents API may update or delete. */
const isFile = (e: TreeEntry | null) => e !== null && (e.kind === 'file' || e.kind === 'executable')

/** Checks one change against the base commit (Gitea's handleCheckErrors) and decodes its content. */
async function plan(deps: AppDeps, t: Target, change: FileChange, field: string): Promise<Planned> {
  const segments = treePath(change.path, `${field}path`)
  if (segments.length === 0) throw unprocessable('path is invalid [path: ]', `${field}path`)
  const path = segments.join('/')
  const fromSegments = change.from_path?.trim() ? treePath(change.from_path, `${field}from_path`) : segments
  if (fromSegments.length === 0) throw unprocessable('path is invalid [path: ]', `${field}from_path`)
  const fromPath = fromSegments.join('/')
  const planned: Planned = { operation: change.operation, path, fromPath, bytes: null, mode: '100644' }
  if (change.operation !== 'delete') planned.bytes = change.bytes ?? decodeBase64(change.content ?? '', deps.config.maxBlobSize, `${field}content`)
  if (planned.bytes && planned.bytes.length > deps.config.maxBlobSize) throw tooLarge(deps.config.maxBlobSize)
  if (change.operation !== 'create') {
    const from = t.base ? await entryAt(t.git, t.base, fromSegments) : null
    if (!from) throw notFound(`repository file does not exist [path: ${fromPath}]`)
    if (!change.sha) throw unprocessable('a SHA or commit ID must be proved when updating a file', `${field}sha`)
    if (change.sha !== from.oid) throw unprocessable(`sha does not match [given: ${change.sha}, expected: ${from.oid}]`, `${field}sha`)
    if (!isFile(from)) throw unprocessable(`path is not a file [path: ${fromPath}]`, `${field}path`)
    if (from.kind === 'executable') planned.mode = '100755'
  }
  if (change.operation !== 'delete' && t.base) await checkTarget(t, segments, change.operation === 'create' || fromPath !== path, field)
  return planned
}

/** The target path's folders must be folders, and the file itself must not exist when created or moved to. */
async function checkTarget(t: Target, segments: string[], mustBeNew: boolean, field: string): Promise<void> {
  let tree = await folderTree(t.git, t.base!, [])
  for (let i = 0; i < segments.length && tree; i++) {
    const entry = (await treeEntries(t.git, tree))?.find((e) => e.path === segments[i]) ?? null
    if (!entry) return
    const sub = segments.slice(0, i + 1).join('/')
    const last = i === segments.length - 1
    if (!last && entry.kind !== 'dir') throw unprocessable(`a file exists where you’re trying to create a subdirectory [path: ${sub}]`, `${field}path`)
    if (last && entry.kind === 'symlink') throw unprocessable(`a symbolic link exists where you’re trying to create a subdirectory [path: ${sub}]`, `${field}path`)
    if (last && (entry.kind === 'dir' || entry.kind === 'submodule')) throw unprocessable(`a directory exists where you’re trying to create a file [path: ${sub}]`, `${field}path`)
    if (last && mustBeNew) throw unprocessable(`repository file already exists [path: ${sub}]`, `${field}path`)
    tree = entry.kind === 'dir' ? entry.oid : null
  }
}

/** Writes `tree` as a commit on the target branch (moveRef); answers the commit's record. */
async function commitOnto(deps: AppDeps, ctx: RepoContext, doer: UserRow, t: Target, opts: FileOptions, tree: string, ops: { operation: string; path: string }[]): Promise<WrittenCommit> {
  const people = commitPeople(deps, doer, opts)
  const message = commitMessage(opts, ops, people.committer)
  const parents = t.base ? [t.base] : []
  const sha = await commitTree(t.git, tree, parents, message, people.author, people.committer)
  const old = t.newBranch === t.branch && t.base ? t.base : ZERO_ID
  const moved = await moveRef(deps, { repo: ctx.repo, owner: ctx.owner }, doer, { ref: `refs/heads/${t.newBranch}`, old, new: sha })
  if (!moved) throw conflict(`branch ${t.newBranch} moved while the files were being written; try again`)
  return { sha, tree, parents, message: message + '\n', author: people.authorShown, committer: people.committerShown }
}

/**
 * Creates, updates (and moves) and deletes files in one commit (POST …/contents and the
 * single-file routes): answers the commit and each file's record at it (null for a deleted one).
 */
export async function changeFiles(
  deps: AppDeps,
  ctx: RepoContext,
  doer: UserRow,
  opts: FileOptions,
  changes: FileChange[],
  fieldPrefix: (i: number) => string = (i) => `files[${i}].`,
): Promise<{ commit: WrittenCommit; files: (ApiContents | null)[] }> {
  const t = await targetOf(deps, ctx, opts, changes.some((c) => c.operation !== 'create'))
  const planned: Planned[] = []
  for (const [i, change] of changes.entries()) planned.push(await plan(deps, t, change, changes.length > 1 ? fieldPrefix(i) : ''))
  const touched = new Set<string>()
  for (const p of planned)
    for (const path of new Set([p.path, p.fromPath])) {
      if (touched.has(path)) throw unprocessable(`a path may be changed once per commit [path: ${path}]`)
      touched.add(path)
    }
  // The blobs are written while the base's tree is read and, where their ids are made here
  // (blobIdOf: small ones, on a branch that has a commit to tell the object format), while the
  // index takes the changes (treeWithChanges).
  const blobs = planned.flatMap((p) => (p.bytes ? [p.bytes] : []))
  const written = writeBlobs(t.git, blobs).then((ids) => planned.map((p) => (p.bytes ? ids.shift()! : null)))
  const base = t.base
  const made = base === null ? [] : planned.map((p) => (p.bytes ? blobIdOf(base, p.bytes) : null))
  // Every blob's id made here, or none used: the index then waits for git's.
  const known = base !== null && planned.every((p, i) => !p.bytes || made[i]) ? made : null
  const changesOf = (oids: (string | null)[]) =>
    planned.flatMap((p, i): TreeChange[] => {
      if (p.operation === 'delete') return [{ path: p.path, remove: true }]
      const set: TreeChange = { path: p.path, mode: p.mode, oid: oids[i]! }
      return p.fromPath !== p.path ? [{ path: p.fromPath, remove: true }, set] : [set]
    })
  let tree: string
  let oids: (string | null)[]
  try {
    ;[tree, oids] = await Promise.all([treeWithChanges(t.git, base, known ? changesOf(known) : written.then(changesOf), written), written])
  } catch (e) {
    if (e instanceof TreeRefused) throw unprocessable(`the changes cannot be made together: ${e.message}`)
    throw e
  }
  if (known && oids.some((oid, i) => oid !== known[i])) throw new Error(`git named a blob otherwise than its content's hash (${oids.join(', ')} against ${known.join(', ')})`)
  const commit = await commitOnto(deps, ctx, doer, t, opts, tree, planned)
  const ref = { asked: t.newBranch, kind: 'branch' as const, name: t.newBranch }
  const files = planned.map((p, i) =>
    p.operation === 'delete'
      ? null
      : toApiContents(deps.config, ctx.repo, ref, {
          path: p.path,
          kind: p.mode === '100755' ? 'executable' : 'file',
          oid: oids[i]!,
          size: p.bytes!.length,
          lastCommit: commit.sha,
          content: Buffer.from(p.bytes!).toString('base64'),
        }),
  )
  return { commit, files }
}

/** The FilesResponse of a change. */
export const filesResponse = (deps: AppDeps, ctx: RepoContext, r: { commit: WrittenCommit; files: (ApiContents | null)[] }) =>
  toApiFilesResponse(deps.config, ctx.repo, r.commit, r.files)

/** One file's FileResponse (or FileDeleteResponse, or diffpatch's answer: content null). */
export function fileResponse(deps: AppDeps, ctx: RepoContext, r: { commit: WrittenCommit; files: (ApiContents | null)[] }) {
  const { files, ...rest } = toApiFilesResponse(deps.config, ctx.repo, r.commit, r.files)
  return { content: files[0] ?? null, ...rest }
}

/** POST …/diffpatch: `patch` applied to the branch as one commit (422 when it does not apply). */
export async function applyPatch(deps: AppDeps, ctx: RepoContext, doer: UserRow, opts: FileOptions, patch: string) {
  if (patch.trim() === '') throw unprocessable('Required', 'content')
  const t = await targetOf(deps, ctx, opts, false)
  let tree: string
  try {
    tree = await treeWithPatch(t.git, t.base, patch.endsWith('\n') ? patch : patch + '\n')
  } catch (e) {
    if (e instanceof TreeRefused) throw unprocessable(`the patch does not apply: ${e.message}`)
    throw e
  }
  // Gitea's message when none is given.
  const withMessage = opts.message?.trim() ? opts : { ...opts, message: 'apply-patch' }
  return fileResponse(deps, ctx, { commit: await commitOnto(deps, ctx, doer, t, withMessage, tree, []), files: [] })
}

/**
 * Gitea's cherry-pick and revert (the web's `_cherrypick/{sha}/{branch}`): `commit`'s change
 * against its first parent (the empty tree for a root commit), reversed for a revert, merged into
 * the branch's tree by git's three-way merge (git/merge.ts changeOntoTree, as a rebase merge
 * replays commits: no work tree, byte-exact for any file), then committed with `opts.message` and
 * moved through the one push path as every contents write (commitOnto), so branch protection
 * decides. 404 for an unknown commit or branch; 409 when the change conflicts with the branch;
 * 422 when it changes nothing there. Nothing moves on a refusal.
 */
export async function cherryPick(deps: AppDeps, ctx: RepoContext, doer: UserRow, opts: FileOptions, commit: string, revert: boolean): Promise<WrittenCommit> {
  const t = await targetOf(deps, ctx, opts, false)
  if (!t.base) throw notFound(`branch does not exist [name: ${t.branch.slice(0, 255)}]`)
  const found = /^[0-9a-f]{4,64}$/i.test(commit) ? await objectInfo(t.git, `${commit}^{commit}`) : null
  if (found?.type !== 'commit') throw notFound(`commit does not exist [sha: ${commit.slice(0, 64)}]`)
  const [pickedTree, parentTree, baseTree] = await Promise.all([
    objectInfo(t.git, `${found.oid}^{tree}`),
    objectInfo(t.git, `${found.oid}^1^{tree}`),
    objectInfo(t.git, `${t.base}^{tree}`),
  ])
  const before = parentTree?.oid ?? (await emptyTreeOf(t.git))
  if (pickedTree!.oid === before) throw unprocessable('the commit changes no file: there is nothing to apply')
  const [from, to] = revert ? [pickedTree!.oid, before] : [before, pickedTree!.oid]
  const merged = await changeOntoTree(t.git, baseTree!.oid, from, to)
  if (merged.conflicts.length)
    throw conflict(
      `the commit's changes do not apply cleanly to ${t.branch} (conflicts in ${merged.conflicts.slice(0, 5).join(', ')}${merged.conflicts.length > 5 ? ', …' : ''}): ${revert ? 'revert' : 'cherry-pick'} it locally and resolve the conflict`,
    )
  if (merged.tree === baseTree!.oid) throw unprocessable(`nothing would change: ${t.branch} already ${revert ? 'lacks' : 'has'} these changes`)
  return await commitOnto(deps, ctx, doer, t, opts, merged.tree, [])
}
