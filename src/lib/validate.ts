import { t, ValidationError, type TSchema } from 'elysia'
import { Type, type IntegerOptions, type NumberOptions, type TInteger, type TNumber } from '@sinclair/typebox'
import { compiledAtFirstUse } from './checked-json'
import { unprocessable } from './errors'

/**
 * Elysia's t.Numeric and t.Integer, the same schemas (a number, or the text of one, as query and
 * path values come), their checker compiled at its first use (checked-json.ts `compiledAtFirstUse`)
 * where Elysia's compile it when the schema is made: 0.1-0.2 ms apiece at module load, about 10-12
 * ms of a start for the 23 numbers and 39 integers of the routes' schemas. The decoded value is
 * checked as theirs check it (a number against `options` when given, an integer always), and
 * refused with the error theirs throw (Elysia's `compile` passes the value's errors where the
 * constructor takes `allowUnsafeValidationDetails`), so a refusal reads and answers the same.
 */
function fromText(format: 'numeric' | 'integer', number: TNumber | TInteger, options: NumberOptions | undefined, checked: boolean): TSchema {
  const checker = compiledAtFirstUse(number)
  return t
    .Transform(t.Union([t.String({ format, default: 0 }), number], options))
    .Decode((value) => {
      const n = +value
      if (format === 'numeric' && isNaN(n)) return value
      if (!checked) return n
      const check = checker()
      if (!check.Check(n)) throw new ValidationError('property', number, n, check.Errors(n) as never)
      return n
    })
    .Encode((value) => value)
}

/** t.Numeric's schema (see fromText). */
export const numeric = (options?: NumberOptions) => fromText('numeric', t.Number(options), options, options !== undefined) as TNumber

/** t.Integer's schema (see fromText). */
export const integer = (options?: IntegerOptions) => fromText('integer', Type.Integer(options), options, true) as TInteger

/** Names Gitea refuses for users and organisations (they collide with web routes). */
const RESERVED_NAMES = new Set([
  'assets', 'css', 'explore', 'img', 'js', 'less', 'plugins', 'debug', 'raw', 'install', 'api', 'avatar',
  'avatars', 'user', 'org', 'help', 'stars', 'issues', 'pulls', 'commits', 'repo', 'template', 'admin', 'new',
  '.', '..', 'swagger.v1.json', 'attachments', 'repo-avatars',
])

