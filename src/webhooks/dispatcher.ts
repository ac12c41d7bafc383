import { and, asc, eq, getTableColumns, gt, sql, type SQL } from 'drizzle-orm'
import { alias } from 'drizzle-orm/sqlite-core'
import type { AppDeps } from '../deps'
import type { Config } from '../config'
import type { Db } from '../db/client'
import { afterCommit, freshReads, writeTransaction } from '../db/client'
import { inJsonList, inRowsOf, jsonRecords, recordField } from '../db/sql'
import { hooks, hookTasks, type HookRow, type HookTaskRow } from '../db/schema'
import { attemptDelivery, type Attempt } from './deliver'
import { payloadTexts } from './task-rows'
import type { HookEventType } from './events'
import { parseHostAllowList, type HostAllowList } from '../lib/host-allow-list'
import { errorFields, loggerOf } from '../lib/log'
import { FETCH_THREAD, lowerThreadsNamed } from '../lib/thread-priority'
import type { Foreground } from '../lib/foreground'

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
 * Cheap on the database, which the API writes to as well: a pump finds the lanes' first tasks by
 * hopping from lane to lane on the pending index (laneHeadsQuery, HEADS_PAGE lanes a statement,
 * going on where the previous pump stopped), never through their backlogs, and stops once it has
 * lanes for its free slots; the lanes it starts read their first LANE_BATCH tasks with their hooks
 * in one statement, and their texts in one more (a text
 * shared by the tasks of an event's hooks is read once, payloadTexts); a lane goes on through its
 * tasks by itself, reading LANE_BATCH more at a time, up to LANE_RUN tasks before it gives its
 * slot back; outcomes are written in batches, one short transaction of two statements every
 * FLUSH_MS (or FLUSH_AT outcomes), which reads the hooks back, and a lane is handed back only
 * once its outcomes are written, so no task is ever picked twice (a write the database refuses is
 * kept and tried again every FLUSH_RETRY_MS, its lanes held meanwhile). A hook's edit or deletion, and
 * a deletion whose cascade takes hooks (a repository's, an organisation's, a user's), moves a
 * counter in memory the thread shares with the API's (hooksChanged, before the change is
 * answered): each running lane whose hook was read before it reads it again before its next
 * attempt, so the tasks it read before the change go the new way, or not at all (its hook gone,
 * the lane ends). An outcome lost with its process (a crash before the flush) means the task is
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
/**
 * How long after a write of outcomes failed (the database busy past its wait, or unreachable) it
 * is tried again; the outcomes are kept, and their lanes stay taken, until one succeeds.
 */
const FLUSH_RETRY_MS = 1000
/** Tasks a lane delivers in a row before its slot goes back to the others (fairness across lanes). */
const LANE_RUN = 50
/** Tasks of a lane read in one statement (the lane's next ones, in id order). */
const LANE_BATCH = 16
/**
 * Attempts after which a background dispatcher stops looking for Bun's fetch thread (to lower
 * it): a Bun that named it otherwise would have it scanned for after every attempt, forever.
 */
const FETCH_THREAD_TRIES = 20
/**
 * How long a stop lets the attempts in flight finish before it cuts them: as long as one attempt
 * may take (WARREN_WEBHOOK_DELIVER_TIMEOUT), within the shutdown's grace period
 * (WARREN_SHUTDOWN_GRACE) that every other piece of work in flight gets. One answered meanwhile
 * is recorded like any other, so it is not sent again after the restart; one cut is. The webhook
 * worker gives its thread this long plus a margin (src/jobs/webhook-worker.ts).
 */
export const stopDrainMs = (config: Pick<Config, 'webhookDeliverTimeout' | 'shutdownGraceMs'>) => Math.min(config.webhookDeliverTimeout * 1000, config.shutdownGraceMs)

const laneOf = (t: Pick<HookTaskRow, 'repoId' | 'hookId'>) => `${t.repoId}:${t.hookId}`

/** A lane: the repository and hook of its tasks. */
type LaneKey = Pick<HookTaskRow, 'repoId' | 'hookId'>
/** Before every lane in (repository, hook) order (ids are positive). */
const BEFORE_ALL_LANES: LaneKey = { repoId: -1, hookId: -1 }
/** Lanes' order: by repository, then hook (the pending index's). */
const laneOrder = (a: LaneKey, b: LaneKey) => a.repoId - b.repoId || a.hookId - b.hookId

/** A task to deliver and its hook, read in one statement (laneTasks). */
interface LaneTask {
  task: HookTaskRow
  hook: HookRow
}

/** `SELECT` of tasks (without their shared text: payloadTexts) with their hooks (add where / order / limit). */
const laneTasks = (db: Db) => db.select({ task: hookTasks, hook: hooks }).from(hookTasks).innerJoin(hooks, eq(hooks.id, hookTasks.hookId))

/** Lane heads read by one statement of a pump: where a pump stops once it has lanes for its free slots. */
const HEADS_PAGE = 64

/**
 * Where the next `limit` lanes (a pump asks HEADS_PAGE) after the lane (`repoId`, `hookId`), in
 * (repository, hook) order, have their undelivered tasks start: their first task's id and when
 * it is due, one row a lane, in that order. A loose index scan of the pending index
 * (hook_tasks_pending_idx): a recursive query that hops from a lane to the first undelivered task
 * of the next one (at most two searches of the index for one entry, and a primary key lookup, a
 * hop), never through a lane's backlog, and stops after `limit` lanes;
 * the same text on both databases (test/webhooks-lanes.test.ts checks their plans).
 */
export function laneHeadsQuery(db: Db) {
  const next = alias(hookTasks, 'lane_next')
  const head = alias(hookTasks, 'lane_head')
  const h = sql.raw('lane_heads')
  // The first undelivered task of the first lane after (repoId, hookId): of the repository's next
  // hook, else of the next repository's first hook; each a search of the index for one entry. (A
  // row value `(repo_id, hook_id) > (...)` compared with the previous row's columns, SQLite
  // searches the index by `repo_id` alone, through the repository's earlier lanes' backlogs.)
  const first = (where: SQL) =>
    sql`(SELECT ${next.id} FROM ${hookTasks} AS ${sql.identifier('lane_next')} WHERE ${eq(next.isDelivered, false)} AND ${where} ORDER BY ${next.repoId}, ${next.hookId}, ${next.id} LIMIT 1)`
  const firstAfter = (repoId: unknown, hookId: unknown) =>
    sql`coalesce(${first(sql`${next.repoId} = ${repoId} AND ${next.hookId} > ${hookId}`)}, ${first(sql`${next.repoId} > ${repoId}`)})`
  const headTable = sql`${hookTasks} AS ${sql.identifier('lane_head')}`
  const columns = sql`${head.id}, ${head.repoId}, ${head.hookId}, ${head.nextAttemptMs}`
  const scan = sql`(WITH RECURSIVE ${h}(id, repo_id, hook_id, next_attempt_ms, n) AS (
    SELECT ${columns}, 1 FROM ${headTable} WHERE ${head.id} = ${firstAfter(sql.placeholder('repoId'), sql.placeholder('hookId'))}
    UNION ALL
    SELECT ${columns}, ${h}.n + 1 FROM ${h} JOIN ${headTable} ON ${head.id} = ${firstAfter(sql`${h}.repo_id`, sql`${h}.hook_id`)} WHERE ${h}.n < ${sql.placeholder('limit')}
  ) SELECT * FROM ${h}) AS ${h}`
  const field = (name: string) => sql<number>`${h}.${sql.raw(name)}`.mapWith(Number)
  return db
    .select({ id: field('id'), repoId: field('repo_id'), hookId: field('hook_id'), nextAttemptMs: field('next_attempt_ms') })
    .from(scan)
    .orderBy(sql`${h}.n`)
}

/**
 * The first LANE_BATCH undelivered tasks of each lane in the JSON records `lanes` (`{repoId,
 * hookId}`), with their hooks, in one statement: the lanes a pump starts read their tasks
 * together. Each lane's tasks are found by a correlated `ORDER BY id LIMIT LANE_BATCH` on the
 * pending index (hook_tasks_pending_idx), so the read costs what it answers, whatever the
 * backlog behind those tasks (test/webhooks-lanes.test.ts checks both databases' plans).
 */
export function laneBatchesQuery(db: Db) {
  const ahead = alias(hookTasks, 'lane_ahead')
  const lane = (name: string) => recordField('lane', name)
  const firstOfLane = db
    .select({ id: ahead.id })
    .from(ahead)
    .where(and(eq(ahead.isDelivered, false), eq(ahead.repoId, lane('repoId')), eq(ahead.hookId, lane('hookId'))))
    // By id alone: SQLite then reads the index in its order; by all of its columns (the same order,
    // the first three being fixed), it would sort the lane's whole backlog.
    .orderBy(asc(ahead.id))
    .limit(LANE_BATCH)
  return db
    .select({ task: hookTasks, hook: hooks })
    .from(jsonRecords('lanes', 'lane', { repoId: hookTasks.repoId, hookId: hookTasks.hookId }))
    .innerJoin(hookTasks, inRowsOf(hookTasks.id, firstOfLane))
    .innerJoin(hooks, eq(hooks.id, hookTasks.hookId))
    .orderBy(asc(hookTasks.id))
}

/** The outcome of a task ended without a request (no retry). */
const notSent = (hook: HookRow, reason: string): Attempt => ({
  ok: false,
  retry: false,
  request: { url: hook.url, http_method: 'POST', headers: {} },
  response: { status: 0, headers: {}, body: `Delivery: ${reason}` },
  durationMs: 0,
})

interface Outcome {
  task: HookTaskRow
  attempt: Attempt
  /** The attempt ended the task (success, a final failure, attempts used up). */
  done: boolean
  at: number
}

export class DeliveryDispatcher {
  /** The running lanes, each with its hook's id. */
  private readonly busyLanes = new Map<string, number>()
  private readonly inFlight = new Set<Promise<void>>()
  private readonly stopController = new AbortController()
  private readonly allow: HostAllowList
  private readonly timer: ReturnType<typeof setInterval>
  private retryTimer: ReturnType<typeof setTimeout> | null = null
  /** When retryTimer fires (ms since the epoch). */
  private retryAt = 0
  private flushTimer: ReturnType<typeof setTimeout> | null = null
  /** The last write of outcomes failed: the next is the retry's (FLUSH_RETRY_MS), not one per new outcome. */
  private flushFailed = false
  /** Outcomes not written yet, and the lanes that end once they are. */
  private outcomes: Outcome[] = []
  private endingLanes: string[] = []
  private stopped = false
  private readonly heads
  private readonly batches
  private readonly nextOfLane
  private readonly texts
  private readonly outcomeStatements
  /**
   * Each hook of a running lane as last read, with the hooks' generation the read started at:
   * with the lane's tasks, at each write of outcomes (which reads back the hooks it wrote to),
   * and again once told the hooks changed (null once deleted). A lane's next attempt takes its
   * hook from here, without a read per delivery. Kept while a lane that delivers for it runs
   * (`lanes`), dropped when the last of them ends.
   */
  private readonly hookNow = new Map<number, { hook: HookRow | null; at: number; lanes: number }>()
  /**
   * Moved when the hooks service says hooks were edited or deleted (`hooksChanged` below, also
   * after a repository's, an organisation's or a user's deletion took its hooks): a counter in
   * memory shared with the API's thread (`hooksMark`, a SharedArrayBuffer), moved there before the
   * change's answer is sent, so an attempt that starts after the answer sees it (a message could
   * arrive after the attempt it should precede). A lane whose next attempt finds its hook read at
   * an older generation reads the stale hooks of the running lanes first (one statement, shared by
   * the lanes waiting for it), so the change reaches the next attempt of every lane, not only after
   * a write of outcomes. By hook, not one mark for all: a lane that starts while that read is in
   * flight, from tasks read before a change the read may not see, keeps its own older generation
   * and reads again.
   */
  private readonly hooksMark: Int32Array
  private get hooksGeneration(): number {
    return Atomics.load(this.hooksMark, 0)
  }
  private hooksReading: Promise<void> | null = null
  private readonly hookRows
  /** The requests the process answers, which each attempt steps aside for (lib/foreground.ts); none: attempts go at once. */
  private readonly foreground: Foreground | null
  /** Attempts left before a background dispatcher stops looking for Bun's fetch thread (0: done, or not to be lowered). */
  private fetchThreadTries: number

  constructor(
    private readonly deps: AppDeps,
    opts: { background?: boolean; hooksMark?: SharedArrayBuffer; foreground?: Foreground } = {},
  ) {
    this.foreground = opts.foreground ?? null
    this.fetchThreadTries = opts.background === true ? FETCH_THREAD_TRIES : 0
    this.hooksMark = new Int32Array(opts.hooksMark ?? newHooksMark())
    this.allow = parseHostAllowList(deps.config.webhookAllowedHostList)
    this.timer = setInterval(() => this.pump().catch(this.failed), SAFETY_TICK_MS)
    this.timer.unref?.()
    this.heads = laneHeadsQuery(deps.db).prepare()
    this.batches = laneBatchesQuery(deps.db).prepare()
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
      .limit(LANE_BATCH)
      .prepare()
    this.hookRows = deps.db.select().from(hooks).where(inJsonList(hooks.id, 'ids')).prepare()
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

  /** Starts what can start now: the idle lanes whose first undelivered task is due, their tasks read together. */
  pump(): Promise<void> {
    return this.inTurn(() => this.pumpNow())
  }

  /**
   * The lane the next pump's scan of lane heads begins after: the last lane a pump started. Lanes
   * thus take turns in (repository, hook) order, each pump going on where the last one stopped and
   * round to the first lane once past the last, so no lane waits behind others that keep work.
   */
  private cursor: LaneKey = BEFORE_ALL_LANES

  private async pumpNow(): Promise<void> {
    if (this.stopped) return
    const free = this.deps.config.webhookConcurrency - this.busyLanes.size
    if (free <= 0) return
    const now = Date.now()
    let nextWake = Infinity
    const due: LaneKey[] = []
    // Pages of lane heads from the cursor on, then from the first lane up to the cursor's, until
    // there are lanes enough for the free slots: a pump reads the lanes it passes, not every lane.
    const start = this.cursor
    let after = start
    let lap = start === BEFORE_ALL_LANES ? 2 : 1
    scan: for (;;) {
      const heads = (await this.heads.execute({ ...after, limit: HEADS_PAGE })) as (LaneKey & { id: number; nextAttemptMs: number })[]
      for (const head of heads) {
        if (lap === 2 && start !== BEFORE_ALL_LANES && laneOrder(head, start) > 0) break scan
        if (this.busyLanes.has(laneOf(head))) continue
        if (head.nextAttemptMs > now) nextWake = Math.min(nextWake, head.nextAttemptMs)
        else if (due.push({ repoId: head.repoId, hookId: head.hookId }) >= free) break scan
      }
      if (heads.length === HEADS_PAGE) after = { repoId: heads[heads.length - 1]!.repoId, hookId: heads[heads.length - 1]!.hookId }
      else if (lap++ === 2) break
      else after = BEFORE_ALL_LANES
    }
    if (due.length) {
      this.cursor = due[due.length - 1]!
      const since = this.readsSince()
      const rows = (await this.batches.execute({ lanes: JSON.stringify(due) })) as LaneTask[]
      const lanes = new Map<string, LaneTask[]>()
      for (const row of rows) {
        const lane = laneOf(row.task)
        let tasks = lanes.get(lane)
        if (!tasks) lanes.set(lane, (tasks = []))
        tasks.push(row)
      }
      await this.texts.load(rows.map((r) => r.task))
      for (const tasks of lanes.values()) this.start(tasks, since)
    }
    if (nextWake !== Infinity) this.wakeAt(nextWake)
  }

  /**
   * A pump at `ms` at the latest: a timer due sooner stays (a pump that stopped once its slots were
   * filled saw only some lanes' next attempts; a pump sooner than needed only looks again).
   */
  private wakeAt(ms: number): void {
    if (this.retryTimer && this.retryAt <= ms) return
    if (this.retryTimer) clearTimeout(this.retryTimer)
    this.retryAt = ms
    this.retryTimer = setTimeout(() => ((this.retryTimer = null), this.pump().catch(this.failed)), Math.max(0, ms - Date.now()))
    this.retryTimer.unref?.()
  }

  /** Runs a lane from its first tasks (read in id order): while they are due, up to LANE_RUN of them. */
  private start(batch: LaneTask[], since: number): void {
    const lane = laneOf(batch[0]!.task)
    if (this.busyLanes.has(lane)) return
    const hook = batch[0]!.hook
    this.busyLanes.set(lane, hook.id)
    const kept = this.hookNow.get(hook.id)
    if (!kept) this.hookNow.set(hook.id, { hook, at: since, lanes: 1 })
    else {
      kept.lanes++
      this.noteHooks([[hook.id, hook]], since)
    }
    const work = this.runLane(batch)
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

  /**
   * Delivers a lane's tasks in id order, reading LANE_BATCH more in one statement when the ones
   * read are done and were as many (a shorter batch was all the lane had: tasks added since are
   * the next pump's, once the lane is handed back).
   */
  private async runLane(first: LaneTask[]): Promise<void> {
    let batch = first
    let n = 0
    for (;;) {
      for (const next of batch) {
        if (this.stopped || n++ >= LANE_RUN || next.task.nextAttemptMs > Date.now()) return
        // Between requests where it can (the work of an attempt, the receiver's and the fetch
        // thread's, would otherwise take the cores the requests want); before its hook is read,
        // so that a hook edited meanwhile (by a request it waited for) is sent as edited.
        await this.foreground?.stepAside(() => this.stopped)
        if (this.stopped) return
        const hook = await this.hookOf(next.hook.id)
        // Deleted meanwhile (its tasks with it): nothing more to send.
        if (!hook) return
        const outcome = await this.deliver(next.task, hook)
        if (!outcome?.done || this.stopped) return
      }
      if (batch.length < LANE_BATCH || n >= LANE_RUN) return
      const last = batch[batch.length - 1]!.task
      const since = this.readsSince()
      batch = (await this.nextOfLane.execute({ repoId: last.repoId, hookId: last.hookId, afterId: last.id })) as LaneTask[]
      if (batch.length === 0) return
      this.noteHooks(batch.map(({ hook }) => [hook.id, hook]), since)
      await this.texts.load(batch.map((r) => r.task))
    }
  }

  /**
   * Keeps hooks of running lanes as read by a statement that started at generation `since`,
   * unless what is kept was read later: one that a change overtook (told while it ran) may hold a
   * hook as it was before, so it keeps its older generation and the next attempt reads it again.
   */
  private noteHooks(read: Iterable<[number, HookRow | null]>, since: number): void {
    for (const [id, hook] of read) {
      const kept = this.hookNow.get(id)
      // Wrapping 32-bit generations compared by their difference.
      if (kept && ((since - kept.at) | 0) >= 0) Object.assign(kept, { hook, at: since })
    }
  }

  /**
   * The hooks' generation a read of hooks is about to start at. A change is told after its commit,
   * but this turn's read snapshot (SQLite) may be older than both: once the generation moved, the
   * snapshot is ended first, so the read sees the change it is counted for (`freshReads`).
   */
  private readsSince(): number {
    const since = this.hooksGeneration
    if (since !== this.freshAt) {
      freshReads(this.deps.db)
      this.freshAt = since
    }
    return since
  }
  private freshAt = 0

  /**
   * A running lane's hook as it is now: read again (with every running lane's read before the
   * last change) when it was read at an older generation than the hooks' counter. A read in
   * flight when it is asked may have begun before the change it needs: then it reads again.
   */
  private async hookOf(id: number): Promise<HookRow | null> {
    for (;;) {
      const kept = this.hookNow.get(id)
      if (!kept) return null
      if (kept.at === this.hooksGeneration) return kept.hook
      await (this.hooksReading ??= this.readHooks().finally(() => (this.hooksReading = null)))
    }
  }

  /** Reads the running lanes' hooks kept from before the hooks' counter's value (null: deleted). */
  private async readHooks(): Promise<void> {
    const since = this.readsSince()
    const ids = [...this.hookNow].filter(([, kept]) => kept.at !== since).map(([id]) => id)
    if (ids.length === 0) return
    const rows = (await this.hookRows.execute({ ids: JSON.stringify(ids) })) as HookRow[]
    const read = new Map<number, HookRow | null>(ids.map((id) => [id, null]))
    for (const row of rows) read.set(row.id, row)
    this.noteHooks(read, since)
  }

  /**
   * Attempts a task with its hook as it is now. A hook no longer active sends nothing: the task
   * ends unsent, recorded as a failure (Gitea's Deliver).
   */
  private async deliver(task: HookTaskRow, hook: HookRow): Promise<Outcome | null> {
    if (!hook.isActive) return await this.recordOutcome(task, notSent(hook, 'the hook is not active'))
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
    // The fetch thread does the attempts' connection work: lowered with this thread (once it
    // exists), looked for after each of the first FETCH_THREAD_TRIES attempts at most.
    if (this.fetchThreadTries > 0) this.fetchThreadTries = lowerThreadsNamed(FETCH_THREAD) > 0 ? 0 : this.fetchThreadTries - 1
    // Cut short by a stop: whether the receiver got it is unknown; the task stays as it was and goes
    // again after the restart, under the same delivery id and with the same body.
    if (this.stopController.signal.aborted) return null
    return await this.recordOutcome(task, attempt)
  }

  /** Queues an attempt's outcome for the next write of outcomes. */
  private async recordOutcome(task: HookTaskRow, attempt: Attempt): Promise<Outcome> {
    const done = attempt.ok || !attempt.retry || task.attempts + 1 >= this.deps.config.webhookMaxAttempts
    const outcome = { task, attempt, done, at: Date.now() }
    this.outcomes.push(outcome)
    await this.scheduleFlush()
    return outcome
  }

  private async scheduleFlush(): Promise<void> {
    if (this.outcomes.length >= FLUSH_AT && !this.flushFailed) return await this.flush()
    if (!this.flushTimer) this.flushTimer = setTimeout(() => this.flush().catch(this.failed), FLUSH_MS)
  }

  /** Writes the waiting outcomes in one transaction, then hands back the lanes that ended and looks for more work. */
  private async flush(): Promise<void> {
    // A write transaction (SQLite's write lock, which the API's writes would wait for): between
    // requests where it can, as the attempts; the outcomes that come meanwhile go with it.
    await this.foreground?.stepAside(() => this.stopped)
    if (this.flushTimer) clearTimeout(this.flushTimer)
    this.flushTimer = null
    const outcomes = this.outcomes
    const ending = this.endingLanes
    this.outcomes = []
    this.endingLanes = []
    let written = true
    await this.inTurn(async () => {
      try {
        const since = this.hooksGeneration
        if (outcomes.length) this.noteHooks(await recordOutcomes(this.deps, this.outcomeStatements, outcomes), since)
      } catch (e) {
        written = false
        loggerOf(this.deps.config).error('recording webhook deliveries failed', errorFields(e))
        return
      }
      for (const lane of ending) {
        const hookId = this.busyLanes.get(lane)!
        this.busyLanes.delete(lane)
        // The hook is kept while another lane (of another repository) delivers for it.
        const kept = this.hookNow.get(hookId)
        if (kept && --kept.lanes === 0) this.hookNow.delete(hookId)
      }
    })
    this.flushFailed = !written
    if (!written) {
      // Kept, written with the next outcomes, tried again shortly: the lanes that ended stay taken
      // until then, so none of these tasks is sent twice while this process lives (had they been
      // dropped, each would have gone out again, as after a crash). A stop gives up on them: they
      // are sent again after the restart, under the same delivery ids.
      this.outcomes.unshift(...outcomes)
      this.endingLanes.unshift(...ending)
      if (!this.stopped && !this.flushTimer) this.flushTimer = setTimeout(() => this.flush().catch(this.failed), FLUSH_RETRY_MS)
      return
    }
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

/** A task's new state after an attempt, as recordOutcomes writes it. */
interface TaskOutcomeRow {
  id: number
  attempts: number
  isDelivered: boolean
  isSucceed: boolean
  nextAttemptMs: number
  deliveredMs: number
  durationMs: number
  requestContent: string
  responseContent: string
}

/**
 * The writes of a batch of outcomes, prepared once per dispatcher: the tasks' new state, and each
 * hook's last status, which reads the hooks back (a transaction then only binds and steps them).
 * On PostgreSQL the tasks are one statement whatever their number (their rows bound as one JSON
 * array, jsonRecords), sent with the hooks' in one round trip; on SQLite, where a statement costs
 * no round trip, one statement a task with its values bound as they are: SQLite reading them out
 * of one JSON text (a field at a time, the request and answer texts escaped inside it) took half
 * as long again, under the write lock the API waits for (6,000 queued deliveries to 10 hooks:
 * 48.5 against 31.4 µs a task).
 */
function outcomeStatements(db: Db) {
  const row = (name: string) => recordField('outcome', name)
  const field = (name: keyof TaskOutcomeRow): SQL => (db.$runtime.dialect === 'sqlite' ? sql`${sql.placeholder(name)}` : row(name))
  const update = db.update(hookTasks).set({
    attempts: field('attempts'),
    isDelivered: field('isDelivered'),
    isSucceed: field('isSucceed'),
    nextAttemptMs: field('nextAttemptMs'),
    deliveredMs: field('deliveredMs'),
    durationMs: field('durationMs'),
    requestContent: field('requestContent'),
    responseContent: field('responseContent'),
  })
  const hookStatuses = db
    .update(hooks)
    .set({ lastStatus: row('status') })
    .from(jsonRecords('hooks', 'outcome', { id: hooks.id, status: hooks.lastStatus }))
    .where(eq(hooks.id, row('id')))
    .returning(getTableColumns(hooks))
    .prepare()
  if (db.$runtime.dialect === 'sqlite') {
    const task = update.where(and(eq(hookTasks.id, sql.placeholder('id')), eq(hookTasks.isDelivered, false))).prepare()
    return {
      tasks: async (rows: TaskOutcomeRow[]) => {
        // Booleans bound as SQLite stores them.
        for (const r of rows) await task.execute({ ...r, isDelivered: Number(r.isDelivered), isSucceed: Number(r.isSucceed) })
      },
      hooks: hookStatuses,
    }
  }
  const tasks = update
    .from(
      jsonRecords('tasks', 'outcome', {
        id: hookTasks.id,
        attempts: hookTasks.attempts,
        isDelivered: hookTasks.isDelivered,
        isSucceed: hookTasks.isSucceed,
        nextAttemptMs: hookTasks.nextAttemptMs,
        deliveredMs: hookTasks.deliveredMs,
        durationMs: hookTasks.durationMs,
        requestContent: hookTasks.requestContent,
        responseContent: hookTasks.responseContent,
      }),
    )
    .where(and(eq(hookTasks.id, row('id')), eq(hookTasks.isDelivered, false)))
    .prepare()
  return { tasks: async (rows: TaskOutcomeRow[]) => void (await tasks.execute({ tasks: JSON.stringify(rows) })), hooks: hookStatuses }
}

/**
 * Writes attempts' outcomes on their tasks, and each hook's last status, in one transaction;
 * answers the hooks as they are now (null: deleted). Everything is computed before it (the texts
 * included): the write lock, which the API waits for, is held only for the statements themselves.
 */
async function recordOutcomes(deps: AppDeps, statements: ReturnType<typeof outcomeStatements>, outcomes: Outcome[]): Promise<Map<number, HookRow | null>> {
  const lastStatus = new Map<number, number>()
  const rows = outcomes.map(({ task, attempt, done, at }): TaskOutcomeRow => {
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
  const statuses = JSON.stringify([...lastStatus].map(([id, status]) => ({ id, status })))
  const now = new Map<number, HookRow | null>([...lastStatus.keys()].map((id) => [id, null]))
  await writeTransaction(deps.db, async () => {
    // Sent together (on PostgreSQL in one round trip).
    const [, read] = await Promise.all([statements.tasks(rows), statements.hooks.execute({ hooks: statuses })])
    for (const hook of read as HookRow[]) now.set(hook.id, hook)
  })
  return now
}

/** The memory a delivery thread's hooks counter lives in, shared with the thread that starts it (moved by `hooksChanged` through the worker's waker). */
export function newHooksMark(): SharedArrayBuffer {
  return new SharedArrayBuffer(4)
}

/** What the delivery worker is told: tasks were added, or hooks were edited or deleted. */
export type DeliveryNews = 'tasks' | 'hooks'

/** Who delivers for each database (the webhook worker registers itself; one per server). */
const wakers = new WeakMap<Db, (news: DeliveryNews) => void>()

/** Registers the delivery worker of a database; answers the function that unregisters it. */
export function registerDeliveryWaker(db: Db, tell: (news: DeliveryNews) => void): () => void {
  wakers.set(db, tell)
  return () => {
    if (wakers.get(db) === tell) wakers.delete(db)
  }
}

/** Tells the delivery worker (if one runs) that tasks were added: a test delivery, a redelivery. */
export function wakeDeliveries(deps: AppDeps): void {
  wakers.get(deps.db)?.('tasks')
}

/**
 * Tells the delivery worker (if one runs in this process) that hooks were edited or deleted: its
 * running lanes read their hooks again before their next attempts, and a lane whose hook is gone
 * ends. Called after the change committed, or inside its write transaction, where it tells once
 * that commits (afterCommit), before the transaction's caller goes on: for a deletion whose
 * cascade takes hooks with it (a repository's, an organisation's, a user's), told by the
 * deletion itself. (A change made by another process sharing a PostgreSQL database reaches them
 * at the next write of outcomes, which reads the hooks back.)
 */
export function hooksChanged(deps: AppDeps): void {
  const tell = () => wakers.get(deps.db)?.('hooks')
  if (deps.db.$runtime.inWriteTransaction()) afterCommit(deps.db, tell)
  else tell()
}
