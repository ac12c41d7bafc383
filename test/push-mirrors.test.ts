import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { pushMirrors } from '../src/db/schema'
import { repoPath } from '../src/git/run'
import { mirrorUpdatesSettled, queueDueMirrors } from '../src/modules/migrations/mirrors'
import { startPushMirrorer } from '../src/jobs/push-mirrorer'
import { nowUnix } from '../src/lib/time'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, oneCommitRepo, remoteUrl } from './git-fixture'
import { logOutput } from './log-capture'

let s: TestServer
let alice: TestUser // administers alice/proj (public): the mirrored repository
let bob: TestUser // may write to alice/proj, not administer it
let carol: TestUser // owns the private targets the mirrors push to
let work: string // alice's working copy of alice/proj

beforeAll(async () => {
  // One push at a time: two mirrors of the test push to one target, and git refuses a push racing another.
  s = await startTestServer({ migrationsAllowLocalNetworks: true, mirrorWorkers: 1 })
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  expect((await s.post('/user/repos', { name: 'proj' }, { token: alice.token })).status).toBe(201)
  for (const name of ['target', 'target2', 'target3']) expect((await s.post('/user/repos', { name, private: true }, { token: carol.token })).status).toBe(201)
  expect((await s.put('/repos/alice/proj/collaborators/bob', { permission: 'write' }, { token: alice.token })).status).toBe(204)
  work = await oneCommitRepo()
  await gitOk(work, 'tag', 'v1')
  await gitOk(work, 'branch', 'topic')
  await gitOk(work, 'push', '-q', aliceUrl(), 'main', 'topic', 'v1')
  expect((await s.patch('/repos/alice/proj', { default_branch: 'main' }, { token: alice.token })).status).toBe(200)
})
afterAll(async () => {
  await s?.stop()
  if (work) rmSync(work, { recursive: true, force: true })
})

const aliceUrl = () => remoteUrl(s.url, 'alice/proj.git', alice.name, alice.password)
const target = (name: string) => `${s.url}/carol/${name}.git`