/** Gitea's AlphaDashDot: letters, digits, `-`, `_` and `.` (names of users, repositories, teams; badge slugs). */
export const ALPHA_DASH_DOT = /^[A-Za-z0-9_.-]+$/
const EMAIL = /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+\.[^\s@<>()[\],;:"]+$/

/** Longest title or name of a tracker item (issue, milestone, label): Gitea's MaxSize(255). */
export const MAX_TITLE = 255
/** Longest label name (Gitea's form limit). */
export const MAX_LABEL_NAME = 50
/** Longest free text (issue and comment bodies, descriptions): Gitea sets none; 1 Mi characters. */
export const MAX_TEXT = 1024 * 1024

/**
 * Bounds of list-valued input. Gitea sets none; these are far above any real use and
 * keep a crafted request from building a statement SQLite refuses ("Expression tree is too large").
 */
/** Values of a comma-separated query filter (issue `labels`, `milestones`). */
export const MAX_FILTER_VALUES = 50
/** Characters of such a filter: MAX_FILTER_VALUES names of a label's length, with their commas. */
export const MAX_FILTER_TEXT = MAX_FILTER_VALUES * (MAX_LABEL_NAME + 1)
/** Items of a body array of ids or names (labels, assignees, e-mail addresses, scopes, units). */
export const MAX_LIST_ITEMS = 100
/** Characters of a free-text query parameter (q, sort, state, a user name, a ref ...). */
export const MAX_QUERY_TEXT = 255

/** Characters, not UTF-16 units (Gitea's MaxSize counts runes). */
export const charCount = (s: string): number => [...s].length

/** User and organisation names: AlphaDashDot, at most 40, not reserved, not `*.keys`. */
export function checkOwnerName(name: string, field = 'UserName'): void {
  if (!name) throw unprocessable('Required', field)
  if (!ALPHA_DASH_DOT.test(name)) throw unprocessable('must be valid alpha or numeric or dash(-_) or dot characters', field)
  if (charCount(name) > 40) throw unprocessable('must be less than 40 characters', field)
  if (/^[-.]/.test(name) || /[-.]$/.test(name) || name.includes('..'))
    throw unprocessable('must not begin or end with a dash or dot, nor hold two dots in a row', field)
  const lower = name.toLowerCase()
  if (RESERVED_NAMES.has(lower) || lower.endsWith('.keys') || lower.endsWith('.gpg') || lower.endsWith('.rss') || lower.endsWith('.atom'))
    throw unprocessable(`name is reserved [name: ${name}]`, field)
}

export function checkEmail(email: string, field = 'Email'): void {
  if (!email) throw unprocessable('Required', field)
  if (charCount(email) > 254 || !EMAIL.test(email)) throw unprocessable('is not a valid email address', field)
}

/** A required short text (a title or a name): not blank and at most `max` characters; answers it. */
export function checkRequiredText(value: string, max: number, field: string): string {
  if (value.trim() === '') throw unprocessable('Required', field)
  if (charCount(value) > max) throw unprocessable(`must be less than ${max} characters`, field)
  return value
}

/** An optional free-text query parameter, at most MAX_QUERY_TEXT characters. */
export const QueryText = (description?: string) => t.Optional(t.String({ maxLength: MAX_QUERY_TEXT, ...(description ? { description } : {}) }))
/** An optional comma-separated query filter, at most MAX_FILTER_TEXT characters (splitFilter counts its values). */
export const QueryFilter = (description: string) => t.Optional(t.String({ maxLength: MAX_FILTER_TEXT, description }))
/** A body array of at most MAX_LIST_ITEMS items. */
export const BoundedList = <T extends TSchema>(item: T) => t.Array(item, { maxItems: MAX_LIST_ITEMS })
/** A short name or id inside a body array (a user name, an e-mail address, a scope, a unit). */
export const ListName = t.String({ maxLength: MAX_QUERY_TEXT })

/** The entries of a comma-separated filter, trimmed, empty ones dropped; 422 past MAX_FILTER_VALUES. */
export function splitFilter(value: string | undefined, field: string): string[] {
  const list = (value ?? '').split(',').map((x) => x.trim()).filter(Boolean)
  if (list.length > MAX_FILTER_VALUES) throw unprocessable(`must hold at most ${MAX_FILTER_VALUES} values`, field)
  return list
}

/**
 * A website of a user, an organisation or a repository (Gitea's ValidUrl): at most 255 characters,
 * empty to clear, else an absolute http or https URL with a host (no javascript:, data: ...).
 */
export function checkWebsite(value: string | undefined, field = 'Website'): void {
  if (value === undefined || value === '') return
  checkMaxSize(value, 255, field)
  let ok = false
  try {
    const url = new URL(value)
    ok = (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {}
  if (!ok) throw unprocessable('must be a valid URL', field)
}

export function checkMaxSize(value: string | undefined, max: number, field: string): void {
  if (value !== undefined && charCount(value) > max) throw unprocessable(`must be less than ${max} characters`, field)
}

/**
 * Go's strconv.ParseBool, as Gitea reads boolean query parameters and boolean texts of a body
 * (a hook's `config.is_system_webhook`): absent or empty false; anything else 422, with `message`
 * where Gitea words its own.
 */
export function queryBool(value: string | undefined, field: string, message = 'must be a boolean'): boolean {
  if (value === undefined || value === '') return false
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false
  throw unprocessable(message, field)
}
