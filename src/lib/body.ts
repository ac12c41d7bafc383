import { createHash, type Hash } from 'node:crypto'
import { ApiError, badRequest, unprocessable } from './errors'

/** The 413 of a body over `limit` bytes. */
export const bodyTooLarge = (limit: number) => {
  const size = limit % (1024 * 1024) === 0 ? `${limit / 1024 / 1024} MiB` : `${limit} bytes`
  return new ApiError(413, `The request body is larger than ${size}`)
}

/**
 * Reads a request body whole, at most `limit` bytes: over it (declared by Content-Length, or
 * counted as a chunked body arrives) a 413 is thrown, so no more is ever held. A body of a
 * declared length within the limit, which the server reads to exactly that length, is taken at
 * once (`arrayBuffer`): reading it as a stream, chunk by chunk through a reader, cost about 7 µs
 * more CPU a request (a bare Bun server, 16 connections posting an issue's JSON: 26-32 against
 * 19-21 µs).
 */
export async function readBodyBounded(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = request.headers.get('content-length')
  if (declared !== null) {
    if (Number(declared) > limit) throw bodyTooLarge(limit)
    const bytes = new Uint8Array(await request.arrayBuffer())
    if (bytes.byteLength > limit) throw bodyTooLarge(limit)
    return bytes
  }
  if (!request.body) return new Uint8Array(0)
  const chunks: Uint8Array<ArrayBuffer>[] = []
  let total = 0
  const reader = request.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > limit) {
      await reader.cancel().catch(() => {})
      throw bodyTooLarge(limit)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks, total)
}

/**
 * Passes a stream through unchanged while counting its bytes; past `limit` the stream errors
 * with the 413 (the consumer, e.g. git's stdin, sees the error and stops).
 */
type Bytes = Uint8Array<ArrayBuffer>

export function boundedStream(body: ReadableStream<Bytes>, limit: number): ReadableStream<Bytes> {
  let total = 0
  return body.pipeThrough(
    new TransformStream<Bytes, Bytes>({
      transform(chunk, controller) {
        total += chunk.byteLength
        if (total > limit) controller.error(bodyTooLarge(limit))
        else controller.enqueue(chunk)
      },
    }),
  )
}

/** A parsed form (urlencoded or multipart) as a body object: a repeated field becomes an array. */
export function formObject(form: URLSearchParams | FormData): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null)
  form.forEach((value: unknown, key: string) => {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') return
    const seen = out[key]
    if (seen === undefined) out[key] = value
    else if (Array.isArray(seen)) seen.push(value)
    else out[key] = [seen, value]
  })
  return { ...out }
}

/**
 * The deepest nesting of arrays and objects a request body may have. Gitea's bodies nest three
 * levels at most; a bound keeps every walk over a body (TypeBox's, checkStorable's) shallow.
 */
export const MAX_BODY_DEPTH = 64

/**
 * Whether JSON text (as UTF-8 bytes) nests arrays and objects deeper than `limit`: one pass over
 * the bytes, no recursion, stopping at the first level past the limit. Brackets inside strings do
 * not count (the bytes of `"`, `\\`, brackets never occur inside a multi-byte UTF-8 character).
 * Run before JSON.parse, whose time on deep nesting grows far faster than the input.
 */
export function jsonNestsDeeper(bytes: Uint8Array, limit = MAX_BODY_DEPTH): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  return false
}

/** The 400 of a body nested deeper than MAX_BODY_DEPTH. */
export const tooDeep = () => badRequest(`The request body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`)

/**
 * Values every database can store, checked once for every parsed body (JSON or form): no NUL
 * character in a string (PostgreSQL's text cannot hold one, so on SQLite it is refused too, for
 * one behaviour), no string or key that is not well-formed UTF-16 (a lone surrogate, which only a
 * JSON escape such as `"\ud800"` makes: it has no UTF-8, so URL escaping throws on it and
 * PostgreSQL's json refuses it; forms and URLs decode bad bytes to U+FFFD or not at all) and no
 * integer beyond ±(2^53 − 1) (no id or count is that large; PostgreSQL's bigint would refuse some
 * and JavaScript cannot tell them apart). Walked with a list, not recursion, and never deeper than
 * MAX_BODY_DEPTH (400 past it), so no body can exhaust the stack; linear in the body's size.
 * Throws the 422 naming the field.
 */
