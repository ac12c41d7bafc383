import type { HLJSApi } from 'highlight.js'
import { escapeText } from './html'

/**
 * Syntax highlighting on the server (highlight.js: maintained, synchronous, no browser needed).
 * The language comes from the file's name only (lib/code-language.ts, a table that needs no
 * highlight.js: the main thread never loads it). This module does not import highlight.js either
 * (the main thread imports it for TOKEN_TAGS and plain lines): the engine is passed in by the
 * render worker, which loads it from lib/highlight-engine.ts. highlight.js's grammars are regular
 * expressions whose time grows faster than the text on hostile input, so highlightLines with a language runs only in the render pool's workers
 * (modules/markdown: `highlightCode`, under the markdown time budget) and only for files within
 * WARREN_WEB_MAX_HIGHLIGHT; past either, or for an unknown language, lines are escaped as plain
 * text, which is linear.
 */

/**
 * The colours code is drawn in, and the element each is marked with. A file view of 2,000 lines
 * carries some 10,000 tokens: `<span class="hljs-keyword">…</span>` cost 33 bytes a token, so each
 * colour is one of the shortest inline elements instead (7 bytes for `<b>…</b>`), the most
 * frequent colours the shortest. They carry no meaning a reader would hear (b, i, u, q and kbd are
 * plain text to assistive technology, em an emphasis screen readers leave unsaid); the stylesheet (web/style.ts) resets their default looks and
 * gives each its colour.
 */
export const TOKEN_TAGS = { keyword: 'b', string: 'q', number: 'u', title: 'i', comment: 'em', meta: 'kbd' } as const
export type TokenColour = keyof typeof TOKEN_TAGS

/** highlight.js's scopes (its class names less `hljs-`) by the colour they are drawn in; the others are plain text. */
const COLOUR_OF_SCOPE: Record<string, TokenColour> = {
  keyword: 'keyword', 'selector-tag': 'keyword', type: 'keyword',
  string: 'string', attr: 'string', regexp: 'string',
  number: 'number', literal: 'number', built_in: 'number',
  comment: 'comment', quote: 'comment',
  title: 'title', section: 'title', function: 'title',
  meta: 'meta', symbol: 'meta',
}

/**
 * The colour of a scope opened inside `open` (the scopes already open). highlight.js takes a
 * parameter's name in a typed parameter list (`(value: number)`) for an object's key (`attr`):
 * inside `params` it is drawn plainly, as a name.
 */
function colourOf(scope: string, open: string[]): TokenColour | undefined {
  if (scope === 'attr' && open.includes('params')) return undefined
  return COLOUR_OF_SCOPE[scope]
}

/** Text as highlight.js escapes it, escaped for element content only (its quotes back as they were). */
const asContent = (escaped: string) => escaped.replace(/&quot;|&#x27;/g, (e) => (e === '&quot;' ? '"' : "'"))

/**
 * The text as one HTML fragment per line: highlighted by `hljs` (highlight.js, lib/highlight-engine.ts)
 * when `language` and the engine are given, else escaped.
 * highlight.js's nested spans are flattened: each piece of text takes the colour of the outermost
 * coloured scope around it, pieces of one colour in a row (and the blanks between them) share one
 * element, and every line opens and closes its own elements, so that each line stands alone.
 */
export function highlightLines(text: string, language: string | undefined, hljs?: Pick<HLJSApi, 'highlight'>): string[] {
  const lines = text.split('\n')
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop()
  if (!language || !hljs) return lines.map(escapeText)
  const html = hljs.highlight(lines.join('\n'), { language, ignoreIllegals: true }).value
  const out: string[] = []
  /** The scopes open, and the colour of each (undefined: drawn plainly). */
  const scopes: string[] = []
  const open: (TokenColour | undefined)[] = []
  let line = ''
  /** The colour of the element open at the end of `line`, and blanks after it not yet written. */
  let current: TokenColour | undefined
  let blanks = ''
  const close = () => {
    if (current) line += `</${TOKEN_TAGS[current]}>`
    current = undefined
  }
  const write = (piece: string) => {
    if (!piece) return
    const colour = open.find((c) => c !== undefined)
    if (colour === undefined && /^[ \t]+$/.test(piece)) {
      blanks += piece
      return
    }
    if (colour !== current) {
      close()
      line += blanks
      if (colour) line += `<${TOKEN_TAGS[colour]}>`
      current = colour
    } else line += blanks
    blanks = ''
    line += asContent(piece)
  }
  const endLine = () => {
    close()
    out.push(line + blanks)
    line = ''
    blanks = ''
  }
  const tag = /<span class="([^"]*)">|<\/span>|\n/g
  let at = 0
  for (let m = tag.exec(html); m; m = tag.exec(html)) {
    write(html.slice(at, m.index))
    at = m.index + m[0].length
    if (m[0] === '\n') endLine()
    else if (m[0] === '</span>') {
      scopes.pop()
      open.pop()
    } else {
      const scope = m[1]!.split(' ', 1)[0]!.replace(/^hljs-/, '')
      open.push(colourOf(scope, scopes))
      scopes.push(scope)
    }
  }
  write(html.slice(at))
  endLine()
  return out
}
