import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { startTestServer } from './helpers'
import { count, eq, sql } from 'drizzle-orm'
import { hookTasks } from '../src/db/schema'
import { DIALECT } from '../src/db/dialect'
import { startReceiver, until, untilCount, type Received } from './webhook-receiver'
import { freePort, SOURCES, startServe } from './process-helpers'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** `warren serve` from the sources as a child process (so it can be killed with SIGKILL), allowed to deliver to loopback. */
const serve = (dataDir: string, port: number) =>
  startServe(
    SOURCES,
    dataDir,
    {
      WARREN_ADMIN_USER: 'root',
      WARREN_ADMIN_PASSWORD: 'pw-root-secret',
      WARREN_ADMIN_EMAIL: 'root@example.com',
      WARREN_WEBHOOK_ALLOWED_HOST_LIST: 'loopback',
      WARREN_WEBHOOK_RETRY_DELAY: '0.1',
      WARREN_WEBHOOK_MAX_ATTEMPTS: '20',
    },
    { port },
  )

const deliveryId = (r: Received) => r.headers['x-gitea-delivery']!

/**
 * What a receiver that de-duplicates by delivery id keeps: the first accepted delivery of each id,
 * in arrival order. Checks that no event came under two delivery ids, and that no id was accepted
 * more than twice.
 */
function deduplicated(received: Received[]): Received[] {
  const accepted = received.filter((r) => r.answered === 200)
  const byId = new Map<string, Received[]>()
  for (const r of accepted) byId.set(deliveryId(r), [...(byId.get(deliveryId(r)) ?? []), r])
  for (const list of byId.values()) expect(list.length).toBeLessThanOrEqual(2)
  const first = [...byId.values()].map((list) => list[0]!)
  const events = first.map((r) => `${r.payload.repository.full_name}#${r.payload.issue.number}`)
  expect(new Set(events).size).toBe(events.length)
  return first
}