export function checkStorable(value: unknown, field = 'body'): void {
  const pending: [unknown, string, number][] = [[value, field, 0]]
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, name, depth] = next
    if (typeof item === 'string') {
      if (item.includes('\u0000')) throw unprocessable(`${name} must not contain NUL characters`, name)
      if (!item.isWellFormed()) throw unprocessable(`${name} must not contain lone UTF-16 surrogates`, name)
    } else if (typeof item === 'number') {
      if (Number.isInteger(item) && !Number.isSafeInteger(item)) throw unprocessable(`${name} is out of range`, name)
    } else if (item !== null && typeof item === 'object') {
      if (depth >= MAX_BODY_DEPTH) throw tooDeep()
      // Pushed last to first, so members are checked in order (the first bad field is named).
      const members: [unknown, string, number][] = Array.isArray(item)
        ? item.map((member) => [member, name, depth + 1])
        : Object.entries(item).map(([key, member]) => {
            if (key.includes('\u0000')) throw unprocessable(`${name} must not contain NUL characters`, name)
            if (!key.isWellFormed()) throw unprocessable(`${name} must not contain lone UTF-16 surrogates`, name)
            return [member, name === 'body' ? key : name, depth + 1]
          })
      for (let i = members.length - 1; i >= 0; i--) pending.push(members[i]!)
    }
  }
}

/** Whether a path's parameters hold a NUL character (nothing stored can be named by one). */
export const hasNul = (params: Record<string, unknown> | undefined): boolean =>
  params !== undefined && Object.entries(params).some(([k, v]) => k.includes('\u0000') || (typeof v === 'string' && v.includes('\u0000')))

/**
 * How a route's request body is read, declared in the route's `detail` (`...readsBody(kind)`) and
 * honoured by the app's one body parser (src/edge/body-parser.ts): `unread`, the route streams
 * the body itself; `text`, the body is the value as text whatever its Content-Type. Routes that
 * declare nothing get an API body (JSON or a form).
 */
export type BodyKind = 'unread' | 'text'
export const BODY_KEY = 'x-warren-body'
export const readsBody = (kind: BodyKind) => ({ [BODY_KEY]: kind })

const DIGEST_HASHES: Record<string, string> = { 'sha-256': 'sha256', 'sha-512': 'sha512' }

/** Whether a request is signed (an HTTP signature: `Signature` header or `Authorization: Signature`). */
export const isSignedRequest = (request: Request): boolean =>
  request.headers.has('signature') || /^signature /i.test(request.headers.get('authorization') ?? '')

/**
 * The check of a `Digest` header (RFC 3230: `SHA-256=` or `SHA-512=` and the base64 hash) against
 * the body's bytes, fed as they are read (`update`), then `verify`: 400 when a SHA-256 or SHA-512
 * value is not the body's hash; other algorithms are passed over, unless the request is signed:
 * its Digest must then name one of those two, or the signature (which covers the Digest, not the
 * body) would vouch for a body nobody checked. Null when there is no Digest header.
 */
export function digestCheck(request: Request): { update: (bytes: Uint8Array) => void; verify: () => void } | null {
  const header = request.headers.get('digest')
  if (header === null) return null
  const wanted: { hash: Hash; value: string }[] = []
  for (const part of header.slice(0, 4096).split(',')) {
    const eq = part.indexOf('=')
    const algorithm = DIGEST_HASHES[part.slice(0, eq).trim().toLowerCase()]
    if (eq >= 0 && algorithm) wanted.push({ hash: createHash(algorithm), value: part.slice(eq + 1).trim() })
  }
  const signed = isSignedRequest(request)
  return {
    update: (bytes) => wanted.forEach((w) => w.hash.update(bytes)),
    verify: () => {
      if (wanted.some((w) => w.hash.digest('base64') !== w.value)) throw badRequest('The Digest header does not match the request body')
      if (wanted.length === 0 && signed) throw badRequest('The Digest header names no SHA-256 or SHA-512 hash of the body')
    },
  }
}

/** `body` as it is read, each chunk fed to `check` on its way (digestCheck). */
export function digestedStream(body: ReadableStream<Uint8Array>, check: { update: (bytes: Uint8Array) => void }): ReadableStream<Uint8Array> {
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        check.update(chunk)
        controller.enqueue(chunk)
      },
    }),
  )
}
