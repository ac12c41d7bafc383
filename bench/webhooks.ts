/**
 * Webhook delivery:
 * 1. deliveries per second to a local receiver: 2,000 issue events (four repositories, one hook
 *    each) queued while the worker is stopped, then the worker started and timed until the
 *    receiver has every one;
 * 2. the latency added to `POST /repos/{o}/{r}/issues` by 10 active hooks on the repository
 *    (worker running, deliveries going out while the requests are made) against none (each
 *    round without hooks starts once the worker has delivered everything: it measures an idle worker).
 *    Target: within 10% of none.
 * Warren runs in this process, the receiver (Bun.serve) in a process of its own (bench/lib/hook-receiver.ts),
 * both on loopback. On PostgreSQL with WARREN_DATABASE_URL=postgres://... (a fresh database of its own
 * on that server, bench/lib/database.ts); the write lock waits are SQLite's only.
 *
 *   bun bench/webhooks.ts [requests=400]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { startServer } from '../src/server'
import { createAccessToken, createUser } from '../src/modules/users/service'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { startHookReceiver } from './lib/hook-receiver'
import { writeLockWaits } from '../src/db/client'
import { benchDatabase, closeBenchDatabase } from './lib/database'

const requests = Number(process.argv[2] ?? 400)
const dataDir = mkdtempSync(join(tmpdir(), 'warren-bench-hooks-'))
const database = await benchDatabase()
const config = loadConfig({}, { dataDir, databaseUrl: database.url, port: 0, host: '127.0.0.1', webhookAllowedHostList: 'loopback', logLevel: 'warn' })
console.log(database.label)
const deps = await createDeps(config)
const { server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
config.baseUrl = `http://127.0.0.1:${server.port}/`
const user = await createUser(deps, { username: 'hooker', password: 'bench-password', email: 'hooker@example.com' })
const { secret } = await createAccessToken(deps, user.id, 'bench')
const headers = { authorization: `token ${secret}`, 'content-type': 'application/json' }
const api = (path: string, body: unknown) => fetch(`${config.baseUrl}api/v1${path}`, { method: 'POST', headers, body: JSON.stringify(body) })

const receiver = await startHookReceiver()
const hookBody = { type: 'gitea', config: { url: `http://127.0.0.1:${receiver.port}/`, content_type: 'json', secret: 'bench' }, events: ['issues'], active: true }

async function repoWithHooks(name: string, hooks: number) {
  if ((await api('/user/repos', { name })).status !== 201) throw new Error('repo')
  for (let i = 0; i < hooks; i++) if ((await api(`/repos/hooker/${name}/hooks`, hookBody)).status !== 201) throw new Error('hook')
}

async function waitFor(n: number) {
  while ((await receiver.count()) < n) await Bun.sleep(5)
}

// ---- 1. deliveries per second
const EVENTS = 2000
for (const name of ['q1', 'q2', 'q3', 'q4']) await repoWithHooks(name, 1)
for (let i = 0; i < EVENTS; i++) await api(`/repos/hooker/q${(i % 4) + 1}/issues`, { title: `queued ${i}` })
let t0 = performance.now()
let worker = startWebhookWorker(deps, { pollMs: 10 })
await waitFor(EVENTS)
const seconds = (performance.now() - t0) / 1000
console.log(`deliveries: ${EVENTS} in ${seconds.toFixed(2)} s = ${Math.round(EVENTS / seconds)} deliveries/s (4 repositories, concurrency ${config.webhookConcurrency})`)

// ---- 2. added latency of POST issue with 10 hooks
await repoWithHooks('quiet', 0)
await repoWithHooks('busy', 10)
async function latencies(repo: string): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < requests; i++) {
    const start = performance.now()
    const res = await api(`/repos/hooker/${repo}/issues`, { title: `timed ${i}` })
    await res.arrayBuffer()
    times.push(performance.now() - start)
  }
  return times.sort((a, b) => a - b)
}
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
// Warm up, then alternate to even out the machine's noise.
await latencies('quiet')
const quiet: number[] = []
const busy: number[] = []
const waits = { quiet: { transactions: 0, waits: 0, waitedMs: 0 }, busy: { transactions: 0, waits: 0, waitedMs: 0 } }
/** Adds what writeLockWaits counted during `run` to `into`. */
async function counted<T>(into: typeof writeLockWaits, run: () => Promise<T>): Promise<T> {
  const before = { ...writeLockWaits }
  const result = await run()
  into.transactions += writeLockWaits.transactions - before.transactions
  into.waits += writeLockWaits.waits - before.waits
  into.waitedMs += writeLockWaits.waitedMs - before.waitedMs
  return result
}
for (let round = 0; round < 3; round++) {
  // The quiet rounds run with the worker idle: the previous busy round's deliveries all done.
  await waitFor(EVENTS + busy.length * 10)
  quiet.push(...(await counted(waits.quiet, () => latencies('quiet'))))
  busy.push(...(await counted(waits.busy, () => latencies('busy'))))
}
quiet.sort((a, b) => a - b)
busy.sort((a, b) => a - b)
const line = (name: string, xs: number[]) =>
  `${name.padEnd(12)} mean ${mean(xs).toFixed(2)} ms  p50 ${pct(xs, 50).toFixed(2)} ms  p95 ${pct(xs, 95).toFixed(2)} ms  p99 ${pct(xs, 99).toFixed(2)} ms`
console.log(`POST issue, ${quiet.length} requests each (sequential):`)
console.log(line('no hooks', quiet))
console.log(line('10 hooks', busy))
const waitLine = (name: string, w: typeof writeLockWaits) =>
  `${name.padEnd(12)} ${w.transactions} API write transactions, ${w.waits} found the write lock held (by the webhook thread), waited ${w.waitedMs.toFixed(1)} ms in all (${(w.waitedMs / quiet.length).toFixed(3)} ms a request)`
// SQLite's write lock only (PostgreSQL's writers do not wait for one another's connection so).
if (deps.db.$runtime.dialect === 'sqlite') {
  console.log(waitLine('no hooks', waits.quiet))
  console.log(waitLine('10 hooks', waits.busy))
}
console.log(`added latency: mean ${(((mean(busy) - mean(quiet)) / mean(quiet)) * 100).toFixed(1)}%, p50 ${(((pct(busy, 50) - pct(quiet, 50)) / pct(quiet, 50)) * 100).toFixed(1)}% (target: within 10%)`)
t0 = performance.now()
await waitFor(EVENTS + busy.length * 10)
console.log(`the ${busy.length * 10} deliveries of the 10-hook run were all done ${((performance.now() - t0) / 1000).toFixed(2)} s after the last request`)

await worker.stop()
receiver.stop()
server.stop(true)
await closeBenchDatabase(deps.db, database)
rmSync(dataDir, { recursive: true, force: true })
worker = undefined as never
