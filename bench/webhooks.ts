/**
 * Webhook delivery:
 * 1. deliveries per second to a local receiver: 2,000 issue events (four repositories, one hook
 *    each) queued while the worker is stopped, then the worker started and timed until the
 *    receiver has every one;
 * 2. the latency added to `POST /repos/{o}/{r}/issues` by 10 active hooks on the repository
 *    (worker running, deliveries going out while the requests are made) against none. Target:
 *    within 10% of none. Measured in many short rounds, each a block without hooks and a block
 *    with them in alternating order (the machine's noise falls on both alike); each block starts
 *    once every delivery of the previous ones was received (a block without hooks measures an
 *    idle worker). Printed: means and percentiles of each side, the median of the rounds' ratios,
 *    and where the time went: CPU time and run-queue wait (time runnable without a CPU) per
 *    request of each group of threads (the API's event loop, the webhook thread, Bun's fetch
 *    thread, the rest of Warren's process; the receiver's and the client's processes), from
 *    block start until its deliveries were all received (on PostgreSQL its server processes serving
 *    the bench's database too), and SQLite's write lock waits of the API.
 * Warren runs in this process; the receiver (bench/lib/hook-receiver.ts) and the client making the
 * timed requests (bench/lib/post-client.ts; `--inline-client`: from this process instead, its
 * fetches then queued on the fetch thread with the deliveries) in processes of their own, all on
 * loopback; `--nice-receiver` runs the receiver at nice 19, as if it were on another machine. On PostgreSQL with WARREN_DATABASE_URL=postgres://... (a fresh database of its own on
 * that server, bench/lib/database.ts); the write lock waits are SQLite's only.
 *
 *   bun bench/webhooks.ts [requests=3000] [rounds=60] [--inline-client] [--nice-receiver]
 * (60 rounds of 50 requests a side: with 20 the mean moved by ±10% from one run to the next)
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
import { startPostClient } from './lib/post-client'
import { addTimes, difference, nicesOf, reniceProcess, sampleThreads, type ThreadTimes } from './lib/thread-cpu'
import { loadAverages } from './lib/latency'
import { writeLockWaits } from '../src/db/client'
import { benchDatabase, closeBenchDatabase } from './lib/database'

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'))
const requests = Number(args[0] ?? 3000)
const rounds = Number(args[1] ?? 60)
const inlineClient = process.argv.includes('--inline-client')
const niceReceiver = process.argv.includes('--nice-receiver')
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
const HOOKS = 10
await repoWithHooks('quiet', 0)
await repoWithHooks('busy', HOOKS)
const client = inlineClient ? null : await startPostClient()
// The receiver stands for another machine: --nice-receiver keeps its CPU from competing with Warren's on this one.
if (niceReceiver) reniceProcess(receiver.pid, 19)
let posted = 0
/** Each request's time (ms) of `n` POST issue made one at a time. */
async function latencies(repo: string, n: number): Promise<number[]> {
  const bodies = Array.from({ length: n }, () => JSON.stringify({ title: `timed ${posted++}` }))
  const url = `${config.baseUrl}api/v1/repos/hooker/${repo}/issues`
  if (client) return await client.post(url, headers, bodies)
  const times: number[] = []
  for (const body of bodies) {
    const start = performance.now()
    const res = await fetch(url, { method: 'POST', headers, body })
    await res.arrayBuffer()
    times.push(performance.now() - start)
  }
  return times
}
const pct = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
const median = (xs: number[]) => pct(xs, 50)

interface Side {
  times: number[]
  roundMeans: number[]
  threads: Map<string, ThreadTimes>
  waits: typeof writeLockWaits
}
const side = (): Side => ({ times: [], roundMeans: [], threads: new Map(), waits: { transactions: 0, waits: 0, waitedMs: 0, tries: 0 } })
const quiet = side()
const busy = side()
let expected = EVENTS
/** PostgreSQL's server processes serving this bench's database (the API's and the webhook thread's connections). */
async function postgresBackends(): Promise<number[]> {
  if (deps.db.$runtime.dialect !== 'postgres') return []
  const rows = await (deps.db as any).$client.unsafe('select pid from pg_stat_activity where datname = current_database()')
  return rows.map((r: { pid: number }) => Number(r.pid))
}
/** The other processes whose CPU is counted, each under a group's name. */
async function otherProcesses(): Promise<[string, number][]> {
  return [['receiver', receiver.pid], ...(client ? [['client', client.pid] as [string, number]] : []), ...(await postgresBackends()).map((pid) => ['postgres', pid] as [string, number])]
}
/** Every thread of this process, and those of the other processes by their group. */
async function sample() {
  const own = sampleThreads()
  const others = (await otherProcesses()).map(([name, pid]) => [name, pid, sampleThreads(pid)] as const)
  return { own, others }
}
/** The nice values of the threads of this process, the receiver and the client, by group (read once the worker runs). */
let nices = new Map<string, string>()
/** One block of requests on `repo`, its times and CPU (until its deliveries were all received) added to `into`. */
async function block(into: Side, repo: string, n: number, hooks: number) {
  await waitFor(expected)
  const before = await sample()
  const w = { ...writeLockWaits }
  const times = await latencies(repo, n)
  into.waits.transactions += writeLockWaits.transactions - w.transactions
  into.waits.waits += writeLockWaits.waits - w.waits
  into.waits.waitedMs += writeLockWaits.waitedMs - w.waitedMs
  into.waits.tries += writeLockWaits.tries - w.tries
  expected += n * hooks
  await waitFor(expected)
  const after = await sample()
  nices = new Map(nicesOf(after.own))
  for (const [name, , s] of after.others) nices.set(name, [...new Set([...(nices.get(name)?.split('/') ?? []), ...nicesOf(s).values()])].join('/'))
  addTimes(into.threads, difference(before.own, after.own))
  // A process is counted from the first sample it is in (a connection opened meanwhile: from zero).
  for (const [name, pid, s] of after.others) {
    let cpu = 0
    let wait = 0
    for (const t of difference(before.others.find(([, p]) => p === pid)?.[2] ?? new Map(), s).values()) (cpu += t.cpu), (wait += t.wait)
    addTimes(into.threads, new Map<string, ThreadTimes>([[name, { cpu, wait }]]))
  }
  into.times.push(...times)
  into.roundMeans.push(mean(times))
}
const perRound = Math.max(1, Math.round(requests / rounds))
// Warm up both paths, then the rounds, alternating which side goes first.
await latencies('quiet', perRound)
await latencies('busy', perRound)
expected += perRound * HOOKS
for (let round = 0; round < rounds; round++) {
  if (round % 2 === 0) {
    await block(quiet, 'quiet', perRound, 0)
    await block(busy, 'busy', perRound, HOOKS)
  } else {
    await block(busy, 'busy', perRound, HOOKS)
    await block(quiet, 'quiet', perRound, 0)
  }
}
const line = (name: string, xs: number[]) =>
  `${name.padEnd(12)} mean ${mean(xs).toFixed(3)} ms  p50 ${pct(xs, 50).toFixed(3)} ms  p95 ${pct(xs, 95).toFixed(3)} ms  p99 ${pct(xs, 99).toFixed(3)} ms`
