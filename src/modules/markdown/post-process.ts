/**
 * The pass over sanitised HTML that adds what Gitea's renderer adds beyond markdown, as Gitea's
 * own post-processor does on the HTML (not the markdown): heading ids (`user-content-<slug>`),
 * relative links and images resolved against the context, and in text outside links and code
 * `#123` issue references, `@user` mentions and `[[Name|Link]]` short links.
 *
 * It reads the sanitiser's output, which is regular: every tag is `<name attr="escaped">` (a `>` in
 * a value is written `&gt;`), text has no raw `<`, and tags nest. So one left-to-right scan does
 * it, in time linear in the HTML. What it inserts is built here from escaped parts and URLs under
 * Warren's own prefixes: it never needs the sanitiser again.
 */

/** How gfm mode resolves links and references; absent: plain markdown (headings only). */
export interface LinkPlan {
  /** `{base}` for mentions. */
  baseUrl: string
  /** The context's URL (no trailing slash), when there is a context. */
  context?: string
  /** Relative links and short-link pages go under this prefix. */
  pagePrefix?: string
  /** Relative images and short-link images go under this prefix. */
  imagePrefix?: string
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const unescape = (s: string) => s.replace(/&(lt|gt|quot|amp);/g, (_, e: string) => ({ lt: '<', gt: '>', quot: '"', amp: '&' })[e]!)
const hasScheme = (href: string) => /^[a-z][a-z0-9+.-]*:/i.test(href)
/** Schemes a short link may keep as it is (the sanitiser's list); anything else is a page name. */
const SAFE_SCHEME = /^(?:https?|mailto|ftp):/i
const IMAGE_EXT = /\.(?:png|jpe?g|gif|webp|svg|bmp|ico)$/i

const slugOf = (html: string) =>
  html
    .toLowerCase()
    .trim()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s+/g, '-')

/**
 * `#123` (not after a letter, digit, `_`, `&`, `/` or `#`), `@name` (Gitea's user names: at most
 * 40 characters, so the match is bounded) and `[[...]]` (no `[` inside, so a failed match stops at
 * the next `[`: no rescanning).
 */
const REFERENCES = /(?<![\p{L}\p{N}_&/#])#(\d+)(?![\p{L}\p{N}_])|(?<![\p{L}\p{N}_.@/])@([A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,38}[A-Za-z0-9_])?)(?![A-Za-z0-9_@-])|\[\[([^[\]\n|]+(?:\|[^[\]\n|]+)*)\]\]/gu

function shortLink(inner: string, plan: LinkPlan): string | undefined {
  const parts = unescape(inner).split('|').map((p) => p.trim())
  const link = parts.at(-1)!
  const name = parts[0]!
  if (!link) return undefined
  const absolute = SAFE_SCHEME.test(link)
  if (IMAGE_EXT.test(link)) {
    const src = escapeAttr(absolute ? link : plan.imagePrefix + encodeURI(link.replace(/ /g, '+')))
    const title = escapeAttr(link.split('/').at(-1)!)
    return `<a href="${src}" rel="nofollow"><img src="${src}" alt="${escapeAttr(name)}" title="${title}" /></a>`
  }
  const href = absolute ? link : plan.pagePrefix + encodeURI(link.replace(/ /g, '-'))
  return `<a href="${escapeAttr(href)}" rel="nofollow">${escapeAttr(name)}</a>`
}

/** Text outside links and code, with its references linked. */
function linkText(text: string, plan: LinkPlan): string {
  return text.replace(REFERENCES, (whole, issue?: string, name?: string, short?: string) => {
    if (issue !== undefined)
      return plan.context ? `<a href="${escapeAttr(`${plan.context}/issues/${issue}`)}" class="ref-issue">#${issue}</a>` : whole
    if (name !== undefined) return `<a href="${escapeAttr(plan.baseUrl + encodeURIComponent(name))}" class="mention">@${name}</a>`
    return (plan.context && shortLink(short!, plan)) || whole
  })
}

/** A relative `href`/`src` resolved under `prefix` (anchors, queries and rooted paths stay). */
function resolveAttr(tag: string, attr: 'href' | 'src', prefix: string): string {
  return tag.replace(new RegExp(` ${attr}="([^"]*)"`), (whole, value: string) => {
    const url = unescape(value)
    if (!url || hasScheme(url) || /^[#/?]/.test(url)) return whole
    return ` ${attr}="${escapeAttr(prefix + url.replace(/^\.\//, ''))}"`
  })
}

/** Adds heading ids, resolves links and links references in sanitised HTML (see the file's comment). */
export function postProcess(html: string, plan?: LinkPlan): string {
  const out: string[] = []
  const seen = new Map<string, number>()
  /** Open `<a>`, `<code>` and `<pre>` elements: no references are linked inside them. */
  let verbatim = 0
  /** The outermost open heading: where its start tag is in `out`, and its level. */
  let heading: { at: number; level: string } | undefined
  let headingDepth = 0
  let i = 0
  while (i < html.length) {
    const lt = html.indexOf('<', i)
    const textEnd = lt < 0 ? html.length : lt
    if (textEnd > i) {
      const text = html.slice(i, textEnd)
      out.push(plan && verbatim === 0 ? linkText(text, plan) : text)
    }
    if (lt < 0) break
    const gt = html.indexOf('>', lt)
    const end = gt < 0 ? html.length : gt + 1
    let tag = html.slice(lt, end)
    i = end
    const m = /^<(\/?)([a-z][a-z0-9]*)/.exec(tag)
    const name = m?.[2]
    if (!m || !name) {
      out.push(tag)
      continue
    }
    const closing = m[1] === '/'
    if (name === 'a' || name === 'code' || name === 'pre') verbatim = Math.max(0, verbatim + (closing ? -1 : 1))
    if (!closing && plan?.pagePrefix && name === 'a') tag = resolveAttr(tag, 'href', plan.pagePrefix)
    if (!closing && plan?.imagePrefix && name === 'img') tag = resolveAttr(tag, 'src', plan.imagePrefix)
    if (/^h[1-6]$/.test(name)) {
      if (!closing) {
        if (headingDepth++ === 0 && !/ id="/.test(tag)) heading = { at: out.length, level: name }
      } else if (headingDepth > 0 && --headingDepth === 0 && heading) {
        let slug = slugOf(out.slice(heading.at + 1).join('')) || 'section'
        const n = seen.get(slug) ?? 0
        seen.set(slug, n + 1)
        if (n > 0) slug = `${slug}-${n}`
        out[heading.at] = out[heading.at]!.replace(/^<h[1-6]/, `$& id="user-content-${escapeAttr(slug)}"`)
        heading = undefined
      }
    }
    out.push(tag)
  }
  return out.join('')
}
