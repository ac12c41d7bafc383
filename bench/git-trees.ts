/**
 * GET /repos/{o}/{r}/git/trees/{sha}?recursive=1 under load, on a repository of thousands of
 * files in nested folders (made with git fast-import straight into the bare repository: one
 * commit, `files` blobs of a few hundred bytes). Three scenarios: by commit id (a listing of an
 * id is served from memory once read), by branch name (one cat-file per request to resolve it),
 * and a later page (per_page=100). Autocannon (16 connections) runs in its own process.
 * Target (PERFORMANCE.md, gogs fixture): ≥ 300 req/s.
 *
 *   bun bench/git-trees.ts [seconds=10] [files=5000]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { durationFromArgv, loadTest, printRssSummary } from './lib/autocannon'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { repositories } from '../src/db/schema'
import { repoPath } from '../src/git/run'
import { startServer } from '../src/server'
import { createUser } from '../src/modules/users/service'
import { createRepository } from '../src/modules/repos/create'
import { benchDatabase, closeBenchDatabase } from './lib/database'

const seconds = durationFromArgv()
const files = Number(process.argv[3] || 5000)
if (!Number.isInteger(files) || files < 1) throw new Error(`file count must be a positive integer, got "${process.argv[3]}"`)

const dataDir = mkdtempSync(join(tmpdir(), 'warren-bench-trees-'))
const database = await benchDatabase()
const config = loadConfig({}, { dataDir, databaseUrl: database.url, port: 0, host: '127.0.0.1', logLevel: 'warn', passwordMemoryCost: 64, passwordTimeCost: 1 })
const deps = await createDeps(config)
console.log(`database: ${database.label}`)

const started = performance.now()
const owner = await createUser(deps, { username: 'treeowner', password: 'bench-password', email: 'treeowner@example.com' })
const repo = await createRepository(deps, owner, { name: 'trees', autoInit: false })
const gitDir = repoPath(dataDir, owner.name, repo.name)

/** One commit of `files` files spread over two levels of folders (`dNN/sNN/fNNNN.ts`), as a fast-import stream. */
function fastImportStream(): string {
  const parts: string[] = []
  for (let i = 0; i < files; i++) {
    const body = `// file ${i}\nexport const value${i} = ${i}\n`.repeat(8)
    parts.push(`blob\nmark :${i + 1}\ndata ${Buffer.byteLength(body)}\n${body}\n`)
  }
  const message = `${files} files\n`
  parts.push(`commit refs/heads/master\ncommitter Bench <bench@example.com> 1700000000 +0000\ndata ${Buffer.byteLength(message)}\n${message}`)
  for (let i = 0; i < files; i++) {
    const path = `d${String(i % 40).padStart(2, '0')}/s${String(Math.floor(i / 40) % 25).padStart(2, '0')}/f${String(i).padStart(5, '0')}.ts`
    parts.push(`M 100644 :${i + 1} ${path}\n`)
  }
  return parts.join('') + '\n'
}

const imported = Bun.spawn(['git', 'fast-import', '--quiet'], { env: { ...process.env, GIT_DIR: gitDir }, stdin: new Blob([fastImportStream()]), stdout: 'ignore', stderr: 'inherit' })
if ((await imported.exited) !== 0) throw new Error('git fast-import failed')
const head = (await new Response(Bun.spawn(['git', 'rev-parse', 'refs/heads/master'], { env: { ...process.env, GIT_DIR: gitDir }, stdout: 'pipe' }).stdout).text()).trim()
await deps.db.update(repositories).set({ isEmpty: false, defaultBranch: 'master' }).where(eq(repositories.id, repo.id))
console.log(`set-up: ${files} files in ${((performance.now() - started) / 1000).toFixed(1)} s (commit ${head.slice(0, 10)})`)

const { server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
const base = `http://127.0.0.1:${server.port}/api/v1/repos/treeowner/trees/git/trees`

try {
  console.log(`16 connections, ${seconds} s per scenario; target ≥ 300 req/s (gogs fixture)`)
  await loadTest('trees/{commit id}?recursive=1', `${base}/${head}?recursive=1`, seconds, [], 44)
  await loadTest('trees/master?recursive=1', `${base}/master?recursive=1`, seconds, [], 44)
  await loadTest('trees/{commit id}?recursive=1&page=3&per_page=100', `${base}/${head}?recursive=1&page=3&per_page=100`, seconds, [], 44)
  printRssSummary()
} finally {
  await server.stop(true)
  await Bun.sleep(200)
  await closeBenchDatabase(deps.db, database)
  rmSync(dataDir, { recursive: true, force: true })
}
