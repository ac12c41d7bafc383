// runs in one half: sqlite
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startIdleCollection } from '../src/jobs/idle-collection'
import { answeringNow } from '../src/lib/foreground'
import { startTestServer, type TestServer } from './helpers'
import { until } from './webhook-receiver'

/**
 * jobs/idle-collection.ts: the main thread's heap is collected once the server goes quiet after
 * requests, when it has grown since the last collection; never while idle throughout, nor twice
 * for one quiet. Driven by real requests to a real server (the count of answered requests is the
 * server's own), with a short check interval, a stand-in for the collection and a heap size the
 * test sets.
 */
describe('the heap is collected when the server goes quiet after requests (jobs/idle-collection.ts)', () => {
  let s: TestServer
  beforeAll(async () => {
    s = await startTestServer()
  })
  afterAll(() => s.stop())

  test('once after a burst that grew the heap; not while quiet, nor after a burst that did not grow it; nothing once stopped', async () => {
    let heap = 1_000
    let collected = 0
    const job = startIdleCollection({ checkMs: 10, growthBytes: 100, collect: () => collected++, heap: () => heap })
    const checksFrom = (n: number) => job.checks >= n
    try {
      // Quiet from the start, the heap grown: nothing to collect (no requests were answered).
      heap += 500
      const quietFrom = job.checks
      await until(() => checksFrom(quietFrom + 5), 'five quiet checks')
      expect(collected).toBe(0)

      // A burst, then quiet: one collection.
      for (let i = 0; i < 20; i++) expect((await s.get('/version')).status).toBe(200)
      await until(() => collected === 1, 'the collection after the burst')
      expect(job.collections).toBe(1)
      // The quiet goes on: no other.
      const after = job.checks
      await until(() => checksFrom(after + 5), 'five more quiet checks')
      expect(collected).toBe(1)

      // Another burst, the heap no larger than at the last collection: none.
      for (let i = 0; i < 20; i++) expect((await s.get('/version')).status).toBe(200)
      const burst = job.checks
      await until(() => checksFrom(burst + 5), 'five checks after the second burst')
      expect(collected).toBe(1)

      // The heap grown again and a third burst: collected again.
      heap += 500
      for (let i = 0; i < 20; i++) expect((await s.get('/version')).status).toBe(200)
      await until(() => collected === 2, 'the collection after the third burst')
    } finally {
      job.stop()
    }
    const stoppedAt = job.checks
    for (let i = 0; i < 5; i++) await Bun.sleep(10)
    expect(job.checks).toBe(stoppedAt)
  })

  test("the heap's size after a collection is read once it has run: the next burst is measured from there", async () => {
    let heap = 1_000
    let collected = 0
    let collectedAt = 0
    // The collection frees memory after the call returns, as an asynchronous one does.
    const collect = () => {
      collected++
      collectedAt = job.checks
      setTimeout(() => (heap = 1_000), 0)
    }
    const job = startIdleCollection({ checkMs: 10, growthBytes: 100, collect, heap: () => heap })
    try {
      heap = 1_500
      for (let i = 0; i < 5; i++) expect((await s.get('/version')).status).toBe(200)
      // The collection, the memory it freed, and the check after it (which reads what is left).
      await until(() => collected === 1 && heap === 1_000 && job.checks > collectedAt + 1, 'the first collection, and the check after it')
      // Grown by 200 since what the collection left: another burst earns another collection
      // (measured from the peak, 1,500, it would not).
      heap = 1_200
      for (let i = 0; i < 5; i++) expect((await s.get('/version')).status).toBe(200)
      await until(() => collected === 2, 'the second collection')
    } finally {
      job.stop()
    }
  })

  test('no collection while a request is being answered (a body still arriving): it comes once that request is answered', async () => {
    let collected = 0
    const job = startIdleCollection({ checkMs: 10, growthBytes: 0, collect: () => collected++, heap: () => 0 })
    let finish!: () => void
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"name":'))
        finish = () => (controller.enqueue(new TextEncoder().encode('"held"}')), controller.close())
      },
    })
    try {
      for (let i = 0; i < 5; i++) expect((await s.get('/version')).status).toBe(200)
      const user = await s.user('holder')
      const answered = fetch(`${s.url}/api/v1/user/repos`, { method: 'POST', body, headers: { authorization: `token ${user.token}`, 'content-type': 'application/json' }, duplex: 'half' } as RequestInit)
      await until(() => answeringNow() > 0, 'the held request being answered')
      // Counted from the hold on: a busy machine may take long enough between the requests above
      // and the hold for a quiet of its own to earn a collection first.
      const from = job.checks
      const before = collected
      await until(() => job.checks >= from + 5, 'five checks while it is held')
      expect(collected).toBe(before)
      finish()
      expect((await answered).status).toBe(201)
      await until(() => collected === before + 1, 'the collection once it was answered')
    } finally {
      // Never left held: a request still being answered would keep every later test's server busy.
      try {
        finish()
      } catch {}
      job.stop()
    }
  })

  test('with the real collection, a server that answered and went quiet is collected without error', async () => {
    // Bun.gc(false) and the heap's real size; no growth asked, so any quiet after requests earns
    // one (not 0: the heap may have shrunk since the job read it, a collection of JavaScriptCore's
    // own meanwhile on a busy machine, and a shrunk heap has not grown by 0).
    const job = startIdleCollection({ checkMs: 10, growthBytes: -Number.MAX_SAFE_INTEGER })
    try {
      for (let i = 0; i < 5; i++) expect((await s.get('/version')).status).toBe(200)
      await until(() => job.collections >= 1, 'the collection')
      expect((await s.get('/version')).status).toBe(200)
    } finally {
      job.stop()
    }
  })
})
