/**
 * Branch filters (Gitea's `branch_filter`, a gobwas/glob pattern without separators): `*` (and
 * `**`) any run of characters, `?` one character, `[abc]`, `[a-z]`, `[!a-z]` one character of (or
 * not of) a set, `{a,b,c}` one of the alternatives (nestable), `\x` the character x. Empty or `*`:
 * every branch.
 *
 * Matching never backtracks: the pattern becomes a small automaton (one state per pattern
 * element) whose set of live states advances one character at a time, so a match costs at most
 * pattern length × name length steps whatever the pattern.
 */

export const MAX_BRANCH_FILTER = 1024
const MAX_NESTING = 16

type Test = (ch: string) => boolean
/** A state: consumes one character passing `test` then goes to `out`, or branches for free to `eps`, or accepts. */
type State = { test: Test; out: number } | { eps: number[] } | { match: true }

type Node =
  | { kind: 'test'; test: Test }
  | { kind: 'star'; any: boolean }
  | { kind: 'alt'; options: Node[][] }

export class GlobError extends Error {}

function parse(pattern: string, separators: string): Node[] {
  let i = 0
  const classAt = (): Test => {
    // i is just past '['
    let negate = false
    if (pattern[i] === '!') {
      negate = true
      i++
    }
    const ranges: [string, string][] = []
    let first = true
    for (;;) {
      if (i >= pattern.length) throw new GlobError('unclosed character class "["')
      let ch = pattern[i]!
      if (ch === ']' && !first) break
      if (ch === '\\') {
        if (++i >= pattern.length) throw new GlobError('pattern ends with "\\"')
        ch = pattern[i]!
      }
      i++
      let hi = ch
      if (pattern[i] === '-' && i + 1 < pattern.length && pattern[i + 1] !== ']') {
        hi = pattern[i + 1]!
        i += 2
        if (hi < ch) throw new GlobError(`invalid range "${ch}-${hi}"`)
      }
      ranges.push([ch, hi])
      first = false
    }
    i++ // ']'
    return (c) => ranges.some(([lo, hi]) => c >= lo && c <= hi) !== negate
  }
  const sequence = (depth: number, inAlt: boolean): Node[] => {
    if (depth > MAX_NESTING) throw new GlobError(`alternatives nested deeper than ${MAX_NESTING}`)
    const nodes: Node[] = []
    while (i < pattern.length) {
      const ch = pattern[i]!
      if (inAlt && (ch === ',' || ch === '}')) return nodes
      i++
      if (ch === '*') {
        // With separators (gobwas's glob.Compile(p, seps...)): `*` stops at them, `**` does not.
        const any = !separators || pattern[i] === '*'
        while (pattern[i] === '*') i++
        const last = nodes.at(-1)
        if (last?.kind === 'star') last.any ||= any
        else nodes.push({ kind: 'star', any })
      } else if (ch === '?') nodes.push({ kind: 'test', test: () => true })
      else if (ch === '[') nodes.push({ kind: 'test', test: classAt() })
      else if (ch === '{') {
        const options: Node[][] = []
        for (;;) {
          options.push(sequence(depth + 1, true))
          if (i >= pattern.length) throw new GlobError('unclosed alternatives "{"')
          if (pattern[i++] === '}') break
        }
        nodes.push({ kind: 'alt', options })
      } else if (ch === '\\') {
        if (i >= pattern.length) throw new GlobError('pattern ends with "\\"')
        const lit = pattern[i++]!
        nodes.push({ kind: 'test', test: (c) => c === lit })
      } else nodes.push({ kind: 'test', test: (c) => c === ch })
    }
    return nodes
  }
  const nodes = sequence(0, false)
  return nodes
}

/** Builds the states of `nodes` leading to `next`; answers the first state. */
function build(states: State[], nodes: Node[], next: number, seps: string): number {
  let at = next
  for (let k = nodes.length - 1; k >= 0; k--) {
    const node = nodes[k]!
    if (node.kind === 'test') {
      states.push({ test: node.test, out: at })
      at = states.length - 1
    } else if (node.kind === 'star') {
      // split → (any char → split) | next
      const split = states.length
      states.push({ eps: [] })
      const any = node.any
      states.push({ test: any ? () => true : (c) => !seps.includes(c), out: split })
      ;(states[split] as { eps: number[] }).eps.push(split + 1, at)
      at = split
    } else {
      const starts = node.options.map((option) => build(states, option, at, seps))
      states.push({ eps: starts })
      at = states.length - 1
    }
  }
  return at
}

export interface Glob {
  matches(text: string): boolean
}

/**
 * Compiles a pattern (throws GlobError with a reason when it does not parse). `separators`: the
 * characters a single `*` does not cross (`**` does), as gobwas's glob.Compile(pattern, '/').
 */
export function compileGlob(pattern: string, separators = ''): Glob {
  if (pattern.length > MAX_BRANCH_FILTER) throw new GlobError(`longer than ${MAX_BRANCH_FILTER} characters`)
  const states: State[] = [{ match: true }]
  const start = build(states, parse(pattern, separators), 0, separators)
  // seen[state] === stamp: already in the set being built (stamps only grow, across calls too).
  const seen = new Float64Array(states.length).fill(-1)
  let stamp = 0
  return {
    matches(text: string): boolean {
      const chars = [...text]
      let current: number[] = []
      stamp++
      const add = (list: number[], s: number) => {
        // Iterative ε-closure: each state once per step.
        const stack = [s]
        while (stack.length) {
          const at = stack.pop()!
          if (seen[at] === stamp) continue
          seen[at] = stamp
          const state = states[at]!
          if ('eps' in state) for (let e = state.eps.length - 1; e >= 0; e--) stack.push(state.eps[e]!)
          else list.push(at)
        }
      }
      add(current, start)
      for (const ch of chars) {
        stamp++
        const next: number[] = []
        for (const at of current) {
          const state = states[at]!
          if ('test' in state && state.test(ch)) add(next, state.out)
        }
        if (next.length === 0) return false
        current = next
      }
      return current.some((at) => 'match' in states[at]!)
    },
  }
}

/** Whether `branch` passes a hook's filter (empty or `*`: every branch). */
export function branchMatches(filter: string, branch: string): boolean {
  if (filter === '' || filter === '*') return true
  try {
    return compileGlob(filter).matches(branch)
  } catch {
    return false
  }
}
