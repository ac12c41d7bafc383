import { Marked, type Tokens, type TokenizerAndRendererExtension } from 'marked'
import sanitizeHtml from 'sanitize-html'

/** What rendering needs of the configuration (plain data: it is posted to the render worker). */
export interface RenderConfig {
  baseUrl: string
}

export interface RenderOptions {
  /** `gfm` resolves `#123`, `@user` and relative links against `context`; anything else renders plainly. */
  mode?: string
  /** `owner/repo` (joined to `{base}`) or an absolute URL. */
  context?: string
  /** Relative links point into the wiki (`{context}/wiki/...`). */
  wiki?: boolean
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const WORD_END = /[\p{L}\p{N}_]$/u

/** Whether the token before the current position ends in a letter or digit (`a#1` is no reference). */
const afterWord = (tokens: { type: string; raw: string }[]) => {
  const last = tokens.at(-1)
  return last !== undefined && WORD_END.test(last.raw)
}

/** `#123` → a link to `{contextUrl}/issues/123` (not inside links; code is tokenized apart). */
function issueReference(contextUrl: string): TokenizerAndRendererExtension {
  return {
    name: 'issueRef',
    level: 'inline',
    start: (src: string) => src.match(/(?:^|[^\p{L}\p{N}_&/#])(#\d)/u)?.index,
    tokenizer(this: any, src: string, tokens: any[]) {
      if (this.lexer.state.inLink || afterWord(tokens)) return undefined
      const m = /^#(\d+)(?![\p{L}\p{N}_])/u.exec(src)
      return m ? { type: 'issueRef', raw: m[0], index: m[1] } : undefined
    },
    renderer: (token: any) => `<a href="${escapeAttr(`${contextUrl}/issues/${token.index}`)}" class="ref-issue">#${token.index}</a>`,
  }
}

/** `@name` → a link to `{base}name`. */
function mention(baseUrl: string): TokenizerAndRendererExtension {
  return {
    name: 'mention',
    level: 'inline',
    start: (src: string) => src.match(/(?:^|[^\p{L}\p{N}_.@/])(@[A-Za-z0-9_])/u)?.index,
    tokenizer(this: any, src: string, tokens: any[]) {
      if (this.lexer.state.inLink || afterWord(tokens)) return undefined
      const m = /^@([A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)(?![A-Za-z0-9_@-])/.exec(src)
      return m ? { type: 'mention', raw: m[0], name: m[1] } : undefined
    },
    renderer: (token: any) => `<a href="${escapeAttr(baseUrl + encodeURIComponent(token.name))}" class="mention">@${token.name}</a>`,
  }
}

const IMAGE_EXT = /\.(?:png|jpe?g|gif|webp|svg|bmp|ico)$/i

/**
 * Gitea's short links `[[Link]]` / `[[Name|Link]]` (gfm mode with a context): a page link, spaces
 * as `-`, under `pagePrefix`; a name ending in an image extension becomes an image (under
 * `imagePrefix`) wrapped in a link to itself. Absolute URLs are kept as they are.
 */
function shortLink(pagePrefix: string, imagePrefix: string): TokenizerAndRendererExtension {
  return {
    name: 'shortLink',
    level: 'inline',
    start: (src: string) => src.indexOf('[['),
    tokenizer(this: any, src: string) {
      if (this.lexer.state.inLink) return undefined
      const m = /^\[\[([^\]\n|]+(?:\|[^\]\n|]+)*)\]\]/.exec(src)
      if (!m) return undefined
      const parts = m[1]!.split('|').map((p) => p.trim())
      const link = parts.at(-1)!
      if (!link) return undefined
      return { type: 'shortLink', raw: m[0], name: parts[0]!, link }
    },
    renderer: (token: any) => {
      const { name, link } = token as { name: string; link: string }
      const absolute = hasScheme(link)
      if (IMAGE_EXT.test(link)) {
        const src = escapeAttr(absolute ? link : imagePrefix + encodeURI(link.replace(/ /g, '+')))
        const title = escapeAttr(link.split('/').at(-1)!)
        return `<a href="${src}" rel="nofollow"><img src="${src}" alt="${escapeAttr(name)}" title="${title}"/></a>`
      }
      const href = absolute ? link : pagePrefix + encodeURI(link.replace(/ /g, '-'))
      return `<a href="${escapeAttr(href)}" rel="nofollow">${escapeAttr(name)}</a>`
    },
  }
}

const slugOf = (text: string) =>
  text
    .toLowerCase()
    .trim()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s+/g, '-')

const hasScheme = (href: string) => /^[a-z][a-z0-9+.-]*:/i.test(href)

/** Where `context` points: itself when it is a URL, else joined to `{base}`; no trailing slash. */
export function contextUrl(config: RenderConfig, context: string): string {
  const trimmed = context.trim()
  if (/^https?:\/\//i.test(trimmed)) return trimmed.replace(/\/+$/, '')
  return (config.baseUrl + trimmed.replace(/^\/+/, '')).replace(/\/+$/, '')
}

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
    'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'br', 'hr', 'blockquote', 'pre', 'code', 'kbd', 'samp', 'var',
    'em', 'strong', 'b', 'i', 'u', 's', 'del', 'ins', 'mark', 'sub', 'sup', 'small', 'abbr', 'q', 'cite', 'dfn',
    'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'a', 'img', 'input', 'table', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td',
    'caption', 'colgroup', 'col', 'details', 'summary', 'div', 'span', 'figure', 'figcaption', 'picture', 'ruby', 'rt', 'rp',
  ],
  allowedAttributes: {
    a: ['href', 'title', 'name', 'id', 'class', 'rel'],
    img: ['src', 'alt', 'title', 'width', 'height', 'align'],
    input: ['type', 'checked', 'disabled'],
    code: ['class'],
    th: ['align', 'colspan', 'rowspan'],
    td: ['align', 'colspan', 'rowspan'],
    ol: ['start', 'type'],
    li: ['value'],
    details: ['open'],
    h1: ['id'], h2: ['id'], h3: ['id'], h4: ['id'], h5: ['id'], h6: ['id'],
    div: ['align'], p: ['align'], abbr: ['title'], q: ['cite'], col: ['span'], colgroup: ['span'],
  },
  allowedClasses: { a: ['ref-issue', 'mention'], code: [/^language-[\w+#.-]+$/] as any },
  allowedSchemes: ['http', 'https', 'mailto', 'ftp'],
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite'],
  allowProtocolRelative: true,
  // Only task-list checkboxes survive, and they stay read-only.
  exclusiveFilter: (frame) => frame.tag === 'input' && frame.attribs.type !== 'checkbox',
  transformTags: {
    input: (tagName, attribs) => ({ tagName, attribs: { ...attribs, disabled: '' } }),
  },
}

/**
 * Renders markdown to sanitised HTML, as POST /markdown and /markdown/raw answer it. Synchronous
 * and not linear for every input (marked): the routes run it in the render pool (service.ts).
 */
export function renderMarkdown(config: RenderConfig, text: string, opts: RenderOptions = {}): string {
  if (!text) return ''
  const marked = new Marked({ gfm: true, async: false })
  const seen = new Map<string, number>()
  marked.use({
    renderer: {
      heading(this: any, { tokens, depth }: Tokens.Heading) {
        const inner: string = this.parser.parseInline(tokens)
        let slug = slugOf(inner) || 'section'
        const n = seen.get(slug) ?? 0
        seen.set(slug, n + 1)
        if (n > 0) slug = `${slug}-${n}`
        return `<h${depth} id="user-content-${escapeAttr(slug)}">${inner}</h${depth}>\n`
      },
    },
  })
  if (opts.mode === 'gfm') {
    const extensions = [mention(config.baseUrl)]
    const base = opts.context?.trim() ? contextUrl(config, opts.context) : ''
    if (base) {
      extensions.unshift(issueReference(base))
      const prefix = opts.wiki ? `${base}/wiki/` : `${base}/src/branch/master/`
      extensions.unshift(shortLink(prefix, opts.wiki ? `${base}/wiki/raw/` : `${base}/raw/branch/master/`))
      marked.use({
        walkTokens(token) {
          if ((token.type === 'link' || token.type === 'image') && token.href && !hasScheme(token.href) && !/^[#/?]/.test(token.href))
            token.href = (token.type === 'image' && !opts.wiki ? `${base}/raw/branch/master/` : prefix) + token.href.replace(/^\.\//, '')
        },
      })
    }
    marked.use({ extensions })
  }
  const html = marked.parse(text) as string
  return sanitizeHtml(html, SANITIZE)
}
