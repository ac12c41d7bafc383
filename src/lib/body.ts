import { ApiError, unprocessable } from './errors'

/** The 413 of a body over `limit` bytes. */
export const bodyTooLarge = (limit: number) => {
  const size = limit % (1024 * 1024) === 0 ? `${limit / 1024 / 1024} MiB` : `${limit} bytes`
  return new ApiError(413, `The request body is larger than ${size}`)
}

/**
 * Reads a request body whole, counting bytes as they arrive: over `limit` (declared by
 * Content-Length or counted, chunked or not) the read stops and a 413 is thrown, so at most
 * `limit` bytes are ever held.
 */
export async function readBodyBounded(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  if (Number(request.headers.get('content-length') ?? 0) > limit) throw bodyTooLarge(limit)
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
 * Values every database can store, checked once for every parsed body (JSON or form): no NUL
 * character in a string (PostgreSQL's text cannot hold one, so on SQLite it is refused too, for
 * one behaviour) and no integer beyond ±(2^53 − 1) (no id or count is that large; PostgreSQL's
 * bigint would refuse some and JavaScript cannot tell them apart). Linear in the body's size.
 * Throws the 422 naming the field.
 */
export function checkStorable(value: unknown, field = 'body'): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw unprocessable(`${field} must not contain NUL characters`, field)
  } else if (typeof value === 'number') {
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) throw unprocessable(`${field} is out of range`, field)
  } else if (Array.isArray(value)) {
    for (const item of value) checkStorable(item, field)
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) throw unprocessable(`${field} must not contain NUL characters`, field)
      checkStorable(item, field === 'body' ? key : field)
    }
  }
}

/** Whether a path's parameters hold a NUL character (nothing stored can be named by one). */
export const hasNul = (params: Record<string, unknown> | undefined): boolean =>
  params !== undefined && Object.entries(params).some(([k, v]) => k.includes('\u0000') || (typeof v === 'string' && v.includes('\u0000')))
