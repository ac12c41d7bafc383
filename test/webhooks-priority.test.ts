import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { BACKGROUND_NICE, FETCH_THREAD } from '../src/lib/thread-priority'
import { answeringNow, Foreground, foregroundMemory } from '../src/lib/foreground'
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

describe('background work steps aside while requests are answered (lib/foreground.ts)', () => {
  let s: TestServer
  let alice: TestUser
  beforeAll(async () => {
    s = await startTestServer({ webhookAllowedHostList: 'loopback' })
    alice = await s.user('stepper')
  })
  afterAll(() => s.stop())

  /**
   * Whether the server is answering a request now, read from the shared count itself: `busy()` is
   * also true for QUIET_MS after any answer (another test's, say), before the held request arrives.
   */
  const answering = () => answeringNow() > 0

  /** A request the server is answering until `release()`: its body is still being sent. */
  let held = 0
  function heldRequest() {
    const name = `held-${++held}`
    let finish!: () => void
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"name":'))
        finish = () => (controller.enqueue(new TextEncoder().encode(`"${name}"}`)), controller.close())
      },
    })
    const answered = fetch(`${s.url}/api/v1/user/repos`, { method: 'POST', body, headers: { authorization: `token ${alice.token}`, 'content-type': 'application/json' }, duplex: 'half' } as RequestInit)
    return { release: () => finish(), answered }
  }

  test('a background thread waits while a request is being answered and goes on once it is answered', async () => {
    // The longest wait made longer than the test: only the request's end lets it go on.
    const foreground = new Foreground(foregroundMemory(), 600_000)
    await until(() => !foreground.busy(), 'a pause before the test')
    const request = heldRequest()
    await until(answering, 'the held request counted')
    let gone = false
    const stepping = foreground.stepAside(() => false).then(() => (gone = true))
    await Bun.sleep(30)
    expect(gone).toBe(false)
    request.release()
    expect((await request.answered).status).toBe(201)
    await stepping
    expect(foreground.busy()).toBe(false)
  })

  test("a delivery that waited for a request is sent with its hook as it is after the wait (edited by that request, say)", async () => {
    // A receiver holding the first delivery until told.
    const got: string[] = []
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const receiver = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(req) {
        const path = new URL(req.url).pathname
        got.push(`${path} ${((await req.json()) as { issue?: { title: string } }).issue?.title}`)
        if (path === '/old') await gate
        return new Response('ok')
      },
    })
    const worker = startWebhookWorker(s.deps, { pollMs: 10, stepAsideMaxMs: 600_000 })
    try {
      const token = { token: alice.token }
      expect((await s.post('/user/repos', { name: 'moving' }, token)).status).toBe(201)
      const hook = await s.post('/repos/stepper/moving/hooks', { type: 'gitea', config: { url: `http://127.0.0.1:${receiver.port}/old`, content_type: 'json' }, events: ['issues'], active: true }, token)
      for (const title of ['first', 'second']) expect((await s.post('/repos/stepper/moving/issues', { title }, token)).status).toBe(201)
      await until(() => got.length === 1, 'the first delivery, held')
      // A request being answered: the lane's next attempt waits for it (its longest wait made
      // longer than the test), after the first attempt's answer; meanwhile the hook moves.
      const request = heldRequest()
      await until(answering, 'the held request counted')
      release()
      expect((await s.patch(`/repos/stepper/moving/hooks/${hook.body.id}`, { config: { url: `http://127.0.0.1:${receiver.port}/new` } }, token)).status).toBe(200)
      request.release()
      expect((await request.answered).status).toBe(201)
      await until(() => got.length === 2, 'the second delivery')
      expect(got).toEqual(['/old first', '/new second'])
    } finally {
      release()
      await worker.stop()
      receiver.stop(true)
    }
  })

  test('a wait ends at its longest, after which the thread goes on for as long without waiting; a stop ends it at once', async () => {
    const request = heldRequest()
    const foreground = new Foreground(foregroundMemory(), 20)
    await until(answering, 'the held request counted')
    await foreground.stepAside(() => false)
    // Free for the next 20 ms: answered at once, though the request is still being answered.
    expect(foreground.busy()).toBe(true)
    const free = foreground.stepAside(() => false)
    // A stop ends a wait of a thread whose longest wait is never reached.
    await new Foreground(foregroundMemory(), 600_000).stepAside(() => true)
    await free
    request.release()
    expect((await request.answered).status).toBe(201)
  })
})
