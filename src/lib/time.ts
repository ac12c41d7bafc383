import { ApiError } from './errors'

/** Current time in Unix seconds, the unit every `*_unix` column holds. */
export const nowUnix = (): number => Math.floor(Date.now() / 1000)

/** Go's zero time, printed where Gitea has no value in a non-pointer time field. */
export const ZERO_TIME = '0001-01-01T00:00:00Z'

/** Times already printed (lists print the same few again and again); bounded. */
const printed = new Map<number, string>()

/** RFC 3339 in UTC with whole seconds, as Gitea prints times (memoised: toISOString is slow). */
export function isoTime(unix: number): string {
  let text = printed.get(unix)
  if (text === undefined) {
    text = new Date(unix * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z')
    if (printed.size >= 4096) printed.clear()
    printed.set(unix, text)
  }
  return text
}

/** Like isoTime, but `null` for 0 (no value). */
export function isoTimeOrNull(unix: number): string | null {
  return unix > 0 ? isoTime(unix) : null
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/

/** Whether the fields of an RFC 3339 text name a real time: a day the month has, hours, minutes, seconds and offset in range (as Go's time.Parse checks; Date.parse rolls 02-31 over into March). */
function inRange(text: string): boolean {
  const [, y, mo, d, h, mi, se, oh, om] = /^(\d{4})-(\d{2})-(\d{2})(?:.(\d{2}):(\d{2})(?::(\d{2}))?)?(?:[^+-]*([+-]\d{2}):?(\d{2}))?/.exec(text)!.map(Number)
  const days = new Date(Date.UTC(y!, mo!, 0)).getUTCDate()
  return mo! >= 1 && mo! <= 12 && d! >= 1 && d! <= days && !(h! > 23) && !(mi! > 59) && !(se! > 59) && !(Math.abs(oh!) > 23) && !(om! > 59)
}

/** Parses an RFC 3339 timestamp from a query or body into Unix seconds; 422 when it is not one. */
export function parseTimestamp(value: string, field: string): number {
  const text = value.trim()
  const ms = RFC3339.test(text) && inRange(text) ? Date.parse(text) : NaN
  if (Number.isNaN(ms)) throw new ApiError(422, `[${field}]: invalid time "${value}", expected RFC 3339`)
  return Math.floor(ms / 1000)
}
