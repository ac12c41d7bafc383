import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { mirrors, repositories } from '../src/db/schema'
import { eventsOfRepo } from '../src/events/outbox'
import { repoPath } from '../src/git/run'
import { mirrorUpdatesSettled, queueDueMirrors, queueMirrorUpdate, stopMirrorUpdates } from '../src/modules/migrations/mirrors'
import { startMirrorScheduler } from '../src/jobs/mirror-scheduler'
import { nowUnix } from '../src/lib/time'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { sqlitePlanOf, statementRecorder } from './query-counter'
import { DIALECT } from '../src/db/dialect'
import { git, gitOk, oneCommitRepo, refsOf, remoteUrl } from './git-fixture'

let source: TestServer
let s: TestServer
let carol: TestUser
let alice: TestUser
let bob: TestUser
let work: string // carol's working copy of carol/proj (private)

beforeAll(async () => {
  source = await startTestServer()
  s = await startTestServer({ migrationsAllowLocalNetworks: true })
  carol = await source.user('carol')
  alice = await s.user('alice')
  bob = await s.user('bob')
  expect((await source.post('/user/repos', { name: 'proj', private: true }, { token: carol.token })).status).toBe(201)
  work = await oneCommitRepo()
  await gitOk(work, 'push', '-q', carolUrl(), 'main')
})
afterAll(async () => {
  await s?.stop()
  await source?.stop()
  rmSync(work, { recursive: true, force: true })
})

const carolUrl = () => remoteUrl(source.url, 'carol/proj.git', carol.name, carol.password)

async function commitAndPush(file: string): Promise<string> {
  writeFileSync(join(work, file), `${file}\n`)
  await gitOk(work, 'add', file)
  await gitOk(work, 'commit', '-q', '-m', file)
  await gitOk(work, 'push', '-q', carolUrl(), 'main')
  return gitOk(work, 'rev-parse', 'HEAD')
}

async function migrateMirror(name: string, extra: object = {}) {
  const r = await s.post(
    '/repos/migrate',
    { clone_addr: `${source.url}/carol/proj.git`, auth_username: carol.name, auth_password: carol.password, uid: alice.user.id, repo_name: name, mirror: true, ...extra },
    { token: alice.token },
  )
  expect(r.status).toBe(201)
  return r.body
}

const mainOf = async (name: string) => (await refsOf(repoPath(s.dataDir, 'alice', name)))['refs/heads/main']

