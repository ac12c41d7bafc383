/**
 * References to issues and pull requests in a text (Gitea 1.23's modules/references
 * FindAllIssueReferences, as commit messages are read): `#123` or `!123` (this repository's),
 * `owner/name#123` (another's), each set apart by a space, a bracket or a quote before it and a
 * space, a bracket, a quote or punctuation ending the text or a word after it. A reference right
 * after one of Gitea's closing keywords (close, closes, closed, fix, fixes, fixed, resolve,
 * resolves, resolved) or reopening keywords (reopen, reopens, reopened), any case, an optional
 * colon and one space, asks to close or reopen it. Bounded: the text's first MAX_TEXT characters,
 * at most MAX_REFERENCES references.
 */

export type ReferenceAction = 'none' | 'closes' | 'reopens'

export interface IssueReference {
  /** Another repository's, or null for the text's own. */
  owner: string | null
  name: string | null
  index: number
  action: ReferenceAction
}

const MAX_TEXT = 64 * 1024
const MAX_REFERENCES = 100
const END = String.raw`(?=\s|$|\)|\]|'|"|[:;,.?!](?:\s|$))`
/** `#N` or `!N` after a space, a bracket or a quote (the mark's position is group 1's). */
const LOCAL = new RegExp(String.raw`(?:\s|^|\(|\[|'|")([#!])([0-9]{1,9})${END}`, 'g')
/** `owner/name#N` after a space or a bracket. */
const CROSS = new RegExp(String.raw`(?:\s|^|\(|\[)([0-9A-Za-z_.-]{1,255})/([0-9A-Za-z_.-]{1,255})[#!]([0-9]{1,9})${END}`, 'g')
const CLOSES = /(?:\s|^|\(|\[)(?:close|closes|closed|fix|fixes|fixed|resolve|resolves|resolved):? $/i
const REOPENS = /(?:\s|^|\(|\[)(?:reopen|reopens|reopened):? $/i
/** Longer than a keyword, its colon and space: a window starting later than the text cannot begin inside a keyword. */
const KEYWORD_WINDOW = 24

/** The action the words right before position `at` ask for. */
function actionBefore(text: string, at: number): ReferenceAction {
  const before = text.slice(Math.max(0, at - KEYWORD_WINDOW), at)
  return CLOSES.test(before) ? 'closes' : REOPENS.test(before) ? 'reopens' : 'none'
}

/** The references of `text`, in the order they appear (a reference named twice, twice). */
export function findIssueReferences(text: string): IssueReference[] {
  const body = text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text
  const found: (IssueReference & { at: number })[] = []
  for (const m of body.matchAll(LOCAL)) {
    const at = m.index! + m[0].length - m[1]!.length - m[2]!.length
    found.push({ owner: null, name: null, index: Number(m[2]), action: actionBefore(body, at), at })
    if (found.length >= MAX_REFERENCES) break
  }
  for (const m of body.matchAll(CROSS)) {
    if (found.length >= 2 * MAX_REFERENCES) break
    const at = m.index! + m[0].length - m[1]!.length - m[2]!.length - m[3]!.length - 2
    found.push({ owner: m[1]!, name: m[2]!, index: Number(m[3]), action: actionBefore(body, at), at })
  }
  return found
    .filter((r) => r.index > 0)
    .sort((a, b) => a.at - b.at)
    .slice(0, MAX_REFERENCES)
    .map(({ at: _, ...ref }) => ref)
}
