import type { Server } from 'bun'
import type { AppDeps } from '../deps'
import { repositories } from '../db/schema'
import { closeDatabase } from '../db/client'
import { removeGitLeftovers } from '../git/leftovers'
import { cancelAllWork, workInFlight, workSettled } from '../lib/in-flight'
import { errorFields, type Logger } from '../lib/log'
import { pathOfRepo } from '../modules/repos/service'

/** Anything `warren serve` starts beside the HTTP server and must stop before the database closes. */
export interface BackgroundJob {
  stop(): Promise<void> | void
}

/**
 * The background jobs of `warren serve` (the mirror scheduler; SSH, webhook deliveries and the
 * like register the same way): `add` each one as it starts; shutdown stops them all at once
 * and waits for every stop before the database closes.
 */
export class BackgroundJobs {
  private readonly jobs: { name: string; job: BackgroundJob }[] = []

  add<T extends BackgroundJob>(name: string, job: T): T {
    this.jobs.push({ name, job })
    return job
  }

  async stopAll(log: Logger): Promise<void> {
    await Promise.all(
      this.jobs.map(async ({ name, job }) => {
        try {
          await job.stop()
        } catch (e) {
          log.error('stopping a background job failed', { job: name, ...errorFields(e) })
        }
      }),
    )
  }
}

/** After git processes are told to stop: their SIGTERM → SIGKILL grace (src/git/run.ts) and a margin. */
const CUT_OFF_WAIT_MS = 5000

/**
 * The one shutdown sequence of `warren serve` (SIGTERM, SIGINT):
 * 1. stop accepting connections; requests in flight go on (a push being received completes);
 *    background jobs are told to stop at the same time;
 * 2. wait for the requests, and for work that outlives its request (git processes, a push
 *    being recorded after its client hung up: src/lib/in-flight.ts), until the grace period
 *    (WARREN_SHUTDOWN_GRACE) ends or `cutNow` aborts (a second signal);
 * 3. past it: close the remaining connections and stop the remaining git processes, then wait
 *    for them to exit (SIGTERM, SIGKILL after 2 s), and remove what they left in the
 *    repositories (a push's quarantine, half-written packs: src/git/leftovers.ts);
 * 4. wait for the background jobs' stops; close the database.
 * Returns whether anything had to be cut off.
 */
export async function shutdown(
  deps: AppDeps,
  server: Server<unknown>,
  jobs: BackgroundJobs,
  log: Logger,
  cutNow: AbortSignal,
): Promise<{ cut: boolean }> {
  const deadline = Date.now() + deps.config.shutdownGraceMs
  const inFlight = { requests: server.pendingRequests, work: workInFlight(), grace_s: deps.config.shutdownGraceMs / 1000 }
  const drained = server.stop(false)
  const jobsStopped = jobs.stopAll(log)
  // Written once every job has been told (a job's stop tells its thread before its first await).
  log.info('shutting down', inFlight)
  const graceOver = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))
    cutNow.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true })
  })
  const finished = await Promise.race([
    drained.then(() => workSettled(cutNow.aborted ? Date.now() : deadline)),
    graceOver.then(() => false),
  ])
  let cut = false
  if (!finished) {
    cut = true
    log.warn('grace period over: cutting off what is still running', { requests: server.pendingRequests, work: workInFlight() })
    await server.stop(true)
    cancelAllWork()
    if (!(await workSettled(Date.now() + CUT_OFF_WAIT_MS))) log.warn('some git processes did not exit', { work: workInFlight() })
  }
  await jobsStopped
  if (cut) {
    let removed = 0
    for (const row of await deps.db.select({ ownerName: repositories.ownerName, name: repositories.name }).from(repositories))
      removed += removeGitLeftovers(pathOfRepo(deps, row.ownerName, row)).length
    if (removed) log.info('removed temporary git objects of cut-off work', { count: removed })
  }
  await closeDatabase(deps.db)
  log.info('stopped', { cut })
  return { cut }
}
