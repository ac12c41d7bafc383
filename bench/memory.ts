/**
 * The server's resident memory as PERFORMANCE.md's side-by-side table measured it for the peers:
 * `warren serve` in a process of its own (the bundle `npm start` runs, built first), the load
 * generator in another. The other benches run Warren in their own process, so their figures hold
 * the bench's data set-up too; this one reads the server's alone, from /proc:
 *   - idle after start: 1 s after the first answer of a start on an existing data folder (the
 *     first start made it, with the site administrator), before anything else is asked;
 *   - peak under load: the highest of samples every 20 ms while each scenario runs (16
 *     connections, `seconds` each), the largest over the scenarios;
 *   - idle after: 5 s after the last scenario ended, the server left alone.
 * The data (made through the API before the load): 10 users, 200 repositories, 2,000 issues with
 * labels in one of them and 1,000 comments on its first issue. The scenarios: the harness's API
 * reads (a user, a repository, an issues page, a repository search with a token and without),
 * POST issue, and three web pages (repository home, the issue with 1,000 comments' first page,
 * explore). Targets ≤ 50 / 150 / 64 MiB; peers (their figures of 2026-11-25): Gogs 0.11
 * 50 / 296 / 276 MiB, Gitea 1.3 72 / 295 / 264 MiB. Runs on SQLite, or on PostgreSQL when
 * WARREN_DATABASE_URL is set (a fresh database, dropped after).
 *
 *   bun bench/memory.ts [seconds=10]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { durationFromArgv, runAutocannon } from './lib/autocannon'
import { memoryOf, sampleProcessTree } from './lib/rss'
import { benchDatabase } from './lib/database'
import { apiCall, basic, rootEnv, ROOT_PASSWORD, startServe } from '../test/process-helpers'

const seconds = durationFromArgv()
const root = resolve(import.meta.dir, '..')
const TARGETS = { idle: 50, peak: 150, after: 64 }
const PEERS = 'Gogs 0.11 50 / 296 / 276 MiB, Gitea 1.3 72 / 295 / 264 MiB'
const USERS = 10
const REPOS = 200
const ISSUES = 2000
const COMMENTS = 1000

const build = Bun.spawnSync([process.execPath, 'run', 'build'], { cwd: root, stdout: 'ignore', stderr: 'pipe' })
if (build.exitCode !== 0) throw new Error(`bun run build failed: ${build.stderr.toString()}`)

const dataDir = mkdtempSync(join(tmpdir(), 'warren-bench-memory-'))
const database = await benchDatabase()
const serve = () =>
  startServe([process.execPath, join(root, 'dist/bin/cli.js')], dataDir, {
    ...rootEnv,
    WARREN_LOG_LEVEL: 'warn',
    ...(database.url ? { WARREN_DATABASE_URL: database.url } : {}),
  })
// The first start makes the data folder and the site administrator (hashing its password takes
// the hash's memory); the figures are those of the next start, on the folder as it is then.
await (await serve()).stop()
const server = await serve()
const pid = server.proc.pid

try {
  await Bun.sleep(1000)
  const idle = memoryOf(pid)
  console.log(`load: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
  console.log(`database: ${database.label}`)
  console.log(`idle after start: ${idle.rss.toFixed(1)} MiB (anonymous ${idle.anon.toFixed(1)}, file pages ${idle.file.toFixed(1)})`)

  // ---- the data, through the API ----
  const rootAuth = basic('root', ROOT_PASSWORD)
  const call = async (method: string, path: string, body?: unknown, status = [200, 201, 204]) => {
    const r = await apiCall(server, rootAuth, method, path, body)
    if (!status.includes(r.status)) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`)
    return r.body
  }
  const token = (await call('POST', '/users/root/tokens', { name: 'bench', scopes: ['all'] })).sha1 as string
  const auth = `token ${token}`
  const as = async (method: string, path: string, body?: unknown) => {
    const r = await apiCall(server, auth, method, path, body)
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`)
    return r.body
  }
  for (let u = 1; u <= USERS; u++) await as('POST', '/admin/users', { username: `user${u}`, email: `user${u}@example.com`, password: 'bench-password-1', must_change_password: false })
  for (let r = 1; r <= REPOS; r++) await as('POST', `/admin/users/user${(r % USERS) + 1}/repos`, { name: `repo${r}`, auto_init: r === 1, description: `repository ${r}` })
  const big = 'user2/repo1'
  const labelIds: number[] = []
  for (const name of ['bug', 'feature', 'docs', 'question', 'chore']) labelIds.push((await as('POST', `/repos/${big}/labels`, { name, color: '#00aabb' })).id)
  const posts: Promise<unknown>[] = []
  for (let i = 1; i <= ISSUES; i++) {
    posts.push(as('POST', `/repos/${big}/issues`, { title: `Issue ${i}`, body: `The **body** of issue ${i}.`, labels: [labelIds[i % labelIds.length]!] }))
    if (posts.length === 16) await Promise.all(posts.splice(0))
  }
  await Promise.all(posts.splice(0))
  for (let i = 1; i <= COMMENTS; i++) {
    posts.push(as('POST', `/repos/${big}/issues/1/comments`, { body: `Comment ${i} with \`code\` and a [link](https://example.com/${i}).` }))
    if (posts.length === 16) await Promise.all(posts.splice(0))
  }
  await Promise.all(posts.splice(0))
  await Bun.sleep(2000)
  const seeded = memoryOf(pid)
  console.log(`after making the data (${USERS} users, ${REPOS} repositories, ${ISSUES} issues, ${COMMENTS} comments): ${seeded.rss.toFixed(1)} MiB`)

  // ---- the load ----
  const api = `${server.url}/api/v1`
  const tokenHeader = ['-H', `authorization: ${auth}`]
  const scenarios: [label: string, url: string, args: string[]][] = [
    ['GET /users/{u}, token', `${api}/users/user3`, tokenHeader],
    ['GET /repos/{o}/{r}', `${api}/repos/${big}`, tokenHeader],
    ['GET issues page 2', `${api}/repos/${big}/issues?page=2&limit=30`, tokenHeader],
    ['GET repos/search limit=50', `${api}/repos/search?limit=50`, tokenHeader],
    ['same, anonymous', `${api}/repos/search?limit=50`, []],
    ['POST issue', `${api}/repos/${big}/issues`, [...tokenHeader, '-m', 'POST', '-H', 'content-type: application/json', '-b', JSON.stringify({ title: 'A new issue', body: 'Posted under load.' })]],
    ['web: repository home', `${server.url}/${big}`, []],
    [`web: issue with ${COMMENTS} comments`, `${server.url}/${big}/issues/1`, []],
    ['web: explore', `${server.url}/explore/repos`, []],
  ]
  let peak = 0
  console.log(`\n16 connections, ${seconds} s each: requests/s, the server's peak RSS during the scenario, its RSS at the end`)
  for (const [label, url, args] of scenarios) {
    const sampling = sampleProcessTree(pid)
    const r = await runAutocannon(url, seconds, args, 16)
    const rss = sampling.stop()
    peak = Math.max(peak, rss.peak)
    const ok = r.non2xx || r.errors ? `   non-2xx ${r.non2xx}   errors ${r.errors}` : ''
    console.log(`${label.padEnd(34)} ${Math.round(r.requests.average).toLocaleString('en').padStart(7)} req/s   peak ${rss.peak.toFixed(0).padStart(4)} MiB   end ${memoryOf(pid).rss.toFixed(0).padStart(4)} MiB${ok}`)
  }
  await Bun.sleep(5000)
  const after = memoryOf(pid)
  const mark = (value: number, target: number) => `${value.toFixed(0)} MiB (target ≤ ${target}: ${value <= target ? 'met' : 'MISSED'})`
  console.log(`\nidle after start ${mark(idle.rss, TARGETS.idle)}, peak under load ${mark(peak, TARGETS.peak)}, idle 5 s after ${mark(after.rss, TARGETS.after)} (anonymous ${after.anon.toFixed(1)}, file pages ${after.file.toFixed(1)})`)
  console.log(`peers: ${PEERS}`)
} finally {
  await server.stop()
  rmSync(dataDir, { recursive: true, force: true })
  await database.drop()
}
