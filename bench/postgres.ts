/**
 * Warren on PostgreSQL against Warren on SQLite (PERFORMANCE.md: "harness scenarios on PostgreSQL
 * vs SQLite: ≥ 0.5× of SQLite's req/s; two processes on one PostgreSQL ≥ 1.5× one on POST issue").
 *
 * 1. The harness scenarios (bench/users.ts, repos.ts, issues.ts) each run twice as child
 *    processes: without WARREN_DATABASE_URL (SQLite), then with it (each makes a fresh database
 *    on the server and drops it after); their req/s lines are read back and set side by side.
 * 2. POST /repos/{o}/{r}/issues with 16 connections against `warren serve` processes on one fresh
 *    PostgreSQL database and one data folder: all 16 to one process, then 8 to each of two (two
 *    autocannon runs at once); then the repository's issue numbers must be 1..n without gap or
 *    duplicate, and its index counter n.
 *
 *    Each run prints where the CPU went (the machine's 2 cores are shared by the servers, their
 *    PostgreSQL backends and the load generator): CPU seconds per second of each `warren serve`,
 *    of the backends serving its database, of PostgreSQL's background processes and of the load
 *    generator, CPU milliseconds per issue, the machine's busy cores (other work on it included),
 *    and from these the most issues per second the machine's cores could give at that cost; and
 *    how many events each outbox consumer (notifications, ...) had not handled yet at the end (work
 *    the run left undone, and so did not meter).
 *
 *   bun bench/postgres.ts [seconds=10] [two]   (`two`: part 2 only; PostgreSQL: WARREN_BENCH_PG_URL, default below)
 */
import { SQL } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { availableParallelism } from 'node:os'
import { durationFromArgv, runAutocannon, type AutocannonResult } from './lib/autocannon'
import { cpuMeter } from './lib/cpu'
import { basic, SOURCES, startServe, type Served } from '../test/process-helpers'
import { freshPostgresDatabase, TEST_POSTGRES_URL } from '../test/test-database'

const seconds = durationFromArgv()
const onlyTwo = process.argv[3] === 'two'
const PG_URL = process.env.WARREN_BENCH_PG_URL ?? TEST_POSTGRES_URL

// ---- 1. the harness scenarios on each database ----

const SCRIPTS: [name: string, args: string[]][] = [
  ['users', [String(seconds)]],
  ['repos', [String(seconds)]],
  ['issues', [String(seconds)]],
]

/** Runs one scenario script on SQLite (databaseUrl null) or PostgreSQL, echoes its output and answers req/s by scenario label. */
async function runScript(name: string, args: string[], databaseUrl: string | null): Promise<Map<string, number>> {
  const env: Record<string, string | undefined> = { ...process.env }
  if (databaseUrl) env.WARREN_DATABASE_URL = databaseUrl
  else delete env.WARREN_DATABASE_URL
  const proc = Bun.spawn([process.execPath, resolve(import.meta.dir, `${name}.ts`), ...args], { env, stdout: 'pipe', stderr: 'inherit' })
  const out = await new Response(proc.stdout).text()
  process.stdout.write(out.replace(/^(?=.)/gm, '  '))
  if ((await proc.exited) !== 0) throw new Error(`bench/${name}.ts failed on ${databaseUrl ? 'PostgreSQL' : 'SQLite'}`)
  const figures = new Map<string, number>()
  // reportLine's format: "<label padded>   12,345 req/s   p50 ..."
  for (const m of out.matchAll(/^(.+?)\s+([\d,]+) req\/s/gm)) figures.set(`${name}: ${m[1]!.trim()}`, Number(m[2]!.replaceAll(',', '')))
  return figures
}

const onSqlite = new Map<string, number>()
const onPostgres = new Map<string, number>()
for (const [name, args] of onlyTwo ? [] : SCRIPTS) {
  console.log(`\n--- bench/${name}.ts ${args.join(' ')} on SQLite`)
  for (const [k, v] of await runScript(name, args, null)) onSqlite.set(k, v)
  console.log(`--- bench/${name}.ts ${args.join(' ')} on PostgreSQL`)
  for (const [k, v] of await runScript(name, args, PG_URL)) onPostgres.set(k, v)
}

const fmt = (n: number) => Math.round(n).toLocaleString('en')
if (!onlyTwo) console.log(`\nHarness scenarios, 16 connections, ${seconds} s each: PostgreSQL ÷ SQLite (target ≥ 0.5×)`)
if (!onlyTwo) console.log(`${'scenario'.padEnd(48)} ${'SQLite'.padStart(8)} ${'PostgreSQL'.padStart(10)}  ratio`)
for (const [label, lite] of onSqlite) {
  const pg = onPostgres.get(label)
  const ratio = pg === undefined ? null : pg / lite
  console.log(
    `${label.padEnd(48)} ${fmt(lite).padStart(8)} ${(pg === undefined ? '-' : fmt(pg)).padStart(10)}  ` +
      (ratio === null ? 'not run' : `${ratio.toFixed(2)}× ${ratio >= 0.5 ? 'ok' : 'MISSED'}`),
  )
}

