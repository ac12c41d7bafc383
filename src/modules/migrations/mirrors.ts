import { and, asc, eq, gt, lte } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { Db } from '../../db/client'
import { mirrors, repositories } from '../../db/schema'
import { fetchMirror } from '../../git/remote'
import { openSecret } from '../../lib/secret-box'
import { nowUnix } from '../../lib/time'
import { badRequest } from '../../lib/errors'
import { recordPush } from '../../push'
import { gitOfRow } from '../../auth/repo-context'
import { migrationError, resolveCloneSource } from './service'
import { errorFields, loggerOf } from '../../lib/log'

/**
 * Pull-mirror updates. Each update fetches every branch and tag from the remote (`git fetch
 * --prune`, the long git time limit) and then lets the push recorder (src/push) record what moved: the refs before
 * are the recorded ones, so the ref changes become push events in the repository owner's name
 * (Gitea attributes mirror syncs to the owner). Updates queue per database and run at most
 * `mirrorWorkers` at once; a repository is never queued twice. The address goes through the
 * outbound policy again on every update (its name may resolve elsewhere now; remote-policy.ts).
 */
interface MirrorQueue {
  waiting: { repoId: number; now?: number }[]
  queued: Set<number>
  running: number
  idle: (() => void)[]
  /** Aborted by stopMirrorUpdates: running fetches die, nothing new starts. */
  stopping: AbortController
}

const queues = new WeakMap<Db, MirrorQueue>()
function queueOf(db: Db): MirrorQueue {
  let q = queues.get(db)
  if (!q) queues.set(db, (q = { waiting: [], queued: new Set(), running: 0, idle: [], stopping: new AbortController() }))
  return q
}

/** Fetches one mirror now and records the result (mirror_updated, next update, last error). */
export async function updateMirror(deps: AppDeps, repoId: number, now = nowUnix()): Promise<'updated' | 'failed' | 'missing'> {
  const found = (await deps.db
    .select({ mirror: mirrors, repo: repositories })
    .from(mirrors)
    .innerJoin(repositories, eq(repositories.id, mirrors.repoId))
    .where(and(eq(mirrors.repoId, repoId), eq(repositories.status, 'ready'))))[0]
  if (!found) return 'missing'
  const { mirror, repo } = found
  let error = ''
  try {
    const password = mirror.authPasswordSealed ? openSecret(deps.config.dataDir, mirror.authPasswordSealed) : ''
    const source = await resolveCloneSource(deps, { isAdmin: true }, mirror.remoteAddress, { username: mirror.authUsername, password })
    // The fetch is the one writer of a mirror's refs (they follow the remote): nothing to decide,
    // and whatever it managed to change is recorded, even when it failed half-way.
    await recordPush(deps, repoId, repo.ownerId, null, async () => {
      const git = { ...gitOfRow(deps, repo), signal: queueOf(deps.db).stopping.signal }
      await fetchMirror(git, source.address, { auth: source.auth, allowFile: source.local, limits: git.limits })
    })
  } catch (e) {
    const mapped = migrationError(e)
    error = (mapped instanceof Error ? mapped.message : String(mapped)).slice(0, 500)
    loggerOf(deps.config).warn('updating a mirror failed', { repo: `${repo.ownerName}/${repo.name}`, error })
  }
  await deps.db
    .update(mirrors)
    .set({ updatedUnix: error ? mirror.updatedUnix : now, nextUpdateUnix: mirror.interval ? now + mirror.interval : 0, lastError: error })
    .where(eq(mirrors.repoId, repoId))
  return error ? 'failed' : 'updated'
}

function pump(deps: AppDeps): void {
  const q = queueOf(deps.db)
  while (!q.stopping.signal.aborted && q.running < Math.max(1, deps.config.mirrorWorkers) && q.waiting.length) {
    const job = q.waiting.shift()!
    q.running++
    updateMirror(deps, job.repoId, job.now)
      .catch((e) => loggerOf(deps.config).error('a mirror update failed', { repoId: job.repoId, ...errorFields(e) }))
      .finally(() => {
        q.running--
        q.queued.delete(job.repoId)
        pump(deps)
      })
  }
  if (q.running === 0 && q.waiting.length === 0) for (const resolve of q.idle.splice(0)) resolve()
}

/** Queues an update of one mirror (no-op when it is already queued or running). */
export async function queueMirrorUpdate(deps: AppDeps, repoId: number, now?: number): Promise<void> {
  const q = queueOf(deps.db)
  if (q.queued.has(repoId)) return
  q.queued.add(repoId)
  q.waiting.push({ repoId, now })
  pump(deps)
}

/** Resolves once no mirror update is queued or running. */
export function mirrorUpdatesSettled(deps: AppDeps): Promise<void> {
  const q = queueOf(deps.db)
  if (q.running === 0 && q.waiting.length === 0) return Promise.resolve()
  return new Promise((resolve) => q.idle.push(resolve))
}

/**
 * At shutdown: drops the queued updates and kills the running fetches (each still records what it
 * had changed), and resolves when they have ended. The queue then takes updates again (a server
 * started anew on the same database in this process).
 */
export async function stopMirrorUpdates(deps: AppDeps): Promise<void> {
  const q = queueOf(deps.db)
  for (const job of q.waiting.splice(0)) q.queued.delete(job.repoId)
  q.stopping.abort()
  await mirrorUpdatesSettled(deps)
  q.stopping = new AbortController()
}

/** Mirrors looked at per scheduler tick at most; the rest wait for the next tick. */
const DUE_BATCH = 100

/** Queues every mirror whose next update is due at `now`; answers how many. */
export async function queueDueMirrors(deps: AppDeps, now = nowUnix()): Promise<number> {
  const due = await deps.db
    .select({ repoId: mirrors.repoId })
    .from(mirrors)
    .innerJoin(repositories, eq(repositories.id, mirrors.repoId))
    .where(and(gt(mirrors.interval, 0), lte(mirrors.nextUpdateUnix, now), eq(repositories.status, 'ready')))
    .orderBy(asc(mirrors.nextUpdateUnix))
    .limit(DUE_BATCH)
  for (const { repoId } of due) await queueMirrorUpdate(deps, repoId, now)
  return due.length
}

/** POST /repos/{o}/{r}/mirror-sync: queues an update of a pull mirror; 400 for other repositories (Gitea). */
export async function requestMirrorSync(deps: AppDeps, repoId: number): Promise<void> {
  const found = (await deps.db.select({ id: mirrors.repoId }).from(mirrors).where(eq(mirrors.repoId, repoId)))[0]
  if (!found) throw badRequest('Repository is not a mirror')
  await queueMirrorUpdate(deps, repoId)
}
