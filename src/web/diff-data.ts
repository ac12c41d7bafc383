import { changedFiles, type FileChange } from '../git/compare'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { objectStoreOf, requireObjectIds, runGit, safeGitMessage, startGit, type GitProcess, type GitRepo } from '../git/run'
import { WeightedCache } from '../lib/weighted-cache'

/**
 * What the diff component shows of a change from `base` to `head`: the files changed (with their
 * line counts, from git's raw and numstat listings) and, for the first of them, their hunks, read
 * from `git diff` as it arrives and parsed line by line (linear, chunk by chunk: the event loop
 * stays free). Every dimension is bounded, as Gitea's MAX_GIT_DIFF_* settings bound its diff page:
 * files listed, files shown with their hunks, lines per file, characters per line, and bytes of
 * diff read in all; git is stopped as soon as the page has what it shows, and the page says what
 * was cut. Two commit ids always have the same diff: a diff read within the default limits is kept
 * (per repository, bounded by its rows), and a page shown again spawns no git.
 */

export interface DiffLimits {
  /** Files listed (the rest are counted: "and more"). */
  maxListed: number
  /** Files shown with their hunks (Gitea's MAX_GIT_DIFF_FILES). */
  maxFiles: number
  /** Lines shown of one file (Gitea's MAX_GIT_DIFF_LINES). */
  maxLines: number
  /** Characters shown of one line (Gitea's MAX_GIT_DIFF_LINE_CHARACTERS). */
  maxLineChars: number
  /** Bytes of `git diff` read in all. */
  maxBytes: number
}

export const DIFF_LIMITS: DiffLimits = { maxListed: 1000, maxFiles: 100, maxLines: 1000, maxLineChars: 5000, maxBytes: 2 * 1024 * 1024 }

/** A line of a hunk: added, removed, context, or git's "\ No newline at end of file". */
export interface DiffRow {
  kind: '+' | '-' | ' ' | '\\'
  old: number | null
  new: number | null
  text: string
  /** The line was longer than maxLineChars and is cut. */
  cut?: boolean
}

export interface DiffHunk {
  header: string
  rows: DiffRow[]
}

export interface FileDiff {
  change: FileChange
  hunks: DiffHunk[]
  /** `full`; `cut`: more lines than shown; `hidden`: past the page's files or bytes, not read. */
  shown: 'full' | 'cut' | 'hidden'
}

export interface Diff {
  files: FileDiff[]
  /** Files changed (at most maxListed counted exactly; `more` when git listed more). */
  total: number
  more: boolean
  additions: number
  deletions: number
  /** Why files past some point show no hunks: too many files, or too many bytes. */
  cut: 'files' | 'bytes' | null
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/

/** The parser of `git diff` output, fed line by line; file i of the diff is file i of the listing. */
class DiffParser {
  index = -1
  cut: Diff['cut'] = null
  private old = 0
  private new = 0
  private lines = 0
  private hunk: DiffHunk | null = null

  constructor(
    private readonly files: FileDiff[],
    private readonly limits: DiffLimits,
  ) {}

