/**
 * The web pages: server time (p50 and p99 of 100 requests one after the other, after one warm-up
 * request) and HTML size of the repository home, a 2,000-line highlighted file, a commit page,
 * a pull request's files page, and an issue with 50 comments when that page is served (its
 * figures are printed as soon as `/{o}/{r}/issues/{n}` answers a page); then requests/s of each
 * under 16 connections. The repository: 200 files in 20 folders with a README, a 2,000-line
 * TypeScript file, a branch changing 20 files (its pull request, and the commit shown).
 * Targets (PERFORMANCE.md): home, issue with 50 comments, PR files page ≤ 10 ms p50 and
 * ≤ 100 KB; a 2,000-line highlighted file ≤ 30 ms p50 and ≤ 300 KB. Runs on SQLite, or on
 * PostgreSQL when WARREN_DATABASE_URL is set. With WARREN_BENCH_HTML set to a folder, each page's
 * HTML is written there (to read what the bytes are), and with WARREN_BENCH_PAGES_ONLY=1 the load
 * under 16 connections is skipped.
 *
 *   bun bench/web.ts [seconds=10]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
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
const FOLDERS = 20
const PER_FOLDER = 10
const LONG_LINES = 2000
const COMMENTS = 50

const dataDir = mkdtempSync(join(tmpdir(), 'warren-bench-web-'))
const database = await benchDatabase()
const config = loadConfig({}, { dataDir, databaseUrl: database.url, port: 0, host: '127.0.0.1', logLevel: 'warn', passwordMemoryCost: 64, passwordTimeCost: 1 })
const deps = await createDeps(config)
console.log(`database: ${database.label}`)

const owner = await createUser(deps, { username: 'owner', password: 'bench-password', email: 'owner@example.com' })
const { secret } = await createAccessToken(deps, owner.id, 'bench')
await createRepository(deps, owner, { name: 'bench', autoInit: true, license: 'MIT', defaultBranch: 'master' })
const gitDir = repoPath(dataDir, 'owner', 'bench')

const blob = (path: string, body: string) => `M 100644 inline ${path}\ndata ${Buffer.byteLength(body)}\n${body}`
const longFile = Array.from({ length: LONG_LINES }, (_, i) =>
  i % 10 === 0 ? `/** Block ${i}: what the next lines hold. */` : `export function step${i}(value: number): string { return \`\${value * ${i}}\` + "${'x'.repeat(i % 30)}" }`,
).join('\n')
const readme = `# Bench\n\nA repository for the web pages' benchmark.\n\n${Array.from({ length: 40 }, (_, i) => `- item **${i}** with [a link](https://example.com/${i})`).join('\n')}\n`

/** master: the files; feature: 20 of them changed (one commit). */
function fastImportStream(): string {
  const files: string[] = [blob('README.md', readme), blob('src/long.ts', longFile + '\n')]
  for (let d = 0; d < FOLDERS; d++)
    for (let f = 0; f < PER_FOLDER; f++) files.push(blob(`dir${d}/file${f}.ts`, Array.from({ length: 40 }, (_, l) => `export const v${l} = ${d * f + l}`).join('\n') + '\n'))
  const changed: string[] = []
  for (let d = 0; d < FOLDERS; d++) changed.push(blob(`dir${d}/file0.ts`, Array.from({ length: 40 }, (_, l) => `export const v${l} = ${l % 3 === 0 ? 'changed' : d + l}`).join('\n') + '\n'))
  const commit = (ref: string, mark: number, from: string, message: string, body: string[]) =>
    `commit ${ref}\nmark :${mark}\ncommitter Bench <owner@example.com> ${1_700_000_000 + mark * 60} +0000\ndata ${message.length}\n${message}from ${from}\n${body.join('')}`
  return [commit('refs/heads/master', 1, 'refs/heads/master^0', 'files\n', files), commit('refs/heads/feature', 2, ':1', 'change 20 files\n', changed)].join('\n') + '\n'
}
const imported = Bun.spawn(['git', 'fast-import', '--quiet'], { env: { ...process.env, GIT_DIR: gitDir }, stdin: new Blob([fastImportStream()]), stderr: 'inherit' })
if ((await imported.exited) !== 0) throw new Error('git fast-import failed')

const { server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
const origin = `http://127.0.0.1:${server.port}`
const api = `${origin}/api/v1`
const auth = { authorization: `token ${secret}`, 'content-type': 'application/json' }
const post = async (path: string, body: unknown) => {
  const res = await fetch(api + path, { method: 'POST', headers: auth, body: JSON.stringify(body) })
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as any
}

const pull = await post('/repos/owner/bench/pulls', { head: 'feature', base: 'master', title: 'Change 20 files' })
const issue = await post('/repos/owner/bench/issues', { title: 'An issue with 50 comments', body: 'The **body**.' })
for (let i = 0; i < COMMENTS; i++) await post(`/repos/owner/bench/issues/${issue.number}/comments`, { body: `Comment ${i} with \`code\` and a [link](https://example.com/${i}).` })
await analyze(deps.db)

const p50 = (xs: number[]) => median(xs).toFixed(1)
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)]!.toFixed(1)
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`

/** Server time (measured at the client, on the same machine) and size of a page, 100 requests in a row. */
async function timePage(label: string, path: string, target: string): Promise<boolean> {
  const first = await fetch(origin + path, { headers: { accept: 'text/html' } })
  const html = await first.text()
  if (first.status !== 200 || !html.startsWith('<!doctype html>')) {
    console.log(`${label.padEnd(34)} not served (${first.status})`)
    return false
  }
  const saveTo = process.env.WARREN_BENCH_HTML
  if (saveTo) {
    mkdirSync(saveTo, { recursive: true })
    writeFileSync(join(saveTo, `${label.replace(/[^a-z0-9]+/gi, '-')}.html`), html)
  }
  const times: number[] = []
  for (let i = 0; i < 100; i++) {
    const t0 = performance.now()
    const res = await fetch(origin + path, { headers: { accept: 'text/html' } })
    await res.arrayBuffer()
    times.push(performance.now() - t0)
  }
  console.log(`${label.padEnd(34)} p50 ${p50(times)} ms   p99 ${p99(times)} ms   ${kb(Buffer.byteLength(html))}   target ${target}`)
  return true
}

const head = pull.head.sha as string
const pages: [string, string, string][] = [
  ['repository home', '/owner/bench', '≤ 10 ms p50, ≤ 100 KB'],
  [`a ${LONG_LINES}-line highlighted file`, '/owner/bench/src/branch/master/src/long.ts', '≤ 30 ms p50, ≤ 300 KB'],
  ['commit page (20 files)', `/owner/bench/commit/${head}`, '(no target; as PR files)'],
  ['pull request files (20 files)', `/owner/bench/pulls/${pull.number}/files`, '≤ 10 ms p50, ≤ 100 KB'],
  // The issue page is the issue pages' own; measured once it is served.
  [`issue with ${COMMENTS} comments`, `/owner/bench/issues/${issue.number}`, '≤ 10 ms p50, ≤ 100 KB'],
]

try {
  console.log('server time: 100 requests one after the other (after a first one that fills the caches)')
  const served: [string, string][] = []
  for (const [label, path, target] of pages) if (await timePage(label, path, target)) served.push([label, path])
  if (process.env.WARREN_BENCH_PAGES_ONLY !== '1') {
    console.log(`\n16 connections, ${seconds} s per page`)
    for (const [label, path] of served) await loadTest(label, origin + path, seconds, [], 34)
    printRssSummary()
  }
} finally {
  await server.stop(true)
  await Bun.sleep(200)
  await closeBenchDatabase(deps.db, database)
  rmSync(dataDir, { recursive: true, force: true })
}
