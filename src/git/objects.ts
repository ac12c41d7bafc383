import { isSafeRefName } from './ref-name'
import { GitError, startGit, type GitProcess, type GitRepo } from './run'

/**
 * Objects read in process: one long-lived `git cat-file --batch-command` per repository answers
 * `info` (id, type, size) and `contents` requests over its pipes, one after the other, so
 * resolving a name, reading a tree or a small blob costs a round trip on a pipe instead of a git
 * process each (Gitea keeps the same kind of batch reader per repository). Every object read of
 * the server goes through here: the contents API, commits, git data.
 *
 * - Requests are lines (`info <object>` / `contents <object>`). Names from URLs reach git only
 *   when they are a hex id or a safe ref name (isObjectName: no revision syntax, `~`, `^`, `:`,
 *   `@{` and whitespace are refused), optionally followed by a peel the code adds (`^{tree}`,
 *   `^{commit}`), or as `<id>:<normalised path>` whose segments refuse control characters; a
 *   name holding a line break is never sent, so nothing a user typed can start a second command,
 *   be read as an option or ask git for a search (`:/text`) or a walk.
 * - `contents` is asked only by object id, after `info` said how large the object is, so a caller
 *   never reads more than it decided to (readObject: past `maxBytes` no bytes, or with `cut` the
 *   first `maxBytes` from a one-off git stopped there).
 * - A reader serves one repository; it ends its git (closing stdin) after IDLE_MS without work,
 *   and is replaced after MAX_AGE_MS so that it never reaches the long time limit. At most
 *   MAX_READERS run at once: the least recently used is ended first.
 * - An answer not complete within the quick time limit kills git; every request waiting on it
 *   fails with the GitError, and the next request starts a new reader.
 */

export type ObjectType = 'commit' | 'tree' | 'blob' | 'tag'

export interface ObjectInfo {
  oid: string
  type: ObjectType
  size: number
}

const INFO_LINE = /^([0-9a-f]{40,64}) (commit|tree|blob|tag) (\d+)$/
const HEX = /^[0-9a-f]{4,64}$/
const FULL_ID = /^[0-9a-f]{40,64}$/

const IDLE_MS = 2000
const MAX_AGE_MS = 60_000
const MAX_READERS = 32


