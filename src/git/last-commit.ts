import { isObjectId, objectStoreOf, requireObjectIds, runGit, startGit, type GitRepo } from './run'
import { readTokens } from './tokens'
import { LITERAL_PATHS } from './commit-log'

/**
 * The last commit that changed a path, as the contents API shows it (`last_commit_sha`): what
 * `git log -1 <commit> -- <path>` answers. A commit never changes, so the answer for a
 * (commit, path) is kept in a bounded cache: the history walk is paid once per commit a path is
 * read at. Paths are literal (GIT_LITERAL_PATHSPECS), never globs.
 */

const CACHE_SIZE = 20_000
const cache = new Map<string, string>()

function remember(key: string, sha: string): void {
  cache.set(key, sha)
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!)
}

const keyOf = (repo: GitRepo, commit: string, path: string) => `${objectStoreOf(repo)}\0${commit}\0${path}`

/** The last commit reachable from `commit` that changed `path` ('' for the whole tree: `commit`). */
export async function lastCommitOf(repo: GitRepo, commit: string, path: string): Promise<string> {
  requireObjectIds('rev-list', commit)
  if (path === '') return commit
  const key = keyOf(repo, commit, path)
  const hit = cache.get(key)
  if (hit) return hit
  const r = await runGit(['rev-list', '-1'], { ...repo, env: LITERAL_PATHS, values: [commit, '--', path] })
  const sha = r.stdout.toString('utf8').trim()
  const found = r.code === 0 && isObjectId(sha) ? sha : commit
  remember(key, found)
  return found
}

/**
 * The last commit of each of `names` (entries of folder `dir`, '' for the root) from `commit`:
 * one `git log --name-only` walk of the folder's history, stopped as soon as every name has its
 * commit (cached per entry, as lastCommitOf). Names the walk does not reach keep `commit`.
 */
export async function lastCommitsIn(repo: GitRepo, commit: string, dir: string, names: string[]): Promise<Map<string, string>> {
  requireObjectIds('log', commit)
  const prefix = dir === '' ? '' : dir + '/'
  const found = new Map<string, string>()
  const wanted = new Set<string>()
  for (const name of names) {
    const hit = cache.get(keyOf(repo, commit, prefix + name))
    if (hit) found.set(name, hit)
    else wanted.add(name)
  }
  if (wanted.size === 0) return found
  let current = ''
  const args = ['log', '--format=%x01%H', '-z', '--name-only', '--no-renames']
  await readTokens(
    startGit(args, { ...repo, env: LITERAL_PATHS, values: dir === '' ? [commit] : [commit, '--', dir] }),
    (token) => {
      if (token.startsWith('\x01')) {
        current = token.slice(1).trim()
        return
      }
      const path = token.replace(/^\n/, '')
      if (!path.startsWith(prefix)) return
      const name = path.slice(prefix.length).split('/')[0]!
      if (wanted.delete(name) && isObjectId(current)) {
        found.set(name, current)
        remember(keyOf(repo, commit, prefix + name), current)
      }
      return wanted.size > 0
    },
    4096,
  )
  for (const name of wanted) found.set(name, commit)
  return found
}
