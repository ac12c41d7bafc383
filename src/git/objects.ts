import { isSafeRefName } from './refs'
import { runGit, safeGitMessage, GitError, startGit, type GitRepo } from './run'

/**
 * Single objects by name: what a name resolves to (`git cat-file --batch-check`), and one
 * object's bytes (`git cat-file --batch`) read only up to a bound. Names come from URLs: they
 * reach git on stdin, one per line, and only when they are a hex id or a safe ref name (no
 * revision syntax: `~`, `^`, `:`, `@{` and whitespace are refused), so a name can neither be
 * read as an option nor ask git for a search (`:/text`) or a walk.
 */

export type ObjectType = 'commit' | 'tree' | 'blob' | 'tag'

export interface ObjectInfo {
  oid: string
  type: ObjectType
  size: number
}

const HEX = /^[0-9a-f]{4,64}$/

/** Whether a name from a URL may be resolved: a hex id (4–64 digits) or a safe ref name. */
export const isObjectName = (name: string): boolean => HEX.test(name) || isSafeRefName(name)

const INFO_LINE = /^([0-9a-f]{40,64}) (commit|tree|blob|tag) (\d+)$/

/**
 * What each spec resolves to, in order (null: missing or ambiguous). Specs are names that passed
 * isObjectName, optionally followed by a peel the code adds (`^{tree}`, `^{commit}`).
 */
export async function objectInfos(repo: GitRepo, specs: readonly string[]): Promise<(ObjectInfo | null)[]> {
  if (specs.length === 0) return []
  const r = await runGit(['cat-file', '--batch-check'], { ...repo, input: specs.join('\n') + '\n' })
  if (r.code !== 0) throw new GitError('failed', `git cat-file failed: ${safeGitMessage(r.stderr)}`, 'cat-file')
  const lines = r.stdout.toString('utf8').split('\n')
  return specs.map((_, i) => {
    const m = INFO_LINE.exec(lines[i] ?? '')
    return m ? { oid: m[1]!, type: m[2] as ObjectType, size: Number(m[3]) } : null
  })
}

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
  const [found] = await objectInfos(repo, [`${name}^{commit}`])
  return found?.type === 'commit' ? found.oid : null
}

/** One object: its kind and size, and its bytes when it has at most `maxBytes` (else null: git is stopped, nothing more is read). */
export interface ObjectBytes extends ObjectInfo {
  content: Buffer | null
}

/**
 * The object a hex id names (`git cat-file --batch`, one process for header and bytes), its bytes
 * kept only up to `maxBytes`: a larger object has none (`content` null), or with `cut` its first
 * `maxBytes`. Null when there is no such object.
 */
export async function readObject(repo: GitRepo, hex: string, maxBytes: number, opts: { cut?: boolean } = {}): Promise<ObjectBytes | null> {
  if (!HEX.test(hex)) return null
  const proc = startGit(['cat-file', '--batch'], { ...repo, input: hex + '\n' })
  const reader = proc.stdout.getReader()
  let buffered = Buffer.alloc(0)
  let info: ObjectInfo | null = null
  let done = false
  try {
    for (;;) {
      const next = await reader.read()
      if (next.done) {
        done = true
        break
      }
      buffered = Buffer.concat([buffered, next.value])
      if (!info) {
        const eol = buffered.indexOf(10)
        if (eol < 0) {
          if (buffered.length > 256) break
          continue
        }
        const m = INFO_LINE.exec(buffered.subarray(0, eol).toString('utf8'))
        if (!m) break
        info = { oid: m[1]!, type: m[2] as ObjectType, size: Number(m[3]) }
        buffered = buffered.subarray(eol + 1)
        if (info.size > maxBytes && !opts.cut) break
      }
      if (buffered.length >= Math.min(info.size, maxBytes)) break
    }
  } finally {
    if (!done) {
      proc.kill()
      reader.cancel().catch(() => {})
    }
  }
  const r = await proc.done
  if (r.killed && done) throw r.killed
  if (!info) return null
  const keep = Math.min(info.size, maxBytes)
  const whole = info.size <= maxBytes || opts.cut
  return { ...info, content: whole && buffered.length >= keep ? Buffer.from(buffered.subarray(0, keep)) : null }
}

/** An annotated tag object's fields, as git wrote them. */
export interface TagObject {
  object: string
  objectType: string
  name: string
  taggerName: string
  taggerEmail: string
  /** RFC 3339, UTC. */
  taggerDate: string
  message: string
  /** The signature block at the end of the message, if any (not verified). */
  signature: string
  /** What the signature signs: the object's text before it. */
  payload: string
}

/** A git identity line's `<seconds>` as RFC 3339 in UTC (Gitea's CommitUser date). */
const utcDate = (seconds: string): string => new Date(Number(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z')

const SIGNATURE = /\n?-----BEGIN (PGP|SSH) SIGNATURE-----[\s\S]*$/

/** Parses a tag object's text (header lines, a blank line, the message). */
export function parseTag(text: string): TagObject {
  const split = text.indexOf('\n\n')
  const head = split < 0 ? text : text.slice(0, split)
  const body = split < 0 ? '' : text.slice(split + 2)
  const tag: TagObject = { object: '', objectType: '', name: '', taggerName: '', taggerEmail: '', taggerDate: utcDate('0'), message: body, signature: '', payload: '' }
  for (const line of head.split('\n')) {
    const space = line.indexOf(' ')
    const key = line.slice(0, space)
    const value = line.slice(space + 1)
    if (key === 'object') tag.object = value
    else if (key === 'type') tag.objectType = value
    else if (key === 'tag') tag.name = value
    else if (key === 'tagger') {
      const m = /^(.*?) ?<([^>]*)> (\d{1,12}) [+-]\d{4}$/.exec(value)
      if (m) Object.assign(tag, { taggerName: m[1], taggerEmail: m[2], taggerDate: utcDate(m[3]!) })
    }
  }
  const signed = SIGNATURE.exec(body)
  if (signed) {
    tag.signature = signed[0].replace(/^\n/, '')
    tag.payload = text.slice(0, text.length - tag.signature.length)
    tag.message = body.slice(0, signed.index) + (signed[0].startsWith('\n') ? '\n' : '')
  }
  return tag
}
