import type { AppDeps } from '../deps'
import { runConsumerLoop } from '../events/consumer-loop'
import { loggerOf } from '../lib/log'
import { PUSH_MIRROR_CONSUMER, pushMirrorRound } from '../modules/migrations/push-mirrors'
import { startListedConsumer } from './listed-consumer'

/** How often the outbox is looked at when it was empty (a read). */
export const PUSH_MIRRORER_POLL_MS = 1000

/**
 * Push mirrors' sync_on_commit in the background (started and stopped by `warren serve`, in one
 * process at a time: asLeader): the outbox's push-mirror consumer queues a push of the
 * sync_on_commit mirrors of each repository whose refs changed, after the change's commit
 * (src/modules/migrations/push-mirrors.ts). The pushes run in this process's mirror queue, which
 * the mirror scheduler's stop ends. Listed for /admin/cron (a round: a batch of events taken); a
 * round on demand looks at the outbox now.
 */
export async function startPushMirrorer(deps: AppDeps, opts: { pollMs?: number } = {}) {
  const pollMs = opts.pollMs ?? PUSH_MIRRORER_POLL_MS
  return await startListedConsumer(deps, 'push_mirrors_on_commit', pollMs, (onRound) =>
    runConsumerLoop(deps.db, { consumer: PUSH_MIRROR_CONSUMER, round: () => pushMirrorRound(deps), log: loggerOf(deps.config), what: 'push mirrors on commit', pollMs, onRound }),
  )
}
