// runs in one half: postgresql
/**
 * Two Warren processes on one PostgreSQL database and one repositories folder, as behind a load
 * balancer. Runs in every test run, whatever its own dialect: the two servers are
 * processes of their own, told their database by WARREN_DATABASE_URL; PostgreSQL must be
 * reachable (127.0.0.1:5432, or WARREN_TEST_DATABASE_URL), or this fails.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { join } from 'node:path'
import { gitOk } from './git-fixture'
import { basic, dropInBackground, SOURCES, startServe, tempDirs, type Served } from './process-helpers'
import { startReceiver, until, type Receiver } from './webhook-receiver'
import { freshPostgresDatabase, TEST_POSTGRES_URL } from './test-database'

const dirs = tempDirs()
let database: Awaited<ReturnType<typeof freshPostgresDatabase>>
let a: Served
let b: Served
let rx: Receiver
const root = basic('root', 'root-password-1')

async function call(server: Served, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { authorization: root, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

beforeAll(async () => {
  database = await freshPostgresDatabase(TEST_POSTGRES_URL, 'warren_two')
  rx = await startReceiver()
  const data = dirs.make('warren-two-')
  const env = {
    WARREN_DATABASE_URL: database.url,
    WARREN_ADMIN_USER: 'root',
    WARREN_ADMIN_PASSWORD: 'root-password-1',
    WARREN_ADMIN_EMAIL: 'root@example.com',
    WARREN_WEBHOOK_ALLOWED_HOST_LIST: 'loopback',
    WARREN_LOG_LEVEL: 'info',
  }
  a = await startServe(SOURCES, data, env)
  b = await startServe(SOURCES, data, env)
}, 240_000)

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()])
  rx?.stop()
  if (database) dropInBackground(database)
  dirs.cleanup()
})

describe('two processes, one PostgreSQL database, one repositories folder', () => {
  test('both serve; only the first ran the start-up repairs', () => {
    expect(b.output()).toContain('start-up repairs are left to the first one')
    expect(a.output()).not.toContain('start-up repairs are left to the first one')
  })

  test('32 writers through both: unique, gap-free issue indexes and exact counters; each event delivered once', async () => {
    expect((await call(a, 'POST', '/user/repos', { name: 'shared' })).status).toBe(201)
    expect((await call(b, 'POST', '/repos/root/shared/hooks', { type: 'gitea', config: { url: rx.url(), content_type: 'json' }, events: ['issues'], active: true })).status).toBe(201)
    const created = await Promise.all(
      Array.from({ length: 32 }, (_, i) => call(i % 2 ? b : a, 'POST', '/repos/root/shared/issues', { title: `issue ${i}` })),
    )
    for (const r of created) expect(r.status).toBe(201)
    const numbers = created.map((r) => r.body.number as number).sort((x, y) => x - y)
    expect(numbers).toEqual(Array.from({ length: 32 }, (_, i) => i + 1))
    for (const server of [a, b]) expect((await call(server, 'GET', '/repos/root/shared')).body.open_issues_count).toBe(32)
    // Closing half of them through the other process keeps the counters exact too.
    await Promise.all(numbers.slice(0, 16).map((n, i) => call(i % 2 ? a : b, 'PATCH', `/repos/root/shared/issues/${n}`, { state: 'closed' })))
    for (const server of [a, b]) expect((await call(server, 'GET', '/repos/root/shared')).body.open_issues_count).toBe(16)

    // One process delivers (the other stands by): 32 "opened" and 16 "closed", each once.
    const delivered = await until(() => (rx.accepted().length >= 48 ? rx.accepted() : null), '48 issue deliveries', 2400)
    await Bun.sleep(500)
    expect(rx.accepted()).toHaveLength(48)
    const ids = new Set(delivered.map((r) => r.headers['x-gitea-delivery']))
    expect(ids.size).toBe(48)
    const opened = delivered.filter((r) => r.payload.action === 'opened').map((r) => r.payload.issue.number as number)
    expect(opened.sort((x, y) => x - y)).toEqual(numbers)
  }, 240_000)

  test('a push through one process is cloned through the other', async () => {
    expect((await call(b, 'POST', '/user/repos', { name: 'code' })).status).toBe(201)
    const work = dirs.make('warren-two-work-')
    await gitOk(work, 'init', '-q', '-b', 'main')
    await Bun.write(join(work, 'hello.txt'), 'from process A\n')
    await gitOk(work, 'add', '.')
    await gitOk(work, 'commit', '-q', '-m', 'first')
    const withAuth = (server: Served) => server.url.replace('http://', 'http://root:root-password-1@') + '/root/code.git'
    await gitOk(work, 'push', '-q', withAuth(a), 'main')
    const clone = join(dirs.make('warren-two-clone-'), 'c')
    await gitOk(work, 'clone', '-q', withAuth(b), clone)
    expect(await Bun.file(join(clone, 'hello.txt')).text()).toBe('from process A\n')
    expect(await gitOk(clone, 'rev-parse', 'HEAD')).toBe(await gitOk(work, 'rev-parse', 'HEAD'))
    // The push's metadata is seen through both processes.
    for (const server of [a, b]) {
      const repo = (await call(server, 'GET', '/repos/root/code')).body
      expect(repo.empty).toBe(false)
      expect(repo.default_branch).toBe('main')
    }

    // Pushes of six branches at once, through both processes: each is recorded (one sync of a
    // repository at a time across processes), each branch's creation announced once.
    const branches = Array.from({ length: 6 }, (_, i) => `topic-${i}`)
    await Promise.all(branches.map((name, i) => gitOk(work, 'push', '-q', withAuth(i % 2 ? b : a), `main:refs/heads/${name}`)))
    for (const server of [a, b]) {
      const listed = (await call(server, 'GET', '/repos/root/code/branches')).body.map((br: { name: string }) => br.name).sort()
      expect(listed).toEqual(['main', ...branches].sort())
    }
    const q = new SQL(database.url, { max: 1 })
    try {
      const created = await q.unsafe(`select payload from events where kind = 'ref.created' and repo_id = (select id from repositories where lower_name = 'code')`)
      const refs = created.map((r: { payload: string }) => JSON.parse(r.payload).ref as string).sort()
      expect(refs).toEqual(['main', ...branches].sort())
    } finally {
      await q.close()
    }
  }, 240_000)
})
