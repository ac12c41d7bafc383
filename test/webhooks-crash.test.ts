import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hmacHex, until } from './webhook-receiver'
import { freePort, SOURCES, startServe, type Served } from './process-helpers'
import { freshTestDatabase, type TestDatabase } from './test-database'

/**
 * What the README promises of webhook delivery across a crash: at least once, and a delivery sent
 * again carries the same delivery id (X-Gitea-Delivery, X-Gogs-Delivery, X-GitHub-Delivery) and
 * the same body as its first arrival, so a receiver can drop the repeat. `warren serve` runs as a
 * child process and is killed with SIGKILL while deliveries are in flight: the receiver holds
 * their answers, so the server dies after sending them and before it could record them.
 */

const dirs: string[] = []
const databases: TestDatabase[] = []
afterAll(async () => {
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
  for (const d of databases) await d.drop()
})

const SECRET = 'crash-test-secret'

interface Arrival {
  /** 1-based arrival order. */
  seq: number
  path: string
  headers: Record<string, string>
  body: string
  /** The payload text (the form's `payload` field for form hooks). */
  text: string
  payload: any
}

/**
 * A receiver that records each request as it arrives and answers 200, except that once its
 * budget of answers is spent it holds each answer until allowNext() or release(): the sender's
 * attempt is then in flight for as long as the test wants.
 */
function holdingReceiver() {
  const arrivals: Arrival[] = []
  const held: (() => void)[] = []
  let budget = Infinity
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = await req.text()
      const headers: Record<string, string> = {}
      req.headers.forEach((value, key) => (headers[key] = value))
      const text = (headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded') ? (new URLSearchParams(body).get('payload') ?? '') : body
      arrivals.push({ seq: arrivals.length + 1, path: new URL(req.url).pathname, headers, body, text, payload: JSON.parse(text) })
      if (budget > 0) budget--
      else await new Promise<void>((resolve) => held.push(resolve))
      return new Response('ok')
    },
  })
  return {
    url: (path: string) => `http://127.0.0.1:${server.port}${path}`,
    arrivals,
    /** Answers the next `n` requests (those held first), then holds every later one. */
    allowNext(n: number) {
      budget = n
      while (budget > 0 && held.length) (budget--, held.shift()!())
    },
    heldCount: () => held.length,
    /** Answers everything held and holds nothing more. */
    release() {
      budget = Infinity
      held.splice(0).forEach((answer) => answer())
    },
    stop: () => server.stop(true),
  }
}

/**
 * `warren serve` from the sources, allowed to deliver to loopback; on the run's database (a fresh
 * PostgreSQL database in a PostgreSQL run, its own SQLite file otherwise).
 */
const serve = async (dataDir: string, port: number, database: TestDatabase) =>
  remember(await startServe(
    SOURCES,
    dataDir,
    {
      ...(database.url ? { WARREN_DATABASE_URL: database.url } : {}),
      WARREN_ADMIN_USER: 'root',
      WARREN_ADMIN_PASSWORD: 'pw-root-secret',
      WARREN_ADMIN_EMAIL: 'root@example.com',
      WARREN_WEBHOOK_ALLOWED_HOST_LIST: 'loopback',
      WARREN_WEBHOOK_RETRY_DELAY: '0.1',
      // Longer than the receiver ever holds an answer: a held delivery must not time out and be
      // retried (a repeat the tests would take for one made by a kill) on a slow machine.
      WARREN_WEBHOOK_DELIVER_TIMEOUT: '600',
    },
    { port },
  ))

/** Every server started so far (their output stays readable after they ended). */
const served: Served[] = []
const remember = (s: Served) => (served.push(s), s)

/**
 * Whether a server could not record an answer (the database refused a write, e.g. a PostgreSQL
 * server out of connections): the dispatcher keeps the outcomes and tries the write again, but a
 * kill before that succeeds sends those deliveries again after the restart, which at least once
 * allows.
 */
