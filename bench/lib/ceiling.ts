/**
 * Bun's ceiling in the same window as a bench's point reads (PERFORMANCE.md's "point reads ÷ Bun's
 * ceiling ≥ 0.5"): the server of ceiling-server.ts in its own process, loaded by autocannon with
 * the bench's 16 connections, then stopped.
 */
import { resolve } from 'node:path'
import { runAutocannon } from './autocannon'

/** Requests per second Bun.serve answers with one prepared bun:sqlite point read. */
export async function bunCeiling(seconds: number): Promise<number> {
  const proc = Bun.spawn([process.execPath, resolve(import.meta.dir, 'ceiling-server.ts')], { stdout: 'pipe', stderr: 'inherit' })
  try {
    const reader = proc.stdout.getReader()
    let text = ''
    while (!text.includes('\n')) {
      const { value, done } = await reader.read()
      if (done) throw new Error('the ceiling server ended before it listened')
      text += new TextDecoder().decode(value)
    }
    const port = Number(text.split('\n')[0])
    const r = await runAutocannon(`http://127.0.0.1:${port}/users/benchuser`, seconds, [], 16)
    return r.requests.average
  } finally {
    proc.kill()
    await proc.exited
  }
}

/** The line of a point read's figure against the ceiling measured beside it. */
export function ceilingLine(label: string, perSecond: number, ceiling: number, labelWidth = 22): string {
  const ratio = perSecond / ceiling
  return `${label.padEnd(labelWidth)} ${(ratio).toFixed(2)} of Bun's ceiling (${Math.round(ceiling).toLocaleString('en')} req/s in the same window; target ≥ 0.5) ${ratio >= 0.5 ? 'ok' : 'MISSED'}`
}
