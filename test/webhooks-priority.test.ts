import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { BACKGROUND_NICE, FETCH_THREAD } from '../src/lib/thread-priority'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { startReceiver, until, type Receiver } from './webhook-receiver'

/**
 * Webhook delivery is background work: its thread, and Bun's fetch thread that carries its
 * requests, run at a lower CPU priority (a higher nice value) than the API's event loop, so that
 * where they want the same core a request goes first. Linux's nice value is a thread's: the main
 * thread keeps its own.
 */

/** Each thread of this process: its name and nice value. */
function threads(): { tid: number; name: string; nice: number }[] {
  const found = []
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim()
      // stat's fields after the parenthesised name: nice is the 19th field of the line.
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      found.push({ tid: Number(tid), name, nice: Number(fields[16]) })
    } catch {
      // ended meanwhile
    }
  }
  return found
}

describe.skipIf(process.platform !== 'linux')('the webhook thread runs below the API', () => {
  let s: TestServer
  let worker: ReturnType<typeof startWebhookWorker>
  let rx: Receiver
  let alice: TestUser

  beforeAll(async () => {
    s = await startTestServer({ webhookAllowedHostList: 'loopback' })
    rx = await startReceiver()
    alice = await s.user('alice')
  })
  afterAll(async () => {
    await worker?.stop()
    rx.stop()
    await s.stop()
  })

  test('after a delivery, the delivery thread and the fetch thread are at the background nice value; the event loop is not', async () => {
    const lowered = () => threads().filter((t) => t.name === 'Worker' && t.nice === BACKGROUND_NICE).map((t) => t.tid)
    // By thread id, not by count: a lowered thread there before (the test server's own webhook
    // thread) may end meanwhile, at its idle time.
    const before = new Set(lowered())
    worker = startWebhookWorker(s.deps, { pollMs: 10 })
    const token = { token: alice.token }
    expect((await s.post('/user/repos', { name: 'niced' }, token)).status).toBe(201)
    const hook = { type: 'gitea', config: { url: rx.url(), content_type: 'json' }, events: ['issues'], active: true }
    expect((await s.post('/repos/alice/niced/hooks', hook, token)).status).toBe(201)
    expect((await s.post('/repos/alice/niced/issues', { title: 'first' }, token)).status).toBe(201)
    await until(() => rx.received.some((r) => r.payload?.issue?.title === 'first'), 'the delivery')

    // The webhook thread, started by startWebhookWorker, is at the background value (at least one
    // lowered thread that was not there before: a webhook thread of the test server's own, started
    // when its outbox had work, may be there too).
    expect(lowered().filter((tid) => !before.has(tid)).length).toBeGreaterThanOrEqual(1)
    // The fetch thread is lowered once the attempt that started it has ended (it exists from then on).
    const fetchThreads = await until(() => {
      const found = threads().filter((t) => t.name === FETCH_THREAD)
      return found.length > 0 && found.every((t) => t.nice === BACKGROUND_NICE) && found
    }, 'the fetch thread lowered')
    expect(fetchThreads.map((t) => t.nice)).toEqual(fetchThreads.map(() => BACKGROUND_NICE))
    // The API's event loop (the process's main thread, whose id is the process's) keeps its priority.
    expect(threads().find((t) => t.tid === process.pid)!.nice).toBe(0)
    // And it still answers.
    expect((await s.get('/repos/alice/niced/issues/1', token)).status).toBe(200)
  })
})
