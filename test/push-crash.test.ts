import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { loadConfig } from '../src/config'
import { closeDatabase } from '../src/db/client'
import { openConfiguredDatabase } from '../src/deps'
import { pendingPushes, repositories } from '../src/db/schema'
import { eventsOfRepo } from '../src/events/outbox'
import { DEFAULT_GIT_LIMITS, repoPath } from '../src/git/run'
import { repositorySize } from '../src/git/refs'
import { readBranchAndTagRefs } from '../src/git/ref-state'
import { beginPush, finishPush, reconcileRepositories, syncRepositoryWithGit } from '../src/push'
import { startTestServer } from './helpers'
import { gitOk, oneCommitRepo, remoteUrl } from './git-fixture'
import { dropInBackground, SOURCES, startServe } from './process-helpers'
import { freshTestDatabase } from './test-database'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

async function workRepo() {
  const dir = await oneCommitRepo()
  dirs.push(dir)
  return dir
}

/** What git says: branches, HEAD's branch, emptiness and size (in KiB, as the API answers it). */
async function gitTruth(gitDir: string) {
  const branches = (await gitOk(gitDir, 'for-each-ref', '--format=%(refname:short)', 'refs/heads')).split('\n').filter(Boolean)
  const head = (await gitOk(gitDir, 'symbolic-ref', '--short', 'HEAD')).trim()
  const any = (await gitOk(gitDir, 'for-each-ref', 'refs/heads', 'refs/tags')) !== ''
  return { branches, head, empty: !any, size: Math.floor((await repositorySize({ gitDir, limits: DEFAULT_GIT_LIMITS })) / 1024) }
}

describe('start-up reconcile', () => {
  test('a push git accepted but Warren never recorded is found at start: metadata follows git, the events name the pusher', async () => {
    const s = await startTestServer()
    try {
      const bob = await s.user('bob')
      const created = await s.post('/user/repos', { name: 'lost' }, { token: bob.token })
      const gitDir = repoPath(s.dataDir, 'bob', 'lost')
      const dir = await workRepo()
      // What a push killed mid-way leaves: the pending row, the ref state the database knew, and git with the branch.
      await beginPush(s.deps, created.body.id, bob.user.id, null)
      await gitOk(dir, 'push', '-q', gitDir, 'main')
      expect((await s.get('/repos/bob/lost', { token: bob.token })).body).toMatchObject({ empty: true, default_branch: 'main', size: 0 })

      expect(await reconcileRepositories(s.deps, { settlePending: true })).toMatchObject({ checked: 1, updated: 1 })
      const truth = await gitTruth(gitDir)
      const meta = (await s.get('/repos/bob/lost', { token: bob.token })).body
      expect(meta).toMatchObject({ empty: false, default_branch: 'main', size: truth.size })
      expect(truth.head).toBe('main')
      expect(await (await fetch(`${s.url}/bob/lost/raw/branch/main/a.txt`)).text()).toBe('one\n')
      const pushes = (await eventsOfRepo(s.deps.db, created.body.id)).filter((e) => e.kind === 'push' || e.kind === 'ref.created')
      expect(pushes.map((e) => [e.kind, e.actorId])).toEqual([
        ['ref.created', bob.user.id],
        ['push', bob.user.id],
      ])
      expect(await s.deps.db.select().from(pendingPushes)).toEqual([])
      // Nothing changed since: the next reconcile runs no git and writes nothing.
      expect(await reconcileRepositories(s.deps, { settlePending: true })).toMatchObject({ checked: 1, updated: 0 })

      // A pusher whose pending push a repair settled while it ran (its claim lost with its lock
      // connection): what it moved is recorded, on no other pending push's pusher.
      const other = await beginPush(s.deps, created.body.id, bob.user.id, null)
      await gitOk(dir, 'push', '-q', gitDir, 'main:refs/heads/late')
      expect(await syncRepositoryWithGit(s.deps, created.body.id, { pushId: other + 1000 })).toBe('updated')
      const late = (await eventsOfRepo(s.deps.db, created.body.id)).filter((e) => e.kind === 'ref.created').at(-1)!
      expect([late.actorId, late.payload.ref]).toEqual([null, 'late'])
      expect(await finishPush(s.deps, created.body.id, other)).toBe('updated')
      expect(await s.deps.db.select().from(pendingPushes)).toEqual([])
    } finally {
      await s.stop()
    }
  })
})

/**
 * `warren serve` from the sources as a child process (so it can be killed with SIGKILL), on the
 * test's database: the SQLite file in `dataDir`, or the PostgreSQL database at `databaseUrl`.
 */
const serve = (dataDir: string, databaseUrl: string | null) =>
  startServe(SOURCES, dataDir, {
    WARREN_ADMIN_USER: 'root',
    WARREN_ADMIN_PASSWORD: 'pw-root-secret',
    WARREN_ADMIN_EMAIL: 'root@example.com',
    ...(databaseUrl ? { WARREN_DATABASE_URL: databaseUrl } : {}),
  })

