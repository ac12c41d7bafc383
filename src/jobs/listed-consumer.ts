import type { AppDeps } from '../deps'
import type { runConsumerLoop } from '../events/consumer-loop'
import { everySchedule, jobBoardOf } from '../lib/job-board'

type ConsumerLoop = Awaited<ReturnType<typeof runConsumerLoop>>

/**
 * An outbox consumer's loop as a background job listed for /admin/cron under `name`: `start`
 * runs the loop, telling the listing of each round; a round on demand looks at the outbox now
 * (drained); stopping leaves the listing, then stops the loop.
 */
export async function startListedConsumer(deps: AppDeps, name: string, pollMs: number, start: (onRound: () => void) => Promise<ConsumerLoop>) {
  let loop: ConsumerLoop | undefined
  const listed = jobBoardOf(deps).register(name, { schedule: everySchedule(pollMs), everyMs: null, runNow: () => loop?.drained() })
  loop = await start(listed.round)
  const running = loop
  return {
    ...running,
    async stop() {
      listed.leave()
      await running.stop()
    },
  }
}
