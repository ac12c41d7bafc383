/**
 * GET /repos/{o}/{r}/commits under load on a history the size of Gogs' (4,828 commits, each
 * changing two of 500 files in 25 folders, written with `git fast-import` into the bare
 * repository). Autocannon (16 connections) in its own process, the same window's
 * GET /repos/{o}/{r} first as the baseline to read the others against. Scenarios:
 * - `commits?limit=50` as Gitea's clients ask it (stat, verification and files on: Gitea 1.23's
 *   defaults), by branch name;
 * - the same without them (`stat=false&verification=false&files=false`, what a list of commits
 *   shows), by branch name and by commit id;
 * - a later page (page 40 of 50);
 * - the history of one file (`path=`);
 * and the other reads a client or a browser makes of the same history, each answered from git's
 * objects or kept answers: a commit's combined status by id, a raw file, the tag list, and the
 * web's history, commit, blame, graph and activity pages.
 * Each answer carries the count of the whole history (X-Total-Count, X-HasMore). A history asked
 * again is answered from memory (src/git/commit-page.ts), which a load on one URL measures; the
 * first request of each (cold: 60 pages, each asked once, one after the other) runs git. Target
 * (PERFORMANCE.md, git data on the gogs fixture): ≥ 300 req/s. Runs on SQLite, or on PostgreSQL
 * when WARREN_DATABASE_URL is set.
 *
 *   bun bench/commits.ts [seconds=10]
 */
import { eq } from 'drizzle-orm'
import { durationFromArgv, loadTest, printRssSummary } from './lib/autocannon'
import { repositories } from '../src/db/schema'
import { repoPath } from '../src/git/run'
import { createAccessToken, createUser } from '../src/modules/users/service'
import { createRepository } from '../src/modules/repos/create'
import { analyze } from './lib/database'
import { inProcessWarren } from './lib/in-process'

const seconds = durationFromArgv()
const COMMITS = 4_828
const FOLDERS = 25
const PER_FOLDER = 20

const warren = await inProcessWarren('commits')
const deps = warren.deps
console.log(`database: ${warren.database.label}`)

const started = performance.now()
const owner = await createUser(deps, { username: 'owner', password: 'bench-password', email: 'owner@example.com' })
const { secret } = await createAccessToken(deps, owner.id, 'bench')
const repo = await createRepository(deps, owner, { name: 'history', autoInit: false })
const gitDir = repoPath(deps.config.dataDir, 'owner', 'history')

const pathOf = (n: number) => `dir${String(Math.floor(n / PER_FOLDER) % FOLDERS).padStart(2, '0')}/file${String(n % PER_FOLDER).padStart(3, '0')}.txt`

/** COMMITS commits on master, one a minute: the first writes every file, each next one two of them. */
function fastImportStream(): string {
  const files = FOLDERS * PER_FOLDER
  const parts: string[] = []
  for (let c = 0; c < COMMITS; c++) {
    const changed = c === 0 ? Array.from({ length: files }, (_, n) => n) : [(c * 7) % files, (c * 13 + 1) % files]
    const lines = changed.map((n) => {
      const body = `${pathOf(n)}, version ${c}\n${'line of text\n'.repeat(5 + (n % 40))}`
      return `M 100644 inline ${pathOf(n)}\ndata ${Buffer.byteLength(body)}\n${body}`
    })
    const message = `Change ${c}\n\nTouches ${changed.length} files.\n`
    const author = `Author ${c % 17} <author${c % 17}@example.com> ${1_600_000_000 + c * 60} +0000`
    parts.push(`commit refs/heads/master\nauthor ${author}\ncommitter ${author}\ndata ${Buffer.byteLength(message)}\n${message}${lines.join('')}`)
  }
  return parts.join('\n') + '\n'
}
const imported = Bun.spawn(['git', 'fast-import', '--quiet'], { env: { ...process.env, GIT_DIR: gitDir }, stdin: new Blob([fastImportStream()]), stderr: 'inherit' })
if ((await imported.exited) !== 0) throw new Error('git fast-import failed')
const head = (await new Response(Bun.spawn(['git', 'rev-parse', 'refs/heads/master'], { env: { ...process.env, GIT_DIR: gitDir }, stdout: 'pipe' }).stdout).text()).trim()
await deps.db.update(repositories).set({ isEmpty: false, defaultBranch: 'master' }).where(eq(repositories.id, repo.id))
await analyze(deps.db)
console.log(`set-up: ${COMMITS} commits over ${FOLDERS * PER_FOLDER} files in ${((performance.now() - started) / 1000).toFixed(1)} s (head ${head.slice(0, 10)})`)

const base = `${warren.base}/api/v1/repos/owner/history`
const token = [`Authorization: token ${secret}`]

// Each answer as a client gets it, checked before it is timed.
for (const [query, count] of [['limit=50', 50], [`sha=${head}&limit=50&stat=false&verification=false&files=false`, 50]] as const) {
  const res = await fetch(`${base}/commits?${query}`, { headers: { authorization: `token ${secret}` } })
  const body = (await res.json()) as unknown[]
  if (res.status !== 200 || body.length !== count || res.headers.get('x-total-count') !== String(COMMITS)) {
    throw new Error(`commits?${query}: ${res.status}, ${body.length} commits, X-Total-Count ${res.headers.get('x-total-count')}`)
  }
}

try {
  console.log(`16 connections, ${seconds} s per scenario; target ≥ 300 req/s (git data, gogs fixture)`)
  await loadTest('GET /repos/{o}/{r} (baseline)', base, seconds, token, 50)
  await loadTest('commits?limit=50 (Gitea defaults)', `${base}/commits?limit=50`, seconds, token, 50)
  await loadTest('commits?limit=50, no stat/files', `${base}/commits?limit=50&stat=false&verification=false&files=false`, seconds, token, 50)
  await loadTest('commits?sha={id}&limit=50, no stat/files', `${base}/commits?sha=${head}&limit=50&stat=false&verification=false&files=false`, seconds, token, 50)
  await loadTest('commits?limit=50&page=40, no stat/files', `${base}/commits?limit=50&page=40&stat=false&verification=false&files=false`, seconds, token, 50)
  await loadTest(`commits?path={file}&limit=50, no stat/files`, `${base}/commits?path=${pathOf(7)}&limit=50&stat=false&verification=false&files=false`, seconds, token, 50)
  const web = warren.base + '/owner/history'
  for (const [label, url] of [
    ['commits/{id}/status', `${base}/commits/${head}/status`],
    ['raw/{file}', `${base}/raw/${pathOf(7)}`],
    ['tags', `${base}/tags`],
    ['web: history page', `${web}/commits/branch/master`],
    ['web: commit page', `${web}/commit/${head}`],
    ['web: blame page', `${web}/blame/branch/master/${pathOf(7)}`],
    ['web: graph page', `${web}/graph`],
    ['web: activity page', `${web}/activity`],
  ]) await loadTest(label!, url!, seconds, token, 50)
  const cold: number[] = []
  for (let page = 1; page <= 60; page++) {
    const t0 = performance.now()
    const res = await fetch(`${base}/commits?limit=50&page=${page + 30}&stat=false&verification=false&files=false`, { headers: { authorization: `token ${secret}` } })
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`cold page ${page}: ${res.status}`)
    cold.push(performance.now() - t0)
  }
  cold.sort((a, b) => a - b)
  console.log(`${'commits?limit=50&page={n}, cold'.padEnd(50)} p50 ${cold[30]!.toFixed(1)} ms   max ${cold[59]!.toFixed(1)} ms   (60 pages, each asked once)`)
  printRssSummary()
} finally {
  await warren.close()
}
