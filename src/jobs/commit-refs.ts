import type { AppDeps } from '../deps'
import { runConsumerLoop } from '../events/consumer-loop'
import { loggerOf } from '../lib/log'
import { COMMIT_REFS_CONSUMER, commitRefsRound } from '../modules/issues/commit-refs'
import { startListedConsumer } from './listed-consumer'

/** How often the outbox is looked at when it was empty (a read). */
export const COMMIT_REFS_POLL_MS = 1000

/**
 * Issue references of pushed commits in the background (started and stopped by `warren serve`, in
 * one process at a time: asLeader): the outbox's commit-refs consumer reads each push's commits
 * for references, after the push's commit (src/modules/issues/commit-refs.ts). Listed for
 * /admin/cron (a round: a batch of events taken); a round on demand looks at the outbox now.
 */
export async function startCommitRefs(deps: AppDeps, opts: { pollMs?: number } = {}) {
  const pollMs = opts.pollMs ?? COMMIT_REFS_POLL_MS
  return await startListedConsumer(deps, 'issue_references_of_commits', pollMs, (onRound) =>
    runConsumerLoop(deps.db, { consumer: COMMIT_REFS_CONSUMER, round: () => commitRefsRound(deps), log: loggerOf(deps.config), what: 'issue references of commits', pollMs, onRound }),
  )
}
