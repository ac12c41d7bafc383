import { and, asc, eq, lte } from 'drizzle-orm'
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

/** A failed attempt: tried again at `nextAttemptMs`, or given up (kept as `failed`, with its error). */
export async function markFailed(db: Db, row: MailQueueRow, error: string, next: number | 'give-up'): Promise<void> {
  await db
    .update(mailQueue)
    .set({ attempts: row.attempts + 1, lastError: error.slice(0, 1000), ...(next === 'give-up' ? { status: 'failed' } : { nextAttemptMs: next }) })
    .where(eq(mailQueue.id, row.id))
}
