import { GitError, startGit, type GitProcess, type GitRepo } from './run'

/**
 * Objects read in process: one long-lived `git cat-file --batch-command` per repository answers
 * `info` (id, type, size) and `contents` requests over its pipes, one after the other, so reading
 * a ref, a tree or a small blob costs a round trip on a pipe instead of a git process each
 * (Gitea keeps the same kind of batch reader per repository).
 *
 * - Requests are lines (`info <object>` / `contents <object>`); an object name never holds a
 *   newline (callers pass object ids, `refs/heads/<safe name>`, or `<id>:<normalised path>`,
 *   whose segments refuse control characters), so nothing a user typed can start a second command.
 * - `contents` is asked only by object id, after `info` said how large the object is, so a caller
 *   never reads more than it decided to (readObject refuses past `maxBytes` before asking).
 * - A reader serves one repository; it ends its git (closing stdin) after IDLE_MS without work,
 *   and is replaced after MAX_AGE_MS so that it never reaches the long time limit. At most
 *   MAX_READERS run at once: the least recently used is ended first.
 * - An answer not complete within the quick time limit kills git; every request waiting on it
 *   fails with the GitError, and the next request starts a new reader.
 */

const IDLE_MS = 2000
const MAX_AGE_MS = 60_000
const MAX_READERS = 32

export interface ObjectInfo {
  oid: string
  type: 'blob' | 'tree' | 'commit' | 'tag'
  size: number
}

interface Waiting {
  withBody: boolean
  resolve: (answer: { info: ObjectInfo; body: Uint8Array | null } | null) => void
  reject: (e: Error) => void
  timer: ReturnType<typeof setTimeout>
}

class BatchReader {
  private proc: GitProcess
  private waiting: Waiting[] = []
  private header: Uint8Array[] = []
  private body: { info: ObjectInfo; chunks: Uint8Array[]; left: number } | null = null
  private idle: ReturnType<typeof setTimeout> | null = null
  private readonly born = Date.now()
  ended = false

  constructor(
    private readonly repo: GitRepo,
    private readonly onEnd: (r: BatchReader) => void,
  ) {
    this.proc = startGit(['cat-file', '--batch-command'], { gitDir: repo.gitDir, limits: repo.limits, budget: 'long', input: 'pipe' })
    void this.read()
    void this.proc.done.then(({ killed, code, stderr }) => this.fail(killed ?? new GitError('failed', `git cat-file ended (${code}): ${stderr.split('\n')[0] ?? ''}`, 'cat-file')))
  }

  get stale(): boolean {
    return this.ended || Date.now() - this.born > MAX_AGE_MS
  }

  ask(object: string, withBody: boolean): Promise<{ info: ObjectInfo; body: Uint8Array | null } | null> {
    if (this.idle) clearTimeout(this.idle)
    this.idle = null
    return new Promise((resolve, reject) => {
      const limitMs = this.repo.limits.quick * 1000
      const timer = setTimeout(() => {
        const e = new GitError('timeout', `git took longer than ${this.repo.limits.quick} s`, 'cat-file')
        this.fail(e)
        this.proc.kill()
      }, limitMs)
      this.waiting.push({ withBody, resolve, reject, timer })
      this.proc.stdin!.write(`${withBody ? 'contents' : 'info'} ${object}\n`)
      this.proc.stdin!.flush()
    })
  }

  /** Ends git once the requests under way are answered. */
  end(): void {
    if (this.ended) return
    this.ended = true
    this.onEnd(this)
    if (this.waiting.length === 0) this.closeStdin()
  }

  private closeStdin(): void {
    try {
      this.proc.stdin!.end()
    } catch {}
  }

  private fail(e: Error): void {
    if (!this.ended) {
      this.ended = true
      this.onEnd(this)
    }
    for (const w of this.waiting.splice(0)) {
      clearTimeout(w.timer)
      w.reject(e)
    }
    this.closeStdin()
  }

  private settle(answer: { info: ObjectInfo; body: Uint8Array | null } | null): void {
    const w = this.waiting.shift()
    if (!w) return
    clearTimeout(w.timer)
    w.resolve(answer)
    if (this.waiting.length === 0) {
      if (this.ended) this.closeStdin()
      else this.idle = setTimeout(() => this.end(), IDLE_MS)
    }
  }

  private async read(): Promise<void> {
    const reader = this.proc.stdout.getReader()
    try {
      for (let next = await reader.read(); !next.done; next = await reader.read()) this.take(next.value)
    } catch (e) {
      this.fail(e as Error)
    }
  }

  /** Consumes output: a header line, then (for `contents` of a found object) size bytes and a newline. */
  private take(chunk: Uint8Array): void {
    let at = 0
    while (at < chunk.length) {
      if (this.body) {
        const n = Math.min(this.body.left, chunk.length - at)
        this.body.chunks.push(chunk.subarray(at, at + n))
        this.body.left -= n
        at += n
        if (this.body.left > 0) return
        const { info, chunks } = this.body
        this.body = null
        // The contents, without the newline git writes after them.
        this.settle({ info, body: Buffer.concat(chunks).subarray(0, info.size) })
        continue
      }
      const nl = chunk.indexOf(10, at)
      if (nl < 0) {
        this.header.push(chunk.slice(at))
        return
      }
      this.header.push(chunk.subarray(at, nl))
      at = nl + 1
      const line = Buffer.concat(this.header).toString('utf8')
      this.header = []
      this.line(line)
    }
  }

  private line(line: string): void {
    const m = /^([0-9a-f]{40,64}) (blob|tree|commit|tag) (\d+)$/.exec(line)
    // Otherwise `<object> missing` / `<object> ambiguous`.
    if (!m) return this.settle(null)
    const info: ObjectInfo = { oid: m[1]!, type: m[2] as ObjectInfo['type'], size: Number(m[3]) }
    if (!this.waiting[0]?.withBody) return this.settle({ info, body: null })
    this.body = { info, chunks: [], left: info.size + 1 }
  }
}

const readers = new Map<string, BatchReader>()

function readerOf(repo: GitRepo): BatchReader {
  let r = readers.get(repo.gitDir)
  if (r && r.stale) {
    r.end()
    r = undefined
  }
  if (r) {
    // Most recently used last.
    readers.delete(repo.gitDir)
    readers.set(repo.gitDir, r)
    return r
  }
  if (readers.size >= MAX_READERS) readers.values().next().value?.end()
  const created = new BatchReader(repo, (done) => {
    if (readers.get(repo.gitDir) === done) readers.delete(repo.gitDir)
  })
  readers.set(repo.gitDir, created)
  return created
}

/** Id, type and size of an object (`<id>`, `<id>:<path>`, `refs/heads/<name>`, `<rev>^{commit}`), or null when git finds none. */
export async function objectInfo(repo: GitRepo, object: string): Promise<ObjectInfo | null> {
  if (/[\n\r\0]/.test(object)) return null
  return (await readerOf(repo).ask(object, false))?.info ?? null
}

/** The bytes of the object `oid` (an id `objectInfo` gave), or null when it is missing. */
export async function objectBytes(repo: GitRepo, oid: string): Promise<{ info: ObjectInfo; body: Uint8Array } | null> {
  if (!/^[0-9a-f]{40,64}$/.test(oid)) return null
  const answer = await readerOf(repo).ask(oid, true)
  return answer && answer.body ? { info: answer.info, body: answer.body } : null
}
