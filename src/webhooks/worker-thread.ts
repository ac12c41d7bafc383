/**
 * The webhook delivery thread: its own event loop and its own database connection, so building
 * payloads and talking to receivers never holds up a request. Started and stopped by
 * src/jobs/webhook-worker.ts; also an entry point of the bundle (package.json "build").
 */
import { closeDatabase, shareWriteLock } from '../db/client'
import type { Config } from '../config'
import { createDeps } from '../deps'
import { runWebhookLoops } from './loops'
import { lowerThisThread } from '../lib/thread-priority'
import { Foreground } from '../lib/foreground'

declare const self: Worker

/**
 * `hooksMark`: the hooks counter the API's thread moves when a hook is edited or deleted (shared
 * memory, no message); `writeLock`: who holds SQLite's write lock, the API's connection or this
 * thread's (db/client.ts shareWriteLock; null on PostgreSQL); `foreground`: the requests the
 * process is answering (lib/foreground.ts), which the thread's work steps aside for (at most
 * `stepAsideMaxMs` in a window: STEP_ASIDE_MAX_MS but in tests).
 */
export type WebhookThreadMessage =
  | { type: 'start'; config: Config; pollMs?: number; sweepFrom?: number; hooksMark: SharedArrayBuffer; writeLock: SharedArrayBuffer | null; foreground: SharedArrayBuffer; stepAsideMaxMs?: number }
  | { type: 'wake' }
  | { type: 'stop' }
/** What the thread says: started, and stopped with where the payload sweep goes on. */
export type WebhookThreadReport = { type: 'started' } | { type: 'stopped'; sweepFrom: number }

let loops: Awaited<ReturnType<typeof runWebhookLoops>> | undefined
let deps: Awaited<ReturnType<typeof createDeps>> | undefined

self.onmessage = async (event: MessageEvent<WebhookThreadMessage>) => {
  const message = event.data
  if (message.type === 'start' && !loops) {
    // Below the API's event loop: where the two want the same core, a request goes first. The
    // thread's database connection, payloads and deliveries are all background work.
    lowerThisThread()
    deps = await createDeps(message.config)
    if (message.writeLock) shareWriteLock(deps.db, message.writeLock)
    loops = await runWebhookLoops(deps, { pollMs: message.pollMs, sweepFrom: message.sweepFrom, background: true, hooksMark: message.hooksMark, foreground: new Foreground(message.foreground, message.stepAsideMaxMs) })
    self.postMessage({ type: 'started' } satisfies WebhookThreadReport)
  } else if (message.type === 'wake') await loops?.wake()
  else if (message.type === 'stop') {
    await loops?.stop()
    const sweepFrom = loops?.sweepFrom ?? 0
    if (deps) await closeDatabase(deps.db)
    loops = undefined
    self.postMessage({ type: 'stopped', sweepFrom } satisfies WebhookThreadReport)
  }
}
