import { and, asc, eq, gt, inArray, min, sql } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import type { Config } from '../config'
import type { Db } from '../db/client'
import { writeTransaction } from '../db/client'
import { hooks, hookTasks, type HookRow, type HookTaskRow } from '../db/schema'
import { attemptDelivery, type Attempt } from './deliver'
import { payloadTexts } from './task-rows'
import type { HookEventType } from './events'
import { parseHostAllowList, type HostAllowList } from '../lib/host-allow-list'
import { errorFields, loggerOf } from '../lib/log'
import { FETCH_THREAD, lowerThreadsNamed } from '../lib/thread-priority'

/**
 * Delivers hook tasks. Tasks go in lanes, one per (repository, hook): a lane sends its tasks one
 * at a time in id order (a receiver sees a repository's events in the order they happened), and
 * at most `webhookConcurrency` lanes send at once, so a slow or dead receiver holds its own lane
 * and one slot, never the API or the other receivers. A failed attempt that is worth retrying
 * (unreachable, time limit, 5xx) keeps its lane waiting for a back-off (retryDelay, doubled each
 * time) until the attempts run out; then, as after any other answer, the task is done (delivered,
 * succeeded or not) and the lane moves on. Everything lives in hook_tasks, so a restart resumes
 * where the previous process was: a task whose attempt was cut by a crash is sent again under
 * the same delivery id and with the same body (the text stored on the task), so delivery is at
 * least once and receivers drop a repeat by its id. Exactly once cannot be had: the process may
 * die between the receiver's answer and the write that records it.
 *
 * Cheap on the database, which the API writes to as well: a lane that delivered a task goes on
 * with its next one by itself (one indexed read, the task with its hook; a text shared by the
 * tasks of an event's hooks is read once, payloadTexts), up to LANE_RUN tasks before it gives its slot
 * back; outcomes are written in batches, one short transaction every FLUSH_MS (or FLUSH_AT
 * outcomes), and a lane is handed back only once its outcomes are written, so no task is ever
 * picked twice. An outcome lost with its process (a crash before the flush) means the task is
 * sent again after the restart, under the same delivery id, as for an attempt cut short.
 */

/** How often the dispatcher looks for due work when nothing told it (retries whose wait ended, missed wake-ups). */
const SAFETY_TICK_MS = 1000
/**
 * Outcomes are written together at most this long after the first of them... (50 ms made fewer
 * write transactions, but a kill -9 then found more deliveries made and not yet written, each
 * delivered again after the restart: more than one repeat a kill)
 */
const FLUSH_MS = 10
/** ...or as soon as this many wait. */
const FLUSH_AT = 64
/** Tasks a lane delivers in a row before its slot goes back to the others (fairness across lanes). */
const LANE_RUN = 50
/**
 * How long a stop lets the attempts in flight finish before it cuts them: as long as one attempt
 * may take (WARREN_WEBHOOK_DELIVER_TIMEOUT), within the shutdown's grace period
 * (WARREN_SHUTDOWN_GRACE) that every other piece of work in flight gets. One answered meanwhile
 * is recorded like any other, so it is not sent again after the restart; one cut is. The webhook
 * worker gives its thread this long plus a margin (src/jobs/webhook-worker.ts).
 */
export const stopDrainMs = (config: Pick<Config, 'webhookDeliverTimeout' | 'shutdownGraceMs'>) => Math.min(config.webhookDeliverTimeout * 1000, config.shutdownGraceMs)

const laneOf = (t: Pick<HookTaskRow, 'repoId' | 'hookId'>) => `${t.repoId}:${t.hookId}`

/** A task to deliver and its hook, read in one statement (laneTasks): the hook as it is just before the attempt. */
interface LaneTask {
  task: HookTaskRow
  hook: HookRow
}

/** `SELECT` of tasks (without their shared text: payloadTexts) with their hooks (add where / order / limit). */
const laneTasks = (db: Db) => db.select({ task: hookTasks, hook: hooks }).from(hookTasks).innerJoin(hooks, eq(hooks.id, hookTasks.hookId))

interface Outcome {
  task: HookTaskRow
  attempt: Attempt
  /** The attempt ended the task (success, a final failure, attempts used up). */
  done: boolean
  at: number
}

export class DeliveryDispatcher {
  private readonly busyLanes = new Set<string>()
  private readonly inFlight = new Set<Promise<void>>()
  private readonly stopController = new AbortController()
  private readonly allow: HostAllowList
  private readonly timer: ReturnType<typeof setInterval>
  private retryTimer: ReturnType<typeof setTimeout> | null = null
  private flushTimer: ReturnType<typeof setTimeout> | null = null
  /** Outcomes not written yet, and the lanes that end once they are. */
  private outcomes: Outcome[] = []
  private endingLanes: string[] = []
  private stopped = false
  private readonly nextOfLane
  private readonly texts
  private readonly outcomeStatements
  /** Bun's fetch thread still to be lowered (background dispatchers: it exists once a first attempt went out). */
  private lowerFetchThread: boolean

