import type { Config } from '../config'
import { notSigned } from '../auth/commit-verification'
import type { EntryKind } from '../git/tree'
import { apiUrl, webUrl } from '../lib/urls'
import { repoPath, type RepoRef } from './issue'

/**
 * The contents API's records (Gitea's ContentsResponse, FileCommitResponse, FileResponse,
 * FilesResponse, FileDeleteResponse), used by the reads and the answers of the writes alike.
 */

/** A path inside a repository, each segment URL-encoded (Gitea's PathEscapeSegments). */
const escapeSegments = (path: string) => path.split('/').map(encodeURIComponent).join('/')

/** How the ref a record was read at is named: `url` repeats it as asked; the web links by kind. */
export interface ContentsRef {
  /** The `ref` as the client gave it (the default branch's name when none was). */
  asked: string
  kind: 'branch' | 'tag' | 'commit'
  /** The branch or tag name, or the commit id. */
  name: string
}

export interface ContentsEntry {
  /** The path from the root, '' for the root itself. */
  path: string
  kind: EntryKind
  oid: string
  size: number
  lastCommit: string
  /** base64 of a file's bytes; null for what is not a file, for a listing, and past the size bound. */
  content: string | null
  /** A symlink's target. */
  target?: string | null
  /** A submodule's URL from .gitmodules. */
  submoduleUrl?: string | null
}

const TYPE_OF_KIND: Record<EntryKind, string> = { file: 'file', executable: 'file', symlink: 'symlink', dir: 'dir', submodule: 'submodule' }

/** The ContentsResponse record of one entry. */
export function toApiContents(config: Config, repo: RepoRef, ref: ContentsRef, e: ContentsEntry) {
  const base = repoPath(repo)
  const path = escapeSegments(e.path)
  const self = apiUrl(config, `repos/${base}/contents/${path}?ref=${encodeURIComponent(ref.asked)}`)
  const refPath = `${ref.kind}/${escapeSegments(ref.name)}`
  const html = e.kind === 'submodule' ? null : webUrl(config, `${base}/src/${refPath}/${path}`)
  const git = e.kind === 'submodule' ? null : apiUrl(config, `repos/${base}/git/blobs/${e.oid}`)
  const downloadable = e.kind === 'file' || e.kind === 'executable' || e.kind === 'symlink'
  const isFile = TYPE_OF_KIND[e.kind] === 'file'
  return {
    name: e.path.split('/').pop() ?? '',
    path: e.path,
    sha: e.oid,
    last_commit_sha: e.lastCommit,
    type: TYPE_OF_KIND[e.kind],
    size: e.size,
    encoding: isFile && e.content !== null ? 'base64' : null,
    content: isFile ? e.content : null,
    target: e.kind === 'symlink' ? e.target ?? null : null,
    url: self,
    html_url: html,
    git_url: git,
    download_url: downloadable ? webUrl(config, `${base}/raw/${refPath}/${path}`) : null,
    submodule_git_url: e.kind === 'submodule' ? e.submoduleUrl ?? null : null,
    _links: { self, git, html },
  }
}
export type ApiContents = ReturnType<typeof toApiContents>

/** Someone in a commit, and when (RFC 3339). */
export interface CommitPerson {
  name: string
  email: string
  date: string
}

/** A commit the contents API wrote. */
export interface WrittenCommit {
  sha: string
  tree: string
  parents: string[]
  message: string
  author: CommitPerson
  committer: CommitPerson
}

/** The FileCommitResponse record of a commit the API wrote. */
export function toApiFileCommit(config: Config, repo: RepoRef, c: WrittenCommit) {
  const base = repoPath(repo)
  const commitUrl = (sha: string) => apiUrl(config, `repos/${base}/git/commits/${sha}`)
  return {
    sha: c.sha,
    url: commitUrl(c.sha),
    html_url: webUrl(config, `${base}/commit/${c.sha}`),
    created: c.committer.date,
    author: c.author,
    committer: c.committer,
    message: c.message,
    parents: c.parents.map((p) => ({ sha: p, url: commitUrl(p), created: c.committer.date })),
    tree: { sha: c.tree, url: apiUrl(config, `repos/${base}/git/trees/${c.tree}`), created: c.committer.date },
  }
}

/** FilesResponse: the written files (null for a deleted one), the commit, its verification (unsigned: the API signs nothing, as Gitea without a signing key). */
export function toApiFilesResponse(config: Config, repo: RepoRef, commit: WrittenCommit, files: (ApiContents | null)[]) {
  return { files, commit: toApiFileCommit(config, repo, commit), verification: notSigned() }
}
