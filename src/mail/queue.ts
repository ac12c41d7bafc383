import { and, asc, eq, inArray, lte } from 'drizzle-orm'
import { afterCommit, type Db } from '../db/client'
import { mailQueue, type MailQueueRow } from '../db/schema'
import { nowUnix } from '../lib/time'

/** One mail to one address, as the queue keeps it (src/mail/messages.ts makes them). */
export interface MailMessage {
  to: string
  subject: string
  text: string
  html: string
}

/** Mails one statement writes (6 values a row: far under either database's limit on parameters). */
const ROWS_PER_STATEMENT = 500

/** The wake-ups of the mailer job running on a database in this process (src/jobs/mailer.ts). */
const wakers = new WeakMap<Db, () => void>()

/** The mailer job of this process tells where to wake it when a mail is queued. */
export function onMailQueued(db: Db, wake: (() => void) | null): void {
  if (wake) wakers.set(db, wake)
  else wakers.delete(db)
}

/**
 * Queues mails in the caller's write transaction (or alone, when it is in none), so a mail exists
 * exactly when the change that causes it was committed; the mailer job sends it later, never on
 * the request's path. The job of this process is woken once the transaction commits (another
 * process's finds them at its next poll).
 */
export async function queueMails(db: Db, mails: MailMessage[]): Promise<void> {
  if (mails.length === 0) return
  const now = Date.now()
  for (let at = 0; at < mails.length; at += ROWS_PER_STATEMENT)
    await db.insert(mailQueue).values(
      mails.slice(at, at + ROWS_PER_STATEMENT).map((m) => ({
        recipient: m.to,
        subject: m.subject,
        textBody: m.text,
        htmlBody: m.html,
        nextAttemptMs: now,
        createdUnix: nowUnix(),
      })),
    )
  afterCommit(db, () => wakers.get(db)?.())
}

/** The mails due now (oldest first), at most `limit`. */
export async function dueMails(db: Db, limit: number, nowMs = Date.now()): Promise<MailQueueRow[]> {
  return await db
    .select()
    .from(mailQueue)
    .where(and(eq(mailQueue.status, 'waiting'), lte(mailQueue.nextAttemptMs, nowMs)))
    .orderBy(asc(mailQueue.nextAttemptMs), asc(mailQueue.id))
    .limit(limit)
}

/** A sent mail leaves the queue. */
export async function markSent(db: Db, id: number): Promise<void> {
  await db.delete(mailQueue).where(eq(mailQueue.id, id))
}

/**
 * A failed attempt: tried again at `nextAttemptMs`, or given up: kept as `failed`, with its error
 * and the time it was given up in `nextAttemptMs`, for FAILED_KEPT_MS (pruneFailedMails).
 */
export async function markFailed(db: Db, row: MailQueueRow, error: string, next: number | 'give-up', nowMs = Date.now()): Promise<void> {
  await db
    .update(mailQueue)
    .set({ attempts: row.attempts + 1, lastError: error.slice(0, 1000), ...(next === 'give-up' ? { status: 'failed', nextAttemptMs: nowMs } : { nextAttemptMs: next }) })
    .where(eq(mailQueue.id, row.id))
}

/** How long a mail given up stays in the queue (for an operator to read why): a week. */
export const FAILED_KEPT_MS = 7 * 24 * 3600_000
/** Given-up mails one prune deletes at most (the next prune takes the rest). */
const PRUNED_AT_ONCE = 500

/**
 * Deletes the mails given up more than FAILED_KEPT_MS ago, at most PRUNED_AT_ONCE (found by the
 * due index: status, then the time): a server whose SMTP server refuses everything keeps a week
 * of them, not every mail ever. Answers how many went.
 */
export async function pruneFailedMails(db: Db, nowMs = Date.now()): Promise<number> {
  const old = db
    .select({ id: mailQueue.id })
    .from(mailQueue)
    .where(and(eq(mailQueue.status, 'failed'), lte(mailQueue.nextAttemptMs, nowMs - FAILED_KEPT_MS)))
    .limit(PRUNED_AT_ONCE)
  const gone = await db.delete(mailQueue).where(inArray(mailQueue.id, old)).returning({ id: mailQueue.id })
  return gone.length
}
