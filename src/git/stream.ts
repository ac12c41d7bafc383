import { startGit, type GitOptions, type GitProcess, type GitRepo } from './run'

/**
 * Streaming git: the process's stdout is handed on as a ReadableStream (never collected), and
 * stdin may be a stream too (a request body). Used for packs, blobs and archives. These run
 * under the long time limit, and die with the request (the repository's signal).
 */
export interface GitStreamOptions {
  /** User values, after `--end-of-options` (see run.ts). */
  values?: readonly string[]
  env?: Record<string, string>
  /** stdin: a request body. */
  input?: ReadableStream<Uint8Array> | null
  /** A channel to git's hooks (GitOptions.channel). */
  channel?: GitOptions['channel']
}

export type GitStream = GitProcess

export function spawnGitStream(repo: GitRepo, args: readonly string[], opts: GitStreamOptions = {}): GitStream {
  return startGit(args, { ...repo, ...opts, budget: 'long' })
}

/**
 * Starts git and waits for its first output: null when git failed before writing anything
 * (unknown object, bad revision), else a stream that replays the first chunk and then the rest.
 * `head` holds the first bytes (for content sniffing). Throws GitError when git was killed
 * before its first output; a stream whose git is killed (or fails) later ends with an error,
 * so that a client never takes a cut-off file for a whole one.
 */
export async function startGitOutput(
  repo: GitRepo,
  args: readonly string[],
  opts: GitStreamOptions = {},
): Promise<{ head: Uint8Array; body: ReadableStream<Uint8Array> } | null> {
  const s = spawnGitStream(repo, args, opts)
  const reader = s.stdout.getReader()
  const first = await reader.read()
  if (first.done) {
    const { code, killed } = await s.done
    if (killed) throw killed
    if (code !== 0) return null
    return { head: new Uint8Array(0), body: new ReadableStream({ start: (c) => c.close() }) }
  }
  const head = first.value
  let sentHead = false
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!sentHead) {
        sentHead = true
        controller.enqueue(head)
        return
      }
      const next = await reader.read()
      if (!next.done) return controller.enqueue(next.value)
      const { code, killed } = await s.done
      if (killed || code !== 0) controller.error(killed ?? new Error(`git ${args[0]} failed (${code})`))
      else controller.close()
    },
    cancel() {
      s.kill()
      reader.cancel().catch(() => {})
    },
  })
  return { head, body }
}

/** How much of an output boundedOutput reads before answering. */
export const READ_AHEAD = 256 * 1024

/**
 * `body` held to `max` bytes. Up to READ_AHEAD bytes (or max + 1, if less) are read first: an
 * output over `max` within them answers null before anything is sent (the stream cancelled, its
 * git killed). Past them the stream is handed on and, should it pass `max`, is cancelled and
 * ends with an error, so that a client never takes a cut-off output for a whole one.
 */
export async function boundedOutput(body: ReadableStream<Uint8Array>, max: number): Promise<ReadableStream<Uint8Array> | null> {
  const reader = body.getReader()
  const ahead: Uint8Array[] = []
  let total = 0
  let done = false
  while (!done && total < Math.min(READ_AHEAD, max + 1)) {
    const next = await reader.read()
    if (next.done) done = true
    else (ahead.push(next.value), (total += next.value.byteLength))
  }
  if (total > max) {
    await reader.cancel().catch(() => {})
    return null
  }
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const held = ahead.shift()
      if (held) return controller.enqueue(held)
      if (done) return controller.close()
      const next = await reader.read()
      if (next.done) return controller.close()
      total += next.value.byteLength
      if (total <= max) return controller.enqueue(next.value)
      await reader.cancel().catch(() => {})
      controller.error(new Error(`the output passed its limit of ${max} bytes`))
    },
    cancel: () => reader.cancel().catch(() => {}),
  })
}