/** Every branch and tag of a repository on the server: ref → object id. */
async function refsIn(owner: string, name: string): Promise<Record<string, string>> {
  const out = await gitOk(repoPath(s.dataDir, owner, name), 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags')
  return Object.fromEntries(out.split('\n').filter(Boolean).map((line) => line.split(' ') as [string, string]))
}

async function commitAndPush(file: string): Promise<string> {
  writeFileSync(join(work, file), `${file}\n`)
  await gitOk(work, 'add', file)
  await gitOk(work, 'commit', '-q', '-m', file)
  await gitOk(work, 'push', '-q', aliceUrl(), 'main')
  return gitOk(work, 'rev-parse', 'HEAD')
}

async function addMirror(body: Record<string, unknown>, token = alice.token) {
  return await s.post('/repos/alice/proj/push_mirrors', body, { token })
}

const names: Record<string, string> = {}

describe('push mirrors', () => {
  test('create, list and get: Gitea\'s record, the remote name generated, no credentials anywhere', async () => {
    const r = await addMirror({ remote_address: target('target'), remote_username: carol.name, remote_password: carol.password, interval: '8h', sync_on_commit: false })
    expect(r.status).toBe(200)
    expect(r.body.remote_name).toMatch(/^remote_mirror_[A-Za-z0-9]{10}$/)
    expect(r.body).toEqual({
      repo_name: 'proj',
      remote_name: r.body.remote_name,
      remote_address: target('target'),
      created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      last_update: null,
      last_error: '',
      interval: '8h0m0s',
      sync_on_commit: false,
      public_key: '',
    })
    names.timed = r.body.remote_name
    // Credentials in the URL are taken out of the address, kept apart as explicit ones are.
    const inUrl = await addMirror({ remote_address: remoteUrl(s.url, 'carol/target.git', carol.name, carol.password), interval: '0' })
    expect(inUrl.status).toBe(200)
    expect([inUrl.body.remote_address, inUrl.body.interval]).toEqual([target('target'), '0s'])
    names.manual = inUrl.body.remote_name

    const list = await s.get('/repos/alice/proj/push_mirrors', { token: alice.token })
    expect(list.status).toBe(200)
    expect(list.headers.get('x-total-count')).toBe('2')
    expect(list.body.map((m: any) => m.remote_name)).toEqual([names.timed, names.manual])
    const paged = await s.get('/repos/alice/proj/push_mirrors?limit=1&page=2', { token: alice.token })
    expect(paged.body.map((m: any) => m.remote_name)).toEqual([names.manual])
    const one = await s.get(`/repos/alice/proj/push_mirrors/${names.timed}`, { token: alice.token })
    expect(one.status).toBe(200)
    expect(one.body).toEqual(r.body)

    for (const text of [r.text, inUrl.text, list.text, one.text]) expect(text).not.toContain(carol.password)
    const rows = await s.deps.db.select().from(pushMirrors)
    expect(rows.length).toBe(2)
    for (const row of rows) {
      expect(row.authUsername).toBe(carol.name)
      expect(JSON.stringify(row)).not.toContain(carol.password)
    }
  })

  test('push_mirrors-sync pushes every branch and tag, and deletes those gone here', async () => {
    expect(await refsIn('carol', 'target')).toEqual({})
    const sync = await s.post('/repos/alice/proj/push_mirrors-sync', undefined, { token: alice.token })
    expect(sync.status).toBe(200)
    await mirrorUpdatesSettled(s.deps)
    const here = await refsIn('alice', 'proj')
    expect(Object.keys(here).sort()).toEqual(['refs/heads/main', 'refs/heads/topic', 'refs/tags/v1'])
    expect(await refsIn('carol', 'target')).toEqual(here)
    const record = (await s.get(`/repos/alice/proj/push_mirrors/${names.timed}`, { token: alice.token })).body
    expect(record.last_update).toMatch(/^\d{4}-/)
    expect(record.last_error).toBe('')

    // A branch and a tag deleted, another tag and a commit added: the remote follows (its default
    // branch, which git refuses to delete, made main first).
    expect((await s.patch('/repos/carol/target', { default_branch: 'main' }, { token: carol.token })).status).toBe(200)
    await gitOk(work, 'push', '-q', aliceUrl(), ':topic', ':refs/tags/v1')
    await gitOk(work, 'tag', 'v2')
    await commitAndPush('two.txt')
    await gitOk(work, 'push', '-q', aliceUrl(), 'v2')
    expect((await s.post('/repos/alice/proj/push_mirrors-sync', undefined, { token: alice.token })).status).toBe(200)
    await mirrorUpdatesSettled(s.deps)
    const now = await refsIn('alice', 'proj')
    expect(Object.keys(now).sort()).toEqual(['refs/heads/main', 'refs/tags/v2'])
    expect(await refsIn('carol', 'target')).toEqual(now)
    // No remote was configured in the mirrored repository: its git config holds no address or password.
    const config = readFileSync(join(repoPath(s.dataDir, 'alice', 'proj'), 'config'), 'utf8')
    expect(config).not.toContain(carol.password)
    expect(config).not.toContain('carol/target')
  })

  test('sync_on_commit: a real git push is mirrored by the outbox consumer; other mirrors wait for their interval', async () => {
    const r = await addMirror({ remote_address: target('target2'), remote_username: carol.name, remote_password: carol.password, interval: '0', sync_on_commit: true })
    expect([r.status, r.body.sync_on_commit]).toEqual([200, true])
    names.onCommit = r.body.remote_name
    const pusher = await startPushMirrorer(s.deps, { pollMs: 20 })
    try {
      const before = (await refsIn('carol', 'target'))['refs/heads/main']
      const head = await commitAndPush('three.txt')
      await pusher.drained()
      await mirrorUpdatesSettled(s.deps)
      expect((await refsIn('carol', 'target2'))['refs/heads/main']).toBe(head)
      expect((await refsIn('carol', 'target2'))['refs/tags/v2']).toBe((await refsIn('alice', 'proj'))['refs/tags/v2'])
      // The mirrors without sync_on_commit did not push.
      expect((await refsIn('carol', 'target'))['refs/heads/main']).toBe(before)

      // The scheduler: the 8h mirror is due once its interval has passed, the "0" ones never.
      const row = (await s.deps.db.select().from(pushMirrors).where(eq(pushMirrors.remoteName, names.timed!)))[0]!
      expect(await queueDueMirrors(s.deps, row.nextUpdateUnix - 1)).toBe(0)
      expect(await queueDueMirrors(s.deps, row.nextUpdateUnix)).toBe(1)
      await mirrorUpdatesSettled(s.deps)
      expect((await refsIn('carol', 'target'))['refs/heads/main']).toBe(head)
      const after = (await s.deps.db.select().from(pushMirrors).where(eq(pushMirrors.remoteName, names.timed!)))[0]!
      expect(after.nextUpdateUnix).toBe(row.nextUpdateUnix + 8 * 3600)
      expect(await queueDueMirrors(s.deps, nowUnix() + 10 * 365 * 86400)).toBe(1)
      await mirrorUpdatesSettled(s.deps)
    } finally {
      await pusher.stop()
    }
  })

  test('a failing push records git\'s error; the password is in no record and no log line', async () => {
    const r = await addMirror({ remote_address: target('target3'), remote_username: carol.name, remote_password: 'not-carols-password-xyz', interval: '0' })
    expect(r.status).toBe(200)
    const said = await logOutput(
      async () => {
        expect((await s.post('/repos/alice/proj/push_mirrors-sync', undefined, { token: alice.token })).status).toBe(200)
        await mirrorUpdatesSettled(s.deps)
      },
      (out) => out.includes('pushing to a push mirror failed'),
    )
    expect(said).toContain('pushing to a push mirror failed')
    expect(said).not.toContain('not-carols-password-xyz')
    expect(said).not.toContain(carol.password)
    const record = (await s.get(`/repos/alice/proj/push_mirrors/${r.body.remote_name}`, { token: alice.token })).body
    expect(record.last_error).toMatch(/Authentication failed/)
    expect(record.last_error).not.toContain('not-carols-password-xyz')
    expect(record.last_update).toMatch(/^\d{4}-/)
    expect(await refsIn('carol', 'target3')).toEqual({})
    // The other mirrors pushed as before.
    expect((await refsIn('carol', 'target'))['refs/heads/main']).toBe((await refsIn('alice', 'proj'))['refs/heads/main'])
    expect((await s.del(`/repos/alice/proj/push_mirrors/${r.body.remote_name}`, undefined, { token: alice.token })).status).toBe(204)
  })

  test('administrators only: a writer 403, a stranger to a private repository 404, anonymous 401', async () => {
    const name = names.timed!
    const calls = (auth: { token?: string }, repo = 'alice/proj') => [
      s.get(`/repos/${repo}/push_mirrors`, auth),
      s.post(`/repos/${repo}/push_mirrors`, { remote_address: target('target'), interval: '0' }, auth),
      s.post(`/repos/${repo}/push_mirrors-sync`, undefined, auth),
      s.get(`/repos/${repo}/push_mirrors/${name}`, auth),
      s.del(`/repos/${repo}/push_mirrors/${name}`, undefined, auth),
    ]
    expect((await Promise.all(calls({ token: bob.token }))).map((r) => r.status)).toEqual([403, 403, 403, 403, 403])
    expect((await Promise.all(calls({}))).map((r) => r.status)).toEqual([401, 401, 401, 401, 401])
    expect((await Promise.all(calls({ token: bob.token }, 'carol/target'))).map((r) => r.status)).toEqual([404, 404, 404, 404, 404])
    expect((await Promise.all(calls({}, 'carol/target'))).map((r) => r.status)).toEqual([404, 404, 404, 404, 404])
    expect((await s.get('/repos/alice/proj/push_mirrors', { token: alice.token })).body.length).toBe(3)
  })

  test('bad input: 4xx with a message, nothing written', async () => {
    const count = async () => (await s.deps.db.select().from(pushMirrors)).length
    const before = await count()
    const refused = async (body: Record<string, unknown>, status: number, message: RegExp) => {
      const r = await addMirror(body)
      expect([r.status, r.body?.message]).toEqual([status, expect.stringMatching(message)])
      expect(r.text).not.toContain(carol.password)
    }
    await refused({ remote_address: 'not a url', interval: '8h' }, 400, /Invalid Url/)
    await refused({ remote_address: 'ftp://example.com/x.git', interval: '8h' }, 400, /Invalid Url/)
    await refused({ remote_address: 'http://a%zz@example.com/x.git', interval: '8h' }, 400, /Invalid Url/)
    await refused({ remote_address: '/tmp', interval: '8h' }, 400, /Invalid mirror protocol/)
    await refused({ remote_address: target('target'), interval: 'soon' }, 400, /invalid mirror interval/)
    await refused({ remote_address: target('target'), interval: '1m' }, 400, /minimum/)
    await refused({ remote_address: target('target'), interval: '8h', use_ssh: true }, 400, /use_ssh is not supported/)
    expect((await addMirror({ interval: '8h' })).status).toBe(422)
    expect((await addMirror({ remote_address: 'x'.repeat(3000), interval: '8h' })).status).toBe(422)
    // A local address when local networks are not allowed: Gitea's 401 "Permission denied".
    s.deps.config.migrationsAllowLocalNetworks = false
    try {
      await refused({ remote_address: target('target'), remote_username: carol.name, remote_password: carol.password, interval: '8h' }, 401, /Permission denied/)
      await refused({ remote_address: 'http://localhost:1/x.git', interval: '8h' }, 401, /Permission denied/)
    } finally {
      s.deps.config.migrationsAllowLocalNetworks = true
    }
    expect(await count()).toBe(before)
    expect((await s.get('/repos/alice/proj/push_mirrors/remote_mirror_nothing', { token: alice.token })).status).toBe(404)
    expect((await s.del('/repos/alice/proj/push_mirrors/remote_mirror_nothing', undefined, { token: alice.token })).status).toBe(404)
  })

  test('mirrors turned off: 400 "Mirror feature is disabled" on every mirror route, after its other checks; the settings say so', async () => {
    s.deps.config.mirrorEnabled = false
    try {
      const answers = await Promise.all([
        s.get('/repos/alice/proj/push_mirrors', { token: alice.token }),
        addMirror({ remote_address: target('target'), interval: '8h' }),
        s.post('/repos/alice/proj/push_mirrors-sync', undefined, { token: alice.token }),
        s.get(`/repos/alice/proj/push_mirrors/${names.timed}`, { token: alice.token }),
        s.del(`/repos/alice/proj/push_mirrors/${names.timed}`, undefined, { token: alice.token }),
        s.post('/repos/alice/proj/mirror-sync', undefined, { token: alice.token }),
      ])
      for (const r of answers) expect([r.status, r.body.message]).toEqual([400, 'Mirror feature is disabled'])
      // The caller, the repository and the input are checked first, as before.
      expect((await addMirror({ remote_address: target('target'), interval: '8h' }, bob.token)).status).toBe(403)
      expect((await s.get('/repos/alice/nothing/push_mirrors', { token: alice.token })).status).toBe(404)
      expect((await addMirror({ interval: '8h' })).status).toBe(422)
      // Other routes, the migration's beside them included, are not the guard's.
      expect((await s.get('/repos/alice/proj', { token: alice.token })).status).toBe(200)
      const migrate = await s.post('/repos/migrate', { clone_addr: 'ftp://example.com/x.git', repo_name: 'x' }, { token: alice.token })
      expect(migrate.body.message).not.toBe('Mirror feature is disabled')
      expect((await s.get('/settings/repository')).body.mirrors_disabled).toBe(true)
    } finally {
      s.deps.config.mirrorEnabled = true
    }
    expect((await s.get('/settings/repository')).body.mirrors_disabled).toBe(false)
  })

  test('delete: the mirror is gone, the others stay (the one deleted while mirrors were off too); deleting the repository removes the rest', async () => {
    expect((await s.del(`/repos/alice/proj/push_mirrors/${names.manual}`, undefined, { token: alice.token })).status).toBe(204)
    expect((await s.get(`/repos/alice/proj/push_mirrors/${names.manual}`, { token: alice.token })).status).toBe(404)
    const left = (await s.get('/repos/alice/proj/push_mirrors', { token: alice.token })).body.map((m: any) => m.remote_name)
    expect(left).toEqual([names.timed, names.onCommit])
    expect((await s.del('/repos/alice/proj', undefined, { token: alice.token })).status).toBe(204)
    expect(await s.deps.db.select().from(pushMirrors)).toEqual([])
  })
})
