import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, renameSync, rmSync, utimesSync, writeFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { folderMoves, hookTasks, pendingPushes, repositories } from '../src/db/schema'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { renderWorkersAlive } from '../src/modules/markdown/service'
import { startReceiver, until } from './webhook-receiver'
import { eventsOfRepo } from '../src/events/outbox'
import { repoPath } from '../src/git/run'
import { beginPush, reconcilePendingPushes } from '../src/push'
import { startRepositorySweep, type SweepResult } from '../src/jobs/repository-sweep'
import { startTestServer } from './helpers'
import { gitOk, oneCommitRepo } from './git-fixture'
import { sqlitePlanOf, statementRecorder } from './query-counter'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

async function workRepo() {
  const dir = await oneCommitRepo()
  dirs.push(dir)
  return dir
}

/** Runs the background sweep to its end (small batches, so several steps run). */
function sweep(s: Awaited<ReturnType<typeof startTestServer>>, startedAt: number): Promise<SweepResult> {
  return new Promise((resolve) => startRepositorySweep(s.deps, { startedAt, batch: 2, pauseMs: 1, delayMs: 0, onDone: resolve }))
}

describe('start-up repairs bounded by what was under way, the rest swept in the background', () => {
  test('a pending push a crash left is settled at start; a repository changed outside Warren is brought in line by the sweep', async () => {
    const s = await startTestServer()
    try {
      const bob = await s.user('bob')
      const crashed = (await s.post('/user/repos', { name: 'crashed' }, { token: bob.token })).body
      const byHand = (await s.post('/user/repos', { name: 'by-hand' }, { token: bob.token })).body
      for (let i = 0; i < 3; i++) await s.post('/user/repos', { name: `quiet-${i}`, auto_init: true }, { token: bob.token })
      // A first sweep records the refs of the repositories made with a commit (their first record).
      expect(await sweep(s, Date.now())).toMatchObject({ checked: 5, missing: 0, leftovers: 0 })
      const dir = await workRepo()
      // A push killed mid-way: the pending row written, git moved, nothing recorded.
      await beginPush(s.deps, crashed.id, bob.user.id, null)
      await gitOk(dir, 'push', '-q', repoPath(s.dataDir, 'bob', 'crashed'), 'main')
      // git run by hand while Warren was stopped: no pending push at all.
      await gitOk(dir, 'push', '-q', repoPath(s.dataDir, 'bob', 'by-hand'), 'main')

      // Start-up: only the repository with a pending push is read, and it is settled.
      expect(await reconcilePendingPushes(s.deps)).toMatchObject({ checked: 1, updated: 1 })
      expect(await s.deps.db.select().from(pendingPushes)).toEqual([])
      expect((await s.get('/repos/bob/crashed', { token: bob.token })).body).toMatchObject({ empty: false, default_branch: 'main' })
      const events = (await eventsOfRepo(s.deps.db, crashed.id)).filter((e) => e.kind === 'push')
      expect(events.map((e) => e.actorId)).toEqual([bob.user.id])
      expect((await s.get('/repos/bob/by-hand', { token: bob.token })).body).toMatchObject({ empty: true })

      // The sweep, later, reads every repository and brings the changed one in line.
      const swept = await sweep(s, Date.now())
      expect(swept).toEqual({ checked: 5, updated: 1, missing: 0, leftovers: 0, deleted: 0, unadopted: 0, attachmentsRemoved: 0, attachmentsMissing: 0, avatarsRemoved: 0, packageFilesRemoved: 0, lfsObjectsRemoved: 0 })
      expect((await s.get('/repos/bob/by-hand', { token: bob.token })).body).toMatchObject({ empty: false, default_branch: 'main' })
      // Nothing changed since: a second sweep syncs nothing.
      expect(await sweep(s, Date.now())).toMatchObject({ checked: 5, updated: 0 })
      // A repository still being made is passed over; the batches are read by id's range (SQLite's
      // plan: no index by status, which held every repository, and no sort at each batch).
      const making = (await s.post('/user/repos', { name: 'making' }, { token: bob.token })).body
      await s.deps.db.update(repositories).set({ status: 'creating' }).where(eq(repositories.id, making.id))
      const sent = statementRecorder(s.deps.db)
      let again!: SweepResult
      const reads = await sent.during(async () => (again = await sweep(s, Date.now())))
      expect(again).toMatchObject({ checked: 5, updated: 0, missing: 0 })
      if (s.deps.db.$runtime.dialect === 'sqlite') {
        const batchRead = reads.find((text) => /^select "id", "owner_name", "name", "status" from "repositories" where "repositories"."id" > \?/.test(text))
        expect(batchRead).toBeDefined()
        expect(sqlitePlanOf(s.deps.db, batchRead!)).toEqual(['SEARCH repositories USING INTEGER PRIMARY KEY (rowid>?)'])
      }
    } finally {
      await s.stop()
    }
  })

  test('the sweep removes what a killed git left before the process started, never what a running git writes now, and reports a missing folder', async () => {
    const s = await startTestServer()
    try {
      const bob = await s.user('bob')
      await s.post('/user/repos', { name: 'kept', auto_init: true }, { token: bob.token })
      await s.post('/user/repos', { name: 'gone', auto_init: true }, { token: bob.token })
      await sweep(s, Date.now())
      const gitDir = repoPath(s.dataDir, 'bob', 'kept')
      const old = join(gitDir, 'objects', 'tmp_objdir-incoming-old')
      const fresh = join(gitDir, 'objects', 'tmp_objdir-incoming-fresh')
      const oldPack = join(gitDir, 'objects', 'pack', 'tmp_pack_old')
      mkdirSync(old, { recursive: true })
      mkdirSync(fresh, { recursive: true })
      writeFileSync(oldPack, 'x')
      const startedAt = Date.now()
      const past = new Date(startedAt - 60_000)
      utimesSync(old, past, past)
      utimesSync(oldPack, past, past)
      const future = new Date(startedAt + 60_000)
      utimesSync(fresh, future, future)
      rmSync(repoPath(s.dataDir, 'bob', 'gone'), { recursive: true })

      expect(await sweep(s, startedAt)).toEqual({ checked: 2, updated: 0, missing: 1, leftovers: 2, deleted: 0, unadopted: 0, attachmentsRemoved: 0, attachmentsMissing: 0, avatarsRemoved: 0, packageFilesRemoved: 0, lfsObjectsRemoved: 0 })
      expect(existsSync(old)).toBe(false)
      expect(existsSync(oldPack)).toBe(false)
      expect(existsSync(fresh)).toBe(true)
      // Reading the repository whose folder is gone is answered in the API's shape as a folder
      // moved or removed from under the request (503, lib/errors.ts folderGone), and the server
      // goes on: not a crash in the object reader.
      const read = await s.get('/repos/bob/gone/contents/README.md', { token: bob.token })
      expect([read.status, read.body.message]).toEqual([503, 'The repository was moved or deleted while this request was answered; try again'])
      expect((await s.get('/repos/bob/kept/contents/README.md', { token: bob.token })).status).toBe(200)
    } finally {
      await s.stop()
    }
  })

  test("the sweep removes a deletion's folders a crash left before the start, never one a deletion works on now; a folder no repository accounts for stays", async () => {
    const s = await startTestServer()
    try {
      const bob = await s.user('bob')
      await s.post('/user/repos', { name: 'real', auto_init: true }, { token: bob.token })
      const trash = join(s.dataDir, 'repositories', '.deleted')
      // A deletion a crash interrupted after its commit: its folder in .deleted/, there before the start.
      const crashed = join(trash, '41-a.git')
      await gitOk(s.dataDir, 'init', '-q', '--bare', crashed)
      // A deletion under way (its intent written, its transaction not committed): a failure moves it back.
      const pending = join(trash, '42-b.git')
      await gitOk(s.dataDir, 'init', '-q', '--bare', pending)
      await s.deps.db.insert(folderMoves).values({ fromPath: 'bob/b.git', toPath: '.deleted/42-b.git', createdUnix: 1 })
      // A git folder without a row, put there by hand: unadopted, as in Gitea.
      const unadopted = repoPath(s.dataDir, 'bob', 'by-hand')
      await gitOk(s.dataDir, 'init', '-q', '--bare', unadopted)
      // Creating a repository onto it is refused while it is there (an administrator adopts it).
      expect((await s.post('/user/repos', { name: 'by-hand' }, { token: bob.token })).status).toBe(409)
      // (The kernel's change times come from a coarse clock: a margin on either side of the start.)
      await Bun.sleep(50)
      const startedAt = Date.now()
      await Bun.sleep(50)
      // A deletion since the start (another process's): its folder renamed into .deleted/.
      const recent = join(trash, '43-c.git')
      await gitOk(s.dataDir, 'init', '-q', '--bare', join(s.dataDir, 'elsewhere.git'))
      renameSync(join(s.dataDir, 'elsewhere.git'), recent)

      expect(await sweep(s, startedAt)).toMatchObject({ checked: 1, missing: 0, leftovers: 0, deleted: 1, unadopted: 1 })
      expect(existsSync(crashed)).toBe(false)
      expect(existsSync(pending)).toBe(true)
      expect(existsSync(recent)).toBe(true)
      expect(existsSync(join(unadopted, 'HEAD'))).toBe(true)
      expect(existsSync(repoPath(s.dataDir, 'bob', 'real'))).toBe(true)
      expect((await s.post('/user/repos', { name: 'by-hand' }, { token: bob.token })).status).toBe(409)
    } finally {
      await s.stop()
    }
  })

  test('a stopped sweep ends at once and leaves nothing half done', async () => {
    const s = await startTestServer()
    try {
      const bob = await s.user('bob')
      for (let i = 0; i < 4; i++) await s.post('/user/repos', { name: `r${i}`, auto_init: true }, { token: bob.token })
      let finished = false
      const job = startRepositorySweep(s.deps, { startedAt: Date.now(), batch: 1, pauseMs: 60_000, delayMs: 0, onDone: () => (finished = true) })
      await job.stop()
      expect(finished).toBe(false)
    } finally {
      await s.stop()
    }
  })
})