interface Waiting {
  withBody: boolean
  resolve: (answer: { info: ObjectInfo; body: Buffer | null } | null) => void
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
    this.proc = startGit(['cat-file', '--batch-command'], { gitDir: repo.gitDir, alternates: repo.alternates, limits: repo.limits, budget: 'long', input: 'pipe' })
    void this.read()
    void this.proc.done.then(({ killed, code, stderr }) => this.fail(killed ?? new GitError('failed', `git cat-file ended (${code}): ${stderr.split('\n')[0] ?? ''}`, 'cat-file')))
  }

  get stale(): boolean {
    return this.ended || Date.now() - this.born > MAX_AGE_MS
  }

  ask(object: string, withBody: boolean): Promise<{ info: ObjectInfo; body: Buffer | null } | null> {
    if (this.idle) clearTimeout(this.idle)
    this.idle = null
    return new Promise((resolve, reject) => {
      const stdin = this.proc.stdin
      if (!stdin) {
        // git could not even start (the repository's folder is missing or unreadable): a failure
        // like git's own, never a TypeError.
        this.end()
        reject(new GitError('failed', "git cat-file could not start: the repository's folder is missing or unreadable", 'cat-file'))
        return
      }
      const limitMs = this.repo.limits.quick * 1000
      const timer = setTimeout(() => {
        const e = new GitError('timeout', `git took longer than ${this.repo.limits.quick} s`, 'cat-file')
        this.fail(e)
        this.proc.kill()
      }, limitMs)
      this.waiting.push({ withBody, resolve, reject, timer })
      stdin.write(`${withBody ? 'contents' : 'info'} ${object}\n`)
      stdin.flush()
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

  private settle(answer: { info: ObjectInfo; body: Buffer | null } | null): void {
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
    const m = INFO_LINE.exec(line)
    // Otherwise `<object> missing` / `<object> ambiguous`.
    if (!m) return this.settle(null)
    const info: ObjectInfo = { oid: m[1]!, type: m[2] as ObjectType, size: Number(m[3]) }
    if (!this.waiting[0]?.withBody) return this.settle({ info, body: null })
    this.body = { info, chunks: [], left: info.size + 1 }
  }
}

const readers = new Map<string, BatchReader>()

function readerOf(repo: GitRepo): BatchReader {
  // A view with another repository's objects (GitRepo.alternates) has a reader of its own.
  const key = repo.alternates ? `${repo.gitDir}\n${repo.alternates}` : repo.gitDir
  let r = readers.get(key)
  if (r && r.stale) {
    r.end()
    r = undefined
  }
  if (r) {
    // Most recently used last.
    readers.delete(key)
    readers.set(key, r)
    return r
  }
  if (readers.size >= MAX_READERS) readers.values().next().value?.end()
  const created = new BatchReader(repo, (done) => {
    if (readers.get(key) === done) readers.delete(key)
  })
  readers.set(key, created)
  return created
}

/** `rev:./path`, `rev:../path`, `rev:.`, `rev:..`: a path relative to a work tree. */
const RELATIVE_PATH = /:\.\.?(\/|$)/

/** Id, type and size of an object (`<id>`, `<id>:<path>`, `refs/heads/<name>`, `<rev>^{commit}`), or null when git finds none (or several). */
export async function objectInfo(repo: GitRepo, object: string): Promise<ObjectInfo | null> {
  // A path after `rev:` that starts with `./` or `../` (or is `.`/`..`) is git's path relative to
  // a work tree, which a bare repository has not: cat-file dies of it ("relative path syntax
  // can't be used outside working tree"). No tree holds such an entry: nothing is there.
  if (/[\n\r\0]/.test(object) || RELATIVE_PATH.test(object)) return null
  return (await readerOf(repo).ask(object, false))?.info ?? null
}

/** What each spec resolves to, in order (null: missing or ambiguous), asked of the batch reader together. */
export function objectInfos(repo: GitRepo, specs: readonly string[]): Promise<(ObjectInfo | null)[]> {
  return Promise.all(specs.map((spec) => objectInfo(repo, spec)))
}

/** The bytes of the object `oid` (a full id `objectInfo` gave), or null when it is missing. */
export async function objectBytes(repo: GitRepo, oid: string): Promise<{ info: ObjectInfo; body: Buffer } | null> {
  if (!FULL_ID.test(oid)) return null
  const answer = await readerOf(repo).ask(oid, true)
  return answer && answer.body ? { info: answer.info, body: answer.body } : null
}

/** Whether a name from a URL may be resolved: a hex id (4–64 digits) or a safe ref name. */
export const isObjectName = (name: string): boolean => HEX.test(name) || isSafeRefName(name)

/** The object `name` names, and with `peel` the commit or tree it leads to (both null when either is missing). */
export async function resolveObject(repo: GitRepo, name: string, peel?: 'commit' | 'tree'): Promise<{ object: ObjectInfo; peeled: ObjectInfo | null } | null> {
  if (!isObjectName(name)) return null
  const [object, peeled] = await objectInfos(repo, peel ? [name, `${name}^{${peel}}`] : [name])
  if (!object) return null
  return { object, peeled: peel ? peeled ?? null : null }
}

/** The commit `name` (a branch, a tag, a commit id or a leading part of one) leads to, or null. */
export async function resolveCommit(repo: GitRepo, name: string): Promise<string | null> {
  if (!isObjectName(name)) return null
  const found = await objectInfo(repo, `${name}^{commit}`)
  return found?.type === 'commit' ? found.oid : null
}

export type RefCommitKind = 'branch' | 'tag' | 'commit'

/** A ref as Gitea's contents API reads it: a branch, then a tag, then a commit id (4–64 hex digits). */
export async function refCommit(repo: GitRepo, ref: string): Promise<{ kind: RefCommitKind; commit: string } | null> {
  if (isSafeRefName(ref)) {
    for (const [kind, prefix] of [['branch', 'refs/heads/'], ['tag', 'refs/tags/']] as const) {
      const info = await objectInfo(repo, `${prefix}${ref}^{commit}`)
      if (info?.type === 'commit') return { kind, commit: info.oid }
    }
  }
  if (/^[0-9a-f]{4,64}$/i.test(ref)) {
    const info = await objectInfo(repo, `${ref.toLowerCase()}^{commit}`)
    if (info?.type === 'commit') return { kind: 'commit', commit: info.oid }
  }
  return null
}

/** Blob sizes by id (an id's size never changes), bounded. */
const SIZE_CACHE = 100_000
const sizes = new Map<string, number>()

/** Size of a blob (null when `oid` is not one in `repo`); cached once known. */
export async function blobSize(repo: GitRepo, oid: string): Promise<number | null> {
  const hit = sizes.get(oid)
  if (hit !== undefined) return hit
  const info = await objectInfo(repo, oid)
  if (info?.type !== 'blob') return null
  sizes.set(oid, info.size)
  if (sizes.size > SIZE_CACHE) sizes.delete(sizes.keys().next().value!)
  return info.size
}

/** One object: its kind and size, and its bytes when it has at most `maxBytes` (else null: nothing was read). */
export interface ObjectBytes extends ObjectInfo {
  content: Buffer | null
}

/**
 * The object a hex id (4–64 digits) names, its bytes kept only up to `maxBytes`: a larger object
 * has none (`content` null), or with `cut` its first `maxBytes`. Null when there is no such
 * object. The size is asked first: a whole object comes from the batch reader, a cut one from a
 * git of its own, stopped once `maxBytes` have arrived.
 */
export async function readObject(repo: GitRepo, hex: string, maxBytes: number, opts: { cut?: boolean } = {}): Promise<ObjectBytes | null> {
  if (!HEX.test(hex)) return null
  const info = await objectInfo(repo, hex)
  if (!info) return null
  if (info.size <= maxBytes) {
    const whole = await objectBytes(repo, info.oid)
    return whole ? { ...info, content: whole.body } : null
  }
  return { ...info, content: opts.cut ? await leadingBytes(repo, info, maxBytes) : null }
}

/** The first `maxBytes` of an object (`git cat-file <type> <id>`, stopped once they have arrived); null when git gave fewer. */
async function leadingBytes(repo: GitRepo, info: ObjectInfo, maxBytes: number): Promise<Buffer | null> {
  const proc = startGit(['cat-file', info.type, info.oid], repo)
  const reader = proc.stdout.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  let ended = false
  try {
    while (size < maxBytes) {
      const next = await reader.read()
      if (next.done) {
        ended = true
        break
      }
      chunks.push(next.value)
      size += next.value.length
    }
  } finally {
    if (!ended) {
      proc.kill()
      reader.cancel().catch(() => {})
    }
  }
  const r = await proc.done
  if (r.killed && ended) throw r.killed
  return size >= maxBytes ? Buffer.concat(chunks, size).subarray(0, maxBytes) : null
}
