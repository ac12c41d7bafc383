/**
 * `warren doctor [--fix]`: checks what an operator needs to trust the data folder, and repairs
 * what can be repaired without judgement, reusing the start-up repairs (repairRepositories,
 * reconcileRepositories: only of repositories `git fsck` found sound, checked first, so broken
 * refs are never recorded as pushes or deletions). It may run beside a serving Warren (found by
 * ./serve-mark.ts besideServers, on either database): then only the repairs that are safe
 * beside it are made (see checkRepositories).
 */
import type { Config } from '../config'
import { createDeps, type AppDeps } from '../deps'
import { count, eq } from 'drizzle-orm'
import { existsSync } from 'node:fs'
import { closeDatabase, sqliteOf } from '../db/client'
import { repositories, users } from '../db/schema'
import { runGit, safeGitMessage } from '../git/run'
import { gitLeftovers, removeGitLeftovers } from '../git/leftovers'
import { gitLimitsOf, gitOfRow } from '../auth/repo-context'
import { repairRepositories, repositoryFolders } from '../modules/repos/repair'
import { repairAvatars } from '../modules/avatars/storage'
import { checkPushHooks, reconcileRepositories } from '../push'
import { checkGit } from './git-check'
import { besideServers } from './serve-mark'

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
  /** A server running on the data, as said (its process, or PostgreSQL's serving lock held). */
  serverRunning?: string
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

  const deps = await createDeps(config)
  let serverRunning: string | undefined
  try {
    serverRunning = await besideServers(deps, async (running) => running)
    await checkDatabase(deps, check('database'))
    if (git.ok) serverRunning = await checkRepositories(deps, check, { ...opts, serverRunning })
    await checkHooks(deps, check('push hooks'), opts.fix)
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
async function checkAvatars(deps: AppDeps, c: DoctorCheck, opts: { fix: boolean; serverRunning?: string }): Promise<void> {
  const found = await repairAvatars(deps, { keep: !opts.fix, before: opts.serverRunning ? Date.now() - UPLOAD_MARGIN_MS : undefined })
  for (const file of found.unnamed) (opts.fix ? c.fixed : c.details).push(`${file}: ${opts.fix ? 'removed, ' : ''}no user, organisation or repository names it`)
  for (const file of found.missing) c.details.push(`${file}: named by a row, missing (its URL answers 404)`)
  c.ok = c.details.length === 0
  if (c.ok) c.details.push('every avatar a row names has its file')
}

async function checkRepositories(
  deps: AppDeps,
  check: (name: string) => DoctorCheck,
  opts: { fix: boolean; timeoutMs: number; serverRunning?: string },
): Promise<string | undefined> {
  const folders = check('repository folders')
  let state = await repositoryFolders(deps)
  const leftoverAge = deps.config.gitTimeout * 1000 + 60_000
  // git's check first: a repository whose refs are broken (or that was not checked) is never
  // reconciled, which would record its broken refs as pushes and deletions.
  const health = check('repository health (git fsck --connectivity-only)')
  const healthy = await fsckAll(deps, health, state.present, opts.timeoutMs)
  const rows = await deps.db.select({ id: repositories.id, ownerName: repositories.ownerName, name: repositories.name }).from(repositories).where(eq(repositories.status, 'ready'))
  const unchecked = new Set(rows.filter((r) => !healthy.has(gitOfRow(deps, r).gitDir)).map((r) => r.id))
  const reconcile = async (settlePending: boolean) => {
    const reconciled = await reconcileRepositories(deps, { settlePending, except: unchecked })
    if (reconciled.updated) folders.fixed.push(`brought ${reconciled.updated} repository records in line with git`)
    const left = rows.filter((r) => unchecked.has(r.id) && existsSync(gitOfRow(deps, r).gitDir)).length
    if (left) health.details.push(`${left} repositories not brought in line with git: broken, or not checked (their refs read as they are would be recorded as pushes and deletions)`)
  }
  let running = opts.serverRunning
  if (opts.fix)
    running = await besideServers(deps, async (server) => {
      if (!server) {
        // Nothing else works on the data (and on PostgreSQL no server starts meanwhile): the
        // start-up repairs apply as they are. One that fails (a folder an interrupted move left
        // that cannot go back) fails the check, naming it, as it fails the start; nothing after
        // it is repaired.
        const repaired = await repairRepositories(deps).catch((e: unknown) => {
          folders.details.push(`the start-up repair failed: ${e instanceof Error ? e.message : String(e)}`)
          return null
        })
        if (repaired) {
          if (repaired.removedRows) folders.fixed.push(`removed ${repaired.removedRows} unfinished repositories`)
          if (repaired.deleted) folders.fixed.push(`removed the folders of ${repaired.deleted} deleted repositories`)
          if (repaired.leftovers.length) folders.fixed.push(`removed ${repaired.leftovers.length} temporary git objects`)
          await reconcile(true)
        }
      } else {
        // A server runs: a 'creating' row or a folder without a row may be its work in progress, and
        // a push may be running. Only records out of step with git and temporary objects older
        // than the longest git run are safe to repair.
        await reconcile(false)
        const removed = state.present.flatMap((path) => removeGitLeftovers(path, leftoverAge))
        if (removed.length) folders.fixed.push(`removed ${removed.length} stale temporary git objects`)
      }
      state = await repositoryFolders(deps)
      return server
    })
  for (const r of state.missing) folders.details.push(`${r.ownerName}/${r.name}: git folder missing (expected ${r.path})`)
  for (const row of state.unfinished) folders.details.push(`${row.ownerName}/${row.name}: unfinished (being created, or left by a crash)`)
  const leftovers = state.present.flatMap((path) => gitLeftovers(path, running ? leftoverAge : 0))
  if (leftovers.length) folders.details.push(`${leftovers.length} temporary git objects left by interrupted git processes`)
  folders.ok = folders.details.length === 0
  if (folders.ok) folders.details.push(`${state.present.length} repositories, each with its folder`)
  // Not faults: what a running server's own repairs keep, and folders put there by hand (as in
  // Gitea, one waits for an administrator to adopt or delete it).
  if (opts.fix && running)
    folders.details.push(`a server runs on this data folder (${running}): unfinished repositories and unaccounted folders are left to its start-up repair and background sweep`)
  for (const name of state.unaccounted) folders.details.push(`${name}: folder without a repository (unadopted: adopt or delete it, /api/v1/admin/unadopted)`)
  return running
}

/**
 * `git fsck --connectivity-only` of each folder of `present`, within `timeoutMs` in all, into
 * `health`; answers the folders found sound.
 */
async function fsckAll(deps: AppDeps, health: DoctorCheck, present: string[], timeoutMs: number): Promise<Set<string>> {
  const deadline = Date.now() + timeoutMs
  const limits = gitLimitsOf(deps)
  const sound = new Set<string>()
  let next = 0
  let checked = 0
  const failures: string[] = []
  const worker = async () => {
    while (next < present.length) {
      const gitDir = present[next++]!
      const left = deadline - Date.now()
      if (left <= 0) return
      const signal = AbortSignal.timeout(left)
      try {
        const r = await runGit(['fsck', '--connectivity-only', '--no-dangling', '--no-progress'], { gitDir, budget: 'long', limits, signal })
        checked++
        if (r.code !== 0) failures.push(`${relative(deps, gitDir)}: ${safeGitMessage(r.stderr)}`)
        else sound.add(gitDir)
      } catch (e) {
        failures.push(`${relative(deps, gitDir)}: not checked (${(e as Error).message})`)
      }
    }
  }
  await Promise.all(Array.from({ length: FSCK_PARALLELISM }, worker))
  const unchecked = present.length - checked
  if (failures.length) Object.assign(health, { ok: false, details: failures.slice(0, 100) })
  if (unchecked > 0) health.details.push(`${unchecked} of ${present.length} repositories not checked within ${timeoutMs / 1000} s (raise --timeout)`)
  if (failures.length === 0) health.details.unshift(`${checked} repositories checked, no problem found`)
  return sound
}

/** git's pre-receive hook (src/push/hook.ts), without which a push would go unjudged; written again with --fix. */
async function checkHooks(deps: AppDeps, c: DoctorCheck, fix: boolean): Promise<void> {
  const altered = await checkPushHooks(deps.config.dataDir, fix)
  for (const path of altered) (fix ? c.fixed : c.details).push(`${path}: missing or altered${fix ? ', written again' : ' (a push is checked and the hook written again before git runs; --fix writes it now)'}`)
  c.ok = c.details.length === 0
  if (c.ok && !altered.length) c.details.push('every hook written is as Warren writes it')
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
