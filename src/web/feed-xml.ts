/**
 * RSS 2.0 and Atom 1.0 documents, as Gitea writes its feeds (gorilla/feeds: the same elements,
 * the item's id as a guid that is not a permalink, its text as the description and its HTML as
 * RSS's `content:encoded` / Atom's `content`), and the addresses they are asked for at.
 *
 * Written here rather than with a feed library: two small fixed documents whose every element is
 * ours to choose, escaped by one function.
 */

export type FeedFormat = 'rss' | 'atom'

export interface FeedItem {
  title: string
  /** Absolute address of what the item is about. */
  link: string
  /** Unique and stable (Gitea: `{id}: {link}`, a commit's sha). */
  id: string
  /** Plain text. */
  description: string
  /** HTML, already safe (escaped or sanitised); the description's when empty. */
  content?: string
  author?: { name: string; email?: string }
  /** ISO 8601. */
  created: string
}

export interface Feed {
  title: string
  link: string
  description: string
  items: FeedItem[]
}

/** Text made safe inside an XML element or a quoted attribute. Characters XML 1.0 cannot hold are dropped. */
export function xmlText(text: string): string {
  // One pass over the text (a feed's entries hold whole comments, up to a megabyte each).
  return text.replace(XML_UNSAFE, (c) => XML_ESCAPES[c] ?? '')
}
const XML_UNSAFE = /[&<>"]|[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu
const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }

const element = (name: string, text: string | undefined, attrs = '') => (text === undefined ? '' : `<${name}${attrs}>${xmlText(text)}</${name}>`)

/** RFC 1123 with a numeric zone, as RSS wants its dates. */
function rssDate(iso: string): string {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? '' : d.toUTCString().replace('GMT', '+0000')
}

function atomDate(iso: string): string {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? new Date(0).toISOString() : d.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** The newest item's time; `now` for a feed without items. */
function latest(feed: Feed, now: string): string {
  return feed.items.reduce((newest, item) => (item.created > newest ? item.created : newest), feed.items.length ? feed.items[0]!.created : now)
}

function rss(feed: Feed, now: string): string {
  const items = feed.items.map((item) =>
    [
      '<item>',
      element('title', item.title),
      element('link', item.link),
      element('description', item.description),
      element('content:encoded', item.content || undefined),
      item.author ? element('author', item.author.email ? `${item.author.email} (${item.author.name})` : item.author.name) : '',
      element('guid', item.id, ' isPermaLink="false"'),
      element('pubDate', rssDate(item.created)),
      '</item>',
    ].join(''),
  )
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">',
    '<channel>',
    element('title', feed.title),
    element('link', feed.link),
    element('description', feed.description),
    // The channel's content was published when its newest item was: the same document for the same items.
    element('pubDate', rssDate(latest(feed, now))),
    ...items,
    '</channel>',
    '</rss>',
  ].join('\n')
}

function atom(feed: Feed, now: string): string {
  const updated = latest(feed, now)
  const entries = feed.items.map((item) =>
    [
      '<entry>',
      element('title', item.title),
      element('updated', atomDate(item.created)),
      element('id', item.id),
      element('content', item.content || xmlText(item.description), ' type="html"'),
      `<link href="${xmlText(item.link)}" rel="alternate"></link>`,
      element('summary', item.description, ' type="html"'),
      item.author ? `<author>${element('name', item.author.name)}${element('email', item.author.email || undefined)}</author>` : '',
      '</entry>',
    ].join(''),
  )
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<feed xmlns="http://www.w3.org/2005/Atom">',
    element('title', feed.title),
    element('id', feed.link),
    element('updated', atomDate(updated)),
    element('subtitle', feed.description || undefined),
    `<link href="${xmlText(feed.link)}"></link>`,
    ...entries,
    '</feed>',
  ].join('\n')
}

/** The feed as an answer in `format`, with Gitea's content types. */
export function feedResponse(feed: Feed, format: FeedFormat, now = new Date().toISOString()): Response {
  const body = format === 'atom' ? atom(feed, now) : rss(feed, now)
  return new Response(body, {
    headers: {
      'content-type': format === 'atom' ? 'application/atom+xml;charset=utf-8' : 'application/rss+xml;charset=utf-8',
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    },
  })
}

/**
 * Gitea's feed addresses whose last segment carries the format (`/{owner}.rss`, `/{owner}/{repo}.atom`):
 * the path the app serves them at (`/{owner}/-/feed/rss`, `/{owner}/{repo}/-/feed/atom`), or null for
 * any other path. A name's suffix always means the feed, as in Gitea (its UsernameSubRoute and repository
 * assignment strip it whatever the name).
 */
export function feedPathOf(pathname: string): string | null {
  if (!pathname.endsWith('.rss') && !pathname.endsWith('.atom')) return null
  const m = /^\/([^/]+?)(?:\/([^/]+?))?\.(rss|atom)$/.exec(pathname)
  if (!m || !m[1] || m[1] === '-' || m[2] === '') return null
  return m[2] === undefined ? `/${m[1]}/-/feed/${m[3]}` : `/${m[1]}/${m[2]}/-/feed/${m[3]}`
}
