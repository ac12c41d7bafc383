/**
 * GET /api/v1/users/{username}: anonymous and with `Authorization: token ...`.
 * Starts Warren in this process on a temp data folder (port 0) with one user and a token, then
 * runs autocannon (16 connections) in a separate process (bench/lib/autocannon.ts).
 * Target: ≥ 15,000 requests/s with a token.
 *
 *   bun bench/users.ts [seconds=10]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { startServer } from '../src/server'
import { createAccessToken, createUser } from '../src/modules/users/service'
import { durationFromArgv, loadTest, printRssSummary } from './lib/autocannon'

const seconds = durationFromArgv()

const dataDir = mkdtempSync(join(tmpdir(), 'warren-bench-users-'))
const config = loadConfig({}, { dataDir, port: 0, host: '127.0.0.1' })
const deps = await createDeps(config)
const user = await createUser(deps, { username: 'benchuser', password: 'bench-password', email: 'bench@example.com', fullName: 'Bench User' })
const { secret } = await createAccessToken(deps, user.id, 'bench')
const { server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
const url = `http://127.0.0.1:${server.port}/api/v1/users/benchuser`

try {
  console.log(`GET /api/v1/users/{username}, 16 connections, ${seconds} s each`)
  await loadTest('anonymous', url, seconds)
  await loadTest('Authorization: token', url, seconds, [`Authorization: token ${secret}`])
  printRssSummary()
} finally {
  server.stop(true)
  deps.db.$client.close()
  rmSync(dataDir, { recursive: true, force: true })
}
