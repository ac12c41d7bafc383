/**
 * .editorconfig reading: sections whose glob matches a file (`*`, `**`, `?`, `[...]`, `[!...]`,
 * `{a,b}`, `{1..3}`), later sections overriding earlier ones, and the specification's derived
 * values (indent_size/tab_width). Only the properties Gitea reports are kept.
 */
export interface EditorConfigDefinition {
  charset?: string
  indent_style?: string
  indent_size?: string
  tab_width?: number
  end_of_line?: string
  trim_trailing_whitespace?: boolean
  insert_final_newline?: boolean
}

interface Section {
  glob: string
  props: Map<string, string>
}

function parseEditorConfig(text: string): Section[] {
  const sections: Section[] = []
  let current: Section | null = null
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
    const header = /^\[(.*)\]$/.exec(line)
    if (header) {
      current = { glob: header[1]!, props: new Map() }
      sections.push(current)
      continue
    }
    const eq = line.search(/[=:]/)
    if (eq <= 0 || !current) continue
    const key = line.slice(0, eq).trim().toLowerCase()
    const value = line.slice(eq + 1).trim().replace(/\s+[#;].*$/, '')
    current.props.set(key, value)
  }
  return sections
}

const escapeRe = (s: string) => s.replace(/[.+^$()|{}[\]\\/*?]/g, '\\$&')

/** An editorconfig glob as a regular expression source (without anchors). */
function globToRegex(glob: string): string {
  let out = ''
  let i = 0
  while (i < glob.length) {
    const c = glob[i]!
    if (c === '\\' && i + 1 < glob.length) {
      out += escapeRe(glob[i + 1]!)
      i += 2
      continue
    }
    if (c === '*') {
      if (glob[i + 1] === '*') {
        out += '.*'
        i += 2
      } else {
        out += '[^/]*'
        i++
      }
      continue
    }
    if (c === '?') {
      out += '[^/]'
      i++
      continue
    }
    if (c === '[') {
      const close = glob.indexOf(']', i + 1)
      if (close > i + 1) {
        let body = glob.slice(i + 1, close)
        const negate = body.startsWith('!') || body.startsWith('^')
        if (negate) body = body.slice(1)
        out += (negate ? '[^' : '[') + body.replace(/[\\\]]/g, '\\$&') + ']'
        i = close + 1
        continue
      }
      out += '\\['
      i++
      continue
    }
    if (c === '{') {
      const close = matchingBrace(glob, i)
      if (close < 0) {
        out += '\\{'
        i++
        continue
      }
      const inner = glob.slice(i + 1, close)
      const range = /^(-?\d+)\.\.(-?\d+)$/.exec(inner)
      if (range) {
        const [a, b] = [Number(range[1]), Number(range[2])]
        const nums: string[] = []
        for (let n = Math.min(a, b); n <= Math.max(a, b) && nums.length < 10000; n++) nums.push(String(n))
        out += `(?:${nums.join('|')})`
      } else if (!hasTopLevelComma(inner)) {
        out += '\\{' + globToRegex(inner) + '\\}'
      } else {
        out += '(?:' + splitTopLevel(inner).map(globToRegex).join('|') + ')'
      }
      i = close + 1
      continue
    }
    out += escapeRe(c)
    i++
  }
  return out
}

function matchingBrace(s: string, open: number): number {
  let depth = 0
  for (let i = open; i < s.length; i++) {
    if (s[i] === '\\') i++
    else if (s[i] === '{') depth++
    else if (s[i] === '}' && --depth === 0) return i
  }
  return -1
}

function splitTopLevel(s: string): string[] {
  const parts: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') i++
    else if (s[i] === '{') depth++
    else if (s[i] === '}') depth--
    else if (s[i] === ',' && depth === 0) {
      parts.push(s.slice(start, i))
      start = i + 1
    }
  }
  parts.push(s.slice(start))
  return parts
}

const hasTopLevelComma = (s: string) => splitTopLevel(s).length > 1

/** Whether a section glob applies to `path` (relative to the repository root, no leading '/'). */
function globMatches(glob: string, path: string): boolean {
  let g = glob
  let prefix: string
  if (g.includes('/')) {
    g = g.replace(/^\//, '')
    prefix = '^'
  } else prefix = '^(?:.*/)?'
  try {
    return new RegExp(prefix + globToRegex(g) + '$').test(path)
  } catch {
    return false
  }
}

/** The definition for `path`, or null when no section matches. */
export function definitionFor(text: string, path: string): EditorConfigDefinition | null {
  const props = new Map<string, string>()
  let matched = false
  for (const s of parseEditorConfig(text)) {
    if (!globMatches(s.glob, path)) continue
    matched = true
    for (const [k, v] of s.props) props.set(k, v)
  }
  if (!matched) return null
  const value = (k: string) => {
    const v = props.get(k)?.toLowerCase()
    return v === undefined || v === '' || v === 'unset' ? undefined : v
  }
  const def: EditorConfigDefinition = {}
  const charset = value('charset')
  const indentStyle = value('indent_style')
  let indentSize = value('indent_size')
  const tabWidthText = value('tab_width')
  let tabWidth = tabWidthText !== undefined && /^\d+$/.test(tabWidthText) ? Number(tabWidthText) : undefined
  if (indentStyle === 'tab' && indentSize === undefined) indentSize = 'tab'
  if (indentSize !== undefined && /^\d+$/.test(indentSize) && tabWidth === undefined) tabWidth = Number(indentSize)
  if (indentSize === 'tab' && tabWidth !== undefined) indentSize = String(tabWidth)
  const eol = value('end_of_line')
  const trim = value('trim_trailing_whitespace')
  const finalNewline = value('insert_final_newline')
  if (charset) def.charset = charset
  if (indentStyle) def.indent_style = indentStyle
  if (indentSize) def.indent_size = indentSize
  if (tabWidth) def.tab_width = tabWidth
  if (eol) def.end_of_line = eol
  if (trim === 'true') def.trim_trailing_whitespace = true
  if (finalNewline === 'true') def.insert_final_newline = true
  return def
}
