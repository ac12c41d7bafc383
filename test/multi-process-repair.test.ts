// runs in one half: postgresql
/**
 * A process dying mid-merge among several serving one PostgreSQL database: what it left (the
 * merge's intent, its pending push) is repaired by the process running the background jobs while
 * the others keep serving, without any restart. Runs in every test run, whatever its own dialect
 * (the servers are processes of their own on a fresh PostgreSQL database, as in
 * multi-process.test.ts); PostgreSQL must be reachable, or this fails.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gitOk } from './git-fixture'
import { basic, dropInBackground, SOURCES, startServe, tempDirs, type Served } from './process-helpers'
import { freshPostgresDatabase, TEST_POSTGRES_URL } from './test-database'
import { repoPath } from '../src/git/run'

const dirs = tempDirs()
let database: Awaited<ReturnType<typeof freshPostgresDatabase>>
let q: SQL
let data: string
let work: string
let a: Served
let b: Served
let c: Served
const root = basic('root', 'root-password-1')

async function call(server: Served, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { authorization: root, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

/** Polls for up to a minute (the repairs run every half second here; the machine may be busy). */
async function eventually<T>(check: () => Promise<T | null | false | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    const value = await check()
    if (value) return value
    await Bun.sleep(100)
  }
  throw new Error(`gave up waiting for ${what}`)
}

/**
 * A reference-transaction hook that holds the merge's move of main at `state` (prepared: before
 * the ref moves; committed: after) until a `release` file appears, writing its pid to `held`.
 */
function holdMainAt(gitDir: string, state: 'prepared' | 'committed') {
  for (const f of ['held', 'release']) rmSync(join(gitDir, f), { force: true })
  const hook = join(gitDir, 'hooks', 'reference-transaction')
  writeFileSync(
    hook,
    `#!/bin/sh
[ "$1" = ${state} ] || exit 0
hit=
while read old new ref; do [ "$ref" = refs/heads/main ] && hit=1; done
[ -n "$hit" ] || exit 0
echo $$ > held
i=0
while [ ! -f release ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
exit 0
`,
  )
  chmodSync(hook, 0o755)
  return {
    held: () => (existsSync(join(gitDir, 'held')) ? Number(readFileSync(join(gitDir, 'held'), 'utf8').trim()) : null),
    remove: () => rmSync(hook, { force: true }),
    release: () => writeFileSync(join(gitDir, 'release'), ''),
  }
}

/** Kills a server at once, as a crash or an OOM kill would: nothing of it runs after. */
async function crash(server: Served) {
  server.proc.kill('SIGKILL')
  await server.proc.exited
}

async function openPull(server: Served, branch: string, file: string) {
  await gitOk(work, 'checkout', '-q', '-b', branch, 'main')
  await Bun.write(join(work, file), `${branch}\n`)
  await gitOk(work, 'add', '.')
  await gitOk(work, 'commit', '-q', '-m', branch)
  await gitOk(work, 'push', '-q', server.url.replace('http://', 'http://root:root-password-1@') + '/root/crash.git', branch)
  await gitOk(work, 'checkout', '-q', 'main')
  const pr = await call(server, 'POST', '/repos/root/crash/pulls', { head: branch, base: 'main', title: branch })
  expect(pr.status).toBe(201)
  await eventually(async () => (await call(server, 'GET', `/repos/root/crash/pulls/${pr.body.number}`)).body.mergeable === true, `${branch} mergeable`)
  return pr.body.number as number
}

const leftovers = async () => {
  const [row] = await q.unsafe(
    `select (select count(*)::int from pending_pushes) as pushes, (select count(*)::int from pull_requests where merge_intent is not null) as intents`,
  )
  return row as { pushes: number; intents: number }
}

beforeAll(async () => {
  database = await freshPostgresDatabase(TEST_POSTGRES_URL, 'warren_crash')
  q = new SQL(database.url, { max: 1 })
  data = dirs.make('warren-crash-')
  const env = {
    WARREN_DATABASE_URL: database.url,
    WARREN_ADMIN_USER: 'root',
    WARREN_ADMIN_PASSWORD: 'root-password-1',
    WARREN_ADMIN_EMAIL: 'root@example.com',
    // Three processes on a PostgreSQL server other tests use too: small pools.
    WARREN_DATABASE_POOL: '4',
    // Leadership taken over from a dead leader, and the repairs' rounds, every half second (not
    // the production 5 s and 3 s): the tests wait for both.
    WARREN_JOB_RETRY_MS: '500',
    WARREN_LEFTOVER_REPAIR_MS: '500',
  }
  // A first: it runs the background jobs (the repairs among them) until it dies.
  a = await startServe(SOURCES, data, env)
  b = await startServe(SOURCES, data, env)
  c = await startServe(SOURCES, data, env)
  expect((await call(a, 'POST', '/user/repos', { name: 'crash' })).status).toBe(201)
  work = dirs.make('warren-crash-work-')
  await gitOk(work, 'init', '-q', '-b', 'main')
  await Bun.write(join(work, 'base.txt'), 'base\n')
  await gitOk(work, 'add', '.')
  await gitOk(work, 'commit', '-q', '-m', 'base')
  await gitOk(work, 'push', '-q', a.url.replace('http://', 'http://root:root-password-1@') + '/root/crash.git', 'main')
}, 240_000)

