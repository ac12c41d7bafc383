import type { GitRepo } from './run'
import { startGitOutput } from './stream'
import { objectBytes, objectInfo } from './objects'

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

/** Blobs up to this size are read through the repository's batch reader (objects.ts), whole; larger ones stream from a git of their own. */
const SMALL_BLOB_BYTES = 256 * 1024

/**
 * The blob at `path` in commit `sha`, or null when there is no such blob. `head` is its first
 * bytes, for sniffing the content type; `body` streams it whole. A small blob (SMALL_BLOB_BYTES)
 * comes from the repository's batch reader, no git process of its own, and its bytes are given
 * too (`bytes`: an answer then has a length); a larger one streams from `git cat-file blob`.
 */
export async function streamBlob(
  repo: GitRepo,
  sha: string,
  path: string[],
): Promise<{ head: Uint8Array; body: ReadableStream<Uint8Array>; bytes?: Uint8Array<ArrayBuffer> } | null> {
  if (path.length === 0) return null
  const info = await objectInfo(repo, blobSpec(sha, path))
  if (!info || info.type !== 'blob') return null
  if (info.size <= SMALL_BLOB_BYTES) {
    const whole = await objectBytes(repo, info.oid)
    if (!whole) return null
    const bytes = new Uint8Array(whole.body.buffer as ArrayBuffer, whole.body.byteOffset, whole.body.byteLength)
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        if (bytes.byteLength) c.enqueue(bytes)
        c.close()
      },
    })
    return { head: bytes, body, bytes }
  }
  return startGitOutput(repo, ['cat-file', 'blob'], { values: [info.oid] })
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
