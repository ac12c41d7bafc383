import type { Transporter } from 'nodemailer'
import type { MailerConfig } from '../config'
import type { Db } from '../db/client'
import type { MailQueueRow } from '../db/schema'
import { errorFields, type Logger } from '../lib/log'
import { dueMails, markFailed, markSent } from './queue'

/** Mails taken from the queue a round (sent one after another). */
const ROUND = 20
/** The longest wait between two attempts of one mail. */
const MAX_RETRY_MS = 3600_000

/**
 * The SMTP client (nodemailer: a well-kept client made for this, speaking SMTP, SMTPS and
 * STARTTLS with authentication, encoding every header it writes), made once per job, imported
 * when the job first sends: a server whose mailer is off never loads it.
 */
export async function smtpTransport(mailer: MailerConfig): Promise<Transporter> {
  const nodemailer = await import('nodemailer')
  const ms = mailer.timeout * 1000
  return nodemailer.createTransport({
    host: mailer.host,
    port: mailer.port,
    secure: mailer.protocol === 'smtps',
    // smtp+starttls insists on TLS; plain smtp never asks for it (as Gitea's PROTOCOL=smtp).
    requireTLS: mailer.protocol === 'smtp+starttls',
    ignoreTLS: mailer.protocol === 'smtp',
    auth: mailer.user ? { user: mailer.user, pass: mailer.passwd } : undefined,
    tls: { rejectUnauthorized: !mailer.forceTrustServerCert },
    connectionTimeout: ms,
    greetingTimeout: ms,
    socketTimeout: ms,
    // One connection a mail, closed once it is sent (as Gitea's sender dials per message): nothing held open while idle.
  })
}

/** When a failed mail is tried again: the delay doubled for each attempt so far, at most an hour; or given up. */
function nextAttempt(mailer: MailerConfig, row: MailQueueRow, error: unknown, nowMs: number): number | 'give-up' {
  const attempts = row.attempts + 1
  // A 5xx answer is the server's final word (a refused address, a message it will never take).
  const code = (error as { responseCode?: unknown })?.responseCode
  if (attempts >= mailer.maxAttempts || (typeof code === 'number' && code >= 500 && code < 600)) return 'give-up'
  return nowMs + Math.min(MAX_RETRY_MS, mailer.retryDelay * 1000 * 2 ** (attempts - 1))
}

/**
 * One round of the mailer job: the due mails sent one after another; a sent one leaves the queue,
 * a failed one waits for its next attempt (at most `maxAttempts`, then kept as failed and logged).
 * Answers how many were due.
 */
export async function sendRound(db: Db, mailer: MailerConfig, transport: () => Promise<Transporter>, log: Logger): Promise<number> {
  const due = await dueMails(db, ROUND)
  if (due.length === 0) return 0
  const client = await transport()
  for (const row of due) {
    try {
      await client.sendMail({ from: mailer.from, to: row.recipient, subject: row.subject, text: row.textBody, html: row.htmlBody, disableFileAccess: true, disableUrlAccess: true })
      await markSent(db, row.id)
    } catch (e) {
      const next = nextAttempt(mailer, row, e, Date.now())
      await markFailed(db, row, (e as Error)?.message ?? String(e), next)
      if (next === 'give-up') log.error('a mail could not be sent: given up', { mail: row.id, attempts: row.attempts + 1, ...errorFields(e) })
      else log.warn('a mail could not be sent: it will be tried again', { mail: row.id, attempts: row.attempts + 1, ...errorFields(e) })
    }
  }
  return due.length
}
