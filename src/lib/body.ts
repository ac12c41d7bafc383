import { ApiError } from './errors'

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
