/**
 * What an audit of the operator's tools found, each driven against a real server and real git on
 * the run's database: the pre-receive hook deleted or altered under a running server (src/push/
 * hook.ts), a sync that finds the same refs (src/push/sync.ts), `warren doctor --fix` on a broken
 * ref (src/ops/doctor.ts), and a database migrated by a newer Warren (src/db/client.ts appliedAll).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, sh } from './git-fixture'
import { commitOn, pushedRepo } from './pull-fixtures'
import { ok } from './gitea-calls'
import { repoGitStates, repositories } from '../src/db/schema'
import { pushHook, reconcileRepositories } from '../src/push'
import { doctor } from '../src/ops/doctor'
import { createDeps } from '../src/deps'
import { closeDatabase, sqliteOf } from '../src/db/client'
import { repoPath } from '../src/git/run'
import { gitOfRow } from '../src/auth/repo-context'

let s: TestServer
let alice: TestUser
let bob: TestUser
let asAlice: Api<unknown>
let dir: string
let repoId: number
const dirs: string[] = []

const urlOf = (u: TestUser) => remoteUrl(s.url, 'alice/guarded.git', u.name, u.password)
const push = (u: TestUser, ...refspecs: string[]) => sh(['git', 'push', '--porcelain', urlOf(u), ...refspecs], dir)
const tip = async (branch: string) => (await ok(asAlice.repos.repoGetBranch('alice', 'guarded', branch))).commit!.id!
const hookPath = () => join(s.deps.config.dataDir, 'hooks', 'channel-2', 'pre-receive')
const gitDir = () => repoPath(s.deps.config.dataDir, 'alice', 'guarded')
const recordedRefs = async () => JSON.parse((await s.deps.db.select().from(repoGitStates).where(eq(repoGitStates.repoId, repoId)))[0]!.refs)

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  asAlice = giteaApi(s.url, { token: alice.token })
  const made = await pushedRepo(s, alice, 'guarded', dirs)
  dir = made.dir
  repoId = made.id
  await ok(asAlice.repos.repoCreateBranchProtection('alice', 'guarded', { rule_name: 'main', protected_file_patterns: 'secret.txt' }), 201)
  await gitOk(dir, 'pull', '-q', '--ff-only', urlOf(alice), 'main')
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('the pre-receive hook under a running server', () => {
  test('deleted or altered, it is written again before the next push: a protected file stays refused', async () => {
    const start = await tip('main')
    expect(existsSync(hookPath())).toBe(true)
    const script = readFileSync(hookPath(), 'utf8')
    await commitOn(dir, 'main', { 'secret.txt': 'key\n' }, 'the secret')

    rmSync(hookPath())
    const afterDeletion = await push(alice, 'main')
    expect(afterDeletion.code).not.toBe(0)
    expect(afterDeletion.stdout + afterDeletion.stderr).toContain('branch main is protected from changing file secret.txt')
    expect(await tip('main')).toBe(start)
    expect(readFileSync(hookPath(), 'utf8')).toBe(script)

    writeFileSync(hookPath(), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    const afterEdit = await push(alice, 'main')
    expect(afterEdit.code).not.toBe(0)
    expect(await tip('main')).toBe(start)
    expect(readFileSync(hookPath(), 'utf8')).toBe(script)
    await gitOk(dir, 'reset', '-q', '--hard', start)
  })

  test('a judgement left to the hook that never came is undone before the push is recorded', async () => {
    const start = await tip('main')
    const moved = await commitOn(dir, 'main', { 'unjudged.txt': 'x\n' }, 'unjudged')
    // The commit's objects in the repository (as git's quarantine would hold them), then the ref
    // moved as a receive-pack that ran no hook of ours would move it.
    await gitOk(dir, 'push', '-q', urlOf(alice), `${moved}:refs/heads/staging`)
    const hook = await pushHook(s.deps, gitOfRow(s.deps, { ownerName: 'alice', name: 'guarded' }))
    try {
      await hook.arm([{ ref: 'refs/heads/main', old: start, new: moved, branch: 'main', ruleForce: false, mayPush: true, mayForce: false, merge: null } as any])
      await gitOk(gitDir(), 'update-ref', 'refs/heads/main', moved, start)
      expect(await hook.undoUnjudged()).toEqual(['refs/heads/main'])
      expect(await gitOk(gitDir(), 'rev-parse', 'refs/heads/main')).toBe(start)
    } finally {
      await hook.dispose()
    }
    await gitOk(dir, 'reset', '-q', '--hard', start)
  })

  test('warren doctor reports a missing hook and --fix writes it again', async () => {
    const script = readFileSync(hookPath(), 'utf8')
    rmSync(hookPath())
    const found = (await doctor(s.deps.config, { fix: false, timeoutMs: 60_000 })).checks.find((c) => c.name === 'push hooks')!
    expect(found.ok).toBe(false)
    expect(found.details.join('\n')).toContain(join('hooks', 'channel-2', 'pre-receive'))
    const fixed = (await doctor(s.deps.config, { fix: true, timeoutMs: 60_000 })).checks.find((c) => c.name === 'push hooks')!
    expect(fixed.fixed.join('\n')).toContain('written again')
    expect(readFileSync(hookPath(), 'utf8')).toBe(script)
    expect(statSync(hookPath()).mode & 0o777).toBe(0o755)
    expect((await doctor(s.deps.config, { fix: false, timeoutMs: 60_000 })).checks.find((c) => c.name === 'push hooks')!.ok).toBe(true)
  })
})

describe('records against git', () => {
  test('the same refs read again (new inodes, as after a restore) leave updated_at and count as unchanged', async () => {
    await s.deps.db.update(repositories).set({ updatedUnix: 1_000_000 }).where(eq(repositories.id, repoId))
    // HEAD and the ref files rewritten as they were (new inodes): the fingerprint differs, the refs do not.
    for (const rel of ['HEAD', 'refs/heads/main']) {
      const path = join(gitDir(), rel)
      if (!existsSync(path)) continue
      copyFileSync(path, `${path}.copy`)
      renameSync(`${path}.copy`, path)
    }
    const reconciled = await reconcileRepositories(s.deps)
    expect(reconciled.updated).toBe(0)
    const row = (await s.deps.db.select().from(repositories).where(eq(repositories.id, repoId)))[0]!
    expect(row.updatedUnix).toBe(1_000_000)
  })

  test('doctor --fix checks git first: a broken ref is reported, never recorded as a push or a deletion', async () => {
    const start = await tip('main')
    await gitOk(dir, 'push', '-q', urlOf(alice), `${start}:refs/heads/other`)
    const before = await recordedRefs()
    expect(before['refs/heads/other']).toBe(start)
    writeFileSync(join(gitDir(), 'refs', 'heads', 'other'), `${'1234567'.repeat(5)}12345\n`)
    const report = await doctor(s.deps.config, { fix: true, timeoutMs: 60_000 })
    const health = report.checks.find((c) => c.name.startsWith('repository health'))!
    expect(health.ok).toBe(false)
    expect(health.details.join('\n')).toContain('alice/guarded.git')
    expect(health.details.join('\n')).toContain('not brought in line with git')
    expect(await recordedRefs()).toEqual(before)
    rmSync(join(gitDir(), 'refs', 'heads', 'other'))
    await gitOk(gitDir(), 'update-ref', 'refs/heads/other', start).catch(() => {})
  })
})

describe('a database migrated by a newer Warren', () => {
  test('is refused at open, on either database', async () => {
    const future = Date.UTC(2099, 0, 1)
    if (s.deps.db.$runtime.dialect === 'postgres') {
      const sql = new Bun.SQL(s.deps.config.databaseUrl!)
      await sql.unsafe(`insert into drizzle.__drizzle_migrations (hash, created_at) values ('from-the-future', ${future})`)
      await sql.close()
    } else sqliteOf(s.deps.db, 'the test').run(`insert into __drizzle_migrations (hash, created_at) values ('from-the-future', ${future})`)
    let refused: unknown = null
    try {
      const deps = await createDeps(s.deps.config)
      await closeDatabase(deps.db)
    } catch (e) {
      refused = e
    }
    expect(String(refused)).toContain('migrated by a newer Warren')
  })
})
