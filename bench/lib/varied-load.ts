/**
 * A load of requests no two alike, from a process of its own (as clients are): `connections`
 * loops, each asking `template` with `{n}` replaced by a number never asked before (and `{future}`
 * by a time that many seconds after 2100-01-01, RFC 3339: a `before` past everything), one request
 * at a time, for `seconds`. For what a server keeps while its database is unchanged (a count
 * shared by the pages of one search): autocannon repeats one URL, so all but its first requests
 * would be answered from what the first kept. Answers autocannon's figures (requests a second,
 * p50 and p99 in ms of the answered ones, non-2xx, errors: failed or unanswered in 30 s), so
 * autocannon.ts's `reportLine` prints them.
 *
 *   const r = await variedLoad(`${base}/api/v1/repos/issues/search?before={future}`, { authorization }, 5)
 */
import { fileURLToPath } from 'node:url'
import type { AutocannonResult } from './autocannon'
import { withRssSampling, type RssFigures } from './autocannon'
import { percentile } from './latency'

const FUTURE = Date.UTC(2100, 0, 1)
/** `n` seconds after 2100-01-01 in RFC 3339: a `before` past everything, different for each `n`. */
export const futureTime = (n: number) => new Date(FUTURE + n * 1000).toISOString().replace('.000Z', 'Z')

/** A request unanswered this long is counted as an error (the load does not wait on a stuck server). */
const TIMEOUT_MS = 30_000

type Command = { template: string; headers: Record<string, string>; seconds: number; connections: number }

if (import.meta.main) {
  const { template, headers, seconds, connections } = JSON.parse(process.argv[2]!) as Command
  const times: number[] = []
  let next = 0
  let non2xx = 0
  let errors = 0
  const begun = performance.now()
  const end = begun + seconds * 1000
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const start = performance.now()
        try {
          const n = next++
          const url = template.replaceAll('{n}', String(n)).replaceAll('{future}', futureTime(n))
          const res = await fetch(url, { headers, signal: AbortSignal.timeout(TIMEOUT_MS) })
          await res.arrayBuffer()
          if (res.status < 200 || res.status > 299) non2xx++
          times.push(performance.now() - start)
        } catch {
          errors++
        }
      }
    }),
  )
  const elapsed = (performance.now() - begun) / 1000
  const result: AutocannonResult = {
    requests: { average: times.length / elapsed },
    latency: times.length ? { p50: Math.round(percentile(times, 50)), p99: Math.round(percentile(times, 99)) } : { p50: 0, p99: 0 },
    non2xx,
    errors,
    '2xx': times.length - non2xx,
  }
  process.stdout.write(JSON.stringify(result))
}

/** Runs the load in its own process (16 connections by default), with the server's memory sampled meanwhile. */
export async function variedLoad(template: string, headers: Record<string, string>, seconds: number, connections = 16): Promise<AutocannonResult & { rss: RssFigures }> {
  const { result, rss } = await withRssSampling(async (exclude) => {
    const proc = Bun.spawn([process.execPath, fileURLToPath(import.meta.url), JSON.stringify({ template, headers, seconds, connections } satisfies Command)], { stdout: 'pipe', stderr: 'inherit' })
    exclude.add(proc.pid)
    const out = await new Response(proc.stdout).text()
    if ((await proc.exited) !== 0) throw new Error(`varied load failed: ${out}`)
    return JSON.parse(out) as AutocannonResult
  })
  return { ...result, rss }
}
