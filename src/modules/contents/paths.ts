import { unprocessable } from '../../lib/errors'

/**
 * Paths the contents API reads and writes, checked before any reaches git: segments split on
 * '/', empty and '.' segments dropped (as Gitea's CleanGitTreePath), and refused with 422 when a
 * segment is '..', is `.git` in any case (git itself would refuse to store it, and a checkout would
 * take it for the repository), or holds a NUL or control character; an absolute path (a
 * leading '/') is refused too, never read as one from the root. `.` and '' are the root.
 */
export function treePath(raw: string, field = 'filepath'): string[] {
  if (raw.startsWith('/')) throw unprocessable(`path must be relative to the repository root [path: ${raw.slice(0, 200)}]`, field)
  const out: string[] = []
  for (const seg of raw.split('/')) {
    if (seg === '' || seg === '.') continue
    if (seg === '..' || seg.toLowerCase() === '.git' || /[\x00-\x1f\x7f]/.test(seg))
      throw unprocessable(`path is invalid [path: ${raw.slice(0, 200).replace(/[\x00-\x1f\x7f]/g, '?')}]`, field)
    out.push(seg)
  }
  return out
}

/** The wildcard of a route (URL-encoded, as it came) decoded once, then checked as treePath. */
export function treePathOfUrl(wildcard: string): string[] {
  let decoded: string
  try {
    decoded = decodeURIComponent(wildcard)
  } catch {
    throw unprocessable('path is not valid URL encoding', 'filepath')
  }
  return treePath(decoded)
}
