import type { AppDeps } from '../../deps'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { resolveCommit } from '../../git/objects'
import { walkTree } from '../../git/tree'
import { languageOf } from './linguist'

/**
 * A repository's languages (Gitea's `GET …/languages`): the bytes of each language in the default
 * branch's files, from one `git ls-tree -r -l` read as it arrives and counted up to
 * WARREN_MAX_TREE_ENTRIES files. A commit's files never change, so the answer is kept per
 * repository and commit id (the last LANGUAGE_CACHE of them): a repository is counted again only
 * when its default branch moves.
 */

const LANGUAGE_CACHE = 512
const cache = new Map<string, Record<string, number>>()

/** Bytes per language, keys in name order (as Gitea's JSON map); {} for an empty repository. */
export async function repoLanguages(deps: AppDeps, ctx: RepoContext): Promise<Record<string, number>> {
  if (ctx.repo.isEmpty || !ctx.repo.defaultBranch) return {}
  const git = gitRepoOf(deps, ctx)
  const commit = await resolveCommit(git, `refs/heads/${ctx.repo.defaultBranch}`)
  if (!commit) return {}
  const key = `${ctx.repo.id}\0${commit}`
  const hit = cache.get(key)
  if (hit) return hit
  const bytes = new Map<string, number>()
  let files = 0
  await walkTree(git, commit, { recursive: true }, (entry) => {
    if (++files > deps.config.maxTreeEntries) return false
    if (entry.kind !== 'file' && entry.kind !== 'executable') return
    const language = languageOf(entry.path)
    if (language) bytes.set(language, (bytes.get(language) ?? 0) + entry.size)
  })
  const answer = Object.fromEntries([...bytes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
  cache.set(key, answer)
  if (cache.size > LANGUAGE_CACHE) cache.delete(cache.keys().next().value!)
  return answer
}
