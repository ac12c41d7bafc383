import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { and, eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { withLock, writeTransaction } from '../db/client'
import { pendingPushes, pullRequests, repoGitStates, repositories } from '../db/schema'
import { gitOfRow } from '../auth/repo-context'
import { objectStoreOf, setHeadBranch, type ObjectStore } from '../git/refs'
import { headBranchOf, readBranchAndTagRefs, refsFingerprint } from '../git/ref-state'
import type { PushCommand } from '../git/push-commands'
import { diffRefs, refChangeEvents, ZERO_ID } from '../events/push-events'
import { recordEvents, type NewEvent } from '../events/outbox'
import { nowUnix } from '../lib/time'
import { queueChecksForBranches } from './pull-queue'
import { errorFields, loggerOf } from '../lib/log'
import { oneAtATime } from '../lib/one-at-a-time'
import { readRef } from '../git/merge'
import { swapRef } from '../git/ref-swap'
import { runGit, type GitRepo } from '../git/run'
import { SERVER_REFS } from './decision'
import { isZeroId } from './branch-judge'

/**
 * Keeping the database in step with what git holds after a push (and after a crash).
 *
 * Design: the database keeps, per repository, the refs it last recorded (repo_git_states). After
 * `git receive-pack` exits — whatever happened to the HTTP client, and whatever git's exit code —
 * `finishPush` reads git's refs and diffs them against that record: the differences are the
 * push's ref updates, written as push / ref.created / ref.deleted events in the same transaction
 * that updates the repository row (is_empty, default branch, size) and the record. This was
 * chosen over a post-receive hook because the same diff also repairs a crash at any instant:
 * nothing has to be installed in each repository, and nothing git does can be lost between a
 * hook and the server. Who pushed each ref comes from a pending_pushes row written before git
 * starts (with the command list read from the request), so a crash after git accepted a push
 * still lets the startup reconcile name the pusher. Syncs of one repository run one at a time in
 * this process and across processes. Every ref change goes through the recorder around it
 * (./recorder.ts: beginPush, finishPush; withPush and moveRef in ./path.ts).
 */

/** One sync at a time per repository (per database): a later one waits for the earlier one. */
const syncInTurn = oneAtATime<number>()

export type SyncResult = 'unchanged' | 'updated' | 'missing'

/**
 * Brings one repository's row in line with git: emptiness, default branch (kept when it exists;
 * else git's HEAD branch, else the first branch pushed, else the first branch; HEAD follows),
 * size, and the recorded refs, writing the events of the ref changes since the last record
 * (none when there was no record: the old state is unknown). Skips the git work when the refs'
 * fingerprint is the recorded one and no push is pending. The row's updated_at moves only when a
 * ref moved; a sync that finds everything as recorded (a fingerprint changed by new inodes, as
 * after a restore) writes only the new fingerprint and answers 'unchanged'. See SyncOptions for
 * which pending pushes it settles.
 */
export function syncRepositoryWithGit(
  deps: AppDeps,
  repoId: number,
  opts: SyncOptions = {},
): Promise<SyncResult> {
  // One at a time per repository: in this process (syncInTurn), and across processes (withLock).
  return syncInTurn(deps.db, repoId, () => withLock(deps.db, `repo-sync:${repoId}`, async () => {
    let result: SyncResult = 'missing'
    try {
      return (result = await syncOnce(deps, repoId, opts))
    } finally {
      // A push this sync could not record (git unreadable, a timeout, the repository gone) must
      // not stay pending: it would keep every later sync of the repository from its fingerprint
      // shortcut (and an abandoned one would be tried again at every repair).
      const own = opts.pushId ? [opts.pushId] : (opts.settle ?? [])
      if (own.length && result !== 'updated') await deps.db.delete(pendingPushes).where(inArray(pendingPushes.id, own))
    }
  }))
}

interface SyncOptions {
  /** The push this sync finishes (its process's finishPush). */
  pushId?: number
  /** Settle every pending push of the repository: none can be running (start-up). */
  settlePending?: boolean
  /** Settle these pending pushes, which no running process claims (settleAbandonedPushes). */
  settle?: number[]
}

async function syncOnce(deps: AppDeps, repoId: number, opts: SyncOptions): Promise<SyncResult> {
  const db = deps.db
  const row = (await db.select().from(repositories).where(eq(repositories.id, repoId)))[0]
  if (!row || row.status !== 'ready') return 'missing'
  const git = gitOfRow(deps, row)
  const gitDir = git.gitDir
  if (!existsSync(gitDir)) return 'missing'
  const state = (await db.select().from(repoGitStates).where(eq(repoGitStates.repoId, repoId)))[0]
  const pending = await db.select().from(pendingPushes).where(eq(pendingPushes.repoId, repoId))
  const settling = opts.settlePending ? pending.map((p) => p.id) : opts.pushId ? [opts.pushId] : (opts.settle ?? [])
  await settleServerRefs(deps, repoId, git, pending.filter((p) => settling.includes(p.id)))
  let fingerprint = await refsFingerprint(gitDir)
  if (!opts.pushId && state?.fingerprint === fingerprint && pending.length === 0) return 'unchanged'
  // The fingerprint is taken before the refs are read: a change in between shows next time.
  const [refs, store] = await Promise.all([readBranchAndTagRefs(git), objectStoreOf(git)])
  if (!refs) return 'missing'
  const size = store.bytes
  const heads = Object.keys(refs).filter((r) => r.startsWith('refs/heads/')).map((r) => r.slice('refs/heads/'.length))
  let defaultBranch = row.defaultBranch
  if (heads.length > 0 && !heads.includes(defaultBranch)) {
    const head = await headBranchOf(git)
    const pushed = pending.flatMap((p) => (p.commands ? (JSON.parse(p.commands) as PushCommand[]) : []).map((c) => c.ref))
    const firstPushed = pushed.find((r) => r.startsWith('refs/heads/') && heads.includes(r.slice('refs/heads/'.length)))
    defaultBranch = head && heads.includes(head) ? head : firstPushed ? firstPushed.slice('refs/heads/'.length) : heads[0]!
    if (head !== defaultBranch) {
      await setHeadBranch(git, defaultBranch)
      // Moving HEAD changed the fingerprint (not the branches and tags): take it again.
      fingerprint = await refsFingerprint(gitDir)
    }
  }
  const isEmpty = Object.keys(refs).length === 0
  // Whether the record changed: a ref moved, what the row says of git differs (or there was no
  // record), or a pending push is settled.
  let changed = false
  await writeTransaction(db, async () => {
    const current = (await db.select().from(repoGitStates).where(eq(repoGitStates.repoId, repoId)))[0]
    const now = (await db.select({ isEmpty: repositories.isEmpty, defaultBranch: repositories.defaultBranch, size: repositories.size }).from(repositories).where(eq(repositories.id, repoId)))[0]
    changed = !current || !now || now.isEmpty !== isEmpty || now.defaultBranch !== defaultBranch || now.size !== size || pending.some((p) => settling.includes(p.id))
    let moved = false
    if (current) {
      const pushers = pending.map((p) => ({ pusherId: p.pusherId, commands: p.commands ? (JSON.parse(p.commands) as PushCommand[]) : null, id: p.id }))
      const own = opts.pushId ?? (opts.settle?.length === 1 ? opts.settle[0] : undefined)
      // This sync's own push gone (a repair settled it: its claim went with this process's lock
      // connection, and it looked abandoned): its changes are not put on another push's pusher.
      const fallback = own !== undefined ? pushers.find((p) => p.id === own) : pushers.length === 1 ? pushers[0] : undefined
      // The latest pending push that asked for exactly each update (ref and new id), looked up
      // per change: a push of thousands of refs cost changes × commands comparisons (a second of
      // the event loop at 4,900 refs).
      const askedFor = new Map<string, (typeof pushers)[number]>()
      for (const p of pushers) for (const c of p.commands ?? []) askedFor.set(`${c.ref}\0${c.new}`, p)
      // The changes' events and checks are written a batch a statement: a push or a mirror's sync
      // of thousands of refs wrote three statements each, the event loop held all along (bun:sqlite
      // answers at once: 0.8 s at 5,000 refs, 3.8 s at 50,000).
      const changeEvents: NewEvent[] = []
      const movedBranches: { branch: string; actorId: number | null }[] = []
      for (const change of diffRefs(JSON.parse(current.refs), refs)) {
        moved = true
        // The push that asked for it; else this sync's push.
        const asked = askedFor.get(`${change.ref}\0${change.after}`)
        const pusherId = (asked ?? fallback)?.pusherId ?? null
        changeEvents.push(...refChangeEvents(repoId, pusherId, change))
        // Pull requests whose head or base this branch is get their mergeability checked again.
        if (change.ref.startsWith('refs/heads/')) movedBranches.push({ branch: change.ref.slice('refs/heads/'.length), actorId: pusherId })
      }
      await recordEvents(db, changeEvents)
      await queueChecksForBranches(db, repoId, movedBranches)
    }
    // Only a ref that moved is an update of the repository (its updated_at): a restore, a restart
    // or a fingerprint taken again (new inodes) finds the same refs and leaves it.
    changed ||= moved
    if (changed)
      await db.update(repositories)
        .set({ isEmpty, defaultBranch, size, ...(moved ? { updatedUnix: nowUnix() } : {}) })
        .where(eq(repositories.id, repoId))
    const record = { refs: JSON.stringify(refs), fingerprint, updatedUnix: nowUnix() }
    await db.insert(repoGitStates).values({ repoId, ...record }).onConflictDoUpdate({ target: repoGitStates.repoId, set: record })
    if (settling.length) await db.delete(pendingPushes).where(and(eq(pendingPushes.repoId, repoId), inArray(pendingPushes.id, settling)))
  })
  if (needsGc(store) || (await ownGcSettings(gitDir))) collectGarbage(deps, git)
  return changed ? 'updated' : 'unchanged'
}

/**
 * git's own limits for `gc --auto` (gc.autoPackLimit, gc.auto): past either, the object store is
 * worth consolidating. receive-pack does not run its auto-gc (push/hook.ts): each push would
 * start two git processes to find, most often, nothing to do.
 */
const GC_AUTO_PACK_LIMIT = 50
const GC_AUTO_LOOSE_LIMIT = 6_700

const needsGc = (store: ObjectStore): boolean => store.packs > GC_AUTO_PACK_LIMIT || store.loose > GC_AUTO_LOOSE_LIMIT

/**
 * Whether the repository's config sets its own gc limits, or may (a `[gc]` section, an include):
 * then `gc --auto` runs after every push, as receive-pack ran it, and git decides by them (a
 * repository set to collect sooner does not wait for the defaults above; `gc.auto = 0` runs none).
 */
const ownGcSettings = async (gitDir: string): Promise<boolean> =>
  /^[ \t]*\[[ \t]*(gc|include|includeif)\b/im.test(await readFile(join(gitDir, 'config'), 'utf8').catch(() => ''))

/**
 * `git gc --auto` in the background, as receive-pack would have run it after the push (git
 * decides again, by the repository's own settings, and its lock keeps two from running at once):
 * nobody waits for it, and its failure is only logged.
 */
function collectGarbage(deps: AppDeps, git: GitRepo): void {
  void runGit(['gc', '--auto', '--quiet'], { ...git, budget: 'long' })
    .then((r) => {
      if (r.code !== 0) loggerOf(deps.config).warn('git gc --auto failed', { gitDir: git.gitDir, stderr: r.stderr.slice(0, 500) })
    })
    .catch((e) => loggerOf(deps.config).warn('git gc --auto failed', errorFields(e)))
}

/** A pull request's head ref (SERVER_REFS): its index. */
const SERVER_REF = new RegExp(`^${SERVER_REFS}(\\d{1,15})/head$`)

/**
 * The server's own refs a settled push meant to delete (a deleted pull request's
 * `refs/pull/N/head`: src/modules/issues deleteIssue moves it, then deletes the rows) are made to
 * agree with the database, which decides: the pull request gone, its ref goes whatever it holds
 * (indexes are never reused, so nothing else will want it); the pull request still there (its
 * deletion failed, or a crash came between the ref's move and the rows'), the ref is put back at
 * the commit it held. Either way a crash at any instant ends with both sides agreeing.
 */
async function settleServerRefs(deps: AppDeps, repoId: number, git: GitRepo, pushes: { commands: string | null }[]) {
  const deletions = pushes.flatMap((p) => (p.commands ? (JSON.parse(p.commands) as PushCommand[]) : []))
    .filter((c) => isZeroId(c.new) && SERVER_REF.test(c.ref))
  for (const c of deletions) {
    const index = Number(SERVER_REF.exec(c.ref)![1])
    const pull = (await deps.db.select({ id: pullRequests.id }).from(pullRequests)
      .where(and(eq(pullRequests.baseRepoId, repoId), eq(pullRequests.index, index))))[0]
    const now = await readRef(git, c.ref)
    if (pull && !now) await swapRef(git, c.ref, c.old, ZERO_ID)
    else if (!pull && now) await swapRef(git, c.ref, ZERO_ID, now)
  }
}

/** Repositories checked at once by reconcileRepositories (each takes a few git processes at most). */
export const RECONCILE_PARALLELISM = 4

/**
 * Reconciles every ready repository with git (`warren doctor`) but those `except` names (whose
 * refs the doctor found broken: read, a broken ref would be recorded as a deletion): see
 * syncRepositoryWithGit.
 * Unchanged repositories cost a few stat calls each, no git process. `settlePending` only when no
 * push can be running. Start-up does not walk every repository: it settles the pending pushes
 * (reconcilePendingPushes), and the background sweep (src/jobs/repository-sweep.ts) checks the
 * rest a batch at a time.
 */
export async function reconcileRepositories(
  deps: AppDeps,
  opts: { settlePending?: boolean; parallelism?: number; except?: ReadonlySet<number> } = {},
): Promise<{ checked: number; updated: number; missing: number }> {
  const ids = (await deps.db.select({ id: repositories.id }).from(repositories).where(eq(repositories.status, 'ready'))).map((r) => r.id)
  return syncEach(deps, ids.filter((id) => !opts.except?.has(id)), opts)
}

/**
 * The start-up reconcile (nothing else runs yet): the repositories with a pending push, the only
 * ones a crash can have left with refs the database has not recorded (every ref change is
 * written as a pending push before git moves a ref: ./recorder.ts), are synced and their pushes
 * settled. Costs what was under way at the crash, not the number of repositories.
 */
export async function reconcilePendingPushes(deps: AppDeps, opts: { parallelism?: number } = {}): Promise<{ checked: number; updated: number; missing: number }> {
  const ids = (await deps.db.selectDistinct({ id: pendingPushes.repoId }).from(pendingPushes)).map((r) => r.id)
  return syncEach(deps, ids, { settlePending: true, parallelism: opts.parallelism })
}

async function syncEach(
  deps: AppDeps,
  ids: number[],
  opts: { settlePending?: boolean; parallelism?: number },
): Promise<{ checked: number; updated: number; missing: number }> {
  const result = { checked: ids.length, updated: 0, missing: 0 }
  let next = 0
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++]!
      try {
        const r = await syncRepositoryWithGit(deps, id, { settlePending: opts.settlePending })
        if (r === 'updated') result.updated++
        if (r === 'missing') result.missing++
      } catch (e) {
        loggerOf(deps.config).error('reconciling a repository with git failed', { repoId: id, ...errorFields(e) })
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, opts.parallelism ?? RECONCILE_PARALLELISM) }, worker))
  return result
}

