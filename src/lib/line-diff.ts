/** One line of a comparison of two texts: kept, removed (only in the old) or added (only in the new). */
export type DiffLine = { op: ' ' | '-' | '+'; text: string }

/**
 * The lines of `before` and `after` compared (the longest common subsequence of their lines), or
 * null when the two have too many lines to compare within MAX_CELLS steps: the work is bounded,
 * whatever the texts (a history page shows such a version whole instead).
 */
export function lineDiff(before: string, after: string): DiffLine[] | null {
  const a = before.split('\n')
  const b = after.split('\n')
  // Common head and tail cost nothing to find and shrink the table to the changed middle.
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  const x = a.slice(head, a.length - tail)
  const y = b.slice(head, b.length - tail)
  if ((x.length + 1) * (y.length + 1) > MAX_CELLS) return null
  // lengths[i][j]: the longest common subsequence of x[i:] and y[j:], one row of numbers per line of x.
  const width = y.length + 1
  const lengths = new Uint32Array((x.length + 1) * width)
  for (let i = x.length - 1; i >= 0; i--)
    for (let j = y.length - 1; j >= 0; j--)
      lengths[i * width + j] = x[i] === y[j] ? lengths[(i + 1) * width + j + 1]! + 1 : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!)
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ op: ' ', text }))
  let i = 0
  let j = 0
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      out.push({ op: ' ', text: x[i]! })
      i++
      j++
    } else if (j < y.length && (i === x.length || lengths[i * width + j + 1]! >= lengths[(i + 1) * width + j]!)) out.push({ op: '+', text: y[j++]! })
    else out.push({ op: '-', text: x[i++]! })
  }
  for (const text of a.slice(a.length - tail)) out.push({ op: ' ', text })
  return out
}

/** The most cells (changed lines of one × of the other) a comparison works through: a few milliseconds. */
const MAX_CELLS = 250_000