afterAll(async () => {
  await Promise.all([a, b, c].map((s) => s?.stop()))
  await q?.close()
  if (database) dropInBackground(database)
  dirs.cleanup()
})

describe('a process killed mid-merge while others serve', () => {
  test('after the branch moved: the pull request is marked merged and the push recorded, by the running leader', async () => {
    const number = await openPull(b, 'landed', 'landed.txt')
    const gitDir = repoPath(data, 'root', 'crash')
    const hook = holdMainAt(gitDir, 'committed')
    // B merges; main has moved when the hook runs; B dies right then, before recording anything.
    const merging = call(b, 'POST', `/repos/root/crash/pulls/${number}/merge`, { Do: 'merge' }).catch(() => null)
    await eventually(async () => hook.held(), 'the merge held at the hook')
    await crash(b)
    hook.release()
    hook.remove()
    await merging
    const tip = await gitOk(gitDir, 'rev-parse', 'main')

    // A keeps serving and, running the repairs, finds the merge B left: merged, closed, the
    // merge commit the one on main, the push of main recorded as root's, nothing left pending.
    const pr = await eventually(async () => {
      const r = await call(a, 'GET', `/repos/root/crash/pulls/${number}`)
      return r.body.merged ? r.body : null
    }, 'the pull request marked merged')
    expect(pr).toMatchObject({ merged: true, state: 'closed', merge_commit_sha: tip })
    await eventually(async () => (await leftovers()).pushes === 0, 'the pending push settled')
    expect(await leftovers()).toEqual({ pushes: 0, intents: 0 })
    const pushes = await q.unsafe(`select actor_id, payload from events where kind = 'push' and payload like '%refs/heads/main%' order by id`)
    const last = pushes.at(-1) as { actor_id: number; payload: string }
    expect(JSON.parse(last.payload)).toMatchObject({ ref: 'refs/heads/main', after: tip })
    const [rootUser] = await q.unsafe(`select id from users where lower_name = 'root'`)
    expect(last.actor_id).toBe(rootUser.id)
    // Through C too (which never ran the repairs), and merging again is refused as merged (405), not 409.
    expect((await call(c, 'GET', `/repos/root/crash/pulls/${number}`)).body.merged).toBe(true)
    expect((await call(c, 'POST', `/repos/root/crash/pulls/${number}/merge`, { Do: 'merge' })).status).toBe(405)
  }, 120_000)

  test('before the branch moved, the leader itself dying: another takes the repairs over, and the pull request merges again', async () => {
    const number = await openPull(a, 'retried', 'retried.txt')
    const gitDir = repoPath(data, 'root', 'crash')
    const before = await gitOk(gitDir, 'rev-parse', 'main')
    const hook = holdMainAt(gitDir, 'prepared')
    // A (the leader) merges and dies before main moves; its git dies with it (the hook killed:
    // git aborts the ref transaction, main stays).
    const merging = call(a, 'POST', `/repos/root/crash/pulls/${number}/merge`, { Do: 'merge' }).catch(() => null)
    const hookPid = await eventually(async () => hook.held(), 'the merge held at the hook')
    await crash(a)
    process.kill(hookPid, 'SIGKILL')
    hook.remove()
    await merging
    expect(await gitOk(gitDir, 'rev-parse', 'main')).toBe(before)

    // C takes the jobs over and repairs: the intent is dropped (no 409 forever), the push settled.
    await eventually(async () => {
      const left = await leftovers()
      return left.intents === 0 && left.pushes === 0
    }, 'the intent dropped and the push settled')
    const pr = (await call(c, 'GET', `/repos/root/crash/pulls/${number}`)).body
    expect(pr).toMatchObject({ merged: false, state: 'open' })
    const merged = await call(c, 'POST', `/repos/root/crash/pulls/${number}/merge`, { Do: 'merge' })
    expect(merged.status).toBe(200)
    expect((await call(c, 'GET', `/repos/root/crash/pulls/${number}`)).body).toMatchObject({ merged: true, state: 'closed' })
    expect(await gitOk(gitDir, 'rev-parse', 'main')).not.toBe(before)
    expect(c.output()).toContain('running a background job job=leftover-repair')
  }, 120_000)
})
