import type { AppDeps } from '../../deps'
import type { Db } from '../../db/client'
import { errorFields, loggerOf } from '../../lib/log'
import { openSecret } from '../../lib/secret-box'
import { GitError } from '../../git/run'
import { remoteFailure, resolveCloneSource, type CloneSource } from './service'

/**
 * The one queue of mirror work, pull mirrors' fetches (mirrors.ts) and push mirrors' pushes
 * (push-mirrors.ts) alike: per database, at most `mirrorWorkers` at once. A job is known by its
 * key (`pull:{repoId}`, `push:{mirrorId}`): one already waiting is not queued twice; one asked for
 * while it runs runs once more after it (a push mirror told of a commit made during its push
 * pushes again). Each job gets the queue's stop signal, which stopMirrorUpdates aborts at shutdown.
 */
export interface MirrorJob {
  key: string
  run: (signal: AbortSignal) => Promise<unknown>
}

interface MirrorQueue {
  waiting: MirrorJob[]
  waitingKeys: Set<string>
  /** The running jobs by key, each with the job to run again once it ends (asked for meanwhile). */
  running: Map<string, MirrorJob | null>
  idle: (() => void)[]
  /** Aborted by stopMirrorUpdates: running git commands die, nothing new starts. */
  stopping: AbortController
}

const queues = new WeakMap<Db, MirrorQueue>()
function queueOf(db: Db): MirrorQueue {
  let q = queues.get(db)
  if (!q) queues.set(db, (q = { waiting: [], waitingKeys: new Set(), running: new Map(), idle: [], stopping: new AbortController() }))
  return q
}

function wait(q: MirrorQueue, job: MirrorJob): void {
  q.waitingKeys.add(job.key)
  q.waiting.push(job)
}

function pump(deps: AppDeps): void {
  const q = queueOf(deps.db)
  while (!q.stopping.signal.aborted && q.running.size < Math.max(1, deps.config.mirrorWorkers) && q.waiting.length) {
    const job = q.waiting.shift()!
    q.waitingKeys.delete(job.key)
    q.running.set(job.key, null)
    job
      .run(q.stopping.signal)
      .catch((e) => loggerOf(deps.config).error('a mirror update failed', { job: job.key, ...errorFields(e) }))
      .finally(() => {
        const again = q.running.get(job.key)
        q.running.delete(job.key)
        if (again && !q.stopping.signal.aborted) wait(q, again)
        pump(deps)
      })
  }
  if (q.running.size === 0 && q.waiting.length === 0) for (const resolve of q.idle.splice(0)) resolve()
}

/** Queues a job: no-op when one of its key waits; once more after it when one runs. */
export function queueMirrorJob(deps: AppDeps, job: MirrorJob): void {
  const q = queueOf(deps.db)
  if (q.waitingKeys.has(job.key)) return
  if (q.running.has(job.key)) {
    q.running.set(job.key, job)
    return
  }
  wait(q, job)
  pump(deps)
}

/** Resolves once no mirror job is queued or running. */
export function mirrorUpdatesSettled(deps: AppDeps): Promise<void> {
  const q = queueOf(deps.db)
  if (q.running.size === 0 && q.waiting.length === 0) return Promise.resolve()
  return new Promise((resolve) => q.idle.push(resolve))
}

/**
 * At shutdown: drops the queued jobs and kills the running git commands (each job still records
 * what it had changed), and resolves when they have ended. The queue then takes jobs again (a
 * server started anew on the same database in this process).
 */
export async function stopMirrorUpdates(deps: AppDeps): Promise<void> {
  const q = queueOf(deps.db)
  q.waiting.splice(0)
  q.waitingKeys.clear()
  for (const key of q.running.keys()) q.running.set(key, null)
  q.stopping.abort()
  await mirrorUpdatesSettled(deps)
  q.stopping = new AbortController()
}

/** A mirror's remote as its row keeps it: the address without credentials, the password sealed. */
export interface StoredRemote {
  remoteAddress: string
  authUsername: string
  authPasswordSealed: string
}

/**
 * One fetch or push of a mirror: its password opened, its address checked against the outbound
 * policy again (its name may resolve elsewhere now), then `transfer`. Answers the failure's message
 * (git's, scrubbed of credentials; at most 500 characters), '' on success.
 */
export async function mirrorAttempt(
  deps: AppDeps,
  remote: StoredRemote,
  caller: { isAdmin: boolean },
  transfer: (source: CloneSource) => Promise<void>,
): Promise<string> {
  try {
    const password = remote.authPasswordSealed ? openSecret(deps.config.dataDir, remote.authPasswordSealed) : ''
    await transfer(await resolveCloneSource(deps, caller, remote.remoteAddress, { username: remote.authUsername, password }))
    return ''
  } catch (e) {
    let text = e instanceof Error ? e.message : String(e)
    if (e instanceof GitError && e.kind === 'failed') {
      const { auth, message } = remoteFailure(e)
      text = auth ? `Authentication failed: ${message}` : message
    }
    return text.slice(0, 500)
  }
}
