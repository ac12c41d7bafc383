import type { AppDeps } from '../deps'
import { NOTIFIER_POLL_MS, runNotifier } from '../notify/consumer'
import { startListedConsumer } from './listed-consumer'

/**
 * Notification threads in the background (started and stopped by `warren serve`, in one process
 * at a time: asLeader): the outbox consumer of src/notify/consumer.ts on the server's own database
 * connection. Its work is a few short queries per event, awaited, so it shares the event loop
 * with requests as the pull request checker does. Listed for /admin/cron (a round: a batch of
 * events taken); a round on demand looks at the outbox now.
 */
export async function startNotifier(deps: AppDeps, opts: { pollMs?: number } = {}) {
  return await startListedConsumer(deps, 'notifications', opts.pollMs ?? NOTIFIER_POLL_MS, (onRound) => runNotifier(deps, { ...opts, onRound }))
}
