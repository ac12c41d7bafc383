import { existsSync } from 'node:fs'

/**
 * Where a worker thread's code is: at `source` (relative to the module asking, `from`: its
 * `import.meta.url`) when running from the sources; in the bundle (`bun build --splitting`, chunks
 * at the output root) and the single binary at `bundled`, the path of its own entry point under
 * src/ with `.js` (package.json's `build` and scripts/build-binary.ts list every thread's entry).
 */
export function threadEntryUrl(from: string, source: string, bundled: string, what: string): URL {
  const sourceUrl = new URL(source, from)
  if (existsSync(Bun.fileURLToPath(sourceUrl))) return sourceUrl
  const bundledUrl = new URL(bundled, from)
  if (existsSync(Bun.fileURLToPath(bundledUrl))) return bundledUrl
  throw new Error(`${what} not found (looked for ${sourceUrl.pathname} and ${bundledUrl.pathname})`)
}
