import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, inArray, Placeholder, sql } from 'drizzle-orm'
import { hooks, hookTasks } from '../src/db/schema'
import { laneBatchesQuery, laneHeadsQuery } from '../src/webhooks/dispatcher'
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

describe('a deletion that takes hooks with it ends their lanes', () => {
  test('a repository deleted while its lane waits on a slow receiver: nothing of it sent after the answer', async () => {
    const slow = heldReceiver()
    try {
      for (const [name, path, titles] of [['dropped', '/held/dropped', ['a', 'b']], ['after', '/free/after', ['x']]] as const) {
        expect((await s.post('/user/repos', { name }, as())).status).toBe(201)
        const hook = { type: 'gitea', config: { url: slow.url(path), content_type: 'json' }, events: ['issues'], active: true }
        expect((await s.post(`/repos/alice/${name}/hooks`, hook, as())).status).toBe(201)
        for (const title of titles) expect((await s.post(`/repos/alice/${name}/issues`, { title }, as())).status).toBe(201)
      }
      // One slot: the second repository's lane starts only once the first one's has ended.
      worker = startWebhookWorker({ ...s.deps, config: { ...s.deps.config, webhookConcurrency: 1 } }, { pollMs: 10 })
      await until(() => slow.got.length === 1, 'the first attempt held')
      // The repository's deletion takes its hook and tasks (cascade) while the lane holds its next task in memory.
      expect((await s.del('/repos/alice/dropped', undefined, as())).status).toBe(204)
      slow.release()
      await until(() => slow.got.some((r) => r.path === '/free/after'), 'the next lane delivering')
      expect(slow.got.map((r) => `${r.path} ${r.title}`)).toEqual(['/held/dropped a', '/free/after x'])
    } finally {
      slow.release()
      await worker?.stop()
      worker = undefined
      slow.stop()
    }
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

    // A statement's plan, its placeholders bound by name.
    const explain = async (query: { sql: string; params: unknown[] }, values: Record<string, unknown>): Promise<string[]> => {
      const params = query.params.map((p) => (p instanceof Placeholder ? values[p.name] : typeof p === 'boolean' && !pg ? Number(p) : p))
      return pg
        ? (await run(`EXPLAIN ${query.sql}`, params)).map((r: Record<string, string>) => r['QUERY PLAN'])
        : (await run(`EXPLAIN QUERY PLAN ${query.sql}`, params)).map((r: { detail: string }) => r.detail)
    }
    const plan = await explain(laneBatchesQuery(s.deps.db).toSQL(), { lanes: JSON.stringify(lanes) })
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

    // The pump's lane heads: each lane's first undelivered task, lane after lane in (repository,
    // hook) order, up to the limit asked, from after the lane given.
    const heads = laneHeadsQuery(s.deps.db).prepare()
    const firsts = await s.deps.db
      .select({ id: sql<number>`min(${hookTasks.id})`.mapWith(Number), repoId: hookTasks.repoId, hookId: hookTasks.hookId })
      .from(hookTasks)
      .where(and(eq(hookTasks.isDelivered, false), inArray(hookTasks.hookId, [one, two])))
      .groupBy(hookTasks.repoId, hookTasks.hookId)
      .orderBy(hookTasks.repoId, hookTasks.hookId)
    expect(firsts).toHaveLength(4)
    const from = { repoId: 99, hookId: 0 }
    const read = async (after: { repoId: number; hookId: number }, limit: number) =>
      ((await heads.execute({ ...after, limit })) as { id: number; repoId: number; hookId: number }[]).map(({ id, repoId, hookId }) => ({ id, repoId, hookId }))
    expect(await read(from, 4)).toEqual(firsts)
    expect(await read(from, 2)).toEqual(firsts.slice(0, 2))
    expect(await read(firsts[1]!, 2)).toEqual(firsts.slice(2))
    // A search of the pending index for each hop (the next hook of the repository, else the next
    // repository), never a scan of it nor of the table, whatever the backlog behind each lane.
    const headsPlan = (await explain(laneHeadsQuery(s.deps.db).toSQL(), { ...from, limit: 64 })).join('\n')
    if (pg) {
      expect(headsPlan).not.toMatch(/Seq Scan|HashAggregate|GroupAggregate/)
      // Only the lanes read put in order (at most `limit` rows), none of the index's entries.
      expect(headsPlan.match(/Sort Key: .*/g)).toEqual(['Sort Key: lane_heads.n'])
      expect(headsPlan.match(/Index Only Scan using hook_tasks_pending_idx/g)).toHaveLength(4)
      expect(headsPlan).toMatch(/Index Cond: \(\(is_delivered = false\) AND \(repo_id = .*\) AND \(hook_id > /)
      expect(headsPlan).toMatch(/Index Cond: \(\(is_delivered = false\) AND \(repo_id > /)
    } else {
      expect(headsPlan.match(/SEARCH lane_next USING COVERING INDEX hook_tasks_pending_idx \(is_delivered=\? AND repo_id=\? AND hook_id>\?\)/g)).toHaveLength(2)
      expect(headsPlan.match(/SEARCH lane_next USING COVERING INDEX hook_tasks_pending_idx \(is_delivered=\? AND repo_id>\?\)/g)).toHaveLength(2)
      expect(headsPlan.match(/SEARCH lane_head USING INTEGER PRIMARY KEY/g)).toHaveLength(2)
      expect(headsPlan).not.toMatch(/SCAN (hook_tasks|lane_next|lane_head)\b|TEMP B-TREE FOR (GROUP BY|DISTINCT)/)
    }
    await writeTransaction(s.deps.db, async () => void (await s.deps.db.delete(hookTasks).where(inArray(hookTasks.hookId, [one, two]))))
  })
})