/** Waits until no git process works in `gitDir` any more (one orphaned by the killed server finishes on its own). */
async function gitSettled(gitDir: string) {
  for (let i = 0; i < 200; i++) {
    const busy = readdirSync('/proc').some((p) => {
      if (!/^\d+$/.test(p)) return false
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(gitDir)
      } catch {
        return false
      }
    })
    if (!busy) return
    await Bun.sleep(25)
  }
}

describe('a folder moved away under a sync', () => {
  test("the refs of a repository whose folder is not there read as unknown, not as none (a sync would record every branch deleted)", async () => {
    const s = await startTestServer()
    try {
      const bob = await s.user('bob')
      expect((await s.post('/user/repos', { name: 'moving', auto_init: true }, { token: bob.token })).status).toBe(201)
      const gitDir = repoPath(s.dataDir, 'bob', 'moving')
      const git = { gitDir, limits: DEFAULT_GIT_LIMITS }
      expect(Object.keys((await readBranchAndTagRefs(git))!)).toEqual(['refs/heads/main'])
      // A rename or transfer moves the folder first, then writes the rows: a sync that read the
      // row before sees the old path empty.
      renameSync(gitDir, `${gitDir}.moved`)
      expect(await readBranchAndTagRefs(git)).toBeNull()
      renameSync(`${gitDir}.moved`, gitDir)
      expect(Object.keys((await readBranchAndTagRefs(git))!)).toEqual(['refs/heads/main'])
    } finally {
      await s.stop()
    }
  })
})

describe('kill -9 during pushes', () => {
  test('after each crash and restart, the API says what git says', async () => {
    const data = mkdtempSync(join(tmpdir(), 'warren-crash-'))
    dirs.push(data)
    const database = await freshTestDatabase()
    const auth = { authorization: 'Basic ' + Buffer.from('root:pw-root-secret').toString('base64'), 'content-type': 'application/json' }
    let server = await serve(data, database.url)
    const made = await fetch(`${server.url}/api/v1/user/repos`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'crashy' }) })
    expect(made.status).toBe(201)
    const repoId = (await made.json()).id as number
    const gitDir = repoPath(data, 'root', 'crashy')
    const dir = await workRepo()
    try {
      for (let round = 0; round < 10; round++) {
        if (round > 0) {
          writeFileSync(join(dir, `f${round}.txt`), `round ${round}\n`.repeat(200 * round))
          await gitOk(dir, 'add', '-A')
          await gitOk(dir, 'commit', '-q', '-m', `round ${round}`)
        }
        const url = remoteUrl(server.url, 'root/crashy.git', 'root', 'pw-root-secret')
        const push = Bun.spawn(['git', 'push', '-q', url, `main:b${round}`, ...(round % 3 === 0 ? ['main'] : [])], {
          cwd: dir,
          env: { PATH: process.env.PATH ?? '', HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' },
          stdout: 'ignore',
          stderr: 'ignore',
        })
        await Bun.sleep(Math.floor(Math.random() * 250))
        server.proc.kill(9)
        await server.proc.exited
        push.kill(9)
        await push.exited
        await gitSettled(gitDir)

        server = await serve(data, database.url)
        const truth = await gitTruth(gitDir)
        const meta = await (await fetch(`${server.url}/api/v1/repos/root/crashy`, { headers: auth })).json()
        const branches = await (await fetch(`${server.url}/api/v1/repos/root/crashy/branches`, { headers: auth })).json()
        expect({ round, empty: meta.empty, size: meta.size, branches: branches.map((b: any) => b.name).sort() }).toEqual({
          round,
          empty: truth.empty,
          size: truth.size,
          branches: [...truth.branches].sort(),
        })
        if (!truth.empty) expect({ round, default: meta.default_branch }).toEqual({ round, default: truth.head })
      }
    } finally {
      server.proc.kill(9)
      await server.proc.exited
    }
    // Every branch git has was announced once, by the pusher, with nothing left pending.
    const db = await openConfiguredDatabase(loadConfig({}, { dataDir: data, databaseUrl: database.url }))
    try {
      const created = (await eventsOfRepo(db, repoId, 0, 500)).filter((e) => e.kind === 'ref.created')
      const truth = await gitTruth(gitDir)
      expect(created.map((e) => e.payload.ref).sort()).toEqual([...truth.branches].sort())
      expect(new Set(created.map((e) => e.actorId))).toEqual(new Set(truth.branches.length ? [1] : []))
      expect(await db.select().from(pendingPushes)).toEqual([])
      expect((await db.select().from(repositories).where(eq(repositories.id, repoId)))[0]!.isEmpty).toBe(truth.empty)
    } finally {
      await closeDatabase(db)
      dropInBackground(database)
    }
  }, 180_000)
})
