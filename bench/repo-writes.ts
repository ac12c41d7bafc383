/**
 * The commonest writes that start git on the server, timed end to end (p50/p95): `POST
 * /user/repos` (empty, and with `auto_init`), and a push of one commit to main over HTTP by the
 * real git client. No PERFORMANCE.md target: the figures say what a repository creation and a push
 * cost, to compare with the same file run on an older commit (`git worktree add` of it, this file
 * copied in) in the same window.
 * On SQLite, or on a fresh PostgreSQL database when WARREN_DATABASE_URL is set (lib/database.ts).
 *
 *   bun bench/repo-writes.ts [rounds=40]
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createAccessToken, createUser } from '../src/modules/users/service'
import { clientEnv, runClient } from './lib/git'
import { inProcessWarren } from './lib/in-process'
import { latencyText, loadAverages } from './lib/latency'

const ROUNDS = Number(process.argv[2] ?? 40)
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`rounds must be a positive integer, got "${process.argv[2]}"`)

const warren = await inProcessWarren('repo-writes')
const { tmp, database, deps, server, base } = warren

try {
  console.log(`database: ${database.label}; ${await loadAverages()}`)
  const dev = await createUser(deps, { username: 'dev', password: 'bench-password', email: 'dev@example.com' })
  const token = (await createAccessToken(deps, dev.id, 'bench')).secret
  const create = async (body: Record<string, unknown>) => {
    const res = await fetch(`${base}/api/v1/user/repos`, { method: 'POST', headers: { authorization: `token ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    if (res.status !== 201) throw new Error(`POST /user/repos: ${res.status} ${await res.text()}`)
  }

  for (const [label, autoInit] of [['empty', false], ['auto_init', true]] as const) {
    const times: number[] = []
    for (let i = 0; i < ROUNDS; i++) {
      const t0 = performance.now()
      await create({ name: `${label}-${i}`, auto_init: autoInit })
      times.push(performance.now() - t0)
    }
    console.log(`POST /user/repos (${label.padEnd(9)}) ${latencyText(times)}`)
  }

  // One commit a round pushed to main over HTTP by the real git client.
  await create({ name: 'pushed' })
  const work = join(tmp, 'work')
  const env = clientEnv(tmp)
  const git = (...args: string[]) => runClient(work, env, ['git', ...args])
  await runClient(tmp, env, ['git', 'init', '-q', '--initial-branch=main', work])
  const remote = new URL(`${base}/dev/pushed.git`)
  remote.username = 'dev'
  remote.password = token
  const times: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    writeFileSync(join(work, 'file.txt'), `round ${i}\n`)
    await git('add', 'file.txt')
    await git('commit', '-q', '-m', `round ${i}`)
    times.push(await git('push', '-q', remote.href, 'main')) // runClient: the milliseconds it took; throws when git fails
  }
  console.log(`git push of one commit over HTTP   ${latencyText(times)}`)
  console.log(`load average after: ${await loadAverages()}`)
} finally {
  server.stop(true)
  await warren.close()
}
