import { gitEnv } from './run'

/**
 * Streaming git: the process's stdout is handed on as a ReadableStream (never collected), and
 * stdin may be a stream too (a request body). Used for packs, blobs and archives.
 */
export interface GitStreamOptions {
  gitDir: string
  env?: Record<string, string>
  stdin?: ReadableStream<Uint8Array> | null
}

export interface GitStream {
  /** Stops git (a reader went away). */
  kill: () => void
  stdout: ReadableStream<Uint8Array>
  /** Resolves with the exit code and what git wrote on stderr. */
  done: Promise<{ code: number; stderr: string }>
}

export function spawnGitStream(args: string[], opts: GitStreamOptions): GitStream {
  let proc: Bun.Subprocess<any, 'pipe', 'pipe'>
  try {
    proc = Bun.spawn(['git', ...args], {
      cwd: opts.gitDir,
      env: gitEnv({ GIT_DIR: opts.gitDir, ...(opts.env ?? {}) }),
      stdin: opts.stdin ?? 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    }) as Bun.Subprocess<any, 'pipe', 'pipe'>
  } catch (e) {
    // No process at all (the repository folder is missing): an empty output and a failure.
    opts.stdin?.cancel().catch(() => {})
    const stderr = `fatal: cannot start git: ${(e as Error).message}`
    return { kill: () => {}, stdout: new ReadableStream({ start: (c) => c.close() }), done: Promise.resolve({ code: 128, stderr }) }
  }
  const stderr = new Response(proc.stderr).text()
  const done = Promise.all([proc.exited, stderr]).then(([code, text]) => ({ code, stderr: text }))
  return { kill: () => proc.kill(), stdout: proc.stdout, done }
}

/**
 * Starts git and waits for its first output: null when git failed before writing anything
 * (unknown object, bad revision), else a stream that replays the first chunk and then the rest.
 * `head` holds the first bytes (for content sniffing).
 */
export async function startGitOutput(
  args: string[],
  opts: GitStreamOptions,
): Promise<{ head: Uint8Array; body: ReadableStream<Uint8Array> } | null> {
  const s = spawnGitStream(args, opts)
  const reader = s.stdout.getReader()
  const first = await reader.read()
  if (first.done) {
    const { code } = await s.done
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
      if (next.done) controller.close()
      else controller.enqueue(next.value)
    },
    cancel() {
      s.kill()
      reader.cancel().catch(() => {})
    },
  })
  return { head, body }
}
