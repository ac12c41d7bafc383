import { unprocessable } from '../../lib/errors'

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
      if (sections.length >= MAX_SECTIONS) break
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

/** Bounds of what is read from an .editorconfig (larger files, globs and section lists are refused or cut). */
export const MAX_EDITORCONFIG_BYTES = 64 * 1024
export const MAX_GLOB_LENGTH = 1024
export const MAX_SECTIONS = 1000
/** Longest number a `{a..b}` range reads. */
const MAX_RANGE_DIGITS = 20

/**
 * A compiled glob: a Thompson NFA. Each node either consumes one character (`test`), a number of a
 * range (`range`), or nothing (`split`, `match`); matching simulates every live node at once, so
 * its cost is O(path length × glob length) whatever the glob (no backtracking).
 */
type GlobNode =
  | { kind: 'char'; test: (c: string) => boolean; out: number }
  | { kind: 'range'; lo: number; hi: number; out: number }
  | { kind: 'split'; outs: number[] }
  | { kind: 'match' }

interface Glob {
  nodes: GlobNode[]
  start: number
}

const notSlash = (c: string) => c !== '/'
const anyChar = () => true

/** Compiles `glob` (no anchors: it must match the whole path). */
function compileGlob(glob: string): Glob {
  const nodes: GlobNode[] = [{ kind: 'match' }]
  const add = (node: GlobNode) => nodes.push(node) - 1
  /** Builds `pattern` so that it continues at node `next`; returns its first node. */
  const build = (pattern: string, next: number): number => {
    // Built back to front: every piece knows what follows it.
    const pieces: ((next: number) => number)[] = []
    let i = 0
    while (i < pattern.length) {
      const c = pattern[i]!
      if (c === '\\' && i + 1 < pattern.length) {
        pieces.push(literal(pattern[i + 1]!))
        i += 2
      } else if (c === '*') {
        const double = pattern[i + 1] === '*'
        const test = double ? anyChar : notSlash
        pieces.push((out) => {
          const loop = add({ kind: 'split', outs: [] })
          const step = add({ kind: 'char', test, out: loop })
          ;(nodes[loop] as { outs: number[] }).outs.push(step, out)
          return loop
        })
        i += double ? 2 : 1
        while (pattern[i] === '*') i++
      } else if (c === '?') {
        pieces.push((out) => add({ kind: 'char', test: notSlash, out }))
        i++
      } else if (c === '[') {
        const close = pattern.indexOf(']', i + 1)
        if (close > i + 1) {
          let body = pattern.slice(i + 1, close)
          const negate = body.startsWith('!') || body.startsWith('^')
          if (negate) body = body.slice(1)
          const set = classSet(body)
          const test = negate ? (ch: string) => ch !== '/' && !set.has(ch) : (ch: string) => set.has(ch)
          pieces.push((out) => add({ kind: 'char', test, out }))
          i = close + 1
        } else {
          pieces.push(literal('['))
          i++
        }
      } else if (c === '{') {
        const close = matchingBrace(pattern, i)
        if (close < 0) {
          pieces.push(literal('{'))
          i++
          continue
        }
        const inner = pattern.slice(i + 1, close)
        const range = /^(-?\d{1,18})\.\.(-?\d{1,18})$/.exec(inner)
        if (range) {
          const [a, b] = [Number(range[1]), Number(range[2])]
          pieces.push((out) => add({ kind: 'range', lo: Math.min(a, b), hi: Math.max(a, b), out }))
        } else {
          const parts = splitTopLevel(inner)
          if (parts.length === 1) pieces.push(literal('{'), (out) => build(inner, out), literal('}'))
          else pieces.push((out) => add({ kind: 'split', outs: parts.map((part) => build(part, out)) }))
        }
        i = close + 1
      } else {
        pieces.push(literal(c))
        i++
      }
    }
    let first = next
    for (let k = pieces.length - 1; k >= 0; k--) first = pieces[k]!(first)
    return first
  }
  const literal = (ch: string) => (out: number) => add({ kind: 'char', test: (c) => c === ch, out })
  const start = build(glob, 0)
  return { nodes, start }
}

