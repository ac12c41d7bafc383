import { git, isObjectId, startGit, type GitRepo } from './run'
import { MAX_FIELD_CHARS, readTokens } from './tokens'
import { isSafeRefName } from './ref-name'
import type { RefWindow } from './commits'
import { refAnswer } from './ref-answers'

/** A tag as one `git for-each-ref` reads it. */
export interface TagInfo {
  name: string
  /** What the ref points to: the tag object (annotated) or the commit (lightweight). */
  id: string
  /** The commit it names (an annotated tag peeled once). */
  commit: string
  /** The tag's message (annotated, without its signature), else the commit's. */
  message: string
  /** The tagger's date (annotated), else the commit's committer date; ISO 8601 with the offset git recorded. */
  created: string
}

const FIELDS = ['%(refname)', '%(objectname)', '%(objecttype)', '%(*objectname)', '%(creatordate:iso-strict)', '%(contents)', '%(contents:signature)']
// Every field ends with NUL (a message holds none); for-each-ref's newline then starts the next refname.
const FORMAT = '--format=' + FIELDS.map((f) => f + '%00').join('')

/**
 * Tags of the refs `patterns` names, newest first as Gitea lists them (by the date of the commit
 * an annotated tag names; lightweight tags after them, then by name), within `window`; with
 * `only`, the one tag of that exact name. Read as it arrives, only the window's tags kept, each
 * field to MAX_FIELD_CHARS.
 */
async function readTags(repo: GitRepo, patterns: string[], window: RefWindow, only?: string): Promise<TagList> {
  // What for-each-ref lists depends on the refs alone (objects never change under an id): kept
  // under their state, as git's ref advertisement is (ref-answers.ts), and served again while it holds.
  const request = JSON.stringify(['tags', patterns, window.offset, window.limit, only ?? null])
  return refAnswer(repo.gitDir, request, async () => {
    const { answer, ok } = await forEachTag(repo, patterns, window, only)
    return { value: answer, ok, weight: answer.tags.reduce((n, t) => n + 200 + t.name.length + t.message.length, 0) }
  })
}

/** A window of tags and how many there are in all (kept answers: read only). */
export interface TagList {
  readonly tags: readonly TagInfo[]
  total: number
}

/** readTags from git itself; `ok` false when git failed (nothing is kept then). */
async function forEachTag(repo: GitRepo, patterns: string[], window: RefWindow, only?: string): Promise<{ answer: TagList; ok: boolean }> {
  const tags: TagInfo[] = []
  let total = 0
  let fields: string[] = []
  const r = await readTokens(
    startGit(['for-each-ref', FORMAT, '--sort=-*creatordate'], { ...repo, values: patterns }),
    (token) => {
      fields.push(token)
      if (fields.length < FIELDS.length) return
      const [ref, id, type, peeled, created, contents, signature] = fields as [string, string, string, string, string, string, string]
      fields = []
      const refname = ref.replace(/^\n/, '')
      if (!refname.startsWith('refs/tags/')) return
      const name = refname.slice('refs/tags/'.length)
      if (only !== undefined && name !== only) return
      const index = total++
      if (index < window.offset || index >= window.offset + window.limit) return
      const message = signature && contents.endsWith(signature) ? contents.slice(0, -signature.length) : contents
      tags.push({ name, id, commit: type === 'tag' && peeled ? peeled : id, message: message.trim(), created })
    },
    MAX_FIELD_CHARS,
  )
  return r.code === 0 ? { answer: { tags, total }, ok: true } : { answer: { tags: [], total: 0 }, ok: false }
}

/** A window of the repository's tags, newest first (see readTags), and how many there are. */
export function listTags(repo: GitRepo, window: RefWindow): Promise<TagList> {
  return readTags(repo, ['refs/tags'], window)
}

/** One tag by its exact name, or null. */
export async function getTag(repo: GitRepo, name: string): Promise<TagInfo | null> {
  if (!isSafeRefName(name)) return null
  return (await readTags(repo, [`refs/tags/${name}`], { offset: 0, limit: 1 }, name)).tags[0] ?? null
}

/** Who made a tag: name, e-mail, and when (unix seconds, UTC). */
export interface Tagger {
  name: string
  email: string
  unix: number
}

/** What git cannot hold in an identity (`<`, `>`, line breaks): dropped, as git's own ident code does. */
const identPart = (s: string) => s.replace(/[<>\n\r\0]/g, '').trim()

/**
 * Writes an annotated tag object named `name` for `commit` with `message`, tagged by `tagger`
 * (`git mktag`, which checks the object as fsck would); answers its id. No ref is made: the
 * caller moves `refs/tags/<name>` to it through the push path. The name must pass isSafeRefName.
 */
export async function writeTagObject(repo: GitRepo, commit: string, name: string, message: string, tagger: Tagger): Promise<string> {
  if (!isObjectId(commit) || !isSafeRefName(name)) throw new Error('writeTagObject: a checked commit id and tag name are required')
  const who = `${identPart(tagger.name) || 'unknown'} <${identPart(tagger.email)}> ${Math.floor(tagger.unix)} +0000`
  const text = `object ${commit}\ntype commit\ntag ${name}\ntagger ${who}\n\n${message.replace(/\s+$/, '')}\n`
  const id = (await git(['mktag'], { ...repo, input: text })).trim()
  if (!isObjectId(id)) throw new Error('git mktag answered no object id')
  return id
}