describe('pull mirrors', () => {
  test('mirror-sync fetches new commits; the moved ref is a push event in the owner\'s name', async () => {
    const repo = await migrateMirror('mirror', { mirror_interval: '10m' })
    expect(repo.mirror).toBe(true)
    const row = (await s.deps.db.select().from(mirrors).where(eq(mirrors.repoId, repo.id)))[0]!
    expect(row.interval).toBe(600)
    const before = await mainOf('mirror')
    const head = await commitAndPush('two.txt')
    expect(await mainOf('mirror')).toBe(before)
    const r = await s.post('/repos/alice/mirror/mirror-sync', undefined, { token: alice.token })
    expect(r.status).toBe(200)
    await mirrorUpdatesSettled(s.deps)
    expect(await mainOf('mirror')).toBe(head)
    const pushes = (await eventsOfRepo(s.deps.db, repo.id)).filter((e) => e.kind === 'push')
    expect(pushes.map((e) => [e.actorId, e.payload])).toEqual([[alice.user.id, { ref: 'refs/heads/main', before, after: head }]])
    const after = (await s.deps.db.select().from(mirrors).where(eq(mirrors.repoId, repo.id)))[0]!
    expect(after.lastError).toBe('')
    expect(after.updatedUnix).toBeGreaterThanOrEqual(row.updatedUnix)
    // The password stays out of the mirror's git config after updates too.
    expect(readFileSync(join(repoPath(s.dataDir, 'alice', 'mirror'), 'config'), 'utf8')).not.toContain(carol.password)
  })

  test('a mirror migrated with its wiki fetches the wiki on each update too', async () => {
    const page = (title: string, text: string) => source.post('/repos/carol/proj/wiki/new', { title, content_base64: btoa(text) }, { token: carol.token })
    expect((await page('Home', 'first')).status).toBe(201)
    await migrateMirror('wiki-mirror', { wiki: true })
    const titles = async () => ((await s.get('/repos/alice/wiki-mirror/wiki/pages', { token: alice.token })).body as any[]).map((p) => p.title).sort()
    expect(await titles()).toEqual(['Home'])
    expect((await page('Later', 'second')).status).toBe(201)
    expect((await s.post('/repos/alice/wiki-mirror/mirror-sync', undefined, { token: alice.token })).status).toBe(200)
    await mirrorUpdatesSettled(s.deps)
    expect(await titles()).toEqual(['Home', 'Later'])
    // A mirror made without the wiki stays without one.
    await migrateMirror('plain-mirror')
    expect((await s.post('/repos/alice/plain-mirror/mirror-sync', undefined, { token: alice.token })).status).toBe(200)
    await mirrorUpdatesSettled(s.deps)
    expect((await s.get('/repos/alice/plain-mirror/wiki/pages', { token: alice.token })).status).toBe(404)
  })

  test('the scheduler updates a mirror once its interval has passed, not before; deleted branches are pruned', async () => {
    await migrateMirror('timed', { mirror_interval: '1h0m0s' })
    const now = nowUnix()
    await gitOk(work, 'push', '-q', carolUrl(), 'main:extra')
    const head = await commitAndPush('three.txt')
    const scheduler = startMirrorScheduler(s.deps, { tickMs: 3_600_000 })
    try {
      expect(await scheduler.tick(now + 60)).toBe(0)
      await mirrorUpdatesSettled(s.deps)
      expect(await mainOf('timed')).not.toBe(head)
      expect(await scheduler.tick(now + 3601)).toBeGreaterThanOrEqual(1)
      await mirrorUpdatesSettled(s.deps)
      expect(await mainOf('timed')).toBe(head)
      expect((await refsOf(repoPath(s.dataDir, 'alice', 'timed')))['refs/heads/extra']).toBe((await refsOf(repoPath(source.dataDir, 'carol', 'proj')))['refs/heads/extra'])
      // The next update is an interval after that one.
      const row = (await s.deps.db.select().from(mirrors).innerJoin(repositories, eq(repositories.id, mirrors.repoId)).where(eq(repositories.lowerName, 'timed')))[0]!
      expect(row.mirrors.nextUpdateUnix).toBe(now + 3601 + 3600)
      await gitOk(work, 'push', '-q', carolUrl(), ':extra')
      expect(await scheduler.tick(now + 3700)).toBe(0)
      expect(await scheduler.tick(now + 2 * 3601)).toBeGreaterThanOrEqual(1)
      await mirrorUpdatesSettled(s.deps)
      expect((await refsOf(repoPath(s.dataDir, 'alice', 'timed')))['refs/heads/extra']).toBeUndefined()
    } finally {
      await scheduler.stop()
    }
  })

  test('interval "0" turns periodic updates off; mirror-sync still works', async () => {
    const repo = await migrateMirror('manual', { mirror_interval: '0' })
    const row = (await s.deps.db.select().from(mirrors).where(eq(mirrors.repoId, repo.id)))[0]!
    expect([row.interval, row.nextUpdateUnix]).toEqual([0, 0])
    const head = await commitAndPush('four.txt')
    await queueDueMirrors(s.deps, nowUnix() + 10 * 365 * 86400)
    await mirrorUpdatesSettled(s.deps)
    expect(await mainOf('manual')).not.toBe(head)
    expect((await s.post('/repos/alice/manual/mirror-sync', undefined, { token: alice.token })).status).toBe(200)
    await mirrorUpdatesSettled(s.deps)
    expect(await mainOf('manual')).toBe(head)
  })

  test("the scheduler's look for due mirrors, pull and push, starts from the mirrors' index, not every ready repository (SQLite's plans)", async () => {
    if (DIALECT !== 'sqlite') return
    const sent = statementRecorder(s.deps.db)
    const reads = await sent.during(() => queueDueMirrors(s.deps, 0))
    const due = reads.filter((text) => /^select .* from "(push_)?mirrors" inner join "repositories"/.test(text))
    expect(due.length).toBe(2)
    for (const text of due) {
      const plan = sqlitePlanOf(s.deps.db, text)
      expect(plan.some((step) => /^SEARCH (push_)?mirrors USING (COVERING )?INDEX (push_)?mirrors_next_update_idx/.test(step))).toBe(true)
      expect(plan.filter((step) => /repositories_(list|name_order)_idx|^SCAN repositories/.test(step))).toEqual([])
    }
  })

  test('mirror-sync: 400 for a repository that is no mirror, 403 without write access, 404 for an unknown one', async () => {
    expect((await s.post('/user/repos', { name: 'plain' }, { token: alice.token })).status).toBe(201)
    const plain = await s.post('/repos/alice/plain/mirror-sync', undefined, { token: alice.token })
    expect(plain.status).toBe(400)
    expect(plain.body.message).toBe('Repository is not a mirror')
    expect((await s.post('/repos/alice/mirror/mirror-sync', undefined, { token: bob.token })).status).toBe(403)
    expect((await s.post('/repos/alice/nothing/mirror-sync', undefined, { token: alice.token })).status).toBe(404)
  })

  test('a failing update records its error without the password and keeps the mirror', async () => {
    const repo = await migrateMirror('broken')
    // Carol changes her password: the stored one no longer works.
    expect((await source.patch(`/admin/users/carol`, { password: 'a-brand-new-password-1', login_name: 'carol', email: 'carol@example.com', source_id: 0 }, { token: (await source.user('boss', { admin: true })).token })).status).toBe(200)
    expect((await s.post('/repos/alice/broken/mirror-sync', undefined, { token: alice.token })).status).toBe(200)
    await mirrorUpdatesSettled(s.deps)
    const row = (await s.deps.db.select().from(mirrors).where(eq(mirrors.repoId, repo.id)))[0]!
    expect(row.lastError).toMatch(/Authentication failed|failed/)
    expect(row.lastError).not.toContain(carol.password)
    carol.password = 'a-brand-new-password-1'
  })

  test('a push to a mirror is refused; deleting the mirror removes its mirror row', async () => {
    const dir = await oneCommitRepo()
    try {
      const r = await git(dir, 'push', '-q', remoteUrl(s.url, 'alice/mirror.git', alice.name, alice.password), 'main:pushed')
      expect(r.code).not.toBe(0)
      expect(r.stderr).toContain('403')
      expect((await refsOf(repoPath(s.dataDir, 'alice', 'mirror')))['refs/heads/pushed']).toBeUndefined()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    const repo = (await s.get('/repos/alice/mirror', { token: alice.token })).body
    expect((await s.del('/repos/alice/mirror', undefined, { token: alice.token })).status).toBe(204)
    expect(await s.deps.db.select().from(mirrors).where(eq(mirrors.repoId, repo.id))).toEqual([])
  })

  test('stopping drops queued updates and ends running ones at once', async () => {
    const other = await startTestServer({ migrationsAllowLocalNetworks: true, mirrorWorkers: 1 })
    try {
      const dave = await other.user('dave')
      const ids: number[] = []
      for (const name of ['m1', 'm2', 'm3']) {
        const r = await other.post(
          '/repos/migrate',
          { clone_addr: `${source.url}/carol/proj.git`, auth_username: carol.name, auth_password: carol.password, uid: dave.user.id, repo_name: name, mirror: true },
          { token: dave.token },
        )
        expect(r.status).toBe(201)
        ids.push(r.body.id)
      }
      const updated = () => Promise.all(ids.map(async (id) => (await other.deps.db.select().from(mirrors).where(eq(mirrors.repoId, id)))[0]!.updatedUnix))
      const before = await updated()
      for (const id of ids) await queueMirrorUpdate(other.deps, id, nowUnix() + 1)
      await stopMirrorUpdates(other.deps)
      // At most the one running update got to record anything; the two queued ones never ran.
      const changed = (await updated()).filter((u, i) => u !== before[i]).length
      expect(changed).toBeLessThanOrEqual(1)
    } finally {
      await other.stop()
    }
  })
})