// The peers' figures (PERFORMANCE.md, on SQLite, measured 2026-11-25 in a window of their own).
if (!onlyTwo)
  console.log(
    'peers, req/s (Gogs 0.11 / Gitea 1.3): GET /users/{u} 423 / 384, GET /repos/{o}/{r} 281 / 337, issues page 48 / 110, ' +
      'repos/search limit=50 125 / 127, anonymous 204 / 220, POST issue 18 (96% errors) / 75 (39% errors)',
  )

// ---- 2. POST issue: one `warren serve` process against two on one PostgreSQL database ----

const database = await freshPostgresDatabase(PG_URL, 'warren_bench_two')
const benchDb = new SQL(database.url, { max: 1 })
const dataDir = mkdtempSync(join(tmpdir(), 'warren-bench-two-'))
const env = {
  WARREN_DATABASE_URL: database.url,
  WARREN_ADMIN_USER: 'root',
  WARREN_ADMIN_PASSWORD: 'root-password-1',
  WARREN_ADMIN_EMAIL: 'root@example.com',
  // One log line per request would measure the log, not the server.
  WARREN_LOG_LEVEL: 'warn',
}
const servers: Served[] = []

/** POSTs as root (Basic credentials) and answers the JSON body; throws unless 201. */
async function created(server: Served, path: string, body: unknown): Promise<any> {
  const res = await fetch(`${server.url}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: basic('root', env.WARREN_ADMIN_PASSWORD), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`)
  return res.json()
}

/** Successful issues per second of autocannon runs made at the same time, and their failures. */
function rate(runs: AutocannonResult[]): { perSecond: number; failures: string } {
  const ok = runs.reduce((n, r) => n + r['2xx'], 0)
  return { perSecond: ok / seconds, failures: `non-2xx ${runs.reduce((n, r) => n + r.non2xx, 0)}, errors ${runs.reduce((n, r) => n + r.errors, 0)}` }
}

/** The bench database's backends (the servers' connections) and PostgreSQL's own background processes. */
async function postgresPids(): Promise<{ backends: number[]; background: number[] }> {
  const rows: { pid: number; backend: boolean }[] = await benchDb`
    select pid, (datname = ${database.name}) as backend from pg_stat_activity
    where pid <> pg_backend_pid() and (datname = ${database.name} or backend_type <> 'client backend')`
  return { backends: rows.filter((r) => r.backend).map((r) => r.pid), background: rows.filter((r) => !r.backend).map((r) => r.pid) }
}

/**
 * Runs `load` (autocannon runs at once) while metering the CPU of the servers, their backends,
 * PostgreSQL's background and the load generators; prints where it went and what it allows.
 */
async function metered(load: () => Promise<AutocannonResult[]>): Promise<{ perSecond: number; failures: string; ceiling: number }> {
  const warrens = servers.map((s) => s.proc.pid)
  const pg = await postgresPids()
  const meter = cpuMeter([...warrens, ...pg.backends, ...pg.background])
  const runs = await load()
  const after = await postgresPids()
  const { byPid, busyCores, wallSeconds } = meter.stop([...after.backends, ...after.background])
  const sum = (pids: number[]) => pids.reduce((t, pid) => t + (byPid.get(pid) ?? 0), 0)
  const backends = sum([...new Set([...pg.backends, ...after.backends])])
  const background = sum([...new Set([...pg.background, ...after.background])])
  const generators = runs.reduce((t, r) => t + (r.cpuSeconds ?? 0), 0)
  const served = warrens.map((pid) => byPid.get(pid) ?? 0)
  const r = rate(runs)
  const issues = r.perSecond * seconds
  const perIssueMs = (cpu: number) => (issues ? (cpu / issues) * 1000 : 0).toFixed(2)
  const perSec = (cpu: number) => (cpu / wallSeconds).toFixed(2)
  const total = served.reduce((a, b) => a + b, 0) + backends + background + generators
  // At this CPU cost per issue, the most the machine's cores could give if nothing else ran on them.
  const cores = availableParallelism()
  const ceiling = issues ? cores / (total / issues) : 0
  console.log(
    `  CPU s/s: ${served.map((c, i) => `warren#${i + 1} ${perSec(c)}`).join(', ')}, postgres backends ${perSec(backends)}, ` +
      `postgres background ${perSec(background)}, load generator ${perSec(generators)}; machine busy ${busyCores.toFixed(2)} of ${cores} cores (other work included)`,
  )
  console.log(
    `  CPU ms per issue: warren ${perIssueMs(total - backends - background - generators)}, postgres ${perIssueMs(backends + background)}, ` +
      `load generator ${perIssueMs(generators)}, all ${perIssueMs(total)}: at most ${fmt(ceiling)} issues/s on ${cores} cores at this cost`,
  )
  // Work the run left to the outbox consumers (the notifier, webhooks, ...) is CPU it did not
  // meter: a consumer falling behind makes the figures above look cheaper than the load is.
  const behind: { name: string; n: number }[] = await benchDb`
    select name, ((select coalesce(max(id), 0) from events) - done_id)::int as n from event_consumers order by name`
  console.log(`  outbox events not yet handled at the end: ${behind.map((b) => `${b.name} ${b.n}`).join(', ') || 'no consumers'}`)
  return { ...r, ceiling }
}

