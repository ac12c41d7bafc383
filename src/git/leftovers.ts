import { readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'

/**
 * What a git process killed mid-way leaves in a bare repository: the quarantine of a push
 * (`objects/tmp_objdir-incoming-*`, older git `objects/incoming-*`) and half-written packs and
 * indexes (`objects/pack/tmp_pack_*`, `tmp_idx_*`, `tmp_rev_*`). git removes them itself when it
 * ends normally or on SIGTERM; SIGKILL, a crash or a power cut leave them behind. None is ever
 * referenced by a ref, so removing them is safe once the git that wrote them is gone.
 */
const LEFTOVER = { objects: /^(tmp_objdir-|incoming-)/, pack: /^tmp_(pack|idx|rev)_/ }

/** The leftovers of one repository older than `olderThanMs` (0: all), as paths. */
export function gitLeftovers(gitDir: string, olderThanMs = 0): string[] {
  const found: string[] = []
  const now = Date.now()
  for (const [dir, pattern] of [[join(gitDir, 'objects'), LEFTOVER.objects], [join(gitDir, 'objects', 'pack'), LEFTOVER.pack]] as const) {
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      continue
    }
    for (const name of names) {
      if (!pattern.test(name)) continue
      const path = join(dir, name)
      if (olderThanMs > 0) {
        try {
          if (now - statSync(path).mtimeMs < olderThanMs) continue
        } catch {
          continue
        }
      }
      found.push(path)
    }
  }
  return found
}

/** Removes the leftovers of one repository (see gitLeftovers); returns what was removed. */
export function removeGitLeftovers(gitDir: string, olderThanMs = 0): string[] {
  const found = gitLeftovers(gitDir, olderThanMs)
  for (const path of found) rmSync(path, { recursive: true, force: true })
  return found
}
