import type { Config } from '../config'
import type { RefEntry } from '../git/ref-list'
import { objectTypeOf, type TreeEntry } from '../git/tree'
import type { ObjectBytes } from '../git/objects'
import type { TagObject } from '../git/tag-object'
import { apiUrl } from '../lib/urls'
import type { CommitVerification } from '../auth/commit-verification'
import { repoPath, type RepoRef } from './issue'

/** Git's own records as Gitea's git-data API shows them: references, trees, blobs, annotated tags. */

const gitUrl = (config: Config, repo: RepoRef, path: string) => apiUrl(config, `repos/${repoPath(repo)}/git/${path}`)

/** A ref path, each segment URL-encoded (Gitea's PathEscapeSegments). */
const escapeSegments = (path: string) => path.split('/').map(encodeURIComponent).join('/')

/** Reference (Gitea's): the ref and the object it points at (an annotated tag's own object). */
export const toApiReference = (config: Config, repo: RepoRef, ref: RefEntry) => ({
  ref: ref.name,
  url: gitUrl(config, repo, escapeSegments(ref.name)),
  object: { sha: ref.oid, type: ref.type, url: gitUrl(config, repo, `${encodeURIComponent(ref.type)}s/${ref.oid}`) },
})

/** GitEntry (Gitea's): blobs link to git/blobs, trees to git/trees, submodules to nothing (as GitHub). */
export function toApiTreeEntry(config: Config, repo: RepoRef, e: TreeEntry) {
  const type = objectTypeOf(e.kind)
  return { path: e.path, mode: e.mode, type, size: e.size ?? 0, sha: e.oid, url: type === 'commit' ? '' : gitUrl(config, repo, `${type}s/${e.oid}`) }
}

/** GitTreeResponse (Gitea's): one page of a tree's entries; `truncated` when more follow it. */
export function toApiTree(config: Config, repo: RepoRef, tree: { sha: string; entries: TreeEntry[]; total: number; page: number; truncated: boolean }) {
  return {
    sha: tree.sha,
    url: gitUrl(config, repo, `trees/${tree.sha}`),
    tree: tree.entries.map((e) => toApiTreeEntry(config, repo, e)),
    truncated: tree.truncated,
    page: tree.page,
    total_count: tree.total,
  }
}

/** GitBlobResponse (Gitea's): base64 content, or none (`content` and `encoding` null) past the size bound. */
export const toApiBlob = (config: Config, repo: RepoRef, blob: ObjectBytes) => ({
  sha: blob.oid,
  url: gitUrl(config, repo, `blobs/${blob.oid}`),
  size: blob.size,
  encoding: blob.content ? 'base64' : null,
  content: blob.content ? blob.content.toString('base64') : null,
})

/**
 * AnnotatedTag (Gitea's): the tag object, and the commit it leads to as its `object`; its
 * `verification` is that commit's, as Gitea 1.23 answers it (ToAnnotatedTag verifies the commit).
 */
export function toApiTag(config: Config, repo: RepoRef, oid: string, tag: TagObject, commit: string, verification: CommitVerification) {
  return {
    tag: tag.name,
    sha: oid,
    url: gitUrl(config, repo, `tags/${oid}`),
    message: tag.message,
    tagger: { name: tag.taggerName, email: tag.taggerEmail, date: tag.taggerDate },
    object: { type: 'commit', sha: commit, url: gitUrl(config, repo, `commits/${commit}`) },
    verification,
  }
}
