import { resolve } from 'node:path'

const autocannonBin = resolve(import.meta.dir, '../../node_modules/.bin/autocannon')

interface AutocannonResult {
  requests: { average: number }
  latency: { p50: number; p99: number }
  non2xx: number
  errors: number
}

/** The duration in seconds from argv[2] (default 10). */
export function durationFromArgv(argv = process.argv): number {
  const seconds = Number(argv[2] ?? 10)
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`duration must be a positive number of seconds, got "${argv[2]}"`)
  return seconds
}

/**
 * Checks that `url` answers 200, then loads it with autocannon (16 connections) in a separate
 * process, so the load generator does not share the server's event loop, and prints
 * requests/s and latency (p50, p99).
 */
export async function loadTest(label: string, url: string, seconds: number, headers: string[] = [], labelWidth = 22): Promise<void> {
  const check = await fetch(url, { headers: Object.fromEntries(headers.map((h) => h.split(': ') as [string, string])) })
  if (check.status !== 200) throw new Error(`${label}: expected 200, got ${check.status}: ${await check.text()}`)
  const args = ['-c', '16', '-d', String(seconds), '-j', ...headers.flatMap((h) => ['-H', h]), url]
  const proc = Bun.spawn(['node', autocannonBin, ...args], { stdout: 'pipe', stderr: 'ignore' })
  const out = await new Response(proc.stdout).text()
  await proc.exited
  const r = JSON.parse(out) as AutocannonResult
  console.log(
    `${label.padEnd(labelWidth)} ${Math.round(r.requests.average).toLocaleString('en').padStart(8)} req/s` +
      `   p50 ${r.latency.p50} ms   p99 ${r.latency.p99} ms` +
      (r.non2xx || r.errors ? `   (non-2xx ${r.non2xx}, errors ${r.errors})` : ''),
  )
}