describe('worker threads start on first use and end when idle', () => {
  test('a markdown render after the workers ended for idleness starts a new one and renders', async () => {
    const s = await startTestServer({ workerIdleMs: 300 })
    try {
      expect(renderWorkersAlive(s.config)).toBe(0)
      const first = await s.request('POST', '/markdown/raw', { raw: '# One', headers: { 'content-type': 'text/plain' } })
      expect(first.status).toBe(200)
      expect(first.text).toContain('<h1')
      expect(renderWorkersAlive(s.config)).toBe(1)
      await until(() => renderWorkersAlive(s.config) === 0, 'the idle render worker ends')
      const again = await s.request('POST', '/markdown/raw', { raw: '**two**', headers: { 'content-type': 'text/plain' } })
      expect(again.status).toBe(200)
      expect(again.text).toContain('<strong>two</strong>')
    } finally {
      await s.stop()
    }
  })

  test('the webhook thread starts when there is work, delivers, ends when idle, and starts again for the next event', async () => {
    const s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05, webhookDeliverTimeout: 5 })
    const rx = await startReceiver()
    const worker = startWebhookWorker(s.deps, { pollMs: 10, idleMs: 300 })
    try {
      const alice = await s.user('alice')
      expect((await s.post('/user/repos', { name: 'hooked', auto_init: true }, { token: alice.token })).status).toBe(201)
      // Whatever the set-up recorded is taken, then the thread ends.
      await until(() => !worker.running, 'the thread ends once the outbox is taken')
      const hook = await s.post('/repos/alice/hooked/hooks', { type: 'gitea', config: { url: rx.url('/hooked'), content_type: 'json' }, events: ['issues'], active: true }, { token: alice.token })
      expect(hook.status).toBe(201)
      await until(() => !worker.running, 'the thread is idle again')

      expect((await s.post('/repos/alice/hooked/issues', { title: 'first' }, { token: alice.token })).status).toBe(201)
      const first = await until(() => rx.received.find((r) => r.payload?.issue?.title === 'first'), 'the first issue delivered')
      expect(first.payload.action).toBe('opened')
      await until(() => !worker.running, 'the thread ends when idle')
      expect(await s.deps.db.select().from(hookTasks).where(eq(hookTasks.isDelivered, false))).toEqual([])

      expect((await s.post('/repos/alice/hooked/issues', { title: 'second' }, { token: alice.token })).status).toBe(201)
      await until(() => rx.received.find((r) => r.payload?.issue?.title === 'second'), 'the second issue delivered by a new thread')
      // A test delivery (the API wakes the worker) starts the thread too.
      await until(() => !worker.running, 'idle again')
      expect((await s.post(`/repos/alice/hooked/hooks/${hook.body.id}/tests`, {}, { token: alice.token })).status).toBe(204)
      await until(() => rx.received.length >= 3, 'the test delivery')
      expect(rx.received.filter((r) => r.payload?.issue?.title === 'first')).toHaveLength(1)
    } finally {
      await worker.stop()
      rx.stop()
      await s.stop()
    }
  })
})
