import type { AppDeps } from '../../deps'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { notFound, unprocessable } from '../../lib/errors'
import { resolveCommitish, resolveRefPrefix, type RefKind } from '../../git/refs'
import { isSafeRefName } from '../../git/ref-name'
import { normaliseTreePath, readBlobText, streamArchive, streamBlob, type ArchiveFormat } from '../../git/blob'
import { MAX_POINTER_SIZE, storedObjectOf } from '../lfs/pointer'
import { objectResponse } from '../lfs/service'
import { objectPath } from '../lfs/store'
import { definitionFor, MAX_EDITORCONFIG_BYTES, type EditorConfigDefinition } from './editorconfig'

/** What a blob is served as, from its first bytes. */
function sniffContentType(head: Uint8Array): { type: string; inline: boolean; text: boolean } {
  const starts = (...bytes: number[]) => bytes.every((b, i) => head[i] === b)
  const ascii = (s: string, at = 0) => [...s].every((ch, i) => head[at + i] === ch.charCodeAt(0))
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return { type: 'image/png', inline: true, text: false }
  if (starts(0xff, 0xd8, 0xff)) return { type: 'image/jpeg', inline: true, text: false }
  if (ascii('GIF87a') || ascii('GIF89a')) return { type: 'image/gif', inline: true, text: false }
  if (ascii('RIFF') && ascii('WEBP', 8)) return { type: 'image/webp', inline: true, text: false }
  if (ascii('BM') && head.length > 14) return { type: 'image/bmp', inline: true, text: false }
  if (starts(0x00, 0x00, 0x01, 0x00)) return { type: 'image/x-icon', inline: true, text: false }
  if (ascii('%PDF-')) return { type: 'application/pdf', inline: true, text: false }
  const n = Math.min(head.length, 8000)
  for (let i = 0; i < n; i++) {
    const b = head[i]!
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d && b !== 0x1b)
      return { type: 'application/octet-stream', inline: false, text: false }
  }
  return { type: 'text/plain; charset=utf-8', inline: true, text: true }
}

