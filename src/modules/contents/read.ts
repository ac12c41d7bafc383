import type { AppDeps } from '../../deps'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { notFound } from '../../lib/errors'
import type { GitRepo } from '../../git/run'
import { blobSize, objectBytes, objectInfo, refCommit } from '../../git/objects'
import { entryAt, folderTree, treeEntries, type TreeEntry } from '../../git/tree'
import { lastCommitOf, lastCommitsIn } from '../../git/last-commit'
import { toApiContents, type ApiContents, type ContentsEntry, type ContentsRef } from '../../convert/contents'
import { submoduleUrl } from './submodules'

/**
 * GET …/contents[/{filepath}]: a file's record with its content, or a folder's entries without
 * theirs (at most WARREN_MAX_CONTENTS_LIST_ENTRIES, in git's order). Everything is read through
 * the batch reader (no git process), but the last commit of a path, which walks history once per
 * commit and path (git/last-commit.ts keeps the answers).
 */

/** A symlink's target is read up to this many bytes (Gitea's bound). */
const MAX_LINK_TARGET = 1024

/** The commit `ref` names (the default branch when absent), or 404. */
export async function contentsRef(git: GitRepo, ctx: RepoContext, ref: string | undefined): Promise<{ ref: ContentsRef; commit: string }> {
  const asked = ref?.trim() || ctx.repo.defaultBranch
  const found = await refCommit(git, asked)
  if (!found) throw notFound(`no commit found for the ref [ref: ${asked.slice(0, 255)}]`)
  return { ref: { asked, kind: found.kind, name: found.kind === 'commit' ? found.commit : asked }, commit: found.commit }
}

/** A file's bytes as base64, or null past `max` bytes. */
async function base64Of(git: GitRepo, oid: string, size: number, max: number): Promise<string | null> {
  if (size > max) return null
  const obj = await objectBytes(git, oid)
  return obj ? obj.body.toString('base64') : null
}

/** What an entry's record needs besides its content: size, symlink target, submodule URL. */
async function describe(git: GitRepo, commit: string, path: string, e: TreeEntry, lastCommit: string): Promise<ContentsEntry> {
  const entry: ContentsEntry = { path, kind: e.kind, oid: e.oid, size: 0, lastCommit, content: null }
  if (e.kind === 'dir' || e.kind === 'submodule') {
    if (e.kind === 'submodule') entry.submoduleUrl = await submoduleUrl(git, commit, path)
    return entry
  }
  const size = await blobSize(git, e.oid)
  entry.size = size ?? 0
  if (e.kind === 'symlink' && size !== null) {
    const obj = size <= MAX_LINK_TARGET ? await objectBytes(git, e.oid) : null
    entry.target = obj ? obj.body.toString('utf8') : null
  }
  return entry
}

/** The record of the entry at `path`, or the records of a folder's entries. */
export async function getContents(deps: AppDeps, ctx: RepoContext, path: string[], ref: string | undefined): Promise<ApiContents | ApiContents[]> {
  const git = gitRepoOf(deps, ctx)
  const { config } = deps
  if (ctx.repo.isEmpty && path.length === 0 && !(await objectInfo(git, 'HEAD'))) return []
  const at = await contentsRef(git, ctx, ref)
  const joined = path.join('/')
  const entry = path.length ? await entryAt(git, at.commit, path) : null
  if (path.length && !entry) throw notFound(`object does not exist [id: , rel_path: ${joined.slice(0, 255)}]`)
  if (entry && entry.kind !== 'dir') {
    const described = await describe(git, at.commit, joined, entry, await lastCommitOf(git, at.commit, joined))
    if (entry.kind === 'file' || entry.kind === 'executable') described.content = await base64Of(git, entry.oid, described.size, config.maxBlobSize)
    return toApiContents(config, ctx.repo, at.ref, described)
  }
  const tree = entry ? entry.oid : await folderTree(git, at.commit, [])
  const entries = tree ? (await treeEntries(git, tree))?.slice(0, config.maxContentsListEntries) ?? [] : []
  const last = await lastCommitsIn(git, at.commit, joined, entries.map((e) => e.path))
  const prefix = joined ? joined + '/' : ''
  const described = await Promise.all(entries.map((e) => describe(git, at.commit, prefix + e.path, e, last.get(e.path) ?? at.commit)))
  return described.map((d) => toApiContents(config, ctx.repo, at.ref, d))
}
