import type { AppDeps } from '../deps'
import { hasEventsAfterDone } from '../events/outbox'
import { checkpointWal, perConnection, WAL_CHECKPOINT_MS, type Db } from '../db/client'
import { hookTasks } from '../db/schema'
import { asc, eq } from 'drizzle-orm'
import { DeliveryDispatcher } from './dispatcher'
import { TASK_BATCH, turnEventsIntoTasks, WEBHOOK_CONSUMER } from './tasks'
import { sweepPayloads } from './task-rows'
import { errorFields, loggerOf } from '../lib/log'
import { pauser } from '../lib/pauser'
import type { Foreground } from '../lib/foreground'

/** How often the outbox is looked at when it was empty (a read; nothing is written while idle). */
export const WEBHOOK_POLL_MS = 100

/**
 * While events keep coming, a round of tasks starts at most this often: events that arrive one
 * request at a time are turned into tasks ten or so at a time, in one write transaction instead
 * of one each (the API waits for SQLite's write lock while the thread holds it). As the
 * dispatcher's FLUSH_MS: a delivery waits at most this much longer. A round whose events no hook
 * wanted (no tasks) is followed after the idle poll's interval instead: a busy site whose hooks
 * are elsewhere, or that has none, pays for a round (its reads and its write of the position,
 * on PostgreSQL about ten statements) ten times a second, not a hundred, and an event that does
 * want a delivery waits no longer than it would on a server at rest.
 */
const ROUND_GAP_MS = 10

/**
 * The two loops of webhook delivery, on one database connection: one turns outbox events into
 * hook tasks (src/webhooks/tasks.ts), the dispatcher delivers them (src/webhooks/dispatcher.ts).
 * One of these per server: it starts from the outbox position the previous process left (what
 * that one read and did not turn into tasks is read again) and resumes undelivered tasks. Runs in its own thread (src/jobs/webhook-worker.ts),
 * `background` there: at a lower CPU priority than the API (src/lib/thread-priority.ts), Bun's fetch thread included;
 * given the process's `foreground` (lib/foreground.ts), each round of tasks, each attempt and each write of outcomes waits for a pause between requests.
 */
export async function runWebhookLoops(deps: AppDeps, opts: { pollMs?: number; sweepFrom?: number; background?: boolean; hooksMark?: SharedArrayBuffer; foreground?: Foreground } = {}) {
  // Both loops' work falls between the process's requests where it can (lib/foreground.ts).
  const foreground = opts.foreground
  const dispatcher = new DeliveryDispatcher(deps, { background: opts.background, hooksMark: opts.hooksMark, foreground })
  let stopped = false
  const { pause, wake } = pauser()
  // The sweep of unreferenced payload rows (sweepPayloads): a step at each idle look at the
  // outbox, from where the previous thread left it, until it passes the last row.
  // The write-ahead log copied on a timer, never at a commit (checkpointWal).
  const checkpoints = setInterval(() => {
    try {
      checkpointWal(deps.db)
    } catch (e) {
      loggerOf(deps.config).error('checkpointing the database failed', errorFields(e))
    }
  }, WAL_CHECKPOINT_MS)
  let sweepFrom = opts.sweepFrom ?? 0
  let swept = false
  const sweepStep = async () => {
    try {
      sweepFrom = await sweepPayloads(deps.db, sweepFrom)
      swept = sweepFrom === 0
    } catch (e) {
      loggerOf(deps.config).error('sweeping webhook payloads failed', errorFields(e))
    }
  }

  const loop = (async () => {
    while (!stopped) {
      let handled = 0
      let tasks = 0
      const started = performance.now()
      try {
        // One read while the outbox is empty; a write only when there were events. Events read
        // wait for a pause between requests before they are turned into tasks (rendered, written);
        // a look at an empty outbox does not (nor does it use up the waits the deliveries may make).
        const round = await turnEventsIntoTasks(deps, TASK_BATCH, foreground && (async () => (await foreground.stepAside(() => stopped), !stopped)))
        handled = round.events
        tasks = round.tasks
        if (round.tasks) await dispatcher.pump()
      } catch (e) {
        loggerOf(deps.config).error('a webhook task round failed', errorFields(e))
        // The position did not move: the next round reads the same events again (never passed over).
        await pause(1000)
      }
      if (stopped) break
      if (handled === 0) {
        if (!swept) await sweepStep()
        if (!stopped) await pause(opts.pollMs ?? WEBHOOK_POLL_MS)
      }
      else if (handled < TASK_BATCH) {
        // A full round leaves more waiting: the next starts at once.
        const rest = (tasks ? ROUND_GAP_MS : (opts.pollMs ?? WEBHOOK_POLL_MS)) - (performance.now() - started)
        if (rest > 0) await pause(rest)
      }
    }
  })()
  await dispatcher.pump()

  return {
    /** Where the payload sweep goes on (the next thread's sweepFrom). */
    get sweepFrom() {
      return sweepFrom
    },
    /** Looks for new events and due deliveries now. */
    async wake() {
      wake()
      await dispatcher.pump()
    },
    /** Stops taking events and delivering; what is pending stays for the next start. */
    async stop() {
      stopped = true
      clearInterval(checkpoints)
      wake()
      // The dispatcher stops starting deliveries now (its drain lets those in flight finish),
      // while the task loop ends its round: events it turns into tasks meanwhile stay pending.
      await Promise.all([dispatcher.stop(), loop])
    },
  }
}

/**
 * Whether the loops have work: events the webhook consumer has not taken, or deliveries not done
 * (waiting, or retrying after a back-off). Two indexed reads; what the webhook worker asks before
 * it starts its thread, and to know when the thread may end.
 */
export async function hasWebhookWork(db: Db): Promise<boolean> {
  if (await hasEventsAfterDone(db, WEBHOOK_CONSUMER)) return true
  return ((await undeliveredOf(db).execute()) as unknown[]).length > 0
}

/**
 * A delivery not done, if any: prepared once per connection (asked every pollMs while the server
 * rests). In the pending index's order (hook_tasks_pending_idx): delivered tasks are kept, and
 * without an order PostgreSQL's generic plan, not knowing the parameter is `false`, read the
 * table from its start for one row, every delivered task when none waits.
 */
const undeliveredOf = perConnection((db) =>
  db
    .select({ id: hookTasks.id })
    .from(hookTasks)
    .where(eq(hookTasks.isDelivered, false))
    .orderBy(asc(hookTasks.repoId), asc(hookTasks.hookId), asc(hookTasks.id))
    .limit(1)
    .prepare(),
)
