import { createHash } from 'node:crypto'
import { readBlobText } from './blob'
import { isObjectId, startGit, type GitRepo } from './run'
import { LITERAL_PATHS } from './commit-log'


/**
 * What review line comments need of git: the text of one line of a file at a commit (its
 * fingerprint tells later whether a push changed that line), and the diff of one file between two
 * commits (the hunk a comment is shown with). Paths are the user's: values, read literally.
 */


/** The lines of `path` at `rev` (read up to `maxBytes`); null when there is no such file, or it is larger. */
export async function fileLines(repo: GitRepo, rev: string, path: string, maxBytes: number): Promise<string[] | null> {
  if (!isObjectId(rev)) return null
  const text = await readBlobText(repo, rev, path, maxBytes)
  if (text === null || text === 'too-large') return null
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines
}

/** A line's fingerprint: equal for equal text at the same place (its number is part of it). */
export const lineFingerprint = (lines: string[] | null, line: number): string | null =>
  lines && line >= 1 && line <= lines.length ? createHash('sha1').update(`${line}\0${lines[line - 1]}`).digest('hex') : null

/**
 * `git diff from to -- path` as text, read as it arrives; null past `max` bytes (git stopped) or
 * when git fails.
 */
export async function fileDiff(repo: GitRepo, from: string, to: string, path: string, max: number): Promise<string | null> {
  if (!isObjectId(from) || !isObjectId(to)) return null
  const p = startGit(['diff', '--no-color', '--no-ext-diff', '-M', from, to], { ...repo, values: ['--', path], env: LITERAL_PATHS })
  const reader = p.stdout.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    size += r.value.byteLength
    if (size > max) {
      p.kill()
      await reader.cancel().catch(() => {})
      await p.done
      return null
    }
    chunks.push(r.value)
  }
  const done = await p.done
  return done.code === 0 && !done.killed ? Buffer.concat(chunks).toString('utf8') : null
}

/** Lines of context shown above a commented line (Gitea's CodeCommentLines). */
export const HUNK_CONTEXT_LINES = 4

/**
 * The part of a unified diff a comment on `line` (> 0 the new file's, < 0 the old file's) is
 * shown with, as Gitea's diff_hunk: a hunk header for the cut, then up to HUNK_CONTEXT_LINES lines
 * of the hunk before the commented line, and that line. '' when no hunk shows the line.
 */
export function hunkAround(diff: string, line: number): string {
  const old = line < 0
  const want = Math.abs(line)
  const lines = diff.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(lines[i]!)
    if (!m) continue
    let o = Number(m[1])
    let n = Number(m[2])
    const body: { text: string; o: number; n: number }[] = []
    for (let j = i + 1; j < lines.length && !lines[j]!.startsWith('@@'); j++) {
      const text = lines[j]!
      const kind = text[0]
      if (kind !== ' ' && kind !== '+' && kind !== '-') {
        if (text.startsWith('\\')) continue
        break
      }
      body.push({ text, o, n })
      const hit = old ? kind !== '+' && o === want : kind !== '-' && n === want
      if (hit) {
        const cut = body.slice(-(HUNK_CONTEXT_LINES + 1))
        const oldCount = cut.filter((l) => l.text[0] !== '+').length
        const newCount = cut.filter((l) => l.text[0] !== '-').length
        return [`@@ -${cut[0]!.o},${oldCount} +${cut[0]!.n},${newCount} @@`, ...cut.map((l) => l.text)].join('\n')
      }
      if (kind !== '+') o++
      if (kind !== '-') n++
    }
  }
  return ''
}
