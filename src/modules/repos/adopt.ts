import { lstatSync, realpathSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { dirname, join, relative, isAbsolute } from 'node:path'
import { and, eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { repositories, type RepoRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { recordEvent } from '../../events/outbox'
import { configureServedRepository } from '../../git/init'
import { runGit, wikiPathOf } from '../../git/run'
import { headBranchOf } from '../../git/ref-state'
import { existingBranches, firstBranch, repositorySize, setHeadBranch } from '../../git/refs'
import { isSafeRefName } from '../../git/ref-name'
import { conflict, notFound, unprocessable } from '../../lib/errors'
import { compileGlob, GlobError, type Glob } from '../../lib/glob'
import type { Page, Paged } from '../../lib/pagination'
import { findOwnerByName } from '../users/service'
import { buildRepository, checkRepoName } from './create'
import { ownerFolders, unaccountedIn, withFolderClaimed } from './repair'
import { isMoving, movingFolders } from './folder-move'
import { gitRepoAt, pathOfRepo, repoSnapshot } from './service'

/**
 * Unadopted repositories (Gitea's services/repository/adopt.go, `/admin/unadopted`): git folders
 * under {data}/repositories/{owner}/ that no repository row names, for an owner that exists. The
 * listing is the one `warren doctor` and the sweep read (repair.ts `unaccountedIn`); such a
 * folder stays until an administrator adopts or deletes it (as Gitea: no crash of Warren's leaves
 * one). An adoption or removal claims its folder first (`withFolderClaimed`): a second one of
 * the same folder meanwhile is 409.
 */

/** Gitea's glob as a whole-string, any-case test (lib/glob.ts: linear, never backtracking); 422 when it does not parse. */
function globOf(pattern: string): Glob {
  try {
    return compileGlob(pattern.toLowerCase())
  } catch (e) {
    if (e instanceof GlobError) throw unprocessable(`invalid pattern: ${e.message}`, 'pattern')
    throw e
  }
}

/** The owner and name tests of a pattern: `owner/name`, or an owner alone (Gitea's ListUnadoptedRepositories). */
function patternOf(pattern: string): { owner?: Glob; name?: Glob } {
  const text = pattern.trim()
  if (!text) return {}
  const slash = text.indexOf('/')
  if (slash < 0 || text.length === 1) return { owner: globOf(text) }
  return { owner: globOf(text.slice(0, slash)), name: globOf(text.slice(slash + 1)) }
}

/** The name of an unadopted repository in `folder` (`name.git`), or null for what is no repository folder (a wiki's, a name the rule refuses). */
function repoNameOfFolder(folder: string): string | null {
  if (!folder.endsWith('.git') || folder.endsWith('.wiki.git')) return null
  const name = folder.slice(0, -'.git'.length)
  try {
    checkRepoName(name)
    return name
  } catch {
    return null
  }
}

/**
 * The unadopted repositories (`owner/name`, by name) matching the pattern, a page of them. The
 * owner folders are read in the order of their names followed by `/` (so the names come out in
 * the order of `owner/name` as whole strings), checked a batch at a time (unaccountedIn), and
 * only the page is kept of what they hold: memory stays bounded however many folders there are.
 */
export async function listUnadopted(deps: AppDeps, pattern: string, page: Page): Promise<Paged<string>> {
  const test = patternOf(pattern)
  const owners = ownerFolders(deps)
    .filter((owner) => !test.owner || test.owner.matches(owner.toLowerCase()))
    .map((owner) => `${owner}/`)
    .sort()
    .map((key) => key.slice(0, -1))
  const rows: string[] = []
  let total = 0
  for await (const folder of unaccountedIn(deps, owners)) {
    if (!folder.exists) continue
    const names: string[] = []
    for (const entry of folder.unaccounted) {
      const name = repoNameOfFolder(entry.slice(folder.owner.length + 1))
      if (name !== null && (!test.name || test.name.matches(name.toLowerCase()))) names.push(name)
    }
    for (const name of names.sort()) {
      if (total >= page.offset && rows.length < page.limit) rows.push(`${folder.owner}/${name}`)
      total++
    }
  }
  return { rows, total }
}

/**
 * Runs `work` on the folder of `owner/name` when it is an unadopted repository's, with the folder
 * claimed (withFolderClaimed) from before the checks until `work` ends: the owner exists, the
 * name follows the repository name rule (422 otherwise), no repository row of that name exists in
 * any state, and its folder is a real folder (no symbolic link, in it or on the way) inside the
 * repositories root. 404 otherwise, as Gitea answers.
 */
async function withUnadoptedFolder<T>(deps: AppDeps, ownerName: string, name: string, work: (owner: UserRow, path: string) => Promise<T>): Promise<T> {
  const owner = await findOwnerByName(deps, ownerName)
  if (!owner) throw notFound(`user does not exist [name: ${ownerName}]`)
  checkRepoName(name)
  const path = pathOfRepo(deps, owner.name, { name })
  return await withFolderClaimed(deps, path, async () => {
    const row = await deps.db
      .select({ id: repositories.id })
      .from(repositories)
      .where(and(eq(repositories.ownerId, owner.id), eq(repositories.lowerName, name.toLowerCase())))
    if (row.length) throw notFound(`the repository ${owner.name}/${name} exists: its files are adopted`)
    // A rename's or transfer's folder between its move and its rows (or left so by a dead process, until repaired).
    if (isMoving(await movingFolders(deps), relative(join(deps.config.dataDir, 'repositories'), path)))
      throw conflict(`the repository files are being moved (a rename or transfer is under way) [name: ${owner.name}/${name}]; try again`)
    if (!isRealFolderInside(join(deps.config.dataDir, 'repositories'), path)) throw notFound(`no unadopted repository files [name: ${owner.name}/${name}]`)
    return await work(owner, path)
  })
}

/** Whether `path` and its parent are folders themselves (not symbolic links) whose real place is inside `root`. */
function isRealFolderInside(root: string, path: string): boolean {
  for (const p of [dirname(path), path]) if (!lstatSync(p, { throwIfNoEntry: false })?.isDirectory()) return false
  try {
    const inside = relative(realpathSync(root), realpathSync(path))
    return !!inside && !inside.startsWith('..') && !isAbsolute(inside)
  } catch {
    return false
  }
}

/**
 * Adopts the folder of `owner/name` (Gitea's AdoptRepository): a private repository row made by
 * buildRepository as any other (hooks, the site's default hooks, the `repo.created` event), the
 * row read from the folder: the default branch is HEAD's branch when it exists, else `main`,
 * `master` or the first branch (HEAD then moved to it), emptiness and size from git, its refs
 * recorded as the starting point (no push events for what was there). The folder gets the
 * settings of every served repository. A crash leaves an 'adopting' row the start-up repair
 * removes, and the folder unadopted again.
 */
export async function adoptRepository(deps: AppDeps, admin: UserRow, ownerName: string, name: string): Promise<RepoRow> {
  return await withUnadoptedFolder(deps, ownerName, name, async (owner, path) => {
    return await buildRepository(
      deps,
      owner,
      admin,
      { name, description: '', isPrivate: true, defaultBranch: deps.config.defaultBranch },
      {
        existing: true,
        make: async (gitDir) => {
          const git = gitRepoAt(deps, gitDir)
          const bare = await runGit(['rev-parse', '--is-bare-repository'], git)
          if (bare.code !== 0 || bare.stdout.toString('utf8').trim() !== 'true') throw unprocessable('the folder is not a bare git repository', 'Repo')
          await configureServedRepository(gitDir, git.limits)
          const [head, first, size] = await Promise.all([headBranchOf(git), firstBranch(git), repositorySize(git)])
          if (first === null) return { isEmpty: true, size, defaultBranch: head && isSafeRefName(head) ? head : deps.config.defaultBranch }
          const candidates = [head, deps.config.defaultBranch, 'main', 'master'].filter((b): b is string => !!b)
          const present = await existingBranches(git, candidates)
          const defaultBranch = candidates.find((b) => present.has(b)) ?? first
          // Before the refs are recorded (recordRefs: after make), so that their fingerprint is HEAD's as it stays.
          if (defaultBranch !== head) await setHeadBranch(git, defaultBranch)
          return { isEmpty: false, size, defaultBranch }
        },
        recordRefs: true,
        ready: async (row) => {
          await recordEvent(deps.db, { kind: 'repo.created', repoId: row.id, actorId: admin.id, payload: { repository: repoSnapshot(row) } })
        },
      },
    )
  })
}

/** Removes the folder of the unadopted repository `owner/name` (Gitea's DeleteUnadoptedRepository), its wiki's beside it too. */
export async function deleteUnadopted(deps: AppDeps, ownerName: string, name: string): Promise<void> {
  await withUnadoptedFolder(deps, ownerName, name, async (_owner, path) => {
    // Off the event loop: a repository's folder may be large.
    await rm(path, { recursive: true, force: true })
    const wiki = wikiPathOf(path)
    if (lstatSync(wiki, { throwIfNoEntry: false })?.isDirectory()) await rm(wiki, { recursive: true, force: true })
  })
}
