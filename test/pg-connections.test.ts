// runs in one half: postgresql
/**
 * How many PostgreSQL connections one Warren process holds (the README's figure, read from the
 * README itself), and what the API answers when the database refuses or loses its connections.
 * Runs in every test run, whatever its own dialect: each server is a process of its own on a
 * fresh PostgreSQL database; PostgreSQL must be reachable, or this fails.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { createServer, connect, type Server, type Socket } from 'node:net'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gitOk } from './git-fixture'
import { basic, dropInBackground, root as repoRoot, SOURCES, startServe, tempDirs, type Served } from './process-helpers'
import { freshPostgresDatabase, TEST_POSTGRES_URL } from './test-database'
import { loadConfig } from '../src/config'
import { writerConnections } from '../src/db/postgres'

const dirs = tempDirs()
const cleanups: (() => Promise<unknown>)[] = []
const auth = basic('root', 'root-password-1')
const adminEnv = { WARREN_ADMIN_USER: 'root', WARREN_ADMIN_PASSWORD: 'root-password-1', WARREN_ADMIN_EMAIL: 'root@example.com' }

afterAll(async () => {
  for (const clean of cleanups.reverse()) await clean().catch(() => {})
  dirs.cleanup()
})

async function call(server: Served, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: text ? JSON.parse(text) : null }
}

async function eventually<T>(check: () => Promise<T | null | false | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    const value = await check()
    if (value) return value
    await Bun.sleep(100)
  }
  throw new Error(`gave up waiting for ${what}`)
}

/** The README's connection figure: WARREN_DATABASE_POOL plus this many. */
function readmeExtraConnections(): number {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')
  const m = /at most `WARREN_DATABASE_POOL` \+ (\d+) connections/.exec(readme)
  if (!m) throw new Error('the README states no connection figure')
  return Number(m[1])
}

/** A fresh database and a Warren serving it; `url` maps the database's URL to the one Warren gets. */
async function serveFresh(prefix: string, url: (database: string) => string = (d) => d, prepare?: (name: string) => Promise<unknown>, env: Record<string, string> = {}) {
  const database = await freshPostgresDatabase(TEST_POSTGRES_URL, prefix)
  cleanups.push(async () => dropInBackground(database))
  await prepare?.(database.name)
  const server = await startServe(SOURCES, dirs.make(`${prefix}-`), { WARREN_DATABASE_URL: url(database.url), ...adminEnv, ...env })
  cleanups.push(() => server.stop())
  return { database, server }
}

