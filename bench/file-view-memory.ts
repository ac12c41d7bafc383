/**
 * Resident memory of a server that has shown a highlighted file: spawns `warren serve` (the
 * sources) on a data folder holding one repository with a 2,000-line TypeScript file, and reads
 * the server's memory idle after start, just after a view of the file (its lines highlighted in
 * a render worker, which is alive then), and once the render worker has ended (WARREN_WORKER_IDLE=1,
 * read 3 s later, after the server's own collections): what the file view leaves resident. The
 * main thread finds the file's language in a table and never loads highlight.js (only the
 * workers do); this prints the figures for comparison with a build that loaded it there.
 *
 *   bun bench/file-view-memory.ts [runs=3]
 *   WARREN_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test bun bench/file-view-memory.ts [runs=3]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { memoryOf } from './lib/rss'
import { freePort } from './lib/port'
import { benchDatabase } from './lib/database'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { createApp } from '../src/app'
import { closeDatabase } from '../src/db/client'
import { createAccessToken, createUser } from '../src/modules/users/service'
import { createRepository } from '../src/modules/repos/create'

const runs = Number(process.argv[2] ?? 3)
if (!Number.isInteger(runs) || runs < 1) throw new Error(`runs must be a positive integer, got "${process.argv[2]}"`)
const root = resolve(import.meta.dir, '..')
const LINES = 2000

/** A data folder (and database) with owner/code holding src/long.ts, made in this process and closed. */
async function prepare(dataDir: string, databaseUrl: string | null): Promise<void> {
  const deps = await createDeps(loadConfig({}, { dataDir, databaseUrl, logLevel: 'warn', passwordMemoryCost: 64, passwordTimeCost: 1 }))
  const owner = await createUser(deps, { username: 'owner', password: 'bench-password', email: 'owner@example.com' })
  const { secret } = await createAccessToken(deps, owner.id, 'bench')
  await createRepository(deps, owner, { name: 'code' })
  const text = Array.from({ length: LINES }, (_, i) => `export function step${i}(value: number): string { return \`\${value * ${i}}\` + "x" } // ${i}`).join('\n') + '\n'
  const put = await createApp(deps).handle(
    new Request('http://localhost/api/v1/repos/owner/code/contents/src/long.ts', {
      method: 'POST',
      headers: { authorization: `token ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: Buffer.from(text).toString('base64'), message: 'A long file' }),
    }),
  )
  if (put.status !== 201) throw new Error(`creating the file answered ${put.status}: ${await put.text()}`)
  await closeDatabase(deps.db)
}

interface Sample {
  start: number
  viewing: number
  after: number
  highlighted: boolean
}

async function once(): Promise<Sample> {
  const dataDir = mkdtempSync(join(tmpdir(), 'warren-bench-fileview-'))
  const database = await benchDatabase()
  try {
    await prepare(dataDir, database.url)
    const port = freePort()
    const { WARREN_DATABASE_URL: _, ...env } = process.env
    const proc = Bun.spawn([process.execPath, join(root, 'src/cli.ts'), 'serve'], {
      cwd: root,
      env: { ...env, WARREN_DATA: dataDir, WARREN_PORT: String(port), WARREN_HOST: '127.0.0.1', WARREN_WORKER_IDLE: '1', ...(database.url ? { WARREN_DATABASE_URL: database.url } : {}) },
      stdout: 'ignore',
      stderr: 'inherit',
    })
    try {
      const started = performance.now()
      for (;;) {
        try {
          if ((await fetch(`http://127.0.0.1:${port}/api/v1/version`)).ok) break
        } catch {}
        if (performance.now() - started > 20_000) throw new Error('server did not answer within 20 s')
        await Bun.sleep(5)
      }
      await Bun.sleep(1000)
      const start = memoryOf(proc.pid).rss
      const view = await fetch(`http://127.0.0.1:${port}/owner/code/src/branch/master/src/long.ts`)
      const html = await view.text()
      if (view.status !== 200) throw new Error(`the file view answered ${view.status}`)
      await Bun.sleep(200)
      const viewing = memoryOf(proc.pid).rss
      await Bun.sleep(3000)
      const after = memoryOf(proc.pid).rss
      return { start, viewing, after, highlighted: html.includes('<b>export function</b>') }
    } finally {
      proc.kill()
      await proc.exited
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
    await database.drop()
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(`load: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
console.log(`database: ${process.env.WARREN_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}`)
const samples: Sample[] = []
for (let i = 0; i < runs; i++) samples.push(await once())
const m = (f: (s: Sample) => number) => median(samples.map(f)).toFixed(1)
console.log(`highlighted: ${samples.every((s) => s.highlighted)}`)
console.log(`RSS median of ${runs}: idle after start ${m((s) => s.start)} MiB; just after a 2,000-line file view (render worker alive) ${m((s) => s.viewing)} MiB; idle after it (worker ended) ${m((s) => s.after)} MiB (${Number(m((s) => s.after - s.start)) >= 0 ? '+' : ''}${m((s) => s.after - s.start)} MiB over start)`)
console.log('target (PERFORMANCE.md): idle RSS ≤ 50 MiB; a file view leaves no highlighting code resident in the main thread')
