/**
 * `warren doctor [--fix]`: checks what an operator needs to trust the data folder, and repairs
 * what can be repaired without judgement, reusing the start-up repairs (repairRepositories,
 * reconcileRepositories). It may run beside a serving Warren: then only the repairs that are
 * safe beside it are made (see `fix` below).
 */
import type { Config } from '../config'
import { createDeps, type AppDeps } from '../deps'
import { count } from 'drizzle-orm'
import { closeDatabase, sqliteOf } from '../db/client'
import { users } from '../db/schema'
import { runGit, safeGitMessage } from '../git/run'
import { gitLeftovers, removeGitLeftovers } from '../git/leftovers'
import { gitLimitsOf } from '../auth/repo-context'
import { repairRepositories, repositoryFolders } from '../modules/repos/repair'
import { repairAvatars } from '../modules/avatars/storage'
import { reconcileRepositories } from '../push'
import { checkGit } from './git-check'
import { runningServer } from './serve-mark'

export interface DoctorCheck {
  name: string
  ok: boolean
  /** What was found (problems, or a one-line summary when fine). */
  details: string[]
  /** What --fix did. */
  fixed: string[]
}

export interface DoctorReport {
  checks: DoctorCheck[]
  healthy: boolean
  serverRunning?: number
}

/** Repositories fsck'd at once. */
const FSCK_PARALLELISM = 2

export async function doctor(config: Config, opts: { fix: boolean; timeoutMs: number }): Promise<DoctorReport> {
  const checks: DoctorCheck[] = []
  const check = (name: string) => {
    const c: DoctorCheck = { name, ok: true, details: [], fixed: [] }
    checks.push(c)
    return c
  }
  const gitCheck = check('git')
  const git = await checkGit()
  if (git.ok) gitCheck.details.push(`git ${git.version}`)
  else Object.assign(gitCheck, { ok: false, details: [git.problem] })

  const serverRunning = runningServer(config.dataDir)
  const deps = await createDeps(config)
  try {
    await checkDatabase(deps, check('database'))
    if (git.ok) await checkRepositories(deps, check, { ...opts, serverRunning })
    await checkAvatars(deps, check('avatar files'), { ...opts, serverRunning })
  } finally {
    await closeDatabase(deps.db)
  }
  return { checks, healthy: checks.every((c) => c.ok), serverRunning }
}

async function checkDatabase(deps: AppDeps, c: DoctorCheck): Promise<void> {
  if (deps.db.$runtime.dialect === 'postgres') {
    // The server enforces references and keeps its own files whole: being reachable is the check.
    await deps.db.select({ n: count() }).from(users)
    c.details.push('PostgreSQL reachable (it enforces integrity and references itself)')
    return
  }
  const sqlite = sqliteOf(deps.db, 'the database check')
  const integrity = sqlite.prepare('PRAGMA integrity_check').all() as { integrity_check: string }[]
  const problems = integrity.map((r) => r.integrity_check).filter((r) => r !== 'ok')
  const broken = sqlite.prepare('PRAGMA foreign_key_check').all() as { table: string; rowid: number; parent: string }[]
  for (const b of broken.slice(0, 20)) problems.push(`${b.table} row ${b.rowid} points at a missing ${b.parent} row`)
  if (broken.length > 20) problems.push(`... and ${broken.length - 20} more broken references`)
  if (problems.length) Object.assign(c, { ok: false, details: problems.slice(0, 50) })
  else c.details.push('integrity and references ok')
}

/** Margin for an upload running beside the doctor: its file is in place a moment before its row names it. */
const UPLOAD_MARGIN_MS = 60_000

/**
 * Avatar files against the rows naming them (modules/avatars/storage.ts repairAvatars): files no
 * row names, removed with --fix (beside a running server, only those older than a minute), and
 * rows whose file is missing, reported.
 */
async function checkAvatars(deps: AppDeps, c: DoctorCheck, opts: { fix: boolean; serverRunning?: number }): Promise<void> {
  const found = await repairAvatars(deps, { keep: !opts.fix, before: opts.serverRunning ? Date.now() - UPLOAD_MARGIN_MS : undefined })
  for (const file of found.unnamed) (opts.fix ? c.fixed : c.details).push(`${file}: ${opts.fix ? 'removed, ' : ''}no user, organisation or repository names it`)
  for (const file of found.missing) c.details.push(`${file}: named by a row, missing (its URL answers 404)`)
  c.ok = c.details.length === 0
  if (c.ok) c.details.push('every avatar a row names has its file')
}

