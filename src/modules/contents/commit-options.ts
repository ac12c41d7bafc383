import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { gitIdentityOf } from '../../convert/user'
import type { CommitPerson } from '../../convert/contents'
import type { Ident } from '../../git/merge'
import { gitTakesName } from '../../git/ident'
import { ApiError, unprocessable } from '../../lib/errors'
import { isoTime, nowUnix, parseTimestamp } from '../../lib/time'
import type { FileOptions } from './model'

/**
 * Who a contents write records, when, and with which message (Gitea's FileOptions): `author` and
 * `committer` each count when they give both a name and an e-mail; when only one does, it stands
 * for both; when neither does, the caller is both. Dates default to now; `signoff` adds the
 * committer's Signed-off-by trailer; an empty message is Gitea's default ("Add …", "Update …",
 * "Delete …", one line per kind).
 */

/** Characters git would strip from or choke on in an identity. */
const BAD_IDENT = /[<>\n\r\0]/

/**
 * A given identity, or null when it lacks a name or an e-mail. 422 for what git would mangle or
 * refuse: `<`, `>` or line breaks anywhere, or a name of git's "crud" alone (gitTakesName). git
 * refuses no e-mail (one of crud alone is recorded as `<>`).
 */
function identityOf(given: { name?: string; email?: string } | undefined, field: string): { name: string; email: string } | null {
  const name = given?.name?.trim() ?? ''
  const email = given?.email?.trim() ?? ''
  if (BAD_IDENT.test(name)) throw unprocessable('must not hold <, > or line breaks', `${field}.name`)
  if (BAD_IDENT.test(email)) throw unprocessable('must not hold <, > or line breaks', `${field}.email`)
  if (name && !gitTakesName(name))
    throw unprocessable(`must hold a character other than spaces, control characters and . , : ; < > " \\ '`, `${field}.name`)
  return name && email ? { name, email } : null
}

/** Go's `time.Time{}` in Unix seconds. */
const GO_ZERO_TIME = -62135596800

export interface CommitPeople {
  author: Ident
  committer: Ident
  /** The same as the API shows them (RFC 3339 dates). */
  authorShown: CommitPerson
  committerShown: CommitPerson
}

export function commitPeople(deps: AppDeps, doer: UserRow, opts: FileOptions): CommitPeople {
  const author = identityOf(opts.author, 'author')
  const committer = identityOf(opts.committer, 'committer')
  const doerIdent = gitIdentityOf(deps.config, doer)
  const a = author ?? committer ?? doerIdent
  const c = committer ?? author ?? doerIdent
  const now = nowUnix()
  const dateOf = (value: string | undefined, field: string) => {
    if (value === undefined || value.trim() === '') return now
    const unix = parseTimestamp(value, field)
    // Go's zero time (0001-01-01T00:00:00Z): the Go SDK sends it for dates left unset, which
    // Gitea takes as now.
    if (unix === GO_ZERO_TIME) return now
    if (unix < 0 || unix > 253402300799) throw unprocessable('is out of range', field)
    return unix
  }
  const aWhen = dateOf(opts.dates?.author, 'dates.author')
  const cWhen = dateOf(opts.dates?.committer, 'dates.committer')
  return {
    author: { ...a, date: `${aWhen} +0000` },
    committer: { ...c, date: `${cWhen} +0000` },
    authorShown: { ...a, date: isoTime(aWhen) },
    committerShown: { ...c, date: isoTime(cWhen) },
  }
}

/** The commit message: the one given (trimmed) or Gitea's default for the operations, with the sign-off trailer when asked. */
export function commitMessage(opts: FileOptions, ops: { operation: string; path: string }[], committer: { name: string; email: string }): string {
  let message = opts.message?.trim() ?? ''
  if (message === '') {
    const of = (words: string, kinds: string[]) => {
      const paths = ops.filter((o) => kinds.includes(o.operation)).map((o) => o.path)
      return paths.length ? [`${words} ${paths.join(', ')}`] : []
    }
    message = [...of('Add', ['create']), ...of('Update', ['update']), ...of('Delete', ['delete'])].join('\n')
  }
  if (opts.signoff) message += `\n\nSigned-off-by: ${committer.name} <${committer.email}>`
  return message
}

/** 413 for a file past WARREN_MAX_BLOB_SIZE. */
export const tooLarge = (max: number) => new ApiError(413, `a file may be at most ${max} bytes (WARREN_MAX_BLOB_SIZE)`)

/**
 * The bytes of base64 `text` as Gitea reads it (standard alphabet with padding; line breaks
 * ignored): 422 when it is not base64, 413 past `max` bytes, checked before decoding.
 */
export function decodeBase64(text: string, max: number, field: string): Uint8Array {
  const clean = text.includes('\n') || text.includes('\r') ? text.replace(/[\r\n]/g, '') : text
  if (Math.floor(clean.length / 4) * 3 > max + 3) throw tooLarge(max)
  if (clean.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) throw unprocessable('illegal base64 data', field)
  const bytes = Buffer.from(clean, 'base64')
  if (bytes.length > max) throw tooLarge(max)
  return bytes
}
