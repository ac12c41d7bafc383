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