describe('PostgreSQL connections of one process', () => {
  test('WARREN_DATABASE_POOL: at least 2 (the README), a third of it, at least one, for write transactions', () => {
    expect(loadConfig({}).databasePoolSize).toBe(10)
    expect(loadConfig({ WARREN_DATABASE_POOL: '2' }).databasePoolSize).toBe(2)
    expect(() => loadConfig({ WARREN_DATABASE_POOL: '1' })).toThrow('WARREN_DATABASE_POOL must be a whole number from 2 to 1000')
    // The rest of the pool for the other queries: the total stays the pool (the count below checks it).
    expect([2, 3, 5, 10, 30].map(writerConnections)).toEqual([1, 1, 1, 3, 10])
  })

  test('idle and under load, a process holds at most the README figure', async () => {
    const pool = 10
    const figure = pool + readmeExtraConnections()
    const { database, server } = await serveFresh('warren_conns')
    const probe = new SQL(TEST_POSTGRES_URL, { max: 1 })
    cleanups.push(() => probe.close())
    const count = async () => Number((await probe.unsafe(`select count(*)::int as n from pg_stat_activity where datname = '${database.name}'`))[0].n)
    // Idle: every background job running (the webhook thread with its own connections).
    await eventually(async () => server.output().includes('job=pull-checker') && server.output().includes('job=webhook-deliveries'), 'the background jobs')
    const idle: number[] = []
    for (let i = 0; i < 10; i++) {
      idle.push(await count())
      await Bun.sleep(100)
    }
    expect(Math.max(...idle)).toBeLessThanOrEqual(figure)
    const names = await probe.unsafe(`select distinct application_name as name from pg_stat_activity where datname = '${database.name}'`)
    expect(names.map((r: { name: string }) => r.name)).toEqual(['warren'])

    // Under load: writes, reads and pushes through the process at once, sampled as they run.
    expect((await call(server, 'POST', '/user/repos', { name: 'load' })).status).toBe(201)
    const work = dirs.make('warren-conns-work-')
    await gitOk(work, 'init', '-q', '-b', 'main')
    await Bun.write(join(work, 'a.txt'), 'a\n')
    await gitOk(work, 'add', '.')
    await gitOk(work, 'commit', '-q', '-m', 'a')
    const remote = server.url.replace('http://', 'http://root:root-password-1@') + '/root/load.git'
    await gitOk(work, 'push', '-q', remote, 'main')
    let running = true
    const samples: number[] = []
    const sampling = (async () => {
      while (running) {
        samples.push(await count())
        await Bun.sleep(20)
      }
    })()
    const load = await Promise.all([
      ...Array.from({ length: 48 }, (_, i) =>
        i % 3 === 0 ? call(server, 'POST', '/repos/root/load/issues', { title: `issue ${i}` }) : call(server, 'GET', i % 3 === 1 ? '/repos/root/load/issues?limit=50' : '/repos/root/load'),
      ),
      ...Array.from({ length: 4 }, (_, i) => gitOk(work, 'push', '-q', remote, `main:refs/heads/b${i}`).then(() => ({ status: 200 }))),
    ])
    running = false
    await sampling
    for (const r of load) expect([200, 201]).toContain(r.status)
    expect(samples.length).toBeGreaterThan(0)
    // The pool was in use (the count is real), and never past the figure.
    expect(Math.max(...samples)).toBeGreaterThanOrEqual(pool)
    expect(Math.max(...samples)).toBeLessThanOrEqual(figure)
  }, 120_000)

  test('connections refused (too many for the role): 503 with Retry-After, never 500; served again once let in', async () => {
    const admin = new SQL(TEST_POSTGRES_URL, { max: 1 })
    cleanups.push(() => admin.close())
    const role = `warren_limited_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
    await admin.unsafe(`create role "${role}" login`)
    // Dropped after its database (cleanups run last-in, first-out).
    cleanups.push(() => admin.unsafe(`drop role if exists "${role}"`))
    const asRole = (d: string) => {
      const u = new URL(d)
      u.username = role
      return u.href
    }
    // The role owns its database (and so may create Warren's tables in it).
    const { server } = await serveFresh('warren_limited', asRole, (name) => admin.unsafe(`alter database "${name}" owner to "${role}"`))
    expect((await call(server, 'GET', '/user')).status).toBe(200)
    // PostgreSQL stops letting the role in, and its sessions end (as when the server restarts
    // with every slot taken): every statement needs a new connection, which is refused.
    await admin.unsafe(`alter role "${role}" connection limit 0`)
    await admin.unsafe(`select pg_terminate_backend(pid) from pg_stat_activity where usename = '${role}'`)
    for (const [method, path, body] of [['GET', '/user'], ['GET', '/repos/search'], ['POST', '/user/repos', { name: 'refused' }]] as const) {
      const r = await call(server, method, path, body)
      expect([method, path, r.status]).toEqual([method, path, 503])
      expect(Number(r.retryAfter)).toBeGreaterThan(0)
      expect(typeof r.body.message).toBe('string')
      expect(typeof r.body.url).toBe('string')
    }
    await admin.unsafe(`alter role "${role}" connection limit -1`)
    await eventually(async () => (await call(server, 'GET', '/user')).status === 200, 'served again')
    expect((await call(server, 'POST', '/user/repos', { name: 'accepted' })).status).toBe(201)
    expect(server.proc.exitCode).toBeNull()
    expect(server.output()).not.toContain('internal error')
  }, 120_000)

  test('the database unreachable (its connections cut, nothing listening): 503 with Retry-After; the jobs taken again after', async () => {
    // Warren reaches PostgreSQL through this relay, which can go down (a server stopped).
    const target = new URL(TEST_POSTGRES_URL)
    const sockets = new Set<Socket>()
    let relay: Server | null = null
    const listen = (port: number) =>
      new Promise<number>((resolve) => {
        relay = createServer((client) => {
          const upstream = connect(Number(target.port || 5432), target.hostname)
          for (const s of [client, upstream]) {
            sockets.add(s)
            s.on('close', () => sockets.delete(s))
            s.on('error', () => {})
          }
          client.pipe(upstream).on('close', () => client.destroy())
          upstream.pipe(client).on('close', () => upstream.destroy())
          client.on('close', () => upstream.destroy())
          upstream.on('close', () => client.destroy())
        }).listen(port, '127.0.0.1', () => resolve((relay!.address() as { port: number }).port))
      })
    const stop = () =>
      new Promise<void>((resolve) => {
        relay?.close(() => resolve())
        for (const s of sockets) s.destroy()
      })
    const port = await listen(0)
    cleanups.push(stop)
    // The leader checks its locks, and asks again for the jobs, every half second (not the
    // production 5 s): the test waits for both.
    const { server } = await serveFresh(
      'warren_relay',
      (d) => {
        const u = new URL(d)
        u.host = `127.0.0.1:${port}`
        return u.href
      },
      undefined,
      { WARREN_JOB_RETRY_MS: '500' },
    )
    await eventually(async () => server.output().includes('job=leftover-repair'), 'the background jobs')
    expect((await call(server, 'GET', '/user')).status).toBe(200)
    await stop()
    for (const [method, path, body] of [['GET', '/user'], ['POST', '/user/repos', { name: 'down' }]] as const) {
      const r = await call(server, method, path, body)
      expect([method, path, r.status]).toEqual([method, path, 503])
      expect(Number(r.retryAfter)).toBeGreaterThan(0)
    }
    // The jobs' locks went with the lock connection: the process notices and stops running them.
    await eventually(async () => server.output().includes('lost the lock of a background job'), 'the lost locks noticed')
    await listen(port)
    await eventually(async () => (await call(server, 'GET', '/user')).status === 200, 'served again')
    const taken = () => server.output().split('running a background job job=leftover-repair').length - 1
    await eventually(async () => taken() >= 2, 'the repairs taken again')
    expect(server.proc.exitCode).toBeNull()
  }, 120_000)
})
