/**
 * GET /api/v1/users/{username}: anonymous and with `Authorization: token ...`.
 * Starts Warren in this process on a temp data folder (port 0) with one user and a token, then
 * runs autocannon (16 connections) in a separate process (bench/lib/autocannon.ts).
 * Target: ≥ 15,000 requests/s with a token.
 * Runs on SQLite, or on a fresh PostgreSQL database when WARREN_DATABASE_URL is set (lib/database.ts).
 * Request log lines are off (logLevel warn): one line per request would measure the log, not the server.
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
import { benchDatabase, closeBenchDatabase } from './lib/database'
import { bunCeiling, ceilingLine } from './lib/ceiling'

const seconds = durationFromArgv()

const dataDir = mkdtempSync(join(tmpdir(), 'warren-bench-users-'))
const database = await benchDatabase()
const config = loadConfig({}, { dataDir, databaseUrl: database.url, port: 0, host: '127.0.0.1', logLevel: 'warn' })
const deps = await createDeps(config)
console.log(`database: ${database.label}`)
const user = await createUser(deps, { username: 'benchuser', password: 'bench-password', email: 'bench@example.com', fullName: 'Bench User' })
const { secret } = await createAccessToken(deps, user.id, 'bench')
const { server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
const url = `http://127.0.0.1:${server.port}/api/v1/users/benchuser`

try {
  console.log(`GET /api/v1/users/{username}, 16 connections, ${seconds} s each`)
  const anonymous = await loadTest('anonymous', url, seconds)
  const token = await loadTest('Authorization: token', url, seconds, [`Authorization: token ${secret}`])
  printRssSummary()
  const ceiling = await bunCeiling(seconds)
  console.log(ceilingLine('anonymous', anonymous, ceiling))
  console.log(ceilingLine('Authorization: token', token, ceiling))
} finally {
  await server.stop(true)
  await Bun.sleep(200) // let requests still in flight when the load ended finish before the database closes
  await closeBenchDatabase(deps.db, database)
  rmSync(dataDir, { recursive: true, force: true })
}
