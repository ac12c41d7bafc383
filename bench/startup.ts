/**
 * Start-up and idle memory: spawns `bun src/cli.ts serve` on a fresh temp data folder (so the
 * migrations run too) and on an existing one, measures the time until the first answered
 * request, then the resident memory once idle. Targets (PERFORMANCE.md): ≤ 0.15 s, ≤ 50 MiB.
 *
 *   bun bench/startup.ts [runs]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const runs = Number(process.argv[2] ?? 5)
const root = resolve(import.meta.dir, '..')

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
  return kb / 1024
}

async function once(dataDir: string, port: number) {
  const started = performance.now()
  const proc = Bun.spawn(['bun', 'src/cli.ts', 'serve'], {
    cwd: root,
    env: { ...process.env, WARREN_DATA: dataDir, WARREN_PORT: String(port), WARREN_HOST: '127.0.0.1' },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  let firstAnswer = 0
  for (;;) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/version`)
      if (r.ok) {
        firstAnswer = performance.now() - started
        break
      }
    } catch {}
    await Bun.sleep(2)
    if (performance.now() - started > 10_000) throw new Error('server did not answer within 10 s')
  }
  await Bun.sleep(1000)
  const idle = rssMiB(proc.pid)
  proc.kill()
  await proc.exited
  return { firstAnswer, idle }
}

const results: Record<string, { firstAnswer: number; idle: number }[]> = { fresh: [], existing: [] }
const existing = mkdtempSync(join(tmpdir(), 'warren-bench-start-'))
for (let i = 0; i < runs; i++) {
  const fresh = mkdtempSync(join(tmpdir(), 'warren-bench-start-'))
  results.fresh!.push(await once(fresh, 39500 + i))
  rmSync(fresh, { recursive: true, force: true })
  results.existing!.push(await once(existing, 39600 + i))
}
rmSync(existing, { recursive: true, force: true })

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
for (const [kind, rs] of Object.entries(results)) {
  console.log(
    `${kind.padEnd(8)} data folder: start to first answer median ${(median(rs.map((r) => r.firstAnswer)) / 1000).toFixed(3)} s ` +
      `(min ${(Math.min(...rs.map((r) => r.firstAnswer)) / 1000).toFixed(3)} s), idle RSS median ${median(rs.map((r) => r.idle)).toFixed(1)} MiB`,
  )
}
console.log('targets: start ≤ 0.150 s, idle RSS ≤ 50 MiB (spawn of the bun process included)')
