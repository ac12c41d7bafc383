import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, inArray, sql } from 'drizzle-orm'
import { hooks, hookTasks } from '../src/db/schema'
import { laneBatchesQuery } from '../src/webhooks/dispatcher'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { writeTransaction } from '../src/db/client'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { until } from './webhook-receiver'

/**
 * The delivery lanes: how a pump reads its lanes' first tasks (a read bounded by what it answers,
 * whatever the backlog: the plan, never a time), and a hook's edit or deletion reaching a running
 * lane before its next attempt.
 */

let s: TestServer
let alice: TestUser
let worker: ReturnType<typeof startWebhookWorker> | undefined

/** A receiver on loopback whose `/held/...` requests wait until `release()`; every request recorded by path and issue title. */
function heldReceiver() {
  const got: { path: string; title: string }[] = []
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      got.push({ path, title: ((await req.json()) as { issue?: { title: string } }).issue?.title ?? '' })
      if (path.startsWith('/held/')) await gate
      return new Response('ok')
    },
  })
  return { got, release, url: (path: string) => `http://127.0.0.1:${server.port}${path}`, stop: () => server.stop(true) }
}
const rx = heldReceiver()

beforeAll(async () => {
  s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookDeliverTimeout: 30 })
  alice = await s.user('alice')
})
afterAll(async () => {
  rx.release()
  await worker?.stop()
  rx.stop()
  await s.stop()
})

const as = () => ({ token: alice.token })
async function repoWithHook(name: string): Promise<number> {
  expect((await s.post('/user/repos', { name }, as())).status).toBe(201)
  const hook = await s.post(`/repos/alice/${name}/hooks`, { type: 'gitea', config: { url: rx.url(`/held/${name}`), content_type: 'json' }, events: ['issues'], active: true }, as())
  expect(hook.status).toBe(201)
  return hook.body.id
}

describe("a hook's change reaches a running lane's next attempt", () => {
  test('edited to a new URL, deactivated, deleted: what the lane read before its slow attempt is not sent the old way', async () => {
    const [moved, paused, gone] = [await repoWithHook('moved'), await repoWithHook('paused'), await repoWithHook('gone')]
    // Three issues in each repository while no worker runs: each lane then starts with its three tasks read at once.
    for (const repo of ['moved', 'paused', 'gone'])
      for (const title of ['a', 'b', 'c']) expect((await s.post(`/repos/alice/${repo}/issues`, { title }, as())).status).toBe(201)
    worker = startWebhookWorker(s.deps, { pollMs: 10 })
    // Each lane's first attempt waits at the receiver.
    await until(() => rx.got.filter((r) => r.path.startsWith('/held/')).length === 3, 'the three first attempts held')
    expect((await s.patch(`/repos/alice/moved/hooks/${moved}`, { config: { url: rx.url('/new/moved') } }, as())).status).toBe(200)
    expect((await s.patch(`/repos/alice/paused/hooks/${paused}`, { active: false }, as())).status).toBe(200)
    expect((await s.del(`/repos/alice/gone/hooks/${gone}`, undefined, as())).status).toBe(204)
    rx.release()
    // The moved hook's next ones go to its new URL.
    await until(() => rx.got.filter((r) => r.path === '/new/moved').length === 2, 'the moved hook delivering to its new URL')
    expect(rx.got.filter((r) => r.path === '/new/moved').map((r) => r.title)).toEqual(['b', 'c'])
    // The deactivated hook's are ended unsent.
    const pausedTasks = async () => await s.deps.db.select().from(hookTasks).where(eq(hookTasks.hookId, paused)).orderBy(hookTasks.id)
    await until(async () => (await pausedTasks()).every((t) => t.isDelivered), 'the paused hook’s tasks ended')
    const [first, ...rest] = await pausedTasks()
    expect(first!.isSucceed).toBe(true)
    expect(rest.map((t) => [t.isSucceed, JSON.parse(t.responseContent).body])).toEqual([
      [false, 'Delivery: the hook is not active'],
      [false, 'Delivery: the hook is not active'],
    ])
    // The deleted hook took its tasks with it.
    expect(await s.deps.db.select({ id: hooks.id }).from(hooks).where(eq(hooks.id, gone))).toEqual([])
    expect((await s.deps.db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(hookTasks).where(eq(hookTasks.hookId, gone)))[0]!.n).toBe(0)
    // Each old URL got its first attempt only.
    expect(rx.got.filter((r) => r.path.startsWith('/held/')).map((r) => `${r.path} ${r.title}`).sort()).toEqual(['/held/gone a', '/held/moved a', '/held/paused a'])
    // Stopped: the next test's backlog is for reading only.
    await worker.stop()
    worker = undefined
  })
})