/**
 * Syncs those of `rows` (ready repositories) whose refs changed since they were last recorded
 * (their fingerprint differs from the record, or there is none): two queries for the whole
 * batch and a few stat calls per repository, then syncRepositoryWithGit for the changed ones only.
 * A repository with a pending push is skipped: that push's process records it (finishPush), or the
 * repairs settle it if the process died. The background sweep's step (src/jobs/repository-sweep.ts).
 */
export async function syncChangedRepositories(deps: AppDeps, rows: { id: number; ownerName: string; name: string }[]): Promise<{ checked: number; updated: number }> {
  if (rows.length === 0) return { checked: 0, updated: 0 }
  const ids = rows.map((r) => r.id)
  const recorded = new Map(
    (await deps.db.select({ repoId: repoGitStates.repoId, fingerprint: repoGitStates.fingerprint }).from(repoGitStates).where(inArray(repoGitStates.repoId, ids)))
      .map((r) => [r.repoId, r.fingerprint]),
  )
  const pending = new Set((await deps.db.selectDistinct({ id: pendingPushes.repoId }).from(pendingPushes).where(inArray(pendingPushes.repoId, ids))).map((r) => r.id))
  const changed: number[] = []
  for (const row of rows) {
    const gitDir = gitOfRow(deps, row).gitDir
    if (pending.has(row.id) || !existsSync(gitDir)) continue
    if (recorded.get(row.id) !== (await refsFingerprint(gitDir))) changed.push(row.id)
  }
  const { updated } = await syncEach(deps, changed, {})
  return { checked: rows.length, updated }
}
