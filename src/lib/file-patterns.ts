import { compileGlob, type Glob } from './glob'

/**
 * Globs compiled once and kept (bounded): protection rules are few, their patterns short, and
 * every push to a protected branch reads them. null: the pattern does not parse.
 */
const globs = new Map<string, Glob | null>()
export function cachedGlob(pattern: string, separators: string): Glob | null {
  const key = `${separators}\0${pattern}`
  if (!globs.has(key)) {
    if (globs.size > 10_000) globs.clear()
    let compiled: Glob | null = null
    try {
      compiled = compileGlob(pattern, separators)
    } catch {
      compiled = null
    }
    globs.set(key, compiled)
  }
  return globs.get(key)!
}

/** `;`-separated file patterns (Gitea's protected_file_patterns): lower-cased, `*` stopping at `.` and `/`. */
export function filePatternsOf(patterns: string): Glob[] {
  return patterns
    .split(';')
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean)
    .map((p) => cachedGlob(p, './'))
    .filter((g): g is Glob => g !== null)
}

/** Whether `path` matches one of `patterns` (filePatternsOf), case-insensitively. */
export const pathMatches = (patterns: Glob[], path: string) => patterns.some((g) => g.matches(path.toLowerCase()))