/** A Content-Disposition header for `name` (ASCII fallback and the UTF-8 form). */
export function disposition(kind: 'inline' | 'attachment', name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_')
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`
}

export interface RawRequest {
  /** The wildcard after `/raw/`, as sent (still URL-encoded). */
  wildcard: string
  /** `?ref=` (modern form). */
  ref?: string
  /** Web form `/raw/branch|tag|commit/...`: the first segment names the kind of ref. */
  explicitKinds?: boolean
  /** `media/`: an LFS pointer whose object the repository has is answered with the object (mediaOf). */
  media?: boolean
}

/**
 * `GET /raw/...`: the ref is `?ref=`, or the leading segments of the path naming a branch/tag/
 * commit (longest match), or else the default branch with the whole path; the blob streams.
 */
export async function rawFile(deps: AppDeps, ctx: RepoContext, req: RawRequest): Promise<Response> {
  const repo = gitRepoOf(deps, ctx)
  let segments = normaliseTreePath(req.wildcard)
  if (!segments) throw notFound('invalid path')
  let target: { sha: string; rest: string[]; commit: boolean } | null = null
  if (req.ref !== undefined && req.ref !== '') {
    const sha = await resolveCommitish(repo, req.ref)
    if (!sha) throw notFound('ref not found')
    target = { sha, rest: segments, commit: sha.startsWith(req.ref.toLowerCase()) }
  } else {
    const kindOf: Record<string, (RefKind | 'commit')[]> = { branch: ['heads'], tag: ['tags'], commit: ['commit'] }
    const explicit = req.explicitKinds ? kindOf[segments[0] ?? ''] : undefined
    if (explicit) {
      const hit = await resolveRefPrefix(repo, segments.slice(1), explicit)
      if (hit) target = { sha: hit.sha, rest: hit.rest, commit: explicit[0] === 'commit' }
    }
    if (!target) {
      const hit = await resolveRefPrefix(repo, segments)
      if (hit) target = { sha: hit.sha, rest: hit.rest, commit: hit.sha.startsWith(hit.ref) }
    }
    if (!target) {
      const refs = await resolveRefPrefix(repo, [ctx.repo.defaultBranch], ['heads'])
      if (!refs) throw notFound()
      target = { sha: refs.sha, rest: segments, commit: false }
    }
  }
  const blob = await streamBlob(repo, target.sha, target.rest)
  if (!blob) throw notFound()
  const name = target.rest[target.rest.length - 1]!
  const headersOf = (head: Uint8Array) => {
    const kind = sniffContentType(head)
    const headers: Record<string, string> = {
      'Content-Type': kind.type,
      'Cache-Control': target.commit ? 'public, max-age=86400' : 'no-cache',
      'X-Content-Type-Options': 'nosniff',
      // Whatever a browser makes of the bytes, they run no script with the site's origin (Gitea's ServeBlob does the same).
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    }
    if (!kind.text) headers['Content-Disposition'] = disposition(kind.inline ? 'inline' : 'attachment', name)
    return headers
  }
  if (req.media && blob.head.byteLength <= MAX_POINTER_SIZE) {
    const media = await mediaOf(deps, ctx, blob, headersOf)
    if (media) return media
  }
  // A small blob's bytes as they are: the answer has a Content-Length.
  return new Response(blob.bytes ?? blob.body, { headers: headersOf(blob.head) })
}

/**
 * Gitea's SingleDownloadOrLFS: a blob that is an LFS pointer whose object the repository has (and
 * the LFS server is on) is answered with the object, typed by its own first bytes; null otherwise
 * (the blob is served as it is, from `blob.body`, which this leaves whole).
 */
async function mediaOf(deps: AppDeps, ctx: RepoContext, blob: { head: Uint8Array; body: ReadableStream<Uint8Array> }, headersOf: (head: Uint8Array) => Record<string, string>): Promise<Response | null> {
  // A pointer is one small chunk: the blob is that chunk when git has nothing more to send.
  const reader = blob.body.getReader()
  const first = await reader.read()
  const more = first.done ? first : await reader.read()
  const rest = [first, more].filter((r) => !r.done).map((r) => r.value!)
  blob.body = new ReadableStream({
    start: (c) => rest.forEach((chunk) => c.enqueue(chunk)),
    pull: async (c) => {
      const next = await reader.read()
      if (next.done) c.close()
      else c.enqueue(next.value)
    },
    cancel: () => reader.cancel(),
  })
  if (rest.length !== 1) return null
  const pointer = await storedObjectOf(deps, ctx.repo, rest[0]!)
  if (!pointer) return null
  await reader.cancel().catch(() => {})
  const head = new Uint8Array(await Bun.file(objectPath(deps, pointer.oid)).slice(0, 8000).arrayBuffer())
  return objectResponse(deps, pointer.oid, pointer.size, null, headersOf(head))
}

const ARCHIVE_FORMATS: [string, ArchiveFormat, string][] = [
  ['.tar.gz', 'tar.gz', 'application/gzip'],
  ['.zip', 'zip', 'application/zip'],
]

/** `GET /archive/{ref}.zip|.tar.gz`: `git archive` streamed as an attachment. */
export async function archive(deps: AppDeps, ctx: RepoContext, wildcard: string): Promise<Response> {
  const segments = normaliseTreePath(wildcard)
  if (!segments || segments.length === 0) throw notFound()
  const spec = segments.join('/')
  const format = ARCHIVE_FORMATS.find(([ext]) => spec.endsWith(ext) && spec.length > ext.length)
  if (!format) throw notFound('unknown archive format')
  const [ext, fmt, type] = format
  const ref = spec.slice(0, -ext.length)
  const repo = gitRepoOf(deps, ctx)
  const sha = await resolveCommitish(repo, ref)
  if (!sha) throw notFound('ref not found')
  const out = await streamArchive(repo, sha, fmt, ctx.repo.name)
  if (!out) throw notFound()
  const filename = `${ctx.repo.name}-${ref.replace(/\//g, '-')}${ext}`
  return new Response(out.body, {
    headers: { 'Content-Type': type, 'Content-Disposition': disposition('attachment', filename) },
  })
}

/** The default branch's .editorconfig applied to `filepath`; 404 without file or match. */
export async function editorConfigFor(deps: AppDeps, ctx: RepoContext, filepath: string): Promise<EditorConfigDefinition> {
  const segments = normaliseTreePath(filepath)
  if (!segments || segments.length === 0 || !isSafeRefName(ctx.repo.defaultBranch)) throw notFound()
  const [git, rev] = [gitRepoOf(deps, ctx), `refs/heads/${ctx.repo.defaultBranch}`]
  const text = await readBlobText(git, rev, '.editorconfig', MAX_EDITORCONFIG_BYTES)
  if (text === null) throw notFound('.editorconfig not found')
  if (text === 'too-large') throw unprocessable(`The .editorconfig is larger than ${MAX_EDITORCONFIG_BYTES / 1024} KiB`)
  const def = definitionFor(text, segments.join('/'))
  if (!def) throw notFound('no section of .editorconfig matches the file')
  return def
}
