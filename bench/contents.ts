/**
 * The contents API under load, on a repository of thousands of files (5,000 files in 50
 * folders, over 20 commits, written with `git fast-import` on top of an initialised repository):
 * - GET contents/{path} of one file, and of one folder (100 entries), with autocannon
 *   (16 connections); the answers' last commits are cached per (commit, path) after the first
 *   request, which is what a load on one URL measures;
 * - the same file read cold: 200 different files requested one after the other, the first read
 *   of each (its last commit walked in git);
 * - the latency of a contents PUT (one file, 50 in a row) and of a multi-file change (POST
 *   contents, 5 files, 30 in a row), each a commit moved through the push path.
 * Targets (PERFORMANCE.md): GET contents/{path} ≥ 3,000 req/s; contents PUT, multi-file change
 * ≤ 30 ms p50. Runs on SQLite, or on PostgreSQL when WARREN_DATABASE_URL is set.
 *
 *   bun bench/contents.ts [seconds=10]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { durationFromArgv, loadTest, printRssSummary } from './lib/autocannon'
import { median } from './lib/git'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { startServer } from '../src/server'
import { createAccessToken, createUser } from '../src/modules/users/service'
import { createRepository } from '../src/modules/repos/create'
import { repoPath } from '../src/git/run'
import { analyze, benchDatabase, closeBenchDatabase } from './lib/database'

const seconds = durationFromArgv()
const FOLDERS = 50
const PER_FOLDER = 100
const COMMITS = 20

const dataDir = mkdtempSync(join(tmpdir(), 'warren-bench-contents-'))
const database = await benchDatabase()
const config = loadConfig({}, { dataDir, databaseUrl: database.url, port: 0, host: '127.0.0.1', logLevel: 'warn', passwordMemoryCost: 64, passwordTimeCost: 1 })
const deps = await createDeps(config)
console.log(`database: ${database.label}`)

const started = performance.now()
const owner = await createUser(deps, { username: 'owner', password: 'bench-password', email: 'owner@example.com' })
const { secret } = await createAccessToken(deps, owner.id, 'bench')
await createRepository(deps, owner, { name: 'bench', autoInit: true, license: 'MIT', defaultBranch: 'master' })
const gitDir = repoPath(dataDir, 'owner', 'bench')

/** 20 commits on master: the first writes every file, each next one changes every 20th file of a folder. */
function fastImportStream(): string {
  const parts: string[] = []
  let mark = 0
  for (let c = 0; c < COMMITS; c++) {
    const lines: string[] = []
    for (let d = 0; d < FOLDERS; d++)
      for (let f = 0; f < PER_FOLDER; f++) {
        if (c > 0 && (f + c) % 20 !== 0) continue
        const body = `folder ${d} file ${f}, version ${c}\n${'x'.repeat(200 + ((d * f) % 800))}\n`
        lines.push(`M 100644 inline dir${String(d).padStart(2, '0')}/file${String(f).padStart(4, '0')}.txt\ndata ${Buffer.byteLength(body)}\n${body}`)
      }
    const message = `commit ${c}\n`
    parts.push(
      `commit refs/heads/master\nmark :${++mark}\ncommitter Bench <bench@example.com> ${1_700_000_000 + c * 60} +0000\ndata ${message.length}\n${message}` +
        (c === 0 ? 'from refs/heads/master^0\n' : '') +
        lines.join(''),
    )
  }
  return parts.join('\n') + '\n'
}
const imported = Bun.spawn(['git', 'fast-import', '--quiet'], { env: { ...process.env, GIT_DIR: gitDir }, stdin: new Blob([fastImportStream()]), stderr: 'inherit' })
if ((await imported.exited) !== 0) throw new Error('git fast-import failed')
await analyze(deps.db)
console.log(`set-up: ${FOLDERS * PER_FOLDER} files over ${COMMITS} commits in ${((performance.now() - started) / 1000).toFixed(1)} s`)

const { server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
const base = `http://127.0.0.1:${server.port}/api/v1`
const auth = { authorization: `token ${secret}`, 'content-type': 'application/json' }
const p50 = (xs: number[]) => median(xs).toFixed(1)
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)]!.toFixed(1)

async function timed(run: () => Promise<Response>, expect: number): Promise<{ ms: number; body: any }> {
  const t0 = performance.now()
  const res = await run()
  const body = await res.json()
  const ms = performance.now() - t0
  if (res.status !== expect) throw new Error(`expected ${expect}, got ${res.status}: ${JSON.stringify(body).slice(0, 300)}`)
  return { ms, body }
}

try {
  console.log(`16 connections, ${seconds} s per scenario`)
  // The same window's figure of a route without git, to read the others against (machines differ by 2×).
  await loadTest('GET /repos/{o}/{r} (baseline)', `${base}/repos/owner/bench`, seconds, [], 30)
  await loadTest('GET contents/{file}', `${base}/repos/owner/bench/contents/dir07/file0042.txt`, seconds, [], 30)
  console.log(`${''.padEnd(30)} target ≥ 3,000 req/s`)
  await loadTest('GET contents/{folder} (100)', `${base}/repos/owner/bench/contents/dir08`, seconds, [], 30)

  const cold: number[] = []
  for (let i = 0; i < 200; i++) {
    const path = `dir${String(20 + (i % 30)).padStart(2, '0')}/file${String(i % PER_FOLDER).padStart(4, '0')}.txt`
    cold.push((await timed(() => fetch(`${base}/repos/owner/bench/contents/${path}`), 200)).ms)
  }
  console.log(`${'GET contents/{file}, cold'.padEnd(30)} p50 ${p50(cold)} ms   p99 ${p99(cold)} ms   (200 files, each read once)`)

  let sha = (await timed(() => fetch(`${base}/repos/owner/bench/contents/dir01/file0001.txt`), 200)).body.sha
  const puts: number[] = []
  for (let i = 0; i < 50; i++) {
    const body = JSON.stringify({ content: Buffer.from(`edit ${i}\n`).toString('base64'), sha })
    const r = await timed(() => fetch(`${base}/repos/owner/bench/contents/dir01/file0001.txt`, { method: 'PUT', headers: auth, body }), 200)
    sha = r.body.content.sha
    puts.push(r.ms)
  }
  console.log(`${'PUT contents/{file}'.padEnd(30)} p50 ${p50(puts)} ms   p99 ${p99(puts)} ms   target ≤ 30 ms p50`)

  const multi: number[] = []
  for (let i = 0; i < 30; i++) {
    const files = Array.from({ length: 5 }, (_, k) => ({ operation: 'create', path: `new/${i}/f${k}.txt`, content: Buffer.from(`${i}.${k}\n`).toString('base64') }))
    multi.push((await timed(() => fetch(`${base}/repos/owner/bench/contents`, { method: 'POST', headers: auth, body: JSON.stringify({ files }) }), 201)).ms)
  }
  console.log(`${'POST contents (5 files)'.padEnd(30)} p50 ${p50(multi)} ms   p99 ${p99(multi)} ms   target ≤ 30 ms p50`)
  printRssSummary()
} finally {
  await server.stop(true)
  await Bun.sleep(200)
  await closeBenchDatabase(deps.db, database)
  rmSync(dataDir, { recursive: true, force: true })
}