  constructor(
    private readonly deps: AppDeps,
    opts: { background?: boolean } = {},
  ) {
    this.lowerFetchThread = opts.background === true
    this.allow = parseHostAllowList(deps.config.webhookAllowedHostList)
    this.timer = setInterval(() => this.pump().catch(this.failed), SAFETY_TICK_MS)
    this.timer.unref?.()
    this.nextOfLane = laneTasks(deps.db)
      .where(
        and(
          eq(hookTasks.isDelivered, false),
          eq(hookTasks.repoId, sql.placeholder('repoId')),
          eq(hookTasks.hookId, sql.placeholder('hookId')),
          gt(hookTasks.id, sql.placeholder('afterId')),
        ),
      )
      .orderBy(asc(hookTasks.id))
      .limit(1)
      .prepare()
    this.texts = payloadTexts(deps.db)
    this.outcomeStatements = outcomeStatements(deps.db)
  }

  /** A round that failed (the database unreachable?) is logged; the safety tick tries again. */
  private readonly failed = (e: unknown) => loggerOf(this.deps.config).error('webhook delivery work failed', errorFields(e))

  /**
   * Pumps and flushes take turns: a pump's reads never straddle a flush that marks tasks delivered
   * and hands their lanes back (it would start a delivered task again from what it read before).
   */
  private turns: Promise<void> = Promise.resolve()
  private inTurn(fn: () => Promise<void>): Promise<void> {
    const run = this.turns.then(fn, fn)
    this.turns = run.catch(() => {})
    return run
  }

  /** Starts what can start now: the first undelivered task of each idle lane whose wait is over. */
  pump(): Promise<void> {
    return this.inTurn(() => this.pumpNow())
  }

  private async pumpNow(): Promise<void> {
    if (this.stopped) return
    const free = this.deps.config.webhookConcurrency - this.busyLanes.size
    if (free <= 0) return
    const db = this.deps.db
    const headIds = (await db
      .select({ id: min(hookTasks.id) })
      .from(hookTasks)
      .where(eq(hookTasks.isDelivered, false))
      .groupBy(hookTasks.repoId, hookTasks.hookId))
      .map((r) => r.id!)
    if (headIds.length === 0) return
    const now = Date.now()
    let nextWake = Infinity
    const due: LaneTask[] = []
    for (let i = 0; i < headIds.length; i += 500) {
      for (const head of (await laneTasks(db).where(inArray(hookTasks.id, headIds.slice(i, i + 500))).orderBy(asc(hookTasks.id))) as LaneTask[]) {
        if (this.busyLanes.has(laneOf(head.task))) continue
        if (head.task.nextAttemptMs > now) nextWake = Math.min(nextWake, head.task.nextAttemptMs)
        else due.push(head)
      }
    }
    due.sort((a, b) => a.task.id - b.task.id)
    for (const head of due.slice(0, free)) await this.start(head)
    if (nextWake !== Infinity) this.wakeAt(nextWake)
  }

  private wakeAt(ms: number): void {
    if (this.retryTimer) clearTimeout(this.retryTimer)
    this.retryTimer = setTimeout(() => ((this.retryTimer = null), this.pump().catch(this.failed)), Math.max(0, ms - Date.now()))
    this.retryTimer.unref?.()
  }

  /** Runs a lane from `first`: its tasks in id order while they are due, up to LANE_RUN of them. */
  private async start(first: LaneTask): Promise<void> {
    const lane = laneOf(first.task)
    if (this.busyLanes.has(lane)) return
    this.busyLanes.add(lane)
    const work = this.runLane(first)
      .catch((e) => loggerOf(this.deps.config).error('a webhook delivery lane failed', { lane, ...errorFields(e) }))
      .finally(async () => {
        this.inFlight.delete(work)
        // Handed back once its outcomes are written (the next flush), never before.
        this.endingLanes.push(lane)
        await this.scheduleFlush()
      })
      .catch(this.failed)
    this.inFlight.add(work)
  }

  private async runLane(first: LaneTask): Promise<void> {
    let next: LaneTask | undefined = first
    for (let n = 0; next && !this.stopped && n < LANE_RUN; n++) {
      const task: HookTaskRow = next.task
      const outcome = await this.deliver(next)
      if (!outcome?.done || this.stopped) return
      next = ((await this.nextOfLane.execute({ repoId: task.repoId, hookId: task.hookId, afterId: task.id })) as LaneTask[])[0]
      if (next && next.task.nextAttemptMs > Date.now()) return
    }
  }

