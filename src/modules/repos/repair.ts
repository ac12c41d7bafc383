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
 * Repairs what a crash can leave behind (run at start-up, before serving): rows still
 * 'creating' are deleted with their folders; git folders under {data}/repositories that no row
 * accounts for are reported and moved aside to {data}/repositories/.orphaned/ (never deleted);
 * ready rows whose folder is missing (a crash in the middle of a rename, or outside damage) are
 * reported, so that an administrator can put the folder back from .orphaned/; what killed git
 * processes left in repositories (src/git/leftovers.ts) is removed.
 */
export async function repairRepositories(deps: AppDeps): Promise<{ removedRows: number; orphaned: string[]; missing: string[]; leftovers: string[] }> {
  const state = await repositoryFolders(deps)
  const log = loggerOf(deps.config)
  for (const row of state.unfinished) {
    removeRepositoryFolder(pathOfRepo(deps, row.ownerName, row))
    await writeTransaction(deps.db, async () => {
      await deps.db.delete(repositories).where(eq(repositories.id, row.id))
      await deps.db.update(users).set({ numRepos: greatestOf(sql`${users.numRepos} - 1`, 0) }).where(eq(users.id, row.ownerId))
    })
    log.warn('removed an unfinished repository', { repo: `${row.ownerName}/${row.name}` })
  }
  for (const r of state.missing) log.warn('a repository has no git folder', { repo: `${r.ownerName}/${r.name}`, expected: r.path })
  // Nothing runs yet: what a killed git left behind (a push's quarantine, half-written packs) goes.
  const leftovers = state.present.flatMap((path) => removeGitLeftovers(path))
  if (leftovers.length) log.warn('removed temporary git objects left by interrupted git processes', { count: leftovers.length })
  const root = join(deps.config.dataDir, 'repositories')
  const aside = join(root, '.orphaned')
  for (const name of state.unaccounted) {
    let target = join(aside, name)
    if (existsSync(target)) target = `${target}.${Date.now()}`
    mkdirSync(dirname(target), { recursive: true })
    renameSync(join(root, name), target)
    log.warn('a git folder has no repository; moved aside', { folder: name, to: target })
  }
  return { removedRows: state.unfinished.length, orphaned: state.unaccounted, missing: state.missing.map((r) => `${r.ownerName}/${r.name}`), leftovers }
}

/**
 * The repository folders against the rows, read only (repairRepositories acts on it; `warren
 * doctor` reports it): rows still 'creating', ready rows whose folder is missing, the folders
 * of rows that have one, and folders under repositories/ no row accounts for (`owner/name.git`).
 */
export async function repositoryFolders(deps: AppDeps) {
  const unfinished = await deps.db.select().from(repositories).where(eq(repositories.status, 'creating'))
  const rows = await deps.db.select({ ownerName: repositories.ownerName, name: repositories.name, status: repositories.status }).from(repositories)
  const known = new Set<string>()
  const missing: { ownerName: string; name: string; path: string }[] = []
  const present: string[] = []
  for (const r of rows) {
    const path = pathOfRepo(deps, r.ownerName, r)
    known.add(path)
    if (existsSync(path)) present.push(path)
    else if (r.status !== 'creating') missing.push({ ownerName: r.ownerName, name: r.name, path })
  }
  const root = join(deps.config.dataDir, 'repositories')
  const unaccounted: string[] = []
  if (existsSync(root))
    for (const ownerDir of readdirSync(root, { withFileTypes: true })) {
      if (!ownerDir.isDirectory() || ownerDir.name === '.orphaned') continue
      for (const entry of readdirSync(join(root, ownerDir.name), { withFileTypes: true })) {
        const path = join(root, ownerDir.name, entry.name)
        if (!entry.isDirectory() || known.has(path)) continue
        if (entry.name.endsWith('.wiki.git') && known.has(path.replace(/\.wiki\.git$/, '.git'))) continue
        unaccounted.push(`${ownerDir.name}/${entry.name}`)
      }
    }
  return { unfinished, missing, present, unaccounted }
}