const percent = (a: number, b: number) => `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)}%`
console.log(`POST issue: ${rounds} rounds of ${perRound} requests a side (one at a time, client ${client ? 'in its own process' : 'in this process'}); ${await loadAverages()}`)
console.log(line('no hooks', quiet.times))
console.log(line(`${HOOKS} hooks`, busy.times))
const ratios = busy.roundMeans.map((b, i) => b / quiet.roundMeans[i]!)
console.log(
  `added latency: mean ${percent(mean(busy.times), mean(quiet.times))}, p50 ${percent(pct(busy.times, 50), pct(quiet.times, 50))}, median of the rounds' mean ratios ${percent(median(ratios), 1)} (rounds from ${percent(Math.min(...ratios), 1)} to ${percent(Math.max(...ratios), 1)}) (target: within 10%)`,
)
const n = quiet.times.length
const ms = (ns: number) => (ns / 1e6 / n).toFixed(3).padStart(7)
const names: Record<string, string> = { bun: 'API event loop', Worker: 'webhook thread', 'HTTP Client': 'fetch thread', HeapHelper: 'GC helpers', JITWorker: 'JIT compilers', other: 'other threads', receiver: 'receiver process', client: 'client process', postgres: 'PostgreSQL backends' }
console.log(`where the time went, per request (ms; ${HOOKS} deliveries a request with hooks), from each block's start until its deliveries were all received:`)
console.log(`  ${'thread(s)'.padEnd(18)} ${'nice'.padStart(5)}  ${'CPU none'.padStart(8)} ${'CPU hooks'.padStart(9)} ${'added'.padStart(7)}   ${'run-queue wait none'.padStart(7)} ${'hooks'.padStart(7)}`)
let added = 0
for (const group of ['bun', 'Worker', 'HTTP Client', 'HeapHelper', 'JITWorker', 'other', 'receiver', 'client', 'postgres']) {
  const q = quiet.threads.get(group) ?? { cpu: 0, wait: 0 }
  const b = busy.threads.get(group) ?? { cpu: 0, wait: 0 }
  if (!quiet.threads.has(group) && !busy.threads.has(group)) continue
  added += b.cpu - q.cpu
  console.log(`  ${(names[group] ?? group).padEnd(18)} ${(nices.get(group) ?? '').padStart(5)}  ${ms(q.cpu).padStart(8)} ${ms(b.cpu).padStart(9)} ${ms(b.cpu - q.cpu)}   ${ms(q.wait).padStart(19)} ${ms(b.wait)}`)
}
console.log(`  CPU added by the hooks: ${(added / 1e6 / n).toFixed(3)} ms a request, ${((added / 1e3 / n / HOOKS)).toFixed(1)} µs a delivery`)
const waitLine = (name: string, w: typeof writeLockWaits) =>
  `${name.padEnd(12)} ${w.transactions} API write transactions, ${w.waits} found the write lock held (by the webhook thread), waited ${w.waitedMs.toFixed(1)} ms in all (${(w.waitedMs / n).toFixed(3)} ms a request; ${w.tries} tries of BEGIN refused)`
// SQLite's write lock only (PostgreSQL's writers do not wait for one another's connection so).
if (deps.db.$runtime.dialect === 'sqlite') {
  console.log(waitLine('no hooks', quiet.waits))
  console.log(waitLine(`${HOOKS} hooks`, busy.waits))
}
client?.stop()

await worker.stop()
receiver.stop()
server.stop(true)
await closeBenchDatabase(deps.db, database)
rmSync(dataDir, { recursive: true, force: true })
worker = undefined as never
