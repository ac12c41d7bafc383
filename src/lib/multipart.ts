import { badRequest } from './errors'
import { bodyTooLarge } from './body'

/**
 * A streaming reader of `multipart/form-data` bodies, for uploads too large to hold (release
 * assets): the one file part wanted is handed on chunk by chunk as the body arrives, the other
 * parts are skipped without being kept. Memory stays bounded by the largest chunk plus the small
 * limits below, whatever the body's size; the work is linear in it (one native `indexOf` per
 * chunk). Written here rather than taken from a library: the well-kept ones (busboy, formidable)
 * are built on Node streams and would add a dependency for about a hundred lines.
 */

/** Part headers may take this many bytes at most (names, file names, types). */
const MAX_PART_HEADERS = 16 * 1024
/** Bytes before the first boundary (the preamble) that are skipped at most. */
const MAX_PREAMBLE = 64 * 1024
/** Parts read at most before the wanted one. */
const MAX_PARTS = 64
/** Bytes a body may hold beside the file itself (other fields, headers, boundaries). */
export const MULTIPART_OVERHEAD = 1024 * 1024

export interface MultipartFileOptions {
  /** Name of the form field holding the file (a part with a file name). */
  field: string
  /** Largest file accepted, in bytes; past it the read stops with a 413. */
  maxFileBytes: number
  /** Called with the part's file name before any byte of it; throws to refuse the upload. */
  accept?: (filename: string) => Promise<void> | void
  /** Receives the file's bytes in order; the next chunk is read once it resolves. */
  write: (chunk: Uint8Array) => Promise<unknown> | unknown
  /** Reads (and drops) the rest of the body after the file, within the same bound: for a caller hashing the whole body. */
  readToEnd?: boolean
}

/** The boundary of a multipart/form-data Content-Type, or null. */
export function multipartBoundary(contentType: string | null): string | null {
  if (!contentType || !/^multipart\/form-data\s*(;|$)/i.test(contentType)) return null
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType)
  return m ? (m[1] ?? m[2]!) : null
}

