import { sql } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { writeTransaction } from '../db/client'
import { notifications } from '../db/schema'
import { claimEvents, hasEventsAfterDone, markDone, releaseClaims, type EventRecord } from '../events/outbox'
import { errorFields, loggerOf } from '../lib/log'
import { pauser } from '../lib/pauser'
import { planOf, SOURCE, STATUS, type NotificationPlan } from './recipients'

/**
 * The outbox's notification consumer: events → notification threads. Each round claims a batch
 * of events, works out whom each one notifies (reads only, src/notify/recipients.ts), then writes
 * the threads and the consumer's "done" mark in ONE transaction, so a crash leaves the events to
 * be claimed again and nothing half written. One thread per (user, issue): a later event updates
 * it as Gitea's updateIssueNotification does (a read thread becomes unread and points at the new
 * comment; an unread or pinned one keeps its status); a thread whose `last_event_id` is already
 * this event's (or a later one's) is left as it is, so an event handled twice (claimed again
 * after a crash) changes nothing.
 */

export const NOTIFICATION_CONSUMER = 'notifications'
/** Events per round. */
const BATCH = 100
/** How long a claim lasts (released at start anyway: one worker at a time, see src/jobs/notifier.ts). */
const LEASE_MS = 5 * 60_000
/** How often the outbox is looked at when it was empty (a read; nothing is written while idle). */
export const NOTIFIER_POLL_MS = 200

/** Writes (or updates) the threads of one event; inside a write transaction. */
export async function writeThreads(deps: AppDeps, event: Pick<EventRecord, 'id' | 'createdUnix'>, plan: NotificationPlan): Promise<void> {
  const wasRead = sql`${notifications.status} = ${STATUS.read}`
  for (const userId of plan.receivers)
    await deps.db
      .insert(notifications)
      .values({
        userId,
        repoId: plan.repo.id,
        status: STATUS.unread,
        source: plan.issue.isPull ? SOURCE.pull : SOURCE.issue,
        issueId: plan.issue.id,
        commentId: plan.commentId,
        updatedBy: plan.actorId,
        lastEventId: event.id,
        createdUnix: event.createdUnix,
        updatedUnix: event.createdUnix,
      })
      .onConflictDoUpdate({
        target: [notifications.userId, notifications.issueId],
        set: {
          status: sql`CASE WHEN ${wasRead} THEN ${STATUS.unread} ELSE ${notifications.status} END`,
          commentId: sql`CASE WHEN ${wasRead} THEN excluded.comment_id ELSE ${notifications.commentId} END`,
          updatedBy: sql`excluded.updated_by`,
          lastEventId: sql`excluded.last_event_id`,
          updatedUnix: sql`excluded.updated_unix`,
        },
        setWhere: sql`${notifications.lastEventId} < excluded.last_event_id`,
      })
}

/** One round: answers how many events were handled (0: the outbox is drained for this consumer). */
export async function notifyRound(deps: AppDeps, limit = BATCH): Promise<number> {
  const events = await claimEvents(deps.db, NOTIFICATION_CONSUMER, limit, LEASE_MS)
  if (events.length === 0) return 0
  const plans: { event: EventRecord; plan: NotificationPlan }[] = []
  for (const event of events) {
    try {
      const plan = await planOf(deps, event)
      if (plan) plans.push({ event, plan })
    } catch (e) {
      // One event that cannot be worked out must not stop every later one: reported and skipped.
      loggerOf(deps.config).error('working out notifications failed', { event: event.id, kind: event.kind, ...errorFields(e) })
    }
  }
  await writeTransaction(deps.db, async () => {
    for (const { event, plan } of plans) await writeThreads(deps, event, plan)
    await markDone(deps.db, NOTIFICATION_CONSUMER, events[events.length - 1]!.id)
  })
  return events.length
}

/**
 * The consumer's loop (one per server, src/jobs/notifier.ts): takes back at start what a previous
 * process claimed and did not finish, then handles events as they come, polling the outbox when
 * it is empty.
 */
export async function runNotifier(deps: AppDeps, opts: { pollMs?: number } = {}) {
  await releaseClaims(deps.db, NOTIFICATION_CONSUMER)
  let stopped = false
  const { pause, wake } = pauser()
  /** Who waits for the loop to find the outbox empty (drained). */
  const waiting: (() => void)[] = []
  const loop = (async () => {
    while (!stopped) {
      // Only a round that starts after a waiter came can tell it the outbox is drained.
      const armed = waiting.splice(0)
      let handled = 0
      let failed = false
      try {
        if (await hasEventsAfterDone(deps.db, NOTIFICATION_CONSUMER)) handled = await notifyRound(deps)
      } catch (e) {
        failed = true
        loggerOf(deps.config).error('a notification round failed', errorFields(e))
        // What this round claimed comes back to the next one (never passed over). The database
        // may be what failed: then the release fails too, and the claims come back when their lease ends.
        if (!stopped) await releaseClaims(deps.db, NOTIFICATION_CONSUMER).catch((e2) => loggerOf(deps.config).warn('releasing notification claims failed', errorFields(e2)))
        await pause(1000)
      }
      if (handled === 0 && !failed) for (const done of armed) done()
      else waiting.unshift(...armed)
      if (handled === 0 && !stopped) await pause(opts.pollMs ?? NOTIFIER_POLL_MS)
    }
    for (const done of waiting.splice(0)) done()
  })()
  return {
    /** Resolves once the loop has handled every event recorded before the call (tests). */
    async drained() {
      await new Promise<void>((resolve) => {
        waiting.push(resolve)
        wake()
      })
    },
    /** Stops taking events; what is not done stays for the next start. */
    async stop() {
      stopped = true
      wake()
      await loop
    },
  }
}