try {
  servers.push(await startServe(SOURCES, dataDir, env))
  const { sha1: token } = await created(servers[0]!, '/users/root/tokens', { name: 'bench', scopes: ['all'] })
  const repo = await created(servers[0]!, '/user/repos', { name: 'load' })
  const post = ['-m', 'POST', '-H', `Authorization: token ${token}`, '-H', 'Content-Type: application/json', '-b', JSON.stringify({ title: 'Filed under load', body: 'Benchmark issue' })]
  const issuesUrl = (s: Served) => `${s.url}/api/v1/repos/root/load/issues`

  // A second of load first wakes each new process up (JIT, the pool's connections), so neither side starts cold.
  const warmUp = (s: Served) => runAutocannon(issuesUrl(s), 1, post, 8)
  await warmUp(servers[0]!)
  // The planner's statistics of the tables the warm-up filled, as autovacuum would have them on a
  // database in use (its first pass comes up to a minute after the rows; the bench's database is
  // seconds old): a statement planned while its table was empty kept a whole-table read as its
  // generic plan as the table grew (issues read by id, 485 sequential scans of up to 30,000 rows in one run).
  await benchDb.unsafe('ANALYZE')
  console.log(`\nPOST issue, 16 connections, ${seconds} s, \`warren serve\` on one PostgreSQL database (${database.name})`)
  const one = await metered(async () => [await runAutocannon(issuesUrl(servers[0]!), seconds, post, 16)])
  console.log(`one process (16 connections)        ${fmt(one.perSecond).padStart(6)} issues/s   ${one.failures}`)
  servers.push(await startServe(SOURCES, dataDir, env))
  await warmUp(servers[1]!)
  const two = await metered(() => Promise.all(servers.map((s) => runAutocannon(issuesUrl(s), seconds, post, 8))))
  console.log(`two processes (8 connections each)  ${fmt(two.perSecond).padStart(6)} issues/s   ${two.failures}`)
  const ratio = two.perSecond / one.perSecond
  console.log(`two ÷ one: ${ratio.toFixed(2)}× (target ≥ 1.5×) ${ratio >= 1.5 ? 'ok' : 'MISSED'}`)
  // What the cores allow: the one-process run's CPU cost per issue, all of the machine's cores given to the bench.
  const reachable = one.ceiling / one.perSecond
  console.log(
    `two ÷ one the cores allow at one process's CPU cost per issue: at most ${reachable.toFixed(2)}× ` +
      `(${fmt(one.ceiling)} ÷ ${fmt(one.perSecond)} issues/s)${reachable < 1.5 ? ': 1.5× is beyond this machine' : ''}`,
  )

  // Issue numbers 1..n, each once, and the counter at n: no lost or doubled index under two writers.
  // One statement, one snapshot: requests the load generator left unanswered at its end may still be committing.
  const [{ n, distinct, max, counter }] = await benchDb`
    select count(*)::int as n, count(distinct "index")::int as distinct, coalesce(max("index"), 0)::int as max,
      (select max_index::int from issue_indexes where repo_id = ${repo.id}) as counter
    from issues where repo_id = ${repo.id}`
  const gapFree = n === distinct && n === max && counter === max
  console.log(`issue numbers: ${n} issues, ${distinct} distinct, highest ${max}, counter ${counter}: ${gapFree ? 'gap-free' : 'GAPS OR DUPLICATES'}`)
  if (!gapFree) {
    process.exitCode = 1
    for (const [i, server] of servers.entries()) console.log(`warren#${i + 1} said:\n${server.output().slice(-4000)}`)
  }
} finally {
  await Promise.all(servers.map((s) => s.stop()))
  await benchDb.close()
  await database.drop()
  rmSync(dataDir, { recursive: true, force: true })
}
