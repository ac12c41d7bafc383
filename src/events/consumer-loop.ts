import type { Db } from '../db/client'
import { hasEventsAfterDone, releaseClaims } from './outbox'
import { errorFields, type Logger } from '../lib/log'
import { pauser } from '../lib/pauser'

/**
 * The loop of one outbox consumer (one worker per consumer at a time: a background job run by one
 * process, see src/jobs/): takes back at start what a previous process claimed and did not finish,
 * then runs `round` (claim a batch, handle it, mark it done; answers how many events it handled)
 * while events come, polling the outbox (a read, nothing written) when it is empty. A failed round
 * is logged and its claims released, so they come back to the next round (never passed over).
 * `onRound` is told of each round that found events (the job's listing, lib/job-board.ts).
 */
export async function runConsumerLoop(
  db: Db,
  opts: { consumer: string; round: () => Promise<number>; log: Logger; what: string; pollMs: number; onRound?: () => void },
) {
  const { consumer, round, log, what } = opts
  await releaseClaims(db, consumer)
  let stopped = false
  const { pause, wake } = pauser()
  /** Who waits for the loop to find the outbox empty (drained). */
  const waiting: (() => void)[] = []
  const loop = (async () => {
    while (!stopped) {
      // Only a round that starts after a waiter came can tell it the outbox is drained.
      const armed = waiting.splice(0)
      let handled = 0
      let failed = false
      try {
        if (await hasEventsAfterDone(db, consumer)) {
          opts.onRound?.()
          handled = await round()
        }
      } catch (e) {
        failed = true
        log.error(`a round of ${what} failed`, errorFields(e))
        // The database may be what failed: then the release fails too, and the claims come back when their lease ends.
        if (!stopped) await releaseClaims(db, consumer).catch((e2) => log.warn(`releasing the claims of ${what} failed`, errorFields(e2)))
        await pause(1000)
      }
      if (handled === 0 && !failed) for (const done of armed) done()
      else waiting.unshift(...armed)
      if (handled === 0 && !stopped) await pause(opts.pollMs)
    }
    for (const done of waiting.splice(0)) done()
  })()
  return {
    /** Resolves once the loop has handled every event recorded before the call (tests). */
    async drained() {
      await new Promise<void>((resolve) => {
        waiting.push(resolve)
        wake()
      })
    },
    /** Stops taking events; what is not done stays for the next start. */
    async stop() {
      stopped = true
      wake()
      await loop
    },
  }
}