const recordingFailed = () => served.some((s) => s.output().includes('recording webhook deliveries failed'))

const REPOS = [
  { name: 'one', contentType: 'json' },
  { name: 'two', contentType: 'form' },
] as const
const ISSUES_PER_ROUND = 8
const KILLS = 3

describe('webhook delivery across kill -9: at least once, a repeat under the same delivery id and body', () => {
  test('deliveries in flight at each kill arrive again after the restart, identical; every event arrives', async () => {
    const data = mkdtempSync(join(tmpdir(), 'warren-hook-repeat-'))
    dirs.push(data)
    const port = freePort()
    const database = await freshTestDatabase()
    databases.push(database)
    const rx = holdingReceiver()
    const auth = { authorization: 'Basic ' + Buffer.from('root:pw-root-secret').toString('base64'), 'content-type': 'application/json' }
    let server: Served = await serve(data, port, database)
    const api = (method: string, path: string, body?: unknown) =>
      fetch(`${server.url}/api/v1${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) })
    const hookIds: Record<string, number> = {}
    /** Arrivals seen when each kill happened (everything up to there arrived before it). */
    const killedAt: number[] = []
    try {
      for (const { name, contentType } of REPOS) {
        expect((await api('POST', '/user/repos', { name })).status).toBe(201)
        const hook = await api('POST', `/repos/root/${name}/hooks`, { type: 'gitea', config: { url: rx.url(`/${name}`), content_type: contentType, secret: SECRET }, events: ['issues'], active: true })
        expect(hook.status).toBe(201)
        hookIds[name] = ((await hook.json()) as { id: number }).id
      }
      for (let round = 0; round < KILLS; round++) {
        // Events acknowledged to the caller; a few deliveries answered, then both hooks' next ones held.
        rx.allowNext(0)
        for (let i = 0; i < ISSUES_PER_ROUND; i++)
          for (const { name } of REPOS) expect((await api('POST', `/repos/root/${name}/issues`, { title: `round ${round} issue ${i}` })).status).toBe(201)
        rx.allowNext(3 + round)
        await until(() => rx.heldCount() === REPOS.length, 'a delivery of each hook in flight', 2400)
        server.proc.kill(9)
        await server.proc.exited
        killedAt.push(rx.arrivals.length)
        rx.release()
        server = await serve(data, port, database)
      }
      const total = KILLS * ISSUES_PER_ROUND
      // After the last restart everything goes out, and each task is recorded delivered, once.
      for (const { name } of REPOS) {
        await until(async () => {
          const res = await api('GET', `/repos/root/${name}/hooks/${hookIds[name]}/deliveries?limit=50`)
          const list = (await res.json()) as { delivered: boolean; success: boolean }[]
          return res.headers.get('x-total-count') === String(total) && list.every((d) => d.delivered && d.success)
        }, `${name}: ${total} deliveries recorded`, 1200)
      }

      // Every event (issue) arrived at least once; all of an event's arrivals are one delivery,
      // under one id in all three headers, with the same body and signatures.
      const byEvent = new Map<string, Arrival[]>()
      for (const a of rx.arrivals) {
        const key = `${a.path}#${a.payload.issue.number}`
        byEvent.set(key, [...(byEvent.get(key) ?? []), a])
      }
      expect([...byEvent.keys()].sort()).toEqual(REPOS.flatMap(({ name }) => Array.from({ length: total }, (_, i) => `/${name}#${i + 1}`)).sort())
      const ids = new Set<string>()
      let repeats = 0
      for (const [, list] of byEvent) {
        const first = list[0]!
        const id = first.headers['x-gitea-delivery']!
        expect(id).toMatch(/^[0-9a-f-]{36}$/)
        expect(ids.has(id)).toBe(false)
        ids.add(id)
        expect(first.headers['x-gitea-signature']).toBe(hmacHex(SECRET, first.text))
        for (const again of list.slice(1)) {
          repeats++
          expect(again.headers).toMatchObject({
            'x-gitea-delivery': id,
            'x-gogs-delivery': id,
            'x-github-delivery': id,
            'x-gitea-signature': first.headers['x-gitea-signature']!,
            'x-hub-signature-256': first.headers['x-hub-signature-256']!,
            'x-hub-signature': first.headers['x-hub-signature']!,
          })
          expect(again.body).toBe(first.body)
          // A delivery is sent again only when a kill came between its first arrival and the repeat
          // (or an answer could not be recorded).
          expect(killedAt.some((k) => first.seq <= k && again.seq > k) || recordingFailed()).toBe(true)
        }
        expect(first.headers['x-gogs-delivery']).toBe(id)
        expect(first.headers['x-github-delivery']).toBe(id)
      }
      // The deliveries held at the kills were sent again: at least one per hook and kill.
      expect(repeats).toBeGreaterThanOrEqual(KILLS * REPOS.length)
      // Each hook's events first arrived in the order they happened.
      for (const { name } of REPOS) {
        const firsts = [...byEvent.entries()].filter(([key]) => key.startsWith(`/${name}#`)).map(([, list]) => list[0]!).sort((a, b) => a.seq - b.seq)
        expect(firsts.map((a) => a.payload.issue.number)).toEqual(Array.from({ length: total }, (_, i) => i + 1))
      }
    } finally {
      server.proc.kill(9)
      await server.proc.exited
      rx.stop()
    }
  }, 180_000)
})

