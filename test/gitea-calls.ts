/**
 * Calls made through gitea-js, checked as a client sees them: the status, and a body the client
 * could parse (or Gitea's `{message}` error shape when the call fails; gitea-js throws the
 * response then).
 */
import { expect } from 'bun:test'

export interface Res<T> {
  status: number
  data: T
  error: unknown
  headers: Headers
}

/** A JSON answer: the expected status and a body the client could parse. */
export async function ok<T>(call: Promise<Res<T>>, status = 200): Promise<T> {
  const r = await call.catch((e: Res<T>) => e)
  if (r.status !== status) console.error(r.status, r.error)
  expect(r.status).toBe(status)
  expect(r.error).toBeNull()
  return r.data
}

/** An answer without a body (204): the client tries to parse it as JSON, which is expected to fail. */
export async function empty(call: Promise<Res<unknown>>, status = 204): Promise<void> {
  const r = await call
  expect(r.status).toBe(status)
  expect(r.data).toBeNull()
}

/** A failing call: gitea-js throws the response; its parsed error body must be Gitea's `{message}`. */
export async function fails(call: Promise<unknown>, status: number): Promise<{ message: string }> {
  const r = (await call.then(
    () => {
      throw new Error(`expected HTTP ${status}, the call succeeded`)
    },
    (e) => e,
  )) as Res<unknown>
  expect(r.status).toBe(status)
  expect(typeof (r.error as { message?: unknown }).message).toBe('string')
  return r.error as { message: string }
}
