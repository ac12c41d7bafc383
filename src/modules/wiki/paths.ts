/**
 * How a wiki page's title, its URL path and its file name in the wiki's git repository map onto
 * each other, as Gitea 1.23 maps them (its WebPath / GitPath rules), so that a wiki written by
 * either server reads the same on the other:
 *
 * - the title is what people see: `Home Page`, `100% Free`, `2000-01-02 meeting`;
 * - the web path (`sub_url`) is the title with spaces as `-`, URL-query escaped (`Home-Page`,
 *   `100%25+Free`); a title that holds a `-` (or ends in `.md`) keeps its dashes and says so
 *   with the suffix `.-` (`2000-01-02+meeting.-`);
 * - the file name is the web path with `+` and `%20` back to spaces, and `.md` added
 *   (`Home-Page.md`, `100%25 Free.md`, `2000-01-02 meeting.-.md`). A web path ending in `.md`
 *   names a file directly.
 *
 * Every function here is linear in its input and never throws: text that does not unescape is
 * kept as it is, as Gitea keeps it.
 */

/** Titles Gitea keeps for its own pages (`/wiki/_pages`, `/wiki/_new`, ...). */
const RESERVED = new Set(['_pages', '_new', '_edit', 'raw'])

const DASH_MARKER = '.-'

/**
 * Go's url.QueryEscape: everything but letters, digits and `-_.~` as %XX of its UTF-8 bytes, spaces
 * as `+`. A lone surrogate (no UTF-8 of its own; encodeURIComponent throws on it) escapes as U+FFFD.
 */
export function queryEscape(s: string): string {
  return encodeURIComponent(s.toWellFormed())
    .replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())
    .replace(/%20/g, '+')
}

/** Go's url.QueryUnescape (`+` as a space) or url.PathUnescape; null where a `%` starts no escape. */
function unescapeBytes(s: string, plusIsSpace: boolean): string | null {
  if (!s.includes('%') && !(plusIsSpace && s.includes('+'))) return s
  const bytes: number[] = []
  const encoder = new TextEncoder()
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!
    if (c === '%') {
      const hex = s.slice(i + 1, i + 3)
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return null
      bytes.push(parseInt(hex, 16))
      i += 2
    } else if (c === '+' && plusIsSpace) bytes.push(0x20)
    else {
      // A whole code point (a surrogate pair stays together).
      const cp = s.codePointAt(i)!
      const text = String.fromCodePoint(cp)
      if (text.length === 2) i++
      bytes.push(...encoder.encode(text))
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes))
}

export const queryUnescape = (s: string): string | null => unescapeBytes(s, true)
const pathUnescape = (s: string): string | null => unescapeBytes(s, false)

/** The segments of `path` without `.` and empty ones, each `..` taking the one before it; `climbs`: a `..` found none to take. */
function cleanSegments(path: string): { segments: string[]; climbs: boolean } {
  const segments: string[] = []
  let climbs = false
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue
    if (segment !== '..') segments.push(segment)
    else if (segments.pop() === undefined) climbs = true
  }
  return { segments, climbs }
}

/** Gitea's util.PathJoinRelX: backslashes as slashes, `.`, empty and leading `..` segments dropped, no leading slash. */
export const joinRelative = (...parts: string[]): string => cleanSegments(parts.join('/').replace(/\\/g, '/')).segments.join('/')

/**
 * A path of the wiki's tree as Go's path.Clean leaves a relative one, from the root: no `.`, `..`
 * or empty segment. Null for what names nothing in the tree: a path that climbs above the root, or
 * none left.
 */
export function cleanPath(path: string): string | null {
  const { segments, climbs } = cleanSegments(path)
  return climbs || segments.length === 0 ? null : segments.join('/')
}

/** A segment of a web path as people read it: dashes back to spaces (unless marked), unescaped. */
function unescapeSegment(s: string): { text: string; ok: boolean } {
  const plain = s.endsWith(DASH_MARKER) ? s.slice(0, -DASH_MARKER.length) : s.replace(/-/g, ' ')
  const text = queryUnescape(plain)
  return text === null ? { text: plain, ok: false } : { text, ok: true }
}

/** A segment of a title as a web path segment: spaces as dashes, or the dash marker when dashes must stay. */
function escapeSegment(s: string, hadMarker: boolean): string {
  const text = hadMarker || s.includes('-') || s.endsWith('.md') ? s + DASH_MARKER : s.replace(/ /g, '-')
  return queryEscape(text)
}

/** The web path a page's title makes (Gitea's UserTitleToWebPath; `unnamed` for a title of nothing). */
export function titleToWebPath(title: string): string {
  const path = joinRelative(escapeSegment(title.trim(), false))
  return path === '' || path === '.' ? 'unnamed' : path
}

/** The web path a request names (Gitea's WebPathFromRequest: its raw text, folders as `%2F`). */
export const webPathFromRequest = (raw: string): string => joinRelative(raw).replace(/\//g, '%2F')

/**
 * The page a request's URL names in its last path segment, read raw, still escaped, as Gitea
 * reads it (a web path is escaped text itself: `100%25-Free`).
 */
export const pageNameOf = (request: Request): string => webPathFromRequest(new URL(request.url).pathname.split('/').pop() ?? '')

/** The file a web path names in the wiki's repository (Gitea's WebPathToGitPath). */
export function webPathToGitPath(webPath: string): string {
  if (webPath.endsWith('.md')) return joinRelative(pathUnescape(webPath) ?? webPath)
  const segments = webPath.split('/').map((s) => {
    const marked = s.endsWith(DASH_MARKER)
    return escapeSegment(unescapeSegment(s).text, marked).replace(/%20/g, ' ').replace(/\+/g, ' ')
  })
  return segments.join('/') + '.md'
}

/** The web path of a file of the wiki (Gitea's GitPathToWebPath); null for a file that is no page (not `.md`, or not unescaping). */
export function gitPathToWebPath(gitPath: string): string | null {
  if (!gitPath.endsWith('.md')) return null
  const segments: string[] = []
  for (const s of gitPath.slice(0, -3).split('/')) {
    const { text, ok } = unescapeSegment(s)
    if (!ok) return null
    segments.push(escapeSegment(text, s.endsWith(DASH_MARKER)))
  }
  return segments.join('/')
}

/** The title people see for a web path (Gitea's WebPathToUserTitle, its last segment). */
export function webPathToTitle(webPath: string): string {
  let last = webPath.slice(webPath.lastIndexOf('/') + 1)
  if (last.endsWith('.md')) last = pathUnescape(last.slice(0, -3)) ?? last.slice(0, -3)
  return unescapeSegment(last).text
}

/** The first segment of a web path Gitea reserves for its own pages, or null. */
export function reservedSegment(webPath: string): string | null {
  for (const s of webPath.split('/')) {
    const title = unescapeSegment(s).text
    if (RESERVED.has(title)) return title
  }
  return null
}
