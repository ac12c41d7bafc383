/**
 * The background jobs a process runs, as the site administrator's `/admin/cron` lists them
 * (Gitea's cron tasks): each job registers itself when it starts (in the process running it:
 * `jobs/`, through `asLeader` on a shared PostgreSQL database) and leaves when it stops, notes
 * each of its rounds, and says how a round is run now on demand (a job lists itself only with a
 * round that is safe at any time). Kept per owner object (the app's deps), in memory: counts
 * start at zero with the process, as Gitea's do.
 */

/** One registered job, as listed. */
export interface JobInfo {
  name: string
  /** Gitea's form: `@every 1m`, or `@startup` for a job that runs once after the start. */
  schedule: string
  /** Milliseconds since the epoch; null when not known (never ran; no next round planned). */
  prev: number | null
  next: number | null
  execTimes: number
}

/** What a job holds once registered. */
export interface JobEntry {
  /** A round starts now. */
  round(): void
  /** The next round is planned at `at` (ms), or none (null); without a plan, a job on a clock runs at its next tick. */
  plan(at: number | null): void
  /** The job stopped: it is no longer listed. */
  leave(): void
}

interface Registered extends JobInfo {
  everyMs: number | null
  since: number
  planned?: number | null
  runNow: () => Promise<unknown> | void
}

export class JobBoard {
  private readonly jobs = new Map<string, Registered>()

  /**
   * Lists job `name`, `runNow` its round on demand. With `everyMs` it runs on a clock started now
   * (a setInterval: its next tick is known) unless it plans its next round itself; null: not on a
   * clock. A second registration of a name replaces the first (a job restarted).
   */
  register(name: string, opts: { schedule: string; everyMs: number | null; runNow: () => Promise<unknown> | void }): JobEntry {
    const job: Registered = { name, schedule: opts.schedule, prev: null, next: null, execTimes: 0, everyMs: opts.everyMs, since: Date.now(), runNow: opts.runNow }
    this.jobs.set(name, job)
    return {
      round: () => {
        job.prev = Date.now()
        job.execTimes++
      },
      plan: (at) => {
        job.planned = at
      },
      leave: () => {
        if (this.jobs.get(name) === job) this.jobs.delete(name)
      },
    }
  }

  /** Every registered job, by name. */
  list(): JobInfo[] {
    const now = Date.now()
    return [...this.jobs.values()]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map(({ name, schedule, prev, execTimes, everyMs, since, planned }) => {
        const ticks = everyMs === null ? 0 : Math.max(1, Math.ceil((now - since) / everyMs))
        const next = planned !== undefined ? planned : everyMs === null ? null : since + ticks * everyMs
        return { name, schedule, prev, next, execTimes }
      })
  }

  /** Starts a round of `name` now, not waiting for it (a failure is the job's to log); false when no such job runs here. */
  runNow(name: string): boolean {
    const job = this.jobs.get(name)
    if (!job) return false
    void Promise.resolve()
      .then(job.runNow)
      .catch(() => {})
    return true
  }
}

const boards = new WeakMap<object, JobBoard>()

/** The board of the process's jobs kept for `owner` (the app's deps). */
export function jobBoardOf(owner: object): JobBoard {
  let board = boards.get(owner)
  if (!board) boards.set(owner, (board = new JobBoard()))
  return board
}

/** Gitea's `@every` form of an interval. */
export function everySchedule(ms: number): string {
  if (ms % 3_600_000 === 0) return `@every ${ms / 3_600_000}h`
  if (ms % 60_000 === 0) return `@every ${ms / 60_000}m`
  if (ms % 1000 === 0) return `@every ${ms / 1000}s`
  return `@every ${ms}ms`
}
