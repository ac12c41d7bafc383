/**
 * Latency figures of requests made one at a time (the benches of protection, notifications and
 * scale): percentiles of a list of timings, one line per scenario, a ratio against its target,
 * and the machine's load (uptime's three averages) printed beside every figure.
 */

/** The `p`th percentile (0–100) of `times` (ms), nearest rank. */
export function percentile(times: number[], p: number): number {
  const sorted = [...times].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((sorted.length * p) / 100) - 1))]!
}

/** "p50 12.3 ms  p95 20.1 ms  (n = 40)" */
export function latencyText(times: number[]): string {
  return `p50 ${percentile(times, 50).toFixed(1).padStart(6)} ms  p95 ${percentile(times, 95).toFixed(1).padStart(6)} ms  (n = ${times.length})`
}

/** `a ÷ b` with the verdict against `limit` (a ratio that must stay at or under it). */
export function ratioText(a: number, b: number, limit: number): string {
  const ratio = a / b
  return `${ratio.toFixed(2)}× (target ≤ ${limit.toFixed(2)}×) ${ratio <= limit ? 'ok' : 'MISSED'}`
}

/** The machine's load averages (1, 5, 15 min), as uptime prints them. */
export async function loadAverages(): Promise<string> {
  const [one, five, fifteen] = (await Bun.file('/proc/loadavg').text()).trim().split(' ')
  return `load average ${one}, ${five}, ${fifteen} (2 shared cores)`
}

/** Milliseconds `work` took, and what it answered. */
export async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now()
  const value = await work()
  return { ms: performance.now() - started, value }
}