/** One `name="value"` parameter of a Content-Disposition header (RFC 7578; `filename*` preferred). */
function dispositionParam(header: string, key: string): string | undefined {
  const extended = new RegExp(`;\\s*${key}\\*=(?:UTF-8|utf-8)''([^;]*)`).exec(header)
  if (extended) {
    try {
      return decodeURIComponent(extended[1]!.trim())
    } catch {
      throw badRequest(`The multipart ${key} is not valid`)
    }
  }
  const m = new RegExp(`;\\s*${key}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, 'i').exec(header)
  if (!m) return undefined
  // Only `\"` and `\\` are read as escapes: browsers send Windows paths' backslashes as they are.
  return m[1] !== undefined ? m[1].replace(/\\(["\\])/g, '$1') : m[2]
}

/**
 * Reads `body` (a multipart/form-data body with `boundary`) until the file part named
 * `opts.field` has been passed to `opts.write` whole, and answers its file name and size; the
 * rest of the body is not read. 400 for a body that is not well-formed multipart or that has no
 * such part; 413 once the file passes `maxFileBytes` or the body passes it by more than
 * MULTIPART_OVERHEAD (`readToEnd`: the rest is read too, under that bound). What `accept` and
 * `write` throw comes through as it is. The reader is
 * released (cancelled) in every case.
 */
export async function readMultipartFile(
  body: ReadableStream<Uint8Array> | null,
  boundary: string,
  opts: MultipartFileOptions,
): Promise<{ filename: string; size: number }> {
  if (!body) throw badRequest('The request has no body')
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  const maxBody = opts.maxFileBytes + MULTIPART_OVERHEAD
  const reader = body.getReader()
  // The body's first boundary has no CRLF before it: one is put in front so every boundary
  // reads the same.
  let buf: Buffer = Buffer.from('\r\n')
  let total = 0
  let ended = false
  const more = async (): Promise<boolean> => {
    if (ended) return false
    const { done, value } = await reader.read().catch(() => {
      throw badRequest('The request body could not be read')
    })
    if (done) {
      ended = true
      return false
    }
    total += value.byteLength
    if (total > maxBody) throw bodyTooLarge(opts.maxFileBytes)
    const chunk = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk
    return true
  }
  const truncated = () => badRequest('The multipart body ended before its closing boundary')
  /** Finds `needle` within the first `limit` bytes, reading more as needed; its index. */
  const find = async (needle: Buffer, limit: number, what: string): Promise<number> => {
    for (;;) {
      const at = buf.indexOf(needle)
      if (at >= 0 && at <= limit) return at
      if (buf.length > limit + needle.length) throw badRequest(`The multipart ${what} is too long`)
      if (!(await more())) throw truncated()
    }
  }
  /** Passes (or, with `sink` undefined, skips) a part's bytes up to the next boundary. */
  const pass = async (sink?: (chunk: Buffer) => Promise<void>): Promise<void> => {
    const keep = delimiter.length - 1
    for (;;) {
      const at = buf.indexOf(delimiter)
      if (at >= 0) {
        if (sink && at > 0) await sink(buf.subarray(0, at))
        buf = buf.subarray(at + delimiter.length)
        return
      }
      if (buf.length > keep) {
        if (sink) await sink(buf.subarray(0, buf.length - keep))
        buf = buf.subarray(buf.length - keep)
      }
      if (!(await more())) throw truncated()
    }
  }

  try {
    // The preamble, up to the first boundary: skipped as it comes (only a boundary's length of
    // it is kept), so a preamble sent in tiny chunks costs linear work, not a copy per chunk.
    for (let skipped = 0; ; ) {
      const at = buf.indexOf(delimiter)
      if (at >= 0) {
        buf = buf.subarray(at + delimiter.length)
        break
      }
      const keep = delimiter.length - 1
      if (buf.length > keep) {
        skipped += buf.length - keep
        buf = buf.subarray(buf.length - keep)
      }
      if (skipped > MAX_PREAMBLE) throw badRequest('The body does not start with its multipart boundary')
      if (!(await more())) throw badRequest('The body has no multipart boundary')
    }
    for (let part = 0; part < MAX_PARTS; part++) {
      while (buf.length < 2) if (!(await more())) throw truncated()
      // `--` after a boundary closes the body.
      if (buf[0] === 0x2d && buf[1] === 0x2d) break
      // The rest of the boundary line (transport padding allowed), then the part's headers.
      const eol = await find(Buffer.from('\r\n'), 256, 'boundary line')
      buf = buf.subarray(eol + 2)
      let headers = ''
      while (buf.length < 2) if (!(await more())) throw truncated()
      if (buf[0] === 0x0d && buf[1] === 0x0a) buf = buf.subarray(2)
      else {
        const end = await find(Buffer.from('\r\n\r\n'), MAX_PART_HEADERS, 'part headers')
        headers = buf.subarray(0, end).toString('utf8')
        buf = buf.subarray(end + 4)
      }
      const disposition = headers.split('\r\n').find((line) => /^content-disposition\s*:/i.test(line)) ?? ''
      const filename = dispositionParam(disposition, 'filename')
      if (dispositionParam(disposition, 'name') !== opts.field || filename === undefined) {
        await pass()
        continue
      }
      await opts.accept?.(filename)
      let size = 0
      await pass(async (chunk) => {
        size += chunk.byteLength
        if (size > opts.maxFileBytes) throw bodyTooLarge(opts.maxFileBytes)
        await opts.write(chunk)
      })
      if (opts.readToEnd) while (await more()) buf = Buffer.alloc(0)
      return { filename, size }
    }
    throw badRequest(`The multipart body has no file in its "${opts.field}" field`)
  } finally {
    await reader.cancel().catch(() => {})
  }
}
