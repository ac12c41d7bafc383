import { existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { eq, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { greatestOf } from '../../db/sql'
import { repositories, users } from '../../db/schema'
import { removeRepositoryFolder } from '../../git/init'
import { removeGitLeftovers } from '../../git/leftovers'
import { loggerOf } from '../../lib/log'
import { pathOfRepo } from './service'

/**
 * Repairs what a crash can leave behind (run at start-up, before serving, and by `warren doctor
 * --fix`): rows still 'creating' are deleted with their folders; git folders under
 * {data}/repositories that no row accounts for are reported and moved aside to
 * {data}/repositories/.orphaned/ (never deleted); ready rows whose folder is missing (a crash in
 * the middle of a rename, or outside damage) are reported, so that an administrator can put the
 * folder back from .orphaned/; what killed git processes left in repositories
 * (src/git/leftovers.ts) is removed. `warren serve` runs the first two only (repairAtStart), the
 * other two per repository in the background sweep (checkRepositoryFolder).
 */
export async function repairRepositories(deps: AppDeps): Promise<{ removedRows: number; orphaned: string[]; missing: string[]; leftovers: string[] }> {
  const { removedRows, orphaned } = await repairAtStart(deps)
  const state = await repositoryFolders(deps)
  const log = loggerOf(deps.config)
  for (const r of state.missing) log.warn('a repository has no git folder', { repo: `${r.ownerName}/${r.name}`, expected: r.path })
  // Nothing runs yet: what a killed git left behind (a push's quarantine, half-written packs) goes.
  const leftovers = state.present.flatMap((path) => removeGitLeftovers(path))
  if (leftovers.length) log.warn('removed temporary git objects left by interrupted git processes', { count: leftovers.length })
  return { removedRows, orphaned, missing: state.missing.map((r) => `${r.ownerName}/${r.name}`), leftovers }
}

/**
 * The repairs `warren serve` makes before serving, when no other process serves the data: rows
 * still 'creating' (an indexed read of what was under way) and folders no row accounts for (one
 * listing per owner folder and one indexed read of that owner's repositories, so memory stays
 * the size of one owner's list). Nothing here reads a repository's own folder.
 */
export async function repairAtStart(deps: AppDeps): Promise<{ removedRows: number; orphaned: string[] }> {
  const log = loggerOf(deps.config)
  const unfinished = await deps.db.select().from(repositories).where(eq(repositories.status, 'creating'))
  for (const row of unfinished) {
    removeRepositoryFolder(pathOfRepo(deps, row.ownerName, row))
    await writeTransaction(deps.db, async () => {
      await deps.db.delete(repositories).where(eq(repositories.id, row.id))
      await deps.db.update(users).set({ numRepos: greatestOf(sql`${users.numRepos} - 1`, 0) }).where(eq(users.id, row.ownerId))
    })
    log.warn('removed an unfinished repository', { repo: `${row.ownerName}/${row.name}` })
  }
  const root = join(deps.config.dataDir, 'repositories')
  const aside = join(root, '.orphaned')
  const orphaned = await unaccountedFolders(deps)
  for (const name of orphaned) {
    let target = join(aside, name)
    if (existsSync(target)) target = `${target}.${Date.now()}`
    mkdirSync(dirname(target), { recursive: true })
    renameSync(join(root, name), target)
    log.warn('a git folder has no repository; moved aside', { folder: name, to: target })
  }
  return { removedRows: unfinished.length, orphaned }
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
  const unfinished = await deps.db.select().from(repositories).where(eq(repositories.status, 'creating'))
  const rows = await deps.db.select({ ownerName: repositories.ownerName, name: repositories.name, status: repositories.status }).from(repositories)
  const missing: { ownerName: string; name: string; path: string }[] = []
  const present: string[] = []
  for (const r of rows) {
    const path = pathOfRepo(deps, r.ownerName, r)
    if (existsSync(path)) present.push(path)
    else if (r.status !== 'creating') missing.push({ ownerName: r.ownerName, name: r.name, path })
  }
  return { unfinished, missing, present, unaccounted: await unaccountedFolders(deps) }
}

/**
 * Folders under repositories/ no row accounts for (`owner/name.git`; a wiki folder beside its
 * repository's is accounted for), an owner folder at a time: its listing against the
 * repositories of the owner it names.
 */
async function unaccountedFolders(deps: AppDeps): Promise<string[]> {
  const root = join(deps.config.dataDir, 'repositories')
  const unaccounted: string[] = []
  if (!existsSync(root)) return unaccounted
  for (const ownerDir of readdirSync(root, { withFileTypes: true })) {
    if (!ownerDir.isDirectory() || ownerDir.name === '.orphaned') continue
    const folders = readdirSync(join(root, ownerDir.name), { withFileTypes: true }).filter((entry) => entry.isDirectory())
    if (folders.length === 0) continue
    const rows = await deps.db
      .select({ ownerName: repositories.ownerName, name: repositories.name })
      .from(repositories)
      .innerJoin(users, eq(users.id, repositories.ownerId))
      .where(eq(users.lowerName, ownerDir.name))
    const known = new Set(rows.map((r) => pathOfRepo(deps, r.ownerName, r)))
    for (const entry of folders) {
      const path = join(root, ownerDir.name, entry.name)
      if (known.has(path)) continue
      if (entry.name.endsWith('.wiki.git') && known.has(path.replace(/\.wiki\.git$/, '.git'))) continue
      unaccounted.push(`${ownerDir.name}/${entry.name}`)
    }
  }
  return unaccounted
}