/** The characters of a `[...]` body, with `a-z` ranges (at most a few thousand characters). */
function classSet(body: string): Set<string> {
  const set = new Set<string>()
  const chars = [...body]
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!
    if (chars[i + 1] === '-' && i + 2 < chars.length) {
      const [lo, hi] = [c.codePointAt(0)!, chars[i + 2]!.codePointAt(0)!]
      for (let p = lo; p <= hi && p - lo < 4096; p++) set.add(String.fromCodePoint(p))
      i += 2
    } else set.add(c)
  }
  return set
}

/**
 * Node visits one request may spend matching globs (a few milliseconds); an .editorconfig that
 * needs more is refused rather than allowed to hold the server.
 */
export const GLOB_STEP_BUDGET = 1_000_000

/** What a whole .editorconfig lookup may still spend, shared by its sections. */
export interface Budget {
  steps: number
}

/** Whether `glob` matches the whole of `text`: an NFA simulation, O(text × glob), within `budget`. */
function runGlob(glob: Glob, text: string, budget: Budget): boolean {
  const { nodes } = glob
  // Nodes live at each position of the text; a range jumps ahead over a number.
  const at: (number[] | undefined)[] = new Array(text.length + 1)
  at[0] = [glob.start]
  const seenAt = new Int32Array(nodes.length).fill(-1)
  const stack: number[] = []
  for (let pos = 0; pos <= text.length; pos++) {
    const seeds = at[pos]
    if (!seeds) continue
    at[pos] = undefined
    const ch = text[pos]
    const ahead = (to: number, id: number) => (at[to] ??= []).push(id)
    stack.push(...seeds)
    while (stack.length > 0) {
      const id = stack.pop()!
      if (seenAt[id] === pos) continue
      seenAt[id] = pos
      if (--budget.steps < 0) throw unprocessable('The .editorconfig globs are too complex to match')
      const node = nodes[id]!
      if (node.kind === 'split') stack.push(...node.outs)
      else if (node.kind === 'match') {
        if (pos === text.length) return true
      } else if (node.kind === 'char') {
        if (ch !== undefined && node.test(ch)) ahead(pos + 1, node.out)
      } else {
        // Every canonical integer that starts here and lies in the range.
        let end = pos + (ch === '-' ? 1 : 0)
        const digitsFrom = end
        while (end < text.length && end - digitsFrom < MAX_RANGE_DIGITS && text[end]! >= '0' && text[end]! <= '9') {
          end++
          const s = text.slice(pos, end)
          const n = Number(s)
          if (String(n) === s && n >= node.lo && n <= node.hi) ahead(end, node.out)
        }
      }
    }
  }
  return false
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

/**
 * Whether a section glob applies to `path` (relative to the repository root, no leading '/'):
 * a glob with a '/' is anchored at the root, one without matches in any folder. Globs longer
 * than MAX_GLOB_LENGTH match nothing.
 */
function globMatches(glob: string, path: string, budget: Budget): boolean {
  if (glob.length > MAX_GLOB_LENGTH) return false
  const anchored = glob.includes('/')
  return runGlob(compileGlob(anchored ? glob.replace(/^\//, '') : `{**/,}${glob}`), path, budget)
}

/**
 * The definition for `path`, or null when no section matches. Throws a 422 when matching would
 * take more than the budget's steps (GLOB_STEP_BUDGET unless one is given: what is left of it
 * afterwards tells the work done).
 */
export function definitionFor(text: string, path: string, budget: Budget = { steps: GLOB_STEP_BUDGET }): EditorConfigDefinition | null {
  const props = new Map<string, string>()
  let matched = false
  for (const s of parseEditorConfig(text)) {
    if (!globMatches(s.glob, path, budget)) continue
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
