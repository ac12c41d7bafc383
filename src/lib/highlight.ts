import type { HLJSApi } from 'highlight.js'
import { escapeHtml } from './html'

/**
 * Syntax highlighting on the server (highlight.js: maintained, synchronous, no browser needed).
 * The language comes from the file's name only (never guessed from the text: guessing runs every
 * grammar). highlight.js's grammars are regular expressions whose time grows faster than the text
 * on hostile input, so highlightLines with a language runs only in the render pool's workers
 * (modules/markdown: `highlightCode`, under the markdown time budget) and only for files within
 * WARREN_WEB_MAX_HIGHLIGHT; past either, or for an unknown language, lines are escaped as plain
 * text, which is linear.
 */

let loaded: HLJSApi | undefined
/**
 * highlight.js, loaded when first needed (a synchronous require, evaluated then and not at start:
 * its grammars are a large share of the server's start-up time and memory, which a server showing
 * no source file never needs).
 */
function hljs(): HLJSApi {
  if (!loaded) {
    const mod = require('highlight.js/lib/common')
    loaded = (mod.default ?? mod) as HLJSApi
  }
  return loaded
}

const BY_EXTENSION: Record<string, string> = {
  ts: 'typescript', tsx: 'typescript', mts: 'typescript', cts: 'typescript', js: 'javascript', jsx: 'javascript', mjs: 'javascript', cjs: 'javascript',
  json: 'json', md: 'markdown', markdown: 'markdown', py: 'python', rb: 'ruby', go: 'go', rs: 'rust', java: 'java', kt: 'kotlin', kts: 'kotlin',
  c: 'c', h: 'c', cc: 'cpp', cpp: 'cpp', cxx: 'cpp', hpp: 'cpp', cs: 'csharp', php: 'php', sh: 'bash', bash: 'bash', zsh: 'bash',
  yml: 'yaml', yaml: 'yaml', toml: 'ini', ini: 'ini', xml: 'xml', html: 'xml', htm: 'xml', svg: 'xml', css: 'css', scss: 'scss', less: 'less',
  sql: 'sql', swift: 'swift', lua: 'lua', pl: 'perl', r: 'r', diff: 'diff', patch: 'diff', mk: 'makefile',
}
const BY_NAME: Record<string, string> = { makefile: 'makefile', dockerfile: 'dockerfile', gemfile: 'ruby', rakefile: 'ruby' }

/** The highlight.js language of a file name, if any. */
export function languageOf(name: string): string | undefined {
  const lower = name.toLowerCase()
  const byName = BY_NAME[lower]
  if (byName) return hljs().getLanguage(byName) ? byName : undefined
  const dot = lower.lastIndexOf('.')
  const lang = dot >= 0 ? BY_EXTENSION[lower.slice(dot + 1)] : undefined
  return lang && hljs().getLanguage(lang) ? lang : undefined
}

/**
 * The text as one HTML fragment per line: highlighted when `language` is given, else escaped.
 * A span that runs over a line end (a block comment) is closed at the end of the line and opened
 * again on the next, so that each line stands alone in its table row.
 */
export function highlightLines(text: string, language: string | undefined): string[] {
  const lines = text.split('\n')
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop()
  if (!language) return lines.map(escapeHtml)
  const html = hljs().highlight(lines.join('\n'), { language, ignoreIllegals: true }).value
  const out: string[] = []
  const open: string[] = []
  let line = ''
  const tag = /<span class="[^"]*">|<\/span>|\n/g
  let at = 0
  for (let m = tag.exec(html); m; m = tag.exec(html)) {
    line += html.slice(at, m.index)
    at = m.index + m[0].length
    if (m[0] === '\n') {
      out.push(line + '</span>'.repeat(open.length))
      line = open.join('')
    } else if (m[0] === '</span>') {
      open.pop()
      line += m[0]
    } else {
      open.push(m[0])
      line += m[0]
    }
  }
  out.push(line + html.slice(at))
  return out
}
