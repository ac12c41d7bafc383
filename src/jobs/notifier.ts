import type { AppDeps } from '../deps'
import { runNotifier } from '../notify/consumer'

/**
 * Notification threads in the background (started and stopped by `warren serve`, in one process
 * at a time: asLeader): the outbox consumer of src/notify/consumer.ts on the server's own database
 * connection. Its work is a few short queries per event, awaited, so it shares the event loop
 * with requests as the pull request checker does.
 */
export async function startNotifier(deps: AppDeps, opts: { pollMs?: number } = {}) {
  return await runNotifier(deps, opts)
}
