import { GitError, requireObjectIds, safeGitMessage, startGit, type GitRepo } from './run'

/**
 * A repository's code searched with `git grep` at a commit (Gitea 1.23's GrepSearch, used when it
 * has no code indexer): fixed strings, case-insensitive, binary files skipped, a line of context
 * around each match. git runs as its own process under the quick time limit; its output is read
 * as it arrives and parsed in one pass, and reading stops (git killed) past `maxFiles` files or
 * `maxBytes` bytes, so the work here is bounded whatever the repository holds.
 *
 * The search text never reaches git's arguments: it is read from stdin (`-f -`, one fixed string
 * a line; git 2.39's grep takes no `--end-of-options` before its pattern), so nothing a user
 * types can be read as an option.
 */

/** Longest search text (characters, after trimming). */
export const MAX_GREP_QUERY = 200
/** Words of a fuzzy search that count (the rest are ignored). */
const MAX_WORDS = 10
/** Gitea's MaxResultLimit: files read at most. */
const MAX_FILES = 50
/** Bytes of git's output read at most. */
const MAX_BYTES = 1024 * 1024
/** Bytes of a line kept (a longer one is cut, and said to be). */
export const MAX_GREP_LINE = 500
/** Matching lines of one file (git's `--max-count`). */
export const MAX_GREP_PER_FILE = 50
/** Longest path kept (bytes, with the commit prefix). */
const MAX_NAME = 8192

export interface GrepLine {
  number: number
  text: string
  /** The line was longer than MAX_GREP_LINE bytes: `text` is its beginning. */
  cut: boolean
  /** Where the searched words are in `text` ([start, end) in UTF-16 units), in order, apart; none on a context line. */
  matches: [number, number][]
}

export interface GrepFile {
  path: string
  lines: GrepLine[]
  /** As many lines matched as git reports of a file (MAX_GREP_PER_FILE): the file may hold more. */
  more: boolean
}

export interface GrepResult {
  files: GrepFile[]
  /** Reading stopped at a bound: more files (or lines) match than `files` holds. */
  more: boolean
}

export interface GrepOptions {
  /** Gitea's fuzzy mode: any of the words (its default); else the whole text. */
  fuzzy: boolean
  /** Lines of context around each match (Gitea shows 1). */
  context?: number
  maxFiles?: number
  maxBytes?: number
}

/** Why a search text cannot be searched (a message for the reader), or null when it can. */
export function grepQueryProblem(query: string): string | null {
  if (!query.length) return 'Type something to search for.'
  if (query.length > MAX_GREP_QUERY) return `The search text is too long: at most ${MAX_GREP_QUERY} characters.`
  if (/[\x00-\x08\x0a-\x1f\x7f]/.test(query)) return 'The search text may not hold control characters or line breaks.'
  return null
}

/** The fixed strings searched for: the words of a fuzzy search (at most MAX_WORDS, each once), else the whole text. */
export function grepWords(query: string, fuzzy: boolean): string[] {
  if (!fuzzy) return [query]
  return [...new Set(query.split(/\s+/).filter(Boolean))].slice(0, MAX_WORDS)
}

/**
 * `text` with each code unit lower-cased in place, so that offsets into it are offsets into
 * `text` (the one lower-casing that grows a string, U+0130, is left as it is).
 */
function foldCase(text: string): string {
  const lower = text.toLowerCase()
  if (lower.length === text.length) return lower
  let out = ''
  for (const c of text) {
    const l = c.toLowerCase()
    out += l.length === c.length ? l : c
  }
  return out
}

/** Where any of `words` (already case-folded) occurs in `text`, case-insensitively: sorted, overlaps merged. */
export function matchRanges(text: string, words: readonly string[]): [number, number][] {
  const folded = foldCase(text)
  const found: [number, number][] = []
  for (const word of words) {
    for (let at = folded.indexOf(word); at >= 0; at = folded.indexOf(word, at + word.length)) found.push([at, at + word.length])
  }
  if (found.length < 2) return found
  found.sort((a, b) => a[0] - b[0] || b[1] - a[1])
  const merged: [number, number][] = [found[0]!]
  for (const r of found.slice(1)) {
    const last = merged[merged.length - 1]!
    if (r[0] <= last[1]) last[1] = Math.max(last[1], r[1])
    else merged.push(r)
  }
  return merged
}

/** A field of a record, its bytes kept up to `cap` (the rest counted as cut). */
class Field {
  private buf: Uint8Array
  length = 0
  over = false
  constructor(cap: number) {
    this.buf = new Uint8Array(cap)
  }
  add(bytes: Uint8Array) {
    const room = this.buf.length - this.length
    if (bytes.length > room) this.over = true
    const n = Math.min(room, bytes.length)
    this.buf.set(bytes.subarray(0, n), this.length)
    this.length += n
  }
  take(): string {
    const text = Buffer.from(this.buf.buffer, 0, this.length).toString('utf8')
    this.length = 0
    return text
  }
}

