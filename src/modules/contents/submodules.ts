import type { GitRepo } from '../../git/run'
import { objectBytes } from '../../git/objects'
import { entryAt } from '../../git/tree'

/** Largest .gitmodules read (a submodule's URL is left null past it). */
const MAX_GITMODULES = 64 * 1024

/**
 * The URL .gitmodules (at the root of `commit`) gives the submodule at `path`, or null: the
 * `url` of the `[submodule "…"]` section whose `path` is it, as Gitea's GetSubModule.
 */
export async function submoduleUrl(git: GitRepo, commit: string, path: string): Promise<string | null> {
  const file = await entryAt(git, commit, ['.gitmodules'])
  if (!file || file.kind === 'dir' || file.kind === 'submodule') return null
  const obj = await objectBytes(git, file.oid)
  if (!obj || obj.body.length > MAX_GITMODULES) return null
  let section: { path?: string; url?: string } | null = null
  const sections: { path?: string; url?: string }[] = []
  for (const raw of obj.body.toString('utf8').split(/\r?\n/)) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
    if (line.startsWith('[')) {
      section = /^\[submodule\s+"/.test(line) ? {} : null
      if (section) sections.push(section)
      continue
    }
    const m = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(line)
    if (!section || !m) continue
    const key = m[1]!.toLowerCase()
    const value = m[2]!.replace(/^"(.*)"$/, '$1')
    if (key === 'path') section.path = value
    else if (key === 'url') section.url = value
  }
  return sections.find((s) => s.path === path)?.url ?? null
}
