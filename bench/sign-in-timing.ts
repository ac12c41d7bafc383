/**
 * A wrong password takes as long whoever it names: a user, an unknown name, an organisation, an
 * unknown e-mail (no way to tell which accounts exist by timing sign-ins). Starts Warren in this
 * process with production password hashing (argon2id, 19 MiB, t=2) and prints the median time of
 * a wrong Basic sign-in for each, and its ratio to a real user's.
 * Target: every ratio within 0.8–1.25.
 *
 *   bun bench/sign-in-timing.ts [rounds=30]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { startServer } from '../src/server'
import { createAccessToken, createUser } from '../src/modules/users/service'
import { benchDatabase, closeBenchDatabase } from './lib/database'

const rounds = Number(process.argv[2] ?? 30)
const dataDir = mkdtempSync(join(tmpdir(), 'warren-bench-signin-'))
const database = await benchDatabase()
const config = loadConfig({}, { dataDir, databaseUrl: database.url, port: 0, host: '127.0.0.1', logLevel: 'warn', loginFailuresPerAccount: 0, loginFailuresPerAddress: 0 })
const deps = await createDeps(config)
const user = await createUser(deps, { username: 'timed', password: 'timed-password', email: 'timed@example.com' })
const { secret } = await createAccessToken(deps, user.id, 'bench')
const { server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
const base = `http://127.0.0.1:${server.port}/api/v1`
const basic = (name: string) => `Basic ${Buffer.from(`${name}:wrong`).toString('base64')}`

try {
  const org = await fetch(`${base}/orgs`, { method: 'POST', headers: { authorization: `token ${secret}`, 'content-type': 'application/json' }, body: JSON.stringify({ username: 'timedorg' }) })
  if (org.status !== 201) throw new Error(`creating the organisation answered ${org.status}`)
  const names = ['timed', 'no-such-user', 'timedorg', 'ghost@example.com']
  const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]))
  for (let round = -1; round < rounds; round++)
    for (const name of names) {
      const started = performance.now()
      const r = await fetch(`${base}/user`, { headers: { authorization: basic(name) } })
      await r.arrayBuffer()
      if (r.status !== 401) throw new Error(`${name}: ${r.status}`)
      // Round -1 warms up (the first unknown name also makes the dummy hash).
      if (round >= 0) times[name]!.push(performance.now() - started)
    }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const known = median(times.timed!)
  console.log(`database: ${database.label}; wrong Basic password, ${rounds} rounds, median ms (ratio to a real user's; target 0.8–1.25)`)
  for (const name of names) console.log(`${name.padEnd(20)} ${median(times[name]!).toFixed(1).padStart(7)} ms  ${(median(times[name]!) / known).toFixed(2)}×`)
} finally {
  await server.stop(true)
  await closeBenchDatabase(deps.db, database)
  rmSync(dataDir, { recursive: true, force: true })
}
