import type { Transporter } from 'nodemailer'
import type { AppDeps } from '../deps'
import { onMailQueued, pruneFailedMails } from '../mail/queue'
import { sendRound, smtpTransport } from '../mail/sender'
import { errorFields, loggerOf } from '../lib/log'
import { everySchedule, jobBoardOf } from '../lib/job-board'
import { pauser } from '../lib/pauser'

/** How often the mails given up long enough ago are deleted (src/mail/queue.ts pruneFailedMails). */
const PRUNE_EVERY_MS = 3600_000

/** How often the queue is looked at when nothing woke the job (another process queued, a retry came due). */
export const MAILER_POLL_MS = 1000

/**
 * The mail queue's sender (started by `warren serve` when the mailer is on, in one process at a
 * time: asLeader): sends the due mails of `mail_queue` (src/mail/sender.ts) as they are queued
 * (woken by a commit that queued some) and polls for retries and other processes' mails. A mail
 * outlives a restart: it is a row until sent or given up. Listed for /admin/cron as `mailer`.
 */
export function startMailer(deps: AppDeps, opts: { pollMs?: number } = {}) {
  const mailer = deps.config.mailer
  if (!mailer) throw new Error('the mailer is off')
  const log = loggerOf(deps.config)
  const pollMs = opts.pollMs ?? MAILER_POLL_MS
  let transport: Transporter | undefined
  const transportOnce = async () => (transport ??= await smtpTransport(mailer))
  let stopped = false
  // The given-up mails past their week are deleted at the first round, then hourly.
  let prunedAt = -Infinity
  const { pause, wake } = pauser()
  const waiting: (() => void)[] = []
  const listed = jobBoardOf(deps).register('mailer', { schedule: everySchedule(pollMs), everyMs: null, runNow: () => wake() })
  onMailQueued(deps.db, wake)
  const loop = (async () => {
    while (!stopped) {
      const armed = waiting.splice(0)
      let sent = 0
      try {
        if (Date.now() - prunedAt >= PRUNE_EVERY_MS) {
          prunedAt = Date.now()
          const pruned = await pruneFailedMails(deps.db)
          if (pruned) log.info(`deleted ${pruned} mails given up over a week ago`)
        }
        sent = await sendRound(deps.db, mailer, transportOnce, log)
        if (sent > 0) listed.round()
      } catch (e) {
        log.error('a round of the mailer failed', errorFields(e))
      }
      if (sent === 0) for (const done of armed) done()
      else waiting.unshift(...armed)
      if (sent === 0 && !stopped) await pause(pollMs)
    }
    for (const done of waiting.splice(0)) done()
  })()
  return {
    /** Resolves once a round found no mail due (tests). */
    async idle() {
      await new Promise<void>((resolve) => {
        waiting.push(resolve)
        wake()
      })
    },
    /** Looks at the queue now. */
    wake,
    async stop() {
      stopped = true
      listed.leave()
      onMailQueued(deps.db, null)
      wake()
      await loop
      transport?.close()
    },
  }
}