/**
 * The parser of `git grep --null --line-number` output: records `{commit}:{path}\0{n}\0{line}\n`
 * (a path may hold a line break, never a NUL; a line holds neither), with `--\n` between
 * non-adjacent groups of lines. One pass over each chunk; each field bounded.
 */
class GrepParser {
  readonly files: GrepFile[] = []
  /** Set when a record would begin a file past `maxFiles`. */
  full = false
  private state: 'name' | 'number' | 'text' = 'name'
  private name = new Field(MAX_NAME)
  private number = new Field(24)
  private text = new Field(MAX_GREP_LINE)
  private path = ''
  /** Lines of the current file with a match. */
  private hits = 0
  constructor(
    private readonly prefix: string,
    private readonly words: readonly string[],
    private readonly maxFiles: number,
  ) {}

  /** Parses a chunk; false once full (the rest is not wanted). */
  push(chunk: Uint8Array): boolean {
    let pos = 0
    while (pos < chunk.length && !this.full) {
      const end = chunk.indexOf(this.state === 'text' ? 10 : 0, pos)
      const field = this.state === 'name' ? this.name : this.state === 'number' ? this.number : this.text
      field.add(chunk.subarray(pos, end < 0 ? chunk.length : end))
      if (end < 0) break
      pos = end + 1
      if (this.state === 'name') {
        let name = this.name.take()
        this.name.over = false
        while (name.startsWith('--\n')) name = name.slice(3)
        this.path = name.startsWith(this.prefix) ? name.slice(this.prefix.length) : name
        this.state = 'number'
      } else if (this.state === 'number') this.state = 'text'
      else {
        this.record()
        this.state = 'name'
      }
    }
    return !this.full
  }

  private record() {
    const number = Number(this.number.take())
    const cut = this.text.over
    this.text.over = false
    let text = this.text.take()
    // A line cut inside a character ends with its replacement: not the file's.
    if (cut) text = text.replace(/\uFFFD$/, '')
    let file = this.files[this.files.length - 1]
    if (!file || file.path !== this.path) {
      if (this.files.length >= this.maxFiles) {
        this.full = true
        return
      }
      file = { path: this.path, lines: [], more: false }
      this.files.push(file)
      this.hits = 0
    }
    // Past git's last match of a file only its context follows: left out, so the file ends at the last match counted.
    if (file.more) return
    const matches = matchRanges(text, this.words)
    if (matches.length && ++this.hits >= MAX_GREP_PER_FILE) file.more = true
    file.lines.push({ number, text, cut, matches })
  }
}

/**
 * Searches the tree of `commit` (an object id) for lines holding `query` (fixed text, any case;
 * in fuzzy mode any of its words), binary files left out. The files in git's order (by path),
 * each with its matching lines and their context, numbered. Throws GitError when git fails or
 * runs out of time; the caller checks the query first (grepQueryProblem).
 */
export async function grepCommit(repo: GitRepo, commit: string, query: string, opts: GrepOptions): Promise<GrepResult> {
  requireObjectIds('grep', commit)
  const words = grepWords(query, opts.fuzzy)
  if (!words.length) return { files: [], more: false }
  const args = ['grep', '--null', '--line-number', '--no-column', '-I', '--fixed-strings', '--ignore-case', '--no-color', `--context=${opts.context ?? 1}`, `--max-count=${MAX_GREP_PER_FILE}`, '-f', '-', commit, '--']
  const git = startGit(args, { ...repo, input: words.join('\n') })
  const parser = new GrepParser(`${commit}:`, words.map(foldCase), opts.maxFiles ?? MAX_FILES)
  const maxBytes = opts.maxBytes ?? MAX_BYTES
  let read = 0
  let stopped = false
  const reader = git.stdout.getReader()
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      const room = maxBytes - read
      read += r.value.length
      if (!parser.push(room < r.value.length ? r.value.subarray(0, room) : r.value) || read > maxBytes) {
        stopped = true
        break
      }
    }
  } finally {
    if (stopped) {
      git.kill()
      reader.cancel().catch(() => {})
    }
  }
  const { code, stderr, killed } = await git.done
  if (stopped) return { files: parser.files, more: true }
  if (killed) throw killed
  // 1: nothing matched.
  if (code === 1 && !stderr.trim()) return { files: [], more: false }
  if (code !== 0) throw new GitError('failed', `git grep failed: ${safeGitMessage(stderr)}`, 'grep')
  return { files: parser.files, more: false }
}
