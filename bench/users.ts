/**
 * GET /api/v1/users/{username}: anonymous and with `Authorization: token ...`.
 * Starts Warren in this process on a temp data folder (port 0) with one user and a token, then
 * runs autocannon (16 connections) in a separate process so the load generator does not share
 * the server's event loop. Target: ≥ 15,000 requests/s with a token.
 *
 *   bun bench/users.ts [seconds=10]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { startServer } from '../src/server'
import { createAccessToken, createUser } from '../src/modules/users/service'

const seconds = Number(process.argv[2] ?? 10)
if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`duration must be a positive number of seconds, got "${process.argv[2]}"`)
const autocannonBin = resolve(import.meta.dir, '../node_modules/.bin/autocannon')

const dataDir = mkdtempSync(join(tmpdir(), 'warren-bench-users-'))
const config = loadConfig({}, { dataDir, port: 0, host: '127.0.0.1' })
const deps = createDeps(config)
const user = await createUser(deps, { username: 'benchuser', password: 'bench-password', email: 'bench@example.com', fullName: 'Bench User' })
const { secret } = createAccessToken(deps, user.id, 'bench')
const { server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
const url = `http://127.0.0.1:${server.port}/api/v1/users/benchuser`

interface Result {
  requests: { average: number }
  latency: { p50: number; p99: number }
  non2xx: number
  errors: number
}

async function run(label: string, headers: string[]): Promise<void> {
  const check = await fetch(url, { headers: Object.fromEntries(headers.map((h) => h.split(': ') as [string, string])) })
  if (check.status !== 200) throw new Error(`${label}: expected 200, got ${check.status}`)
  const args = ['-c', '16', '-d', String(seconds), '-j', ...headers.flatMap((h) => ['-H', h]), url]
  const proc = Bun.spawn(['node', autocannonBin, ...args], { stdout: 'pipe', stderr: 'ignore' })
  const out = await new Response(proc.stdout).text()
  await proc.exited
  const r = JSON.parse(out) as Result
  console.log(
    `${label.padEnd(22)} ${Math.round(r.requests.average).toLocaleString('en').padStart(8)} req/s` +
      `   p50 ${r.latency.p50} ms   p99 ${r.latency.p99} ms` +
      (r.non2xx || r.errors ? `   (non-2xx ${r.non2xx}, errors ${r.errors})` : ''),
  )
}

try {
  console.log(`GET /api/v1/users/{username}, 16 connections, ${seconds} s each`)
  await run('anonymous', [])
  await run('Authorization: token', [`Authorization: token ${secret}`])
} finally {
  server.stop(true)
  deps.db.$client.close()
  rmSync(dataDir, { recursive: true, force: true })
}
