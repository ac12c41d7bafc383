import type { AppDeps } from '../../deps'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { historyPage, type ComparedCommit } from '../../git/commit-page'
import { isObjectName, readObject, resolveCommit, type ObjectBytes } from '../../git/objects'
import { parseTag } from '../../git/tag-object'
import { refsWithPrefix, type RefEntry } from '../../git/ref-list'
import { runGit } from '../../git/run'
import { MAX_FIELD_CHARS } from '../../git/tokens'
import { notFound, unprocessable } from '../../lib/errors'
import type { CommitParts } from '../commits/service'
import { readTreePage, type TreePage } from './trees'

/**
 * Git's own objects through Gitea's git-data API: refs, trees, blobs, annotated tags, notes.
 * Every object is found by git from the name in the URL (hex ids, or ref names where Gitea takes
 * them); an object that does not exist, or is not of the kind asked for, is a 404.
 */

/**
 * The refs whose names begin with `refs/<filter>` (all of them without a filter), at most
 * WARREN_MAX_LISTED_REFS; 404 when none. `exact` when the one ref found is the one named (Gitea
 * then answers it alone, not in a list).
 */
export async function gitRefs(deps: AppDeps, ctx: RepoContext, filter: string): Promise<{ refs: readonly RefEntry[]; exact: boolean }> {
  let name: string
  try {
    name = decodeURIComponent(filter)
  } catch {
    throw notFound()
  }
  const prefix = 'refs/' + name
  if (/[\x00-\x1f\x7f]/.test(prefix)) throw notFound()
  const { refs } = await refsWithPrefix(gitRepoOf(deps, ctx), prefix, deps.config.maxListedRefs)
  if (refs.length === 0) throw notFound(`no ref begins with ${prefix.slice(0, 200)}`)
  return { refs, exact: refs.length === 1 && refs[0]!.name === prefix && name !== '' }
}

/** A page of the tree a name leads to (a tree id, or a commit, branch or tag: its tree). */
export async function gitTree(deps: AppDeps, ctx: RepoContext, name: string, opts: { recursive: boolean; page?: number; perPage?: number }): Promise<TreePage> {
  const found = await readTreePage(gitRepoOf(deps, ctx), ctx.repo.id, name, { ...opts, pageSize: deps.config.gitTreesPerPage }, deps.config.maxTreeEntries)
  if (!found) throw notFound(`sha not found: ${name.slice(0, 80)}`)
  return found
}

/** A blob by id, its content only up to WARREN_MAX_BLOB_SIZE; 404 for anything else. */
export async function gitBlob(deps: AppDeps, ctx: RepoContext, sha: string): Promise<ObjectBytes> {
  const blob = await readObject(gitRepoOf(deps, ctx), sha, deps.config.maxBlobSize)
  if (!blob || blob.type !== 'blob') throw notFound(`blob not found: ${sha.slice(0, 80)}`)
  return blob
}

/** Longest annotated tag object read (a tag's message beyond it is not shown). */
const MAX_TAG_BYTES = 1024 * 1024

/** An annotated tag object by id and the commit it leads to; 404 for anything else (a lightweight tag has no object). */
export async function annotatedTag(deps: AppDeps, ctx: RepoContext, sha: string) {
  const git = gitRepoOf(deps, ctx)
  const object = await readObject(git, sha, MAX_TAG_BYTES)
  if (!object || object.type !== 'tag') throw notFound(`tag object not found: ${sha.slice(0, 80)}`)
  if (!object.content) throw unprocessable(`the tag object is larger than ${MAX_TAG_BYTES} bytes`)
  const commit = await resolveCommit(git, object.oid)
  if (!commit) throw notFound(`tag ${object.oid} does not lead to a commit`)
  return { oid: object.oid, tag: parseTag(object.content.toString('utf8')), commit }
}

/** Where git keeps notes unless told otherwise (Gitea reads these). */
const NOTES_REF = 'refs/notes/commits'

/**
 * The paths a commit's note may have in the notes tree: git spreads notes over folders of two
 * hex digits ("fanout") as they grow, one level per 256-fold growth; three levels hold billions.
 */
const notePaths = (sha: string) => [sha, `${sha.slice(0, 2)}/${sha.slice(2)}`, `${sha.slice(0, 2)}/${sha.slice(2, 4)}/${sha.slice(4)}`, `${sha.slice(0, 2)}/${sha.slice(2, 4)}/${sha.slice(4, 6)}/${sha.slice(6)}`]

/**
 * The note of the commit a name leads to (its text, cut at 64 KiB), with the commit of the notes
 * history that last changed it (Gitea's Note record); 404 when there is none.
 */
export async function commitNote(deps: AppDeps, ctx: RepoContext, name: string, parts: Omit<CommitParts, 'stats'>): Promise<{ message: string; commit: ComparedCommit }> {
  if (!isObjectName(name)) throw unprocessable(`no valid ref or sha: ${name.slice(0, 80)}`)
  const git = gitRepoOf(deps, ctx)
  const sha = await resolveCommit(git, name)
  if (!sha) throw notFound(`sha not found: ${name.slice(0, 80)}`)
  const listed = await runGit(['notes', `--ref=${NOTES_REF}`, 'list', sha], git)
  const blobId = listed.code === 0 ? listed.stdout.toString('utf8').trim() : ''
  const note = blobId ? await readObject(git, blobId, MAX_FIELD_CHARS, { cut: true }) : null
  if (!note?.content) throw notFound(`no note for ${sha}`)
  const [commit] = await historyPage(git, { revisions: [NOTES_REF], paths: notePaths(sha) }, { skip: 0, max: 1 }, { ...parts, stats: true, maxFiles: deps.config.maxCommitFiles })
  if (!commit) throw notFound(`no note for ${sha}`)
  return { message: note.content.toString('utf8'), commit }
}
