import { sql } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { writeTransaction } from '../db/client'
import { notifications } from '../db/schema'
import { claimEvents, markDone, type EventRecord } from '../events/outbox'
import { runConsumerLoop } from '../events/consumer-loop'
import { errorFields, loggerOf } from '../lib/log'
import { queueMails } from '../mail/queue'
import { notificationMails } from './mails'
import { plansOf, roundReads, SOURCE, STATUS, type NotificationPlan } from './recipients'

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

/** Threads written by one statement (11 values a row: well under either database's limit on parameters). */
const THREADS_PER_STATEMENT = 500

/**
 * Writes (or updates) the threads of a round's events (in their order); inside a write
 * transaction. Many rows a statement, for all the events at once (a repository's 1,000 watchers
 * are two statements, not 1,000: bench/notifications.ts; a round of 100 comments to ten people,
 * one). Where several events touch one (user, issue), their row is the one handling them in turn
 * would leave: made, or turned from read to unread, by the first (its comment, its time of
 * creation), last updated by the last (who, which event, when); so no statement names a
 * (user, issue) twice.
 */
export async function writeThreads(deps: AppDeps, planned: { event: Pick<EventRecord, 'id' | 'createdUnix'>; plan: NotificationPlan }[]): Promise<void> {
  const rows = new Map<string, typeof notifications.$inferInsert>()
  for (const { event, plan } of planned)
    for (const userId of plan.receivers) {
      const key = `${userId}:${plan.issue.id}`
      const held = rows.get(key)
      if (held) {
        held.updatedBy = plan.actorId
        held.lastEventId = event.id
        held.updatedUnix = event.createdUnix
      } else
        rows.set(key, {
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
    }
  const all = [...rows.values()]
  const wasRead = sql`${notifications.status} = ${STATUS.read}`
  for (let at = 0; at < all.length; at += THREADS_PER_STATEMENT)
    await deps.db
      .insert(notifications)
      .values(all.slice(at, at + THREADS_PER_STATEMENT))
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
  const round = await roundReads(deps, events)
  // One event that cannot be worked out must not stop every later one: reported and skipped.
  const plans = await plansOf(deps, events, round, (event, e) =>
    loggerOf(deps.config).error('working out notifications failed', { event: event.id, kind: event.kind, ...errorFields(e) }),
  )
  // With the mailer on, the threads' mails are queued in the same transaction: each event's mails exist once, with its threads.
  const mails = await notificationMails(deps, plans)
  await writeTransaction(deps.db, async () => {
    await writeThreads(deps, plans)
    await queueMails(deps.db, mails)
    await markDone(deps.db, NOTIFICATION_CONSUMER, events[events.length - 1]!.id)
  })
  return events.length
}

/**
 * The consumer's loop (one per server, src/jobs/notifier.ts): takes back at start what a previous
 * process claimed and did not finish, then handles events as they come, polling the outbox when
 * it is empty.
 */
export async function runNotifier(deps: AppDeps, opts: { pollMs?: number; onRound?: () => void } = {}) {
  return await runConsumerLoop(deps.db, {
    consumer: NOTIFICATION_CONSUMER,
    round: () => notifyRound(deps),
    log: loggerOf(deps.config),
    what: 'notifications',
    pollMs: opts.pollMs ?? NOTIFIER_POLL_MS,
    onRound: opts.onRound,
  })
}