describe('a stop (SIGTERM) lets the deliveries in flight finish', () => {
  test('a delivery answered while the server stops is recorded and not sent again after the restart', async () => {
    const data = mkdtempSync(join(tmpdir(), 'warren-hook-stop-'))
    dirs.push(data)
    const port = freePort()
    const database = await freshTestDatabase()
    databases.push(database)
    const rx = holdingReceiver()
    const auth = { authorization: 'Basic ' + Buffer.from('root:pw-root-secret').toString('base64'), 'content-type': 'application/json' }
    let server: Served = await serve(data, port, database)
    const api = (method: string, path: string, body?: unknown) =>
      fetch(`${server.url}/api/v1${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) })
    try {
      expect((await api('POST', '/user/repos', { name: 'calm' })).status).toBe(201)
      const hook = await api('POST', '/repos/root/calm/hooks', { type: 'gitea', config: { url: rx.url('/calm'), content_type: 'json', secret: SECRET }, events: ['issues'], active: true })
      const hookId = ((await hook.json()) as { id: number }).id
      rx.allowNext(0)
      for (let i = 0; i < 3; i++) expect((await api('POST', '/repos/root/calm/issues', { title: `calm ${i}` })).status).toBe(201)
      await until(() => rx.heldCount() === 1, 'the first delivery in flight')
      // Stop while it is in flight; the receiver answers once the server has begun to stop.
      const stopped = server.stop()
      await until(() => server.output().includes('shutting down'), 'the stop begun')
      rx.allowNext(1)
      expect(await stopped).toBe(0)
      rx.release()
      server = await serve(data, port, database)
      await until(async () => {
        const res = await api('GET', `/repos/root/calm/hooks/${hookId}/deliveries`)
        const list = (await res.json()) as { delivered: boolean }[]
        return res.headers.get('x-total-count') === '3' && list.every((d) => d.delivered)
      }, '3 deliveries recorded', 2400)
      // Each issue arrived once: the one answered during the stop was not sent again (unless the
      // database refused to record an answer: then a repeat, under the same delivery id).
      expect(new Set(rx.arrivals.map((a) => a.headers['x-gitea-delivery'])).size).toBe(3)
      if (!recordingFailed()) expect(rx.arrivals.map((a) => a.payload.issue.number)).toEqual([1, 2, 3])
      else expect([...new Set(rx.arrivals.map((a) => a.payload.issue.number))]).toEqual([1, 2, 3])
    } finally {
      server.proc.kill(9)
      await server.proc.exited
      rx.stop()
    }
  }, 120_000)
})