describe('a pump reads its lanes in a bounded read', () => {
  test('each chosen lane its first tasks, by the pending index, no window over the backlog', async () => {
    const [one, two] = [await repoWithHook('plan-one'), await repoWithHook('plan-two')]
    const db = s.deps.db as any
    const pg = db.$runtime.dialect === 'postgres'
    const run = async (text: string, params: unknown[] = []) => (pg ? await db.$client.unsafe(text, params) : db.$client.query(text).all(...params))
    // SQLite's writes through the connection's write gate (a raw one beside it would upset the turn's read snapshot).
    const write = async (text: string) => (pg ? await run(text) : await writeTransaction(s.deps.db, async () => void db.$client.run(text)))
    // A backlog of 2,000 undelivered tasks over four lanes (two repositories × two hooks), the first 400 delivered.
    const series = pg ? 'select g from generate_series(1, 2000) g' : 'with recursive s(g) as (select 1 union all select g + 1 from s where g < 2000) select g from s'
    await write(
      `insert into hook_tasks (hook_id, repo_id, uuid, event_type, payload, created_unix, is_delivered)
       select case when g % 2 = 0 then ${one} else ${two} end, 100 + (g / 2) % 2, 'lanes-' || g, 'push', '', 0, g <= 400 from (${series}) t`,
    )
    // PostgreSQL's statistics as its autovacuum keeps them; SQLite has none (Warren never runs ANALYZE).
    if (pg) await run('ANALYZE hook_tasks')
    const lanes = [
      { repoId: 100, hookId: one },
      { repoId: 101, hookId: two },
    ]
    const rows = (await laneBatchesQuery(s.deps.db).prepare().execute({ lanes: JSON.stringify(lanes) })) as { task: { id: number; repoId: number; hookId: number; isDelivered: boolean }; hook: { id: number } }[]
    // Sixteen of each lane asked, the first undelivered ones in id order; none of the two other lanes its lists' values pair.
    for (const lane of lanes) {
      const ids = rows.filter((r) => r.task.repoId === lane.repoId && r.task.hookId === lane.hookId).map((r) => r.task.id)
      const expected = await s.deps.db
        .select({ id: hookTasks.id })
        .from(hookTasks)
        .where(and(eq(hookTasks.isDelivered, false), eq(hookTasks.repoId, lane.repoId), eq(hookTasks.hookId, lane.hookId)))
        .orderBy(hookTasks.id)
        .limit(16)
      expect(ids).toEqual(expected.map((r) => r.id))
    }
    expect(rows).toHaveLength(32)
    expect(rows.every((r) => r.hook.id === r.task.hookId && !r.task.isDelivered)).toBe(true)
    expect(rows.map((r) => r.task.id)).toEqual(rows.map((r) => r.task.id).sort((a, b) => a - b))

    const query = laneBatchesQuery(s.deps.db).toSQL()
    const params = query.params.map((p) => (p && typeof p === 'object' ? JSON.stringify(lanes) : typeof p === 'boolean' && !pg ? Number(p) : p))
    const plan: string[] = pg
      ? (await run(`EXPLAIN ${query.sql}`, params)).map((r: Record<string, string>) => r['QUERY PLAN'])
      : (await run(`EXPLAIN QUERY PLAN ${query.sql}`, params)).map((r: { detail: string }) => r.detail)
    const text = plan.join('\n')
    expect(text).not.toMatch(/window|row_number/i)
    if (pg) {
      // Each lane's ids found by a subquery run per lane, then looked up in the primary key.
      expect(text).toMatch(/Index Cond: \(id = ANY \(\(SubPlan/)
      expect(text).not.toMatch(/Seq Scan on hook_tasks/)
    } else {
      expect(plan).toContain('CORRELATED LIST SUBQUERY 2')
      expect(text).toMatch(/SEARCH lane_ahead USING COVERING INDEX hook_tasks_pending_idx \(is_delivered=\? AND repo_id=\? AND hook_id=\?\)/)
      expect(text).toMatch(/SEARCH hook_tasks USING INTEGER PRIMARY KEY/)
      // Neither table scanned, nor a lane's backlog sorted.
      expect(text).not.toMatch(/SCAN (hook_tasks|lane_ahead)|TEMP B-TREE FOR (LAST|RIGHT)/)
    }
    await writeTransaction(s.deps.db, async () => void (await s.deps.db.delete(hookTasks).where(inArray(hookTasks.hookId, [one, two]))))
  })
})
