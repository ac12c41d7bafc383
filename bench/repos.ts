/**
 * Repository reads under load: GET /repos/{o}/{r}, GET /repos/search?q=..&limit=50 and
 * GET /repos/{o}/{r}/branches, on a temp data folder holding 1,000+ repositories (inserted
 * directly into the database; only the repository the requests name gets a git folder, made by
 * createRepository with a first commit). Autocannon (16 connections) runs in its own process.
 * Targets (PERFORMANCE.md): repo GET ≥ 10,000 req/s with p99 ≤ 15 ms; search ≥ 3,000 req/s.
 * Runs on SQLite, or on a fresh PostgreSQL database when WARREN_DATABASE_URL is set (lib/database.ts).
 * Request log lines are off (logLevel warn): one line per request would measure the log, not the server.
 *
 *   bun bench/repos.ts [seconds=10] [repositories=1200] [only=substring of the scenario labels]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { durationFromArgv, loadTest, printRssSummary } from './lib/autocannon'
import { eq, sql } from 'drizzle-orm'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { writeTransaction } from '../src/db/client'
import { repositories, users } from '../src/db/schema'
import { startServer } from '../src/server'
import { createAccessToken, createUser } from '../src/modules/users/service'
import { createRepository } from '../src/modules/repos/create'
import type { UserRow } from '../src/auth/caller'
import { analyze, benchDatabase, closeBenchDatabase } from './lib/database'
import { bunCeiling, ceilingLine } from './lib/ceiling'

const seconds = durationFromArgv()
const count = Number(process.argv[3] || 1200)
const only = process.argv[4] ?? ''
if (!Number.isInteger(count) || count < 1) throw new Error(`repository count must be a positive integer, got "${process.argv[3]}"`)

const dataDir = mkdtempSync(join(tmpdir(), 'warren-bench-repos-'))
const database = await benchDatabase()
const config = loadConfig({}, { dataDir, databaseUrl: database.url, port: 0, host: '127.0.0.1', logLevel: 'warn', passwordMemoryCost: 64, passwordTimeCost: 1 })
const deps = await createDeps(config)
console.log(`database: ${database.label}`)

const started = performance.now()
const OWNERS = 20
const owners: UserRow[] = []
for (let i = 0; i < OWNERS; i++)
  owners.push(await createUser(deps, { username: `owner${i}`, password: 'bench-password', email: `owner${i}@example.com` }))
const { secret } = await createAccessToken(deps, owners[0]!.id, 'bench')
const words = ['api', 'web', 'tool', 'lib', 'cli', 'docs', 'infra', 'data', 'core', 'app']
const now = Math.floor(Date.now() / 1000)
const owned = new Array<number>(OWNERS).fill(0)
const rows = Array.from({ length: count }, (_, i) => {
  const owner = owners[i % OWNERS]!
  owned[i % OWNERS]!++
  const name = `${words[i % words.length]}-${words[(i * 7) % words.length]}-${i}`
  return {
    ownerId: owner.id,
    ownerName: owner.name,
    name,
    lowerName: name.toLowerCase(),
    description: `Repository number ${i}`,
    isPrivate: i % 5 === 0,
    defaultBranch: 'master',
    createdUnix: now,
    updatedUnix: now,
  }
})
await writeTransaction(deps.db, async () => {
  for (let start = 0; start < rows.length; start += 500) await deps.db.insert(repositories).values(rows.slice(start, start + 500))
  for (const [i, owner] of owners.entries())
    await deps.db.update(users).set({ numRepos: sql`${users.numRepos} + ${owned[i]}` }).where(eq(users.id, owner.id))
})
await createRepository(deps, owners[0]!, { name: 'bench', description: 'the benchmark target', autoInit: true, license: 'MIT', gitignores: 'Node' })
await analyze(deps.db)
console.log(`set-up: ${count + 1} repositories of ${OWNERS} owners in ${((performance.now() - started) / 1000).toFixed(1)} s`)

const { server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
const base = `http://127.0.0.1:${server.port}/api/v1`

/** Loads `path` (answers its requests/s); the branches route may not exist yet, which is reported instead of failing. */
async function run(label: string, path: string, headers: string[] = []): Promise<number | null> {
  if (!label.includes(only)) return null
  if (path.endsWith('/branches') && (await fetch(base + path)).status === 404) {
    console.log(`${label.padEnd(34)} skipped: the route answers 404 (not there yet)`)
    return null
  }
  return await loadTest(label, base + path, seconds, headers, 34)
}

try {
  console.log(`16 connections, ${seconds} s per scenario`)
  const pointReads: [string, number | null][] = [
    ['GET /repos/{o}/{r}', await run('GET /repos/{o}/{r}', '/repos/owner0/bench')],
    ['GET /repos/{o}/{r} (token)', await run('GET /repos/{o}/{r} (token)', '/repos/owner0/bench', [`Authorization: token ${secret}`])],
  ]
  await run('GET /repos/search?q=tool&limit=50', '/repos/search?q=tool&limit=50')
  await run('GET /repos/search (token)', '/repos/search?q=tool&limit=50', [`Authorization: token ${secret}`])
  await run('GET /repos/{o}/{r}/branches', '/repos/owner0/bench/branches')
  printRssSummary()
  if (pointReads.some(([, r]) => r !== null)) {
    const ceiling = await bunCeiling(seconds)
    for (const [label, perSecond] of pointReads) if (perSecond !== null) console.log(ceilingLine(label, perSecond, ceiling, 34))
  }
} finally {
  await server.stop(true)
  await Bun.sleep(200) // let handlers still waiting on git finish before the database closes
  await closeBenchDatabase(deps.db, database)
  rmSync(dataDir, { recursive: true, force: true })
}
