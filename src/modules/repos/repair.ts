import { existsSync, statSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { and, eq, inArray, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { greatestOf } from '../../db/sql'
import { folderMoves, repositories, users } from '../../db/schema'
import { removeRepositoryFolder } from '../../git/init'
import { wikiPathOf } from '../../git/run'
import { removeGitLeftovers } from '../../git/leftovers'
import { batchesOf, IN_LIST_MAX } from '../../lib/batches'
import { conflict } from '../../lib/errors'
import { listing } from '../../lib/listing'
import { loggerOf } from '../../lib/log'
import { pathOfRepo } from './service'
import { finishFolderMoves, isMoving, movingFolders } from './folder-move'

/**
 * Repairs what a crash can leave behind (run at start-up, before serving, and by `warren doctor
 * --fix`): rows still 'creating' are deleted with their folders; the folders of deleted
 * repositories a crash left in {data}/repositories/.deleted/ are removed (emptyDeletedFolders);
 * git folders under {data}/repositories that no row accounts for are reported and left where
 * they are, unadopted (an administrator adopts or deletes them: /admin/unadopted), as Gitea does:
 * no crash of Warren's leaves one (creation, adoption, moves and deletion each write their intent
 * first), so such a folder was put there by hand; ready rows whose folder is missing (outside
 * damage: a rename's or transfer's move a crash interrupted is undone first, finishFolderMoves)
 * are reported; what killed git processes left in repositories (src/git/leftovers.ts) is removed.
 * `warren serve` runs the first one before serving (repairAtStart), the others in the background
 * sweep: deleted folders (emptyDeletedFolders), repositories a batch at a time
 * (checkRepositoryFolder).
 */
export async function repairRepositories(deps: AppDeps): Promise<{ removedRows: number; deleted: number; unadopted: string[]; missing: string[]; leftovers: string[] }> {
  const { removedRows } = await repairAtStart(deps)
  const deleted = (await emptyDeletedFolders(deps)).length
  const state = await repositoryFolders(deps)
  const log = loggerOf(deps.config)
  for (const r of state.missing) log.warn('a repository has no git folder', { repo: `${r.ownerName}/${r.name}`, expected: r.path })
  // Nothing runs yet: what a killed git left behind (a push's quarantine, half-written packs) goes.
  const leftovers = state.present.flatMap((path) => removeGitLeftovers(path))
  if (leftovers.length) log.warn('removed temporary git objects left by interrupted git processes', { count: leftovers.length })
  return { removedRows, deleted, unadopted: state.unaccounted, missing: state.missing.map((r) => `${r.ownerName}/${r.name}`), leftovers }
}

/**
 * The repair `warren serve` makes before serving, when no other process serves the data: folder
 * moves a crash interrupted are undone (finishFolderMoves), rows still 'creating' (an indexed read
 * of what was under way) are deleted with their folders, rows still 'adopting' without theirs
 * (the folder was there before them: unadopted again).
 * Folders no row accounts for stay, unadopted: creating or renaming a repository onto an existing
 * folder is refused.
 */
export async function repairAtStart(deps: AppDeps): Promise<{ removedRows: number }> {
  const log = loggerOf(deps.config)
  // First: a folder a crash left at its new place goes back where its rows still look for it.
  await finishFolderMoves(deps)
  const unfinished = await deps.db.select().from(repositories).where(UNFINISHED)
  for (const row of unfinished) {
    // An adoption's folder was there before its row: it stays, unadopted again.
    // (With its wiki's: a migration clones the remote's wiki while the row is 'creating'.)
    const path = pathOfRepo(deps, row.ownerName, row)
    if (row.status === 'creating') for (const folder of [path, wikiPathOf(path)]) removeRepositoryFolder(folder)
    await writeTransaction(deps.db, async () => {
      await deps.db.delete(repositories).where(eq(repositories.id, row.id))
      await deps.db.update(users).set({ numRepos: greatestOf(sql`${users.numRepos} - 1`, 0) }).where(eq(users.id, row.ownerId))
    })
    log.warn(row.status === 'creating' ? 'removed an unfinished repository' : 'undid an unfinished adoption; its folder stays', { repo: `${row.ownerName}/${row.name}` })
  }
  return { removedRows: unfinished.length }
}

/** Rows of repositories under way: 'creating' (its folder being made) or 'adopting' (its folder being read). */
const UNFINISHED = inArray(repositories.status, ['creating', 'adopting'])

/** Folders an adoption or a removal of unadopted files works on in this process (claimFolder), per server. */
const claimedFolders = new WeakMap<AppDeps, Set<string>>()

/**
 * Runs `work` with the folder at `path` claimed in this process (an adoption, a removal of
 * unadopted files): a second claim of it is refused with 409.
 */
export async function withFolderClaimed<T>(deps: AppDeps, path: string, work: () => Promise<T>): Promise<T> {
  let claimed = claimedFolders.get(deps)
  if (!claimed) claimedFolders.set(deps, (claimed = new Set()))
  if (claimed.has(path)) throw conflict('the repository files are being adopted or deleted; try again')
  claimed.add(path)
  try {
    return await work()
  } finally {
    claimed.delete(path)
  }
}

/**
 * The owner folders under repositories/ (each named by its owner's lower-cased name; no name
 * starts with a dot: `.deleted`, and `.orphaned` where an older Warren moved folders aside).
 */
export function ownerFolders(deps: AppDeps): string[] {
  return listing(join(deps.config.dataDir, 'repositories'))
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
    .map((entry) => entry.name)
}

/** Where a deleted repository's folders go on their way out: repositories/.deleted/ (deleteRepository). */
export const deletedFoldersOf = (deps: AppDeps): string => join(deps.config.dataDir, 'repositories', '.deleted')

/**
 * Removes the folders deleted repositories left in repositories/.deleted/ (deleteRepository moves
 * a repository's folders there with the transaction that deletes its rows, then removes them; a
 * crash in between leaves them), off the event loop (fs.promises.rm), and answers their names.
 * A folder a deletion still works on is left: one an intent names (its transaction not yet
 * committed: a failure moves it back) and, with `before` (the background sweep, while requests
 * are served, from this or another process), one moved there since (its inode's change time).
 */
export async function emptyDeletedFolders(deps: AppDeps, before?: number): Promise<string[]> {
  const root = join(deps.config.dataDir, 'repositories')
  const dir = deletedFoldersOf(deps)
  const entries = listing(dir)
  if (entries.length === 0) return []
  const intended = new Set((await deps.db.select({ to: folderMoves.toPath }).from(folderMoves)).map((m) => m.to))
  const removed: string[] = []
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (intended.has(relative(root, path))) continue
    if (before !== undefined) {
      const changed = statSync(path, { throwIfNoEntry: false })?.ctimeMs
      if (changed === undefined || changed >= before) continue
    }
    await rm(path, { recursive: true, force: true })
    removed.push(entry.name)
  }
  if (removed.length) loggerOf(deps.config).warn('removed the folders of deleted repositories a crash left', { count: removed.length })
  return removed
}

/**
 * One ready repository's folder, checked by the background sweep while the server runs: a
 * missing folder is reported; what killed git processes left there before `before` (the
 * process's start: nothing running now wrote it) is removed. Answers how many leftovers went.
 */
export function checkRepositoryFolder(deps: AppDeps, row: { ownerName: string; name: string }, before: number): { missing: boolean; leftovers: number } {
  const path = pathOfRepo(deps, row.ownerName, row)
  if (!existsSync(path)) {
    loggerOf(deps.config).warn('a repository has no git folder', { repo: `${row.ownerName}/${row.name}`, expected: path })
    return { missing: true, leftovers: 0 }
  }
  const leftovers = removeGitLeftovers(path, Math.max(1, Date.now() - before)).length
  if (leftovers) loggerOf(deps.config).warn('removed temporary git objects left by interrupted git processes', { repo: `${row.ownerName}/${row.name}`, count: leftovers })
  return { missing: false, leftovers }
}

/**
 * The repository folders against the rows, read only (repairRepositories acts on it; `warren
 * doctor` reports it): rows still 'creating', ready rows whose folder is missing, the folders
 * of rows that have one, and folders under repositories/ no row accounts for (`owner/name.git`).
 */
export async function repositoryFolders(deps: AppDeps) {
  const unfinished = await deps.db.select().from(repositories).where(UNFINISHED)
  const rows = await deps.db.select({ ownerName: repositories.ownerName, name: repositories.name, status: repositories.status }).from(repositories)
  const missing: { ownerName: string; name: string; path: string }[] = []
  const present: string[] = []
  for (const r of rows) {
    const path = pathOfRepo(deps, r.ownerName, r)
    if (existsSync(path)) present.push(path)
    else if (r.status === 'ready') missing.push({ ownerName: r.ownerName, name: r.name, path })
  }
  return { unfinished, missing, present, unaccounted: await unaccountedFolders(deps) }
}

/**
 * Folders under repositories/ no row accounts for (`owner/name.git`; a wiki folder beside its
 * repository's is accounted for), a batch of folders a query (unaccountedIn).
 */
async function unaccountedFolders(deps: AppDeps): Promise<string[]> {
  const unaccounted: string[] = []
  for await (const folder of unaccountedIn(deps, ownerFolders(deps))) unaccounted.push(...folder.unaccounted)
  return unaccounted
}

/** An owner folder's entries no row accounts for (`owner/name.git`), and whether a user of the folder's name exists. */
export interface OwnerFolder {
  owner: string
  exists: boolean
  unaccounted: string[]
}

/**
 * The owner folders `owners` names (in that order, those with folders in them), each with the
 * folders in it no row accounts for, in its listing's order: the listings are checked against
 * the repository rows a batch at a time (one query for up to IN_LIST_MAX folders, however many
 * owners they are in), so that what is held at once is a batch and one owner folder's listing.
 * `between`, when given, is awaited after each batch but the last (the sweep's pause); false stops.
 */
export async function* unaccountedIn(deps: AppDeps, owners: Iterable<string>, between?: () => Promise<boolean>): AsyncGenerator<OwnerFolder> {
  const root = join(deps.config.dataDir, 'repositories')
  let batch: Listed[] = []
  let entries = 0
  for (const owner of owners) {
    // Gone since it was listed (its last repository deleted, while the sweep runs): nothing in it.
    const folders = listing(join(root, owner)).filter((entry) => entry.isDirectory()).map((entry) => entry.name)
    if (folders.length === 0) continue
    batch.push({ owner, folders })
    entries += folders.length
    if (entries < IN_LIST_MAX && batch.length < IN_LIST_MAX) continue
    yield* await checkListed(deps, batch)
    batch = []
    entries = 0
    if (between && !(await between())) return
  }
  if (batch.length) yield* await checkListed(deps, batch)
}

interface Listed {
  owner: string
  folders: string[]
}

/** The repository names a folder would be the folder of: `x.git` of x, `x.wiki.git` also of x's wiki. */
function repoNamesOfEntry(entry: string): string[] {
  if (!entry.endsWith('.git')) return []
  const name = entry.slice(0, -'.git'.length)
  return name.endsWith('.wiki') ? [name, name.slice(0, -'.wiki'.length)] : [name]
}

/** unaccountedIn's check of some listed owner folders: one query a batch of the names in them. */
async function checkListed(deps: AppDeps, listed: Listed[]): Promise<OwnerFolder[]> {
  const owners = listed.map((l) => l.owner)
  const names = [...new Set(listed.flatMap((l) => l.folders.flatMap(repoNamesOfEntry)))]
  const existing = new Set<string>()
  // The folder each row names (its owner name as the row has it: a stale one names another folder).
  const known = new Set<string>()
  for (const some of names.length ? batchesOf(names) : [[]]) {
    const rows = await deps.db
      .select({ owner: users.lowerName, ownerName: repositories.ownerName, name: repositories.name })
      .from(users)
      .leftJoin(repositories, and(eq(repositories.ownerId, users.id), inArray(repositories.lowerName, some)))
      .where(inArray(users.lowerName, owners))
    for (const r of rows) {
      existing.add(r.owner)
      if (r.ownerName !== null && r.name !== null) known.add(pathOfRepo(deps, r.ownerName, { name: r.name }))
    }
  }
  const root = join(deps.config.dataDir, 'repositories')
  // A folder a move under way (or left by a dead process, until its repair) moves is not unadopted.
  const moving = await movingFolders(deps)
  return listed.map(({ owner, folders }) => ({
    owner,
    exists: existing.has(owner),
    unaccounted: folders
      .filter((entry) => {
        const path = join(root, owner, entry)
        if (isMoving(moving, `${owner}/${entry}`)) return false
        return !known.has(path) && !(entry.endsWith('.wiki.git') && known.has(path.replace(/\.wiki\.git$/, '.git')))
      })
      .map((entry) => `${owner}/${entry}`),
  }))
}
