import type { GitProcess } from './run'

/**
 * Reading git's NUL-separated output (`-z`) token by token as it arrives, never the whole of it:
 * what git prints about a commit or a comparison grows with the repository (a commit may touch
 * 100,000 files), so lists built from it are read only as far as they are kept, and git is
 * stopped there.
 *
 * - Each token reaches `onToken` as soon as its NUL has arrived; `onToken` answers false to stop,
 *   and git (with its children) is killed then: the work left undone is never done.
 * - A token is kept to at most `maxChars` characters (the rest of it, up to its NUL, is dropped
 *   as it arrives), so one huge field (a commit message of megabytes) holds no more than that.
 * - Tokens are handed on in runs of at most YIELD_EVERY, with a turn of the event loop between
 *   runs, so that a large chunk of output never holds other requests back.
 * - The text after the last NUL, if any, is the last token (git's last line may end without one).
 */

const YIELD_EVERY = 4096

/** Longest field kept of what git prints about a commit or a ref: a longer commit message is cut there. */
export const MAX_FIELD_CHARS = 64 * 1024
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

export interface TokenReadResult {
  /** git's exit code (0 when the reader stopped it). */
  code: number
  /** Whether `onToken` stopped the read before git's output ended. */
  stopped: boolean
  stderr: string
}

/**
 * Reads `proc`'s stdout as NUL-separated tokens (UTF-8, decoded across chunk boundaries). Throws
 * git's GitError when git was killed (time limit, the request went away) before it finished,
 * unless the reader itself stopped it.
 */
export async function readTokens(proc: GitProcess, onToken: (token: string) => boolean | void, maxChars: number): Promise<TokenReadResult> {
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let carry = ''
  let full = false
  let stopped = false
  let ended = false
  let sinceTurn = 0
  const append = (piece: string) => {
    if (full) return
    carry += piece
    if (carry.length > maxChars) {
      carry = carry.slice(0, maxChars)
      full = true
    }
  }
  // Hands one token on; false when the reader wants no more.
  const emit = async (): Promise<boolean> => {
    const token = carry
    carry = ''
    full = false
    if (onToken(token) === false) return false
    if (++sinceTurn >= YIELD_EVERY) {
      sinceTurn = 0
      await nextTurn()
    }
    return true
  }
  try {
    reading: for (;;) {
      const next = await reader.read()
      const text = next.done ? decoder.decode() : decoder.decode(next.value, { stream: true })
      let start = 0
      for (let nul = text.indexOf('\0'); nul !== -1; nul = text.indexOf('\0', start)) {
        append(text.slice(start, nul))
        start = nul + 1
        if (!(await emit())) {
          stopped = true
          break reading
        }
      }
      append(text.slice(start))
      if (next.done) {
        ended = true
        if (carry !== '' && !(await emit())) stopped = true
        break
      }
    }
  } finally {
    // Stopped, or `onToken` threw: git must not wait forever on a pipe nobody reads.
    if (!ended) {
      proc.kill()
      reader.cancel().catch(() => {})
    }
  }
  const r = await proc.done
  if (r.killed && !stopped) throw r.killed
  return { code: stopped ? 0 : r.code, stopped, stderr: r.stderr }
}
