/**
 * Start-up and idle memory: spawns the server on a fresh temp data folder (so the migrations
 * run too) and on an existing one, measures the time until the first answered request, then
 * the resident memory once idle (1 s later), split into anonymous memory (heap, code, caches)
 * and file pages (mostly the bun executable's own code), then the time of a first page (the explore
 * page, once idle: the web pages are loaded and registered at the first page, not at start).
 * Targets (PERFORMANCE.md): ≤ 0.15 s, ≤ 50 MiB.
 *
 * Three entry points are measured: the bundle that `npm start` builds and runs
 * (`bun dist/bin/cli.js serve`, built here first with `bun run build`), the sources
 * (`bun src/cli.ts serve`, what tests and development use) and the single binary
 * (`dist/warren serve`, built here with `npm run binary`, run from an empty folder); its size
 * is printed too.
 *
 * Bytecode for the bundle (measured with Bun 1.4.5, not adopted): without --compile Bun writes it
 * for CommonJS only, so no --splitting and no top-level await in src/cli.ts; that bundle started
 * with CPU 130 ms against 180-200 for the ESM chunks, but idle RSS 76-78 MiB against 61-64: the
 * .jsc (8.7 MB) and the whole bundle's source (3.6 MB, every lazy module included) are read into
 * anonymous memory, where the binary maps its bytecode from the file. `--smol` changed neither the
 * idle RSS nor the start.
 *
 * On SQLite, or on PostgreSQL when WARREN_DATABASE_URL is set (lib/database.ts): a fresh database
 * for each start on a fresh data folder (its migrations applied), one kept for the starts on the
 * existing one.
 *
 *   bun bench/startup.ts [runs=5]
 *   WARREN_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test bun bench/startup.ts [runs=5]
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { cpuMsOf, memoryOf } from './lib/rss'
import { freePort } from './lib/port'
import { benchDatabase } from './lib/database'
import { DIALECT } from '../src/db/dialect'

const runs = Number(process.argv[2] ?? 5)
if (!Number.isInteger(runs) || runs < 1) throw new Error(`runs must be a positive integer, got "${process.argv[2]}"`)
const root = resolve(import.meta.dir, '..')

interface Sample {
  firstAnswer: number
  /** The first page's time, asked once the server is idle (the web pages' app is made at the first page). */
  firstPage: number
  rss: number
  anon: number
  file: number
  cpu: number
}

async function once(command: string[], dataDir: string, databaseUrl: string | null, cwd = dataDir): Promise<Sample> {
  const port = freePort()
  const started = performance.now()
  const { WARREN_DATABASE_URL: _, ...env } = process.env
  const proc = Bun.spawn([...command, 'serve'], {
    cwd,
    env: { ...env, WARREN_DATA: dataDir, WARREN_PORT: String(port), WARREN_HOST: '127.0.0.1', ...(databaseUrl ? { WARREN_DATABASE_URL: databaseUrl } : {}) },
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
  const idle = { ...memoryOf(proc.pid), cpu: cpuMsOf(proc.pid) }
  const pageStarted = performance.now()
  const page = await fetch(`http://127.0.0.1:${port}/explore/repos`, { headers: { accept: 'text/html' } })
  await page.arrayBuffer()
  if (page.status !== 200) throw new Error(`the first page answered ${page.status}`)
  const sample = { firstAnswer, firstPage: performance.now() - pageStarted, ...idle }
  proc.kill()
  await proc.exited
  return sample
}

for (const script of ['build', 'binary']) {
  const build = Bun.spawnSync([process.execPath, 'run', script], { cwd: root, stdout: 'ignore', stderr: 'pipe' })
  if (build.exitCode !== 0) throw new Error(`bun run ${script} failed: ${build.stderr.toString()}`)
}
const binarySize = statSync(join(root, 'dist/warren')).size / 1024 / 1024

const entries: Record<string, string[]> = {
  'npm start (dist/bin/cli.js)': [process.execPath, join(root, 'dist/bin/cli.js')],
  'sources (src/cli.ts)': [process.execPath, join(root, 'src/cli.ts')],
  [`single binary (dist/warren, ${binarySize.toFixed(1)} MiB)`]: [join(root, 'dist/warren')],
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(`load: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
console.log(`database: ${DIALECT === 'postgres' ? "PostgreSQL (a fresh database per start on a fresh folder; the CPU figure is Warren's alone)" : 'SQLite'}`)
for (const [name, command] of Object.entries(entries)) {
  const results: Record<string, Sample[]> = { fresh: [], existing: [] }
  const existing = mkdtempSync(join(tmpdir(), 'warren-bench-start-'))
  const existingDatabase = await benchDatabase()
  for (let i = 0; i < runs; i++) {
    const fresh = mkdtempSync(join(tmpdir(), 'warren-bench-start-'))
    const freshDatabase = await benchDatabase()
    // The sources run from the project's folder: Bun reads tsconfig.json (the JSX runtime) there.
    const cwd = name.startsWith('sources') ? root : undefined
    results.fresh!.push(await once(command, fresh, freshDatabase.url, cwd ?? fresh))
    rmSync(fresh, { recursive: true, force: true })
    await freshDatabase.drop()
    results.existing!.push(await once(command, existing, existingDatabase.url, cwd ?? existing))
  }
  rmSync(existing, { recursive: true, force: true })
  await existingDatabase.drop()
  console.log(name)
  for (const [kind, rs] of Object.entries(results)) {
    const m = (f: (s: Sample) => number) => median(rs.map(f))
    console.log(
      `  ${kind.padEnd(8)} data folder: start to first answer median ${(m((r) => r.firstAnswer) / 1000).toFixed(3)} s ` +
        `(min ${(Math.min(...rs.map((r) => r.firstAnswer)) / 1000).toFixed(3)} s, CPU ${m((r) => r.cpu).toFixed(0)} ms), ` +
        `then the first page ${m((r) => r.firstPage).toFixed(0)} ms, ` +
        `idle RSS median ${m((r) => r.rss).toFixed(1)} MiB (anonymous ${m((r) => r.anon).toFixed(1)}, file pages ${m((r) => r.file).toFixed(1)})`,
    )
  }
}
// The floor: Bun itself, doing nothing, measured the same way (1 s after it started).
const floor = Bun.spawn([process.execPath, '-e', 'await Bun.sleep(60_000)'], { stdout: 'ignore' })
await Bun.sleep(1000)
const bare = memoryOf(floor.pid)
floor.kill()
await floor.exited
console.log(`Bun's own floor (bun -e, idle): RSS ${bare.rss.toFixed(1)} MiB (anonymous ${bare.anon.toFixed(1)}, file pages ${bare.file.toFixed(1)})`)
console.log(`load: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
console.log('targets: start ≤ 0.150 s, idle RSS ≤ 50 MiB (spawn of the bun process included); peers: Gogs 0.31 s / 50 MiB, Gitea 0.55 s / 72 MiB')