describe('webhook delivery survives kill -9', () => {
  test('events acknowledged to the caller are delivered after a restart, each under one delivery id, in order', async () => {
    const data = mkdtempSync(join(tmpdir(), 'warren-hookcrash-'))
    dirs.push(data)
    const port = freePort()
    const rx = await startReceiver()
    rx.down()
    const auth = { authorization: 'Basic ' + Buffer.from('root:pw-root-secret').toString('base64'), 'content-type': 'application/json' }
    let server = await serve(data, port)
    try {
      const post = (path: string, body: unknown) => fetch(`${server.url}/api/v1${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) })
      expect((await post('/user/repos', { name: 'crashy' })).status).toBe(201)
      expect((await post('/repos/root/crashy/hooks', { type: 'gitea', config: { url: rx.url(), content_type: 'json' }, events: ['issues'], active: true })).status).toBe(201)
      let issues = 0
      const file = async (n: number) => {
        for (let i = 0; i < n; i++) expect((await post('/repos/root/crashy/issues', { title: `issue ${++issues}` })).status).toBe(201)
      }
      // 1. The receiver is down: tasks pile up (some attempted, some events maybe not yet turned into tasks).
      await file(25)
      server.proc.kill(9)
      await server.proc.exited
      // 2. The receiver is up but slow; the server is killed in the middle of the stream.
      rx.up()
      rx.setDelay(30)
      server = await serve(data, port)
      await file(15)
      await until(() => rx.received.length >= 10, 'some deliveries')
      server.proc.kill(9)
      await server.proc.exited
      // The delivery in flight at the kill reaches the receiver (which answers it after 30 ms) before the restart.
      await Bun.sleep(500)
      const beforeKill = rx.received.length
      // 3. Restarted: everything is delivered.
      server = await serve(data, port)
      const delivered = await until(() => {
        const kept = deduplicated(rx.received)
        return kept.length === issues ? kept : null
      }, `${issues} deliveries`, 2400)
      expect(delivered.map((r) => r.payload.issue.number)).toEqual(Array.from({ length: issues }, (_, i) => i + 1))
      await Bun.sleep(500)
      expect(deduplicated(rx.received).length).toBe(issues)
      // An id accepted twice is one whose outcome the killed server had not written yet: the lane's
      // last ones before the kill (outcomes are written together, FLUSH_MS apart, later on a busy
      // machine), never one recorded before them; sent again once, after the restart.
      const acceptedTwice = new Set(rx.received.filter((r) => r.answered === 200).map(deliveryId).filter((id, i, all) => all.indexOf(id) !== i))
      const acceptedBefore = [...new Set(rx.received.slice(0, beforeKill).filter((r) => r.answered === 200).map(deliveryId))]
      const repeated = acceptedBefore.filter((id) => acceptedTwice.has(id))
      expect(repeated.length).toBe(acceptedTwice.size)
      expect(repeated).toEqual(acceptedBefore.slice(acceptedBefore.length - repeated.length))
    } finally {
      server.proc.kill(9)
      await server.proc.exited
      rx.stop()
    }
  }, 120_000)
})

describe('answers the database would not record', () => {
  test.skipIf(DIALECT !== 'sqlite')('are kept and written again later, their tasks not sent twice meanwhile', async () => {
    const s = await startTestServer({ webhookAllowedHostList: 'loopback' })
    const rx = await startReceiver()
    const worker = startWebhookWorker(s.deps, { pollMs: 10 })
    try {
      const owner = await s.user('unrecorded')
      expect((await s.post('/user/repos', { name: 'r' }, { token: owner.token })).status).toBe(201)
      expect((await s.post('/repos/unrecorded/r/hooks', { type: 'gitea', config: { url: rx.url('/r'), content_type: 'json' }, events: ['issues'], active: true }, { token: owner.token })).status).toBe(201)
      // A real refusal by the database, while a row says so: the writes of deliveries' outcomes fail.
      await s.deps.db.run(sql`CREATE TABLE test_refuse_outcomes (x INTEGER)`)
      await s.deps.db.run(
        sql`CREATE TRIGGER test_refuse_outcomes BEFORE UPDATE ON hook_tasks WHEN EXISTS (SELECT 1 FROM test_refuse_outcomes) BEGIN SELECT RAISE(ABORT, 'outcomes refused'); END`,
      )
      await s.deps.db.run(sql`INSERT INTO test_refuse_outcomes VALUES (1)`)
      for (let i = 0; i < 5; i++) expect((await s.post('/repos/unrecorded/r/issues', { title: `t${i}` }, { token: owner.token })).status).toBe(201)
      await untilCount(() => rx.received.length, 5, '5 deliveries')
      const undelivered = async () => (await s.deps.db.select({ n: count() }).from(hookTasks).where(eq(hookTasks.isDelivered, false)))[0]!.n
      // Not recorded: the tasks are still undelivered in the database, and they are not sent again
      // (their lane stays taken while their outcomes wait to be written).
      await Bun.sleep(1500)
      expect(await undelivered()).toBe(5)
      expect(rx.received.length).toBe(5)
      // Once the database takes the writes again, the kept outcomes are written: delivered once each.
      await s.deps.db.run(sql`DELETE FROM test_refuse_outcomes`)
      await until(async () => (await undelivered()) === 0, 'the outcomes written')
      await Bun.sleep(200)
      expect(rx.received.length).toBe(5)
      expect(new Set(rx.received.map(deliveryId)).size).toBe(5)
    } finally {
      await worker.stop()
      rx.stop()
      await s.stop()
    }
  })
})

describe('a burst of events', () => {
  test('1,000 issues over three repositories: all delivered, once each, in order per repository; the API answers meanwhile', async () => {
    const s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05 })
    // A receiver slower than the API, so deliveries queue up.
    const rx = await startReceiver()
    rx.setDelay(2)
    const worker = startWebhookWorker(s.deps, { pollMs: 10 })
    try {
      const owner = await s.user('burst')
      const repos = ['r1', 'r2', 'r3']
      for (const name of repos) {
        expect((await s.post('/user/repos', { name }, { token: owner.token })).status).toBe(201)
        expect((await s.post(`/repos/burst/${name}/hooks`, { type: 'gitea', config: { url: rx.url(`/${name}`), content_type: 'json' }, events: ['issues'], active: true }, { token: owner.token })).status).toBe(201)
      }
      const total = 1000
      let next = 0
      const filer = async () => {
        while (next < total) {
          const i = next++
          const res = await s.post(`/repos/burst/${repos[i % 3]}/issues`, { title: `t${i}` }, { token: owner.token })
          expect(res.status).toBe(201)
        }
      }
      await Promise.all(Array.from({ length: 16 }, filer))
      // The API still answers while deliveries go out.
      expect((await s.get('/repos/burst/r1', { token: owner.token })).status).toBe(200)
      await untilCount(() => rx.accepted().length, total, `${total} deliveries`)
      await Bun.sleep(200)
      expect(rx.received.length).toBe(total)
      expect(new Set(rx.received.map((r) => r.headers['x-gitea-delivery'])).size).toBe(total)
      for (const name of repos) {
        const numbers = rx.received.filter((r) => r.path === `/${name}`).map((r) => r.payload.issue.number)
        expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1))
      }
    } finally {
      await worker.stop()
      rx.stop()
      await s.stop()
    }
  }, 300_000)
})
