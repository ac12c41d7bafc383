/**
 * How well a file's path matches what was typed in "Go to file" (Gitea's fuzzy file finder): the
 * text anywhere in the path, case ignored, ranks by how late it starts (a match in the file's own
 * name first); otherwise the text's characters in order, spread over the path, rank after every
 * plain match by how far they spread. Null: no match. Linear in the path's length.
 */
export function fileMatchRank(path: string, typed: string): number | null {
  const p = path.toLowerCase()
  const q = typed.toLowerCase()
  if (q === '') return 0
  const base = p.lastIndexOf('/') + 1
  const inName = p.indexOf(q, base)
  if (inName >= 0) return inName - base
  const anywhere = p.indexOf(q)
  if (anywhere >= 0) return p.length + anywhere
  let from = -1
  let first = -1
  for (const c of q) {
    from = p.indexOf(c, from + 1)
    if (from < 0) return null
    if (first < 0) first = from
  }
  return 2 * p.length + (from - first)
}
