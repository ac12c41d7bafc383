import { childrenRss } from './rss'
import { resolve } from 'node:path'

const autocannonBin = resolve(import.meta.dir, '../../node_modules/.bin/autocannon')

export interface AutocannonResult {
  requests: { average: number }
  latency: { p50: number; p99: number }
  non2xx: number
  errors: number
  '2xx': number
  /** CPU seconds the load generator's process used (runAutocannon). */
  cpuSeconds?: number
}

/** The duration in seconds from argv[2] (default 10). */
export function durationFromArgv(argv = process.argv): number {
  const seconds = Number(argv[2] ?? 10)
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`duration must be a positive number of seconds, got "${argv[2]}"`)
  return seconds
}

/** Target of PERFORMANCE.md for the resident memory under load. */
export const PEAK_RSS_TARGET_MIB = 150

const MiB = 1024 * 1024

/**
 * Resident memory of the server around one scenario. The benchmarks run Warren in their own
 * process, so this is `process.memoryUsage().rss` (the load generator runs in another process):
 * `idle` after a full collection just before the load, `peak` the highest of samples taken
 * every 20 ms while it runs (the sampling timer shares the server's event loop; it costs
 * nothing measurable at 50 wake-ups per second). `peakWithChildren` adds the processes the
 * server spawned at the time of the sample (git for branches, files, clone and push), the
 * load generator excluded; 0 when the server spawned none.
 */
export interface RssFigures {
  idle: number
  peak: number
  peakWithChildren: number
}

let highest: RssFigures | null = null

export async function withRssSampling<T>(run: (exclude: Set<number>) => Promise<T>): Promise<{ result: T; rss: RssFigures }> {
  Bun.gc(true)
  const exclude = new Set<number>()
  const idle = process.memoryUsage().rss
  let peak = idle
  let peakWithChildren = 0
  const sample = () => {
    const rss = process.memoryUsage().rss
    if (rss > peak) peak = rss
    const children = childrenRss('self', exclude)
    if (children > 0 && rss + children > peakWithChildren) peakWithChildren = rss + children
  }
  const timer = setInterval(sample, 20)
  try {
    const result = await run(exclude)
    sample()
    const rss = { idle: idle / MiB, peak: peak / MiB, peakWithChildren: peakWithChildren / MiB }
    highest = {
      idle: Math.max(highest?.idle ?? 0, rss.idle),
      peak: Math.max(highest?.peak ?? 0, rss.peak),
      peakWithChildren: Math.max(highest?.peakWithChildren ?? 0, rss.peakWithChildren),
    }
    return { result, rss }
  } finally {
    clearInterval(timer)
  }
}

/** "RSS idle 52 / peak 97 MiB", flagged when the peak is over the target. */
export function formatRss(rss: RssFigures): string {
  return (
    `RSS idle ${rss.idle.toFixed(0)} / peak ${rss.peak.toFixed(0)} MiB` +
    (rss.peakWithChildren ? ` (server + git children ≤ ${rss.peakWithChildren.toFixed(0)})` : '') +
    (Math.max(rss.peak, rss.peakWithChildren) > PEAK_RSS_TARGET_MIB ? ` OVER ${PEAK_RSS_TARGET_MIB}` : '')
  )
}

/** The closing line of a benchmark: the highest idle and peak resident memory of its scenarios. */
export function printRssSummary(): void {
  if (!highest) return
  console.log(
    `server resident memory over all scenarios: idle ≤ ${highest.idle.toFixed(0)} MiB, peak ${highest.peak.toFixed(0)} MiB` +
      (highest.peakWithChildren ? `, server + the git processes it spawned ≤ ${highest.peakWithChildren.toFixed(0)} MiB` : '') +
      ` (target ≤ ${PEAK_RSS_TARGET_MIB} MiB at peak${Math.max(highest.peak, highest.peakWithChildren) > PEAK_RSS_TARGET_MIB ? ': OVER' : ''})`,
  )
}

/**
 * Runs autocannon (16 connections, `seconds`) against `url` in a separate process, so the load
 * generator does not share the server's event loop, while sampling the server's resident memory.
 * `args` are extra autocannon options (-H, -m, -b ...).
 */
export async function autocannon(url: string, seconds: number, args: string[] = []): Promise<AutocannonResult & { rss: RssFigures }> {
  const { result, rss } = await withRssSampling((exclude) => runAutocannon(url, seconds, args, 16, (pid) => exclude.add(pid)))
  return { ...result, rss }
}

/**
 * One autocannon process with `connections` connections, without memory sampling: for servers
 * that run in processes of their own (bench/postgres.ts). `started` gets the load generator's pid.
 */
export async function runAutocannon(url: string, seconds: number, args: string[], connections: number, started?: (pid: number) => void): Promise<AutocannonResult> {
  const proc = Bun.spawn(['node', autocannonBin, '-c', String(connections), '-d', String(seconds), '-j', ...args, url], { stdout: 'pipe', stderr: 'ignore' })
  started?.(proc.pid)
  const out = await new Response(proc.stdout).text()
  await proc.exited
  const cpu = proc.resourceUsage()?.cpuTime
  return { ...(JSON.parse(out) as AutocannonResult), cpuSeconds: cpu ? Number(cpu.user + cpu.system) / 1e6 : undefined }
}

/** One scenario's line: requests/s, latency (p50, p99), non-2xx and errors when any, resident memory. */
export function reportLine(label: string, r: AutocannonResult & { rss: RssFigures }, labelWidth = 22, alwaysShowErrors = false): string {
  return (
    `${label.padEnd(labelWidth)} ${Math.round(r.requests.average).toLocaleString('en').padStart(8)} req/s` +
    `   p50 ${r.latency.p50} ms   p99 ${r.latency.p99} ms` +
    (alwaysShowErrors || r.non2xx || r.errors ? `   non-2xx ${r.non2xx}   errors ${r.errors}` : '') +
    `   ${formatRss(r.rss)}`
  )
}

/**
 * Checks that `url` answers 200, then loads it with autocannon (16 connections) and prints
 * requests/s, latency (p50, p99) and the server's resident memory (idle and peak); answers the requests/s.
 */
export async function loadTest(label: string, url: string, seconds: number, headers: string[] = [], labelWidth = 22): Promise<number> {
  const check = await fetch(url, { headers: Object.fromEntries(headers.map((h) => h.split(': ') as [string, string])) })
  if (check.status !== 200) throw new Error(`${label}: expected 200, got ${check.status}: ${await check.text()}`)
  const r = await autocannon(url, seconds, headers.flatMap((h) => ['-H', h]))
  console.log(reportLine(label, r, labelWidth))
  return r.requests.average
}
