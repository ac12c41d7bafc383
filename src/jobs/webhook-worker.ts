import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { AppDeps } from '../deps'
import { registerDeliveryWaker, stopDrainMs } from '../webhooks/dispatcher'
import type { WebhookThreadMessage } from '../webhooks/worker-thread'
import { loggerOf } from '../lib/log'

/** Where the thread's code is: beside the webhooks sources, or in the bundle at its entry's path. */
function threadUrl(): URL {
  const source = new URL('../webhooks/worker-thread.ts', import.meta.url)
  if (existsSync(fileURLToPath(source))) return source
  const bundled = new URL('./webhooks/worker-thread.js', import.meta.url)
  if (existsSync(fileURLToPath(bundled))) return bundled
  throw new Error(`webhook worker not found (looked for ${source.pathname} and ${bundled.pathname})`)
}

/** PostgreSQL connections of the delivery thread's pool (the README's connection count counts them). */
export const WEBHOOK_DATABASE_POOL = 2

/** How long stop() waits for the thread past its deliveries' drain (stopDrainMs) before ending it. */
const STOP_MARGIN_MS = 5_000

/**
 * Webhook delivery in the background (started and stopped by `warren serve`): the loops of
 * src/webhooks/loops.ts in a thread of their own, with their own connection to the database, so
 * neither payload building nor slow receivers touch the event loop that answers requests. The
 * API wakes it when it adds deliveries itself (tests, redeliveries); new events it finds by
 * polling the outbox.
 */
export function startWebhookWorker(deps: AppDeps, opts: { pollMs?: number } = {}) {
  const thread = new Worker(threadUrl().href)
  const post = (message: WebhookThreadMessage) => thread.postMessage(message)
  let stopped: (() => void) | null = null
  thread.onmessage = (event: MessageEvent<{ type: string }>) => {
    if (event.data.type === 'stopped') stopped?.()
  }
  thread.onerror = (event) => loggerOf(deps.config).error('the webhook worker failed', { error: event.message })
  // The thread's own connections: a small pool (its writes run one at a time anyway), no locks.
  post({ type: 'start', config: { ...deps.config, databasePoolSize: WEBHOOK_DATABASE_POOL }, pollMs: opts.pollMs })
  const unregister = registerDeliveryWaker(deps.db, () => post({ type: 'wake' }))
  return {
    /** Stops taking events and delivering (what is pending stays for the next start) and ends the thread. */
    async stop() {
      unregister()
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, stopDrainMs(deps.config) + STOP_MARGIN_MS)
        stopped = () => (clearTimeout(timer), resolve())
        post({ type: 'stop' })
      })
      thread.terminate()
    },
  }
}
