import { shareWriteLock } from '../db/client'
import type { AppDeps } from '../deps'
import { newHooksMark, registerDeliveryWaker, stopDrainMs, type DeliveryNews } from '../webhooks/dispatcher'
import { hasWebhookWork, WEBHOOK_POLL_MS } from '../webhooks/loops'
import type { WebhookThreadMessage, WebhookThreadReport } from '../webhooks/worker-thread'
import { errorFields, loggerOf } from '../lib/log'
import { pauser } from '../lib/pauser'
import { everySchedule, jobBoardOf } from '../lib/job-board'
import { threadEntryUrl } from '../lib/thread-entry'
import { foregroundMemory } from '../lib/foreground'

/** Where the thread's code is: beside the webhooks sources, or in the bundle at its entry's path. */
const threadUrl = () => threadEntryUrl(import.meta.url, '../webhooks/worker-thread.ts', './webhooks/worker-thread.js', 'webhook worker')

/** PostgreSQL connections of the delivery thread's pool (the README's connection count counts them). */
export const WEBHOOK_DATABASE_POOL = 2

/** How long stop() waits for the thread past its deliveries' drain (stopDrainMs) before ending it. */
const STOP_MARGIN_MS = 5_000

/** While the thread runs (it polls the outbox itself), how often this side asks whether work is left. */
const RUNNING_CHECK_MS = 1_000

/** Where the webhook threads' sweep of unreferenced payloads goes on, per database (each thread continues the previous one's). */
const sweepPositions = new WeakMap<AppDeps['db'], number>()
/** The write lock's shared holder of each database's connection (made at its first thread, joined by each). */
const writeLockMemory = new WeakMap<AppDeps['db'], SharedArrayBuffer>()

/** The delivery thread: started with its configuration, ended after its loops stopped. */
function startThread(deps: AppDeps, pollMs: number | undefined, stepAsideMaxMs: number | undefined) {
  const thread = new Worker(threadUrl().href)
  const post = (message: WebhookThreadMessage) => thread.postMessage(message)
  let stopped: (() => void) | null = null
  thread.onmessage = (event: MessageEvent<WebhookThreadReport>) => {
    if (event.data.type === 'stopped') {
      sweepPositions.set(deps.db, event.data.sweepFrom)
      stopped?.()
    }
  }
  thread.onerror = (event) => loggerOf(deps.config).error('the webhook worker failed', { error: event.message })
  // The thread's own connections: a small pool (its writes run one at a time anyway), no locks.
  // Moved here, read by the thread's lanes before each attempt: a hook's edit is seen by every attempt that starts after its answer.
  const hooksMark = newHooksMark()
  const hooksMoved = new Int32Array(hooksMark)
  // Which of the two connections holds SQLite's write lock: each waits for the other's word (db/client.ts).
  const writeLock = writeLockMemory.get(deps.db) ?? shareWriteLock(deps.db)
  if (writeLock) writeLockMemory.set(deps.db, writeLock)
  post({ type: 'start', config: { ...deps.config, databasePoolSize: WEBHOOK_DATABASE_POOL }, pollMs, sweepFrom: sweepPositions.get(deps.db), hooksMark, writeLock, foreground: foregroundMemory(), stepAsideMaxMs })
  return {
    /** Tasks were added (woken), or hooks edited or deleted (its running lanes read theirs again). */
    tell: (news: DeliveryNews) => (news === 'tasks' ? post({ type: 'wake' }) : void Atomics.add(hooksMoved, 0, 1)),
    /** Stops taking events and delivering (what is pending stays for the next start) and ends the thread. */
    async end() {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, stopDrainMs(deps.config) + STOP_MARGIN_MS)
        stopped = () => (clearTimeout(timer), resolve())
        post({ type: 'stop' })
      })
      thread.terminate()
    },
  }
}

/**
 * Webhook delivery in the background (started and stopped by `warren serve`): the loops of
 * src/webhooks/loops.ts in a thread of their own, with their own connection to the database, so
 * neither payload building nor slow receivers touch the event loop that answers requests.
 *
 * The thread runs only while there is work: this side asks the outbox every `pollMs` (two indexed
 * reads, hasWebhookWork) and starts the thread when events wait or deliveries are not done; the
 * thread, which then polls the outbox itself, is ended once there has been no work for
 * `idleMs` (WARREN_WORKER_IDLE), so a server whose hooks are quiet keeps no second JavaScript
 * runtime in memory. The API wakes it when it adds deliveries itself (tests, redeliveries). One
 * thread at a time: a new one starts only after the previous one stopped, and each takes back at
 * its start what an earlier one left claimed (runWebhookLoops), so nothing is delivered twice at
 * once and nothing pending is lost between two threads.
 */
export function startWebhookWorker(deps: AppDeps, opts: { pollMs?: number; idleMs?: number; stepAsideMaxMs?: number } = {}) {
  const log = loggerOf(deps.config)
  const pollMs = opts.pollMs ?? WEBHOOK_POLL_MS
  const idleMs = opts.idleMs ?? deps.config.workerIdleMs
  let thread: ReturnType<typeof startThread> | null = null
  /** Threads told to end that have not ended yet (finishing their deliveries' records). */
  let ending = 0
  const end = async (t: ReturnType<typeof startThread>) => {
    ending++
    try {
      await t.end()
    } finally {
      ending--
    }
  }
  let stopped = false
  const { pause, wake } = pauser()
  // Listed for /admin/cron (a round: a look for work; the deliveries are the thread's); a round on demand wakes it.
  const listed = jobBoardOf(deps).register('webhook_deliveries', { schedule: everySchedule(pollMs), everyMs: null, runNow: () => (thread ? thread.tell('tasks') : wake()) })
  const loop = (async () => {
    let idleSince = 0
    while (!stopped) {
      listed.round()
      try {
        const work = await hasWebhookWork(deps.db)
        // A stop that came meanwhile has ended (or will end) the thread: none starts after it.
        if (stopped) break
        if (work) {
          idleSince = 0
          thread ??= startThread(deps, opts.pollMs, opts.stepAsideMaxMs)
        } else if (thread) {
          idleSince ||= Date.now()
          if (Date.now() - idleSince >= idleMs) {
            const idle = thread
            thread = null
            idleSince = 0
            await end(idle)
            // Work that came while it ended is looked for at once.
            continue
          }
        }
      } catch (e) {
        log.error('looking for webhook work failed', errorFields(e))
      }
      if (!stopped) await pause(thread ? Math.min(RUNNING_CHECK_MS, idleMs) : pollMs)
    }
  })()
  // A hook's change matters only to a running thread's lanes (a new thread reads hooks with its tasks).
  const unregister = registerDeliveryWaker(deps.db, (news) => (thread ? thread.tell(news) : news === 'tasks' && wake()))
  return {
    /** Whether the delivery thread runs now (one told to end runs until it has recorded what it was doing). */
    get running() {
      return thread !== null || ending > 0
    },
    /** Stops taking events and delivering (what is pending stays for the next start) and ends the thread. */
    async stop() {
      listed.leave()
      unregister()
      stopped = true
      wake()
      // The thread is told at once, not after this side's loop has noticed: a lane that finished a
      // delivery must not start its next one once the server is stopping (it would be held for the
      // whole drain by a slow receiver, cut, and sent again after the restart).
      const last = thread
      thread = null
      await Promise.all([last && end(last), loop])
    },
  }
}
