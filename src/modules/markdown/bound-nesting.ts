/**
 * Rewrites the renderer's HTML (its own tags plus the raw HTML markdown passes through) into HTML
 * whose elements nest at most `maxDepth` deep and never close what is not open, before the
 * sanitiser reads it. The sanitiser's parser keeps its open elements in a list it shifts and
 * searches on every tag, so its time grows with the depth: `<div>` × n then `</span>` × n took it
 * time in n², and n nested blockquotes nearly so. Bounded here, its work per tag is bounded too.
 *
 * One scan, linear in the HTML: each tag is written back in a plain form (`<name attr="value">`,
 * values' `"` escaped, entities left for the sanitiser to decode), so the sanitiser sees exactly
 * the elements counted here; a `<` that starts no tag becomes `&lt;`; comments, declarations and
 * processing instructions are dropped (the sanitiser drops them too); an element past the depth is
 * dropped, its content kept. This is no security boundary: the sanitiser still decides what stays.
 */

export const MAX_NESTING = 100

/** Elements that never hold content: they are not counted as open. */
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr'])
const TAG_NAME = /[A-Za-z][A-Za-z0-9-]*/y
const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g
const ATTRIBUTE_NAME = /^[A-Za-z_:][-A-Za-z0-9_:.]*$/

/** Where the tag whose attributes start at `from` ends (its `>`, or the end), quoted values skipped. */
function tagEnd(html: string, from: number): number {
  let quote = 0
  let afterEquals = false
  for (let j = from; j < html.length; j++) {
    const c = html.charCodeAt(j)
    if (quote) {
      if (c === quote) quote = 0
    } else if (c === 62 /* > */) return j
    else if ((c === 34 || c === 39) && afterEquals) quote = c
    if (!quote && c !== 32 && c !== 9 && c !== 10 && c !== 13) afterEquals = c === 61 /* = */
  }
  return html.length
}

function attributes(source: string): string {
  let out = ''
  for (const m of source.matchAll(ATTRIBUTE)) {
    if (!ATTRIBUTE_NAME.test(m[1]!)) continue
    const value = m[2] ?? m[3] ?? m[4]
    out += value === undefined ? ` ${m[1]}` : ` ${m[1]}="${value.replace(/"/g, '&quot;')}"`
  }
  return out
}

/**
 * Whether well-formed HTML (the renderer's own, from markdown without raw HTML) nests deeper than
 * `max`: a scan that counts tags without reading them, so boundNesting runs only where needed.
 */
export function nestsDeeperThan(html: string, max = MAX_NESTING): boolean {
  let depth = 0
  for (let i = html.indexOf('<'); i >= 0; i = html.indexOf('<', i + 1)) {
    if (html.charCodeAt(i + 1) === 47 /* / */) depth--
    else if (!/^(?:br|hr|img|input)\b/.test(html.slice(i + 1, i + 7)) && ++depth > max) return true
  }
  return false
}

export function boundNesting(html: string, maxDepth = MAX_NESTING): string {
  const out: string[] = []
  const open: string[] = []
  let i = 0
  while (i < html.length) {
    const lt = html.indexOf('<', i)
    if (lt < 0) {
      out.push(html.slice(i))
      break
    }
    if (lt > i) out.push(html.slice(i, lt))
    i = lt
    if (html.startsWith('<!--', i)) {
      // Ends at the first `-->` (`<!-->` and `<!--->` are whole comments).
      const end = html.indexOf('-->', i + 2)
      i = end < 0 ? html.length : end + 3
      continue
    }
    const second = html[i + 1]
    if (second === '!' || second === '?') {
      const end = html.indexOf('>', i)
      i = end < 0 ? html.length : end + 1
      continue
    }
    const closing = second === '/'
    TAG_NAME.lastIndex = closing ? i + 2 : i + 1
    const name = TAG_NAME.exec(html)?.[0].toLowerCase()
    if (!name) {
      out.push('&lt;')
      i++
      continue
    }
    const end = tagEnd(html, TAG_NAME.lastIndex)
    const rest = html.slice(TAG_NAME.lastIndex, end)
    i = end + 1
    if (closing) {
      const at = open.lastIndexOf(name)
      if (at < 0) continue
      while (open.length > at) out.push(`</${open.pop()}>`)
    } else if (VOID.has(name)) {
      out.push(`<${name}${attributes(rest)}>`)
    } else if (open.length < maxDepth) {
      open.push(name)
      out.push(`<${name}${attributes(rest)}>`)
    }
  }
  while (open.length > 0) out.push(`</${open.pop()}>`)
  return out.join('')
}
