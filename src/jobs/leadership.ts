import type { AppDeps } from '../deps'
import { tryLock, type HeldLock } from '../db/client'
import { errorFields, loggerOf } from '../lib/log'
import type { BackgroundJob } from '../ops/shutdown'

/**
 * Runs a background job in one process at a time among those sharing the database (several
 * Warren processes on one PostgreSQL database): the process holding the job's lock runs it;
 * the others ask again every `retryMs` (WARREN_JOB_RETRY_MS) and take over when the holder stops or dies (its lock
 * goes with its connection); the holder checks as often that it still holds the lock. On SQLite
 * one process owns the database and runs the job at once.
 */
export function asLeader(deps: AppDeps, name: string, start: () => BackgroundJob | Promise<BackgroundJob>, retryMs = deps.config.jobRetryMs): BackgroundJob {
  let stopped = false
  let lock: HeldLock | null = null
  let job: BackgroundJob | null = null
  let timer: ReturnType<typeof setTimeout> | undefined
  let attempt: Promise<void> = Promise.resolve()
  const tryLead = async () => {
    if (stopped) return
    try {
      if (lock && job) {
        // Leading: the lock may have gone with its connection (the database restarted, the
        // session was cut) and another process taken the job; then this one stops running it.
        if (!lock.stillHeld) return
        if (await lock.stillHeld()) return again()
        loggerOf(deps.config).warn('lost the lock of a background job: stopping it here', { job: name })
        const running = job
        job = null
        await lock.release().catch(() => {})
        lock = null
        await running.stop()
      }
      lock = await tryLock(deps.db, `job:${name}`)
      if (lock && !stopped) {
        job = await start()
        loggerOf(deps.config).info('running a background job', { job: name })
        return again()
      }
      await lock?.release()
      lock = null
    } catch (e) {
      loggerOf(deps.config).error('taking a background job failed', { job: name, ...errorFields(e) })
      // The job did not start: its lock goes back, for this process's next try or another's.
      if (!job) {
        await lock?.release().catch(() => {})
        lock = null
      }
    }
    again()
  }
  const again = () => {
    if (stopped) return
    timer = setTimeout(() => void (attempt = tryLead()), retryMs)
    timer.unref?.()
  }
  attempt = tryLead()
  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await attempt
      await job?.stop()
      await lock?.release()
    },
  }
}
