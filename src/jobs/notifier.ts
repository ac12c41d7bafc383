import type { AppDeps } from '../deps'
import { NOTIFIER_POLL_MS, runNotifier } from '../notify/consumer'
import { everySchedule, jobBoardOf } from '../lib/job-board'

/**
 * Notification threads in the background (started and stopped by `warren serve`, in one process
 * at a time: asLeader): the outbox consumer of src/notify/consumer.ts on the server's own database
 * connection. Its work is a few short queries per event, awaited, so it shares the event loop
 * with requests as the pull request checker does. Listed for /admin/cron (a round: a batch of
 * events taken); a round on demand looks at the outbox now.
 */
export async function startNotifier(deps: AppDeps, opts: { pollMs?: number } = {}) {
  let loop: Awaited<ReturnType<typeof runNotifier>> | undefined
  const listed = jobBoardOf(deps).register('notifications', {
    schedule: everySchedule(opts.pollMs ?? NOTIFIER_POLL_MS),
    everyMs: null,
    runNow: () => loop?.drained(),
  })
  loop = await runNotifier(deps, { ...opts, onRound: listed.round })
  const running = loop
  return {
    ...running,
    async stop() {
      listed.leave()
      await running.stop()
    },
  }
}
