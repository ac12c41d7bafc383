import type { GitRepo } from './run'
import { startGitOutput } from './stream'

/**
 * Paths inside a tree, taken from URLs: split on '/', each segment URL-decoded once, empty and
 * '.' segments dropped; '..' (also when it was written %2e%2e), NUL and control characters
 * refuse the whole path (null).
 */
export function normaliseTreePath(raw: string | string[]): string[] | null {
  const parts = Array.isArray(raw) ? raw : raw.split('/')
  const out: string[] = []
  for (const part of parts) {
    let seg: string
    try {
      seg = decodeURIComponent(part)
    } catch {
      return null
    }
    for (const piece of seg.split('/')) {
      if (piece === '' || piece === '.') continue
      if (piece === '..' || /[\x00-\x1f\x7f]/.test(piece)) return null
      out.push(piece)
    }
  }
  return out
}

const SHA = /^[0-9a-f]{40,64}$/

/** `<commit>:<path>` for a verified commit sha and a normalised path. */
const blobSpec = (sha: string, path: string[]) => {
  if (!SHA.test(sha)) throw new Error('blobSpec needs a full commit id')
  return `${sha}:${path.join('/')}`
}

/**
 * Streams the blob at `path` in commit `sha` (`git cat-file blob`), or null when there is no
 * such blob. `head` is the first chunk, for sniffing the content type.
 */
export function streamBlob(repo: GitRepo, sha: string, path: string[]) {
  if (path.length === 0) return Promise.resolve(null)
  return startGitOutput(repo, ['cat-file', 'blob'], { values: [blobSpec(sha, path)] })
}

/**
 * A small blob as text (config files such as .editorconfig), read by one git process and never
 * more than `maxBytes` of it: null when missing, 'too-large' past the bound (git is stopped).
 */
export async function readBlobText(repo: GitRepo, rev: string, path: string, maxBytes: number): Promise<string | null | 'too-large'> {
  const out = await startGitOutput(repo, ['cat-file', 'blob'], { values: [`${rev}:${path}`] })
  if (!out) return null
  const reader = out.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    size += next.value.length
    if (size > maxBytes) {
      await reader.cancel()
      return 'too-large'
    }
    chunks.push(next.value)
  }
  return Buffer.concat(chunks, size).toString('utf8')
}

export type ArchiveFormat = 'zip' | 'tar.gz'

/** Streams `git archive` of commit `sha`, every entry under `<prefix>/`. */
export function streamArchive(repo: GitRepo, sha: string, format: ArchiveFormat, prefix: string) {
  if (!SHA.test(sha)) throw new Error('streamArchive needs a full commit id')
  return startGitOutput(repo, ['archive', `--format=${format}`, `--prefix=${prefix}/`], { values: [sha] })
}