async function checkRepositories(
  deps: AppDeps,
  check: (name: string) => DoctorCheck,
  opts: { fix: boolean; timeoutMs: number; serverRunning?: number },
): Promise<void> {
  const folders = check('repository folders')
  let state = await repositoryFolders(deps)
  const leftoverAge = deps.config.gitTimeout * 1000 + 60_000
  if (opts.fix && !opts.serverRunning) {
    // Nothing else works on the folder: the start-up repairs apply as they are. One that fails (a
    // folder an interrupted move left that cannot go back) fails the check, naming it, as it
    // fails the start; nothing after it is repaired.
    const repaired = await repairRepositories(deps).catch((e: unknown) => {
      folders.details.push(`the start-up repair failed: ${e instanceof Error ? e.message : String(e)}`)
      return null
    })
    if (repaired) {
      if (repaired.removedRows) folders.fixed.push(`removed ${repaired.removedRows} unfinished repositories`)
      if (repaired.deleted) folders.fixed.push(`removed the folders of ${repaired.deleted} deleted repositories`)
      if (repaired.leftovers.length) folders.fixed.push(`removed ${repaired.leftovers.length} temporary git objects`)
      const reconciled = await reconcileRepositories(deps, { settlePending: true })
      if (reconciled.updated) folders.fixed.push(`brought ${reconciled.updated} repository records in line with git`)
      state = await repositoryFolders(deps)
    }
  } else if (opts.fix) {
    // A server runs: a 'creating' row or a folder without a row may be its work in progress, and
    // a push may be running. Only records out of step with git and temporary objects older
    // than the longest git run are safe to repair.
    const reconciled = await reconcileRepositories(deps, { settlePending: false })
    if (reconciled.updated) folders.fixed.push(`brought ${reconciled.updated} repository records in line with git`)
    const removed = state.present.flatMap((path) => removeGitLeftovers(path, leftoverAge))
    if (removed.length) folders.fixed.push(`removed ${removed.length} stale temporary git objects`)
    folders.fixed.push(`a server runs on this data folder (pid ${opts.serverRunning}): unfinished repositories and unaccounted folders are left to its start-up repair and background sweep`)
  }
  for (const r of state.missing) folders.details.push(`${r.ownerName}/${r.name}: git folder missing (expected ${r.path})`)
  for (const row of state.unfinished) folders.details.push(`${row.ownerName}/${row.name}: unfinished (being created, or left by a crash)`)
  const leftovers = state.present.flatMap((path) => gitLeftovers(path, opts.serverRunning ? leftoverAge : 0))
  if (leftovers.length) folders.details.push(`${leftovers.length} temporary git objects left by interrupted git processes`)
  folders.ok = folders.details.length === 0
  if (folders.ok) folders.details.push(`${state.present.length} repositories, each with its folder`)
  // Not a fault (as in Gitea): a folder put there by hand waits for an administrator to adopt or delete it.
  for (const name of state.unaccounted) folders.details.push(`${name}: folder without a repository (unadopted: adopt or delete it, /api/v1/admin/unadopted)`)

  const health = check('repository health (git fsck --connectivity-only)')
  const deadline = Date.now() + opts.timeoutMs
  const limits = gitLimitsOf(deps)
  let next = 0
  let checked = 0
  const failures: string[] = []
  const worker = async () => {
    while (next < state.present.length) {
      const gitDir = state.present[next++]!
      const left = deadline - Date.now()
      if (left <= 0) return
      const signal = AbortSignal.timeout(left)
      try {
        const r = await runGit(['fsck', '--connectivity-only', '--no-dangling', '--no-progress'], { gitDir, budget: 'long', limits, signal })
        checked++
        if (r.code !== 0) failures.push(`${relative(deps, gitDir)}: ${safeGitMessage(r.stderr)}`)
      } catch (e) {
        failures.push(`${relative(deps, gitDir)}: not checked (${(e as Error).message})`)
      }
    }
  }
  await Promise.all(Array.from({ length: FSCK_PARALLELISM }, worker))
  const unchecked = state.present.length - checked
  if (failures.length) Object.assign(health, { ok: false, details: failures.slice(0, 100) })
  if (unchecked > 0) health.details.push(`${unchecked} of ${state.present.length} repositories not checked within ${opts.timeoutMs / 1000} s (raise --timeout)`)
  if (failures.length === 0) health.details.unshift(`${checked} repositories checked, no problem found`)
}

const relative = (deps: AppDeps, gitDir: string) => gitDir.slice(deps.config.dataDir.length + 1)

/** The report as an operator reads it. */
export function printDoctorReport(report: DoctorReport): void {
  for (const c of report.checks) {
    console.log(`[${c.ok ? ' ok ' : 'FAIL'}] ${c.name}`)
    for (const d of c.details) console.log(`       ${d}`)
    for (const f of c.fixed) console.log(`       fixed: ${f}`)
  }
  console.log(report.healthy ? 'No problem found.' : 'Problems found (see FAIL above).')
}