  /** Takes one line (without its newline); false once nothing more is wanted. */
  line(text: string): boolean {
    if (text.startsWith('diff --git ')) {
      this.index++
      this.hunk = null
      this.lines = 0
      if (this.index >= this.files.length) return false
      if (this.index >= this.limits.maxFiles) {
        this.cut = 'files'
        return false
      }
      this.files[this.index]!.shown = 'full'
      return true
    }
    const file = this.files[this.index]
    if (!file || file.shown === 'cut') return true
    const m = HUNK.exec(text)
    if (m) {
      this.old = Number(m[1])
      this.new = Number(m[2])
      this.hunk = { header: text.slice(0, this.limits.maxLineChars), rows: [] }
      file.hunks.push(this.hunk)
      return true
    }
    if (!this.hunk) return true
    const kind = text[0]
    if (kind !== '+' && kind !== '-' && kind !== ' ' && kind !== '\\') return true
    if (++this.lines > this.limits.maxLines) {
      file.shown = 'cut'
      return true
    }
    const body = text.slice(1)
    const row: DiffRow = {
      kind,
      old: kind === '+' || kind === '\\' ? null : this.old++,
      new: kind === '-' || kind === '\\' ? null : this.new++,
      text: body.length > this.limits.maxLineChars ? body.slice(0, this.limits.maxLineChars) : body,
    }
    if (body.length > this.limits.maxLineChars) row.cut = true
    this.hunk.rows.push(row)
    return true
  }
}

/** Diffs read, by repository and ends; weighed by their rows (and one for each file listed). */
const cache = new WeightedCache<Diff>(200_000, (d) => d.files.reduce((n, f) => n + 1 + f.hunks.reduce((m, h) => m + 1 + h.rows.length, 0), 0))

/** The diff from `base` to `head` within `limits`; null when git cannot compare them. Callers share it: read only. */
export async function readDiff(git: GitRepo, base: string, head: string, limits: DiffLimits = DIFF_LIMITS): Promise<Diff | null> {
  requireObjectIds('diff', base, head)
  const key = limits === DIFF_LIMITS ? `${objectStoreOf(git)}\0${base}\0${head}` : null
  const hit = key ? cache.get(key) : undefined
  if (hit) return hit
  const read = await diffOf(git, base, head, limits)
  if (read?.whole && key) cache.set(key, read.diff)
  return read?.diff ?? null
}

/** The diff as read, and whether it is what git would always say (not cut by git's failure, its time limit or an abort). */
async function diffOf(git: GitRepo, base: string, head: string, limits: DiffLimits): Promise<{ diff: Diff; whole: boolean } | null> {
  const listed = await changedFiles(git, base, head, limits.maxListed)
  if (!listed) return null
  const files: FileDiff[] = listed.files.map((change) => ({ change, hunks: [], shown: 'hidden' }))
  const diff: Diff = {
    files,
    total: files.length,
    more: listed.truncated,
    additions: files.reduce((n, f) => n + f.change.additions, 0),
    deletions: files.reduce((n, f) => n + f.change.deletions, 0),
    cut: null,
  }
  if (files.length === 0) return { diff, whole: true }
  const proc = startGit(['diff', '--no-color', '--no-ext-diff', '--no-textconv', '-M', base, head], { ...git, budget: 'long' })
  const ended = await parsePatch(proc, diff, limits)
  // Stopped here once the page had what it shows, or read to git's successful end.
  return { diff, whole: !ended.read || (ended.code === 0 && !ended.killed) }
}

/**
 * Reads `git diff`'s output from `proc` into the hunks of `diff`'s files, within `limits`: git is
 * stopped once the page has what it shows (`read` false), else read to its end.
 */
async function parsePatch(proc: GitProcess, diff: Diff, limits: DiffLimits): Promise<{ read: boolean; code: number; killed?: unknown }> {
  const files = diff.files
  const parser = new DiffParser(files, limits)
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let rest = ''
  let bytes = 0
  let wanted = true
  let ended: Awaited<typeof proc.done>
  try {
    while (wanted) {
      const next = await reader.read()
      if (next.done) {
        if (rest) parser.line(rest)
        break
      }
      bytes += next.value.byteLength
      const text = rest + decoder.decode(next.value, { stream: true })
      let at = 0
      for (let nl = text.indexOf('\n', at); nl >= 0 && wanted; nl = text.indexOf('\n', at)) {
        wanted = parser.line(text.slice(at, nl))
        at = nl + 1
      }
      rest = wanted ? text.slice(at) : ''
      if (wanted && bytes > limits.maxBytes) {
        // The file being read is shown as far as it was read.
        const current = files[parser.index]
        if (current && current.shown === 'full') current.shown = 'cut'
        parser.cut = 'bytes'
        wanted = false
      }
    }
  } finally {
    if (!wanted) proc.kill()
    await reader.cancel().catch(() => {})
    ended = await proc.done
  }
  diff.cut = parser.cut
  return { read: wanted, code: ended.code, ...(ended.killed ? { killed: ended.killed } : {}) }
}

/**
 * The diff of one file from `before` to `after` (the editor's preview): both written to a
 * temporary folder outside every repository and compared there by `git diff --no-index`, so
 * nothing is written to the repository; within `limits`, as a commit's diff. Binary content
 * (a NUL byte) is listed without hunks, as git says it. The folder is removed afterwards.
 */
export async function textDiff(path: string, before: Uint8Array, after: Uint8Array, limits: DiffLimits = DIFF_LIMITS): Promise<Diff> {
  const dir = await mkdtemp(join(tmpdir(), 'warren-preview-'))
  try {
    await Promise.all([Bun.write(join(dir, 'a'), before), Bun.write(join(dir, 'b'), after)])
    const args = ['diff', '--no-index', '--no-color', '--no-ext-diff', '--no-textconv']
    // Its counts first (`--numstat`: one line, `-\t-\t` for binary content), then the patch itself.
    const counts = await runGit([...args, '--numstat', 'a', 'b'], { cwd: dir })
    if (counts.code > 1) throw new Error(`git diff --no-index failed: ${safeGitMessage(counts.stderr)}`)
    const m = /^(-|\d+)\t(-|\d+)\t/.exec(counts.stdout.toString('utf8'))
    const change: FileChange = { path, status: 'M', additions: Number(m?.[1]) || 0, deletions: Number(m?.[2]) || 0, binary: m?.[1] === '-' }
    const diff: Diff = { files: m ? [{ change, hunks: [], shown: 'hidden' }] : [], total: m ? 1 : 0, more: false, additions: change.additions, deletions: change.deletions, cut: null }
    if (m && !change.binary) await parsePatch(startGit([...args, 'a', 'b'], { cwd: dir, budget: 'long' }), diff, limits)
    return diff
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