  /** Attempts a task with its hook as read with it (a deleted hook took its tasks with it). */
  private async deliver({ task, hook }: LaneTask): Promise<Outcome | null> {
    const attempt = await attemptDelivery(
      {
        uuid: task.uuid,
        eventType: task.eventType as HookEventType,
        payload: await this.texts.of(task),
        url: hook.url,
        contentType: hook.contentType,
        secret: hook.secret,
        authorizationHeader: hook.authorizationHeader,
      },
      { allow: this.allow, timeoutMs: this.deps.config.webhookDeliverTimeout * 1000, signal: this.stopController.signal },
    )
    // The fetch thread does the attempts' connection work: lowered with this thread (once it exists).
    if (this.lowerFetchThread && lowerThreadsNamed(FETCH_THREAD) > 0) this.lowerFetchThread = false
    // Cut short by a stop: whether the receiver got it is unknown; the task stays as it was and goes
    // again after the restart, under the same delivery id and with the same body.
    if (this.stopController.signal.aborted) return null
    const done = attempt.ok || !attempt.retry || task.attempts + 1 >= this.deps.config.webhookMaxAttempts
    const outcome = { task, attempt, done, at: Date.now() }
    this.outcomes.push(outcome)
    await this.scheduleFlush()
    return outcome
  }

  private async scheduleFlush(): Promise<void> {
    if (this.outcomes.length >= FLUSH_AT) return await this.flush()
    if (!this.flushTimer) this.flushTimer = setTimeout(() => this.flush().catch(this.failed), FLUSH_MS)
  }

  /** Writes the waiting outcomes in one transaction, then hands back the lanes that ended and looks for more work. */
  private async flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer)
    this.flushTimer = null
    const outcomes = this.outcomes
    const ending = this.endingLanes
    this.outcomes = []
    this.endingLanes = []
    await this.inTurn(async () => {
      try {
        if (outcomes.length) await recordOutcomes(this.deps, this.outcomeStatements, outcomes)
      } catch (e) {
        // Not written: those tasks are sent again (same delivery ids), as after a crash.
        loggerOf(this.deps.config).error('recording webhook deliveries failed', errorFields(e))
      }
      for (const lane of ending) this.busyLanes.delete(lane)
    })
    if (ending.length) await this.pump()
  }

  /**
   * Stops starting deliveries; lets those in flight finish for up to stopDrainMs, then cuts the
   * rest (they stay undelivered); writes what was done. An attempt the receiver answered is thus
   * recorded rather than sent again after the restart: only a crash, or an answer slower than the
   * drain, makes a repeat.
   */
  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    if (this.retryTimer) clearTimeout(this.retryTimer)
    const cut = setTimeout(() => this.stopController.abort(), stopDrainMs(this.deps.config))
    await Promise.allSettled([...this.inFlight])
    clearTimeout(cut)
    await this.flush()
  }
}

/** The two writes of an outcome, prepared once per dispatcher (a transaction then only binds and steps). */
function outcomeStatements(db: Db) {
  const p = sql.placeholder
  return {
    task: db
      .update(hookTasks)
      .set({
        attempts: p('attempts'),
        isDelivered: p('isDelivered'),
        isSucceed: p('isSucceed'),
        nextAttemptMs: p('nextAttemptMs'),
        deliveredMs: p('deliveredMs'),
        durationMs: p('durationMs'),
        requestContent: p('requestContent'),
        responseContent: p('responseContent'),
      } as never)
      .where(and(eq(hookTasks.id, p('id')), eq(hookTasks.isDelivered, false)))
      .prepare(),
    hook: db
      .update(hooks)
      .set({ lastStatus: p('status') } as never)
      .where(eq(hooks.id, p('id')))
      .prepare(),
  }
}

/**
 * Writes attempts' outcomes on their tasks, and each hook's last status, in one transaction.
 * Everything is computed before it (the texts included): the write lock, which the API waits
 * for, is held only for the statements themselves.
 */
async function recordOutcomes(deps: AppDeps, statements: ReturnType<typeof outcomeStatements>, outcomes: Outcome[]): Promise<void> {
  const lastStatus = new Map<number, number>()
  const rows = outcomes.map(({ task, attempt, done, at }) => {
    const attempts = task.attempts + 1
    lastStatus.set(task.hookId, attempt.ok ? 1 : 2)
    return {
      id: task.id,
      attempts,
      isDelivered: done,
      isSucceed: attempt.ok,
      nextAttemptMs: done ? 0 : at + Math.round(deps.config.webhookRetryDelay * 1000 * 2 ** (attempts - 1)),
      deliveredMs: at,
      durationMs: attempt.durationMs,
      requestContent: JSON.stringify(attempt.request),
      responseContent: JSON.stringify(attempt.response),
    }
  })
  await writeTransaction(deps.db, async () => {
    for (const row of rows) await statements.task.execute(row)
    for (const [id, status] of lastStatus) await statements.hook.execute({ id, status })
  })
}

/** Who delivers for each database (the webhook worker registers itself; one per server). */
const wakers = new WeakMap<Db, () => void>()

/** Registers the delivery worker of a database; answers the function that unregisters it. */
export function registerDeliveryWaker(db: Db, wake: () => void): () => void {
  wakers.set(db, wake)
  return () => {
    if (wakers.get(db) === wake) wakers.delete(db)
  }
}

/** Tells the delivery worker (if one runs) that tasks were added: a test delivery, a redelivery. */
export function wakeDeliveries(deps: AppDeps): void {
  wakers.get(deps.db)?.()
}
