import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { DIALECT } from '../src/db/dialect'
import { mirrors, repositories } from '../src/db/schema'
import { eventsOfRepo } from '../src/events/outbox'
import { repoPath } from '../src/git/run'
import { isLocalAddress } from '../src/lib/network-guard'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, oneCommitRepo, refsOf, remoteUrl } from './git-fixture'
import { databaseRows } from './db-snapshot'

/** A second Warren serves the remote repositories; the first migrates them over loopback. */
let source: TestServer
let s: TestServer
let carol: TestUser // owner of the remote repositories (on `source`)
let alice: TestUser
let bob: TestUser
let admin: TestUser
const dirs: string[] = []

beforeAll(async () => {
  source = await startTestServer()
  s = await startTestServer({ migrationsAllowLocalNetworks: true })
  carol = await source.user('carol')
  alice = await s.user('alice')
  bob = await s.user('bob')
  admin = await s.user('root', { admin: true })
  for (const [name, priv] of [['pub', false], ['secret', true]] as const) {
    expect((await source.post('/user/repos', { name, private: priv }, { token: carol.token })).status).toBe(201)
    const dir = await oneCommitRepo()
    dirs.push(dir)
    await gitOk(dir, 'push', '-q', remoteUrl(source.url, `carol/${name}.git`, carol.name, carol.password), 'main')
  }
})
afterAll(async () => {
  await s?.stop()
  await source?.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const pubUrl = () => `${source.url}/carol/pub.git`
const secretUrl = () => `${source.url}/carol/secret.git`

/** Nothing of a failed migration is left: no row, no folder. */
async function expectNothingLeft(owner: string, name: string) {
  expect(await s.deps.db.select().from(repositories).where(eq(repositories.lowerName, name.toLowerCase()))).toEqual([])
  expect(existsSync(repoPath(s.dataDir, owner, name))).toBe(false)
}

/**
 * Every byte Warren stored: every file of the data folder (the repositories; on SQLite the
 * database files too, checkpointed first so the WAL's content is in the database file) and every
 * row of every table, read through Drizzle (the database itself on PostgreSQL).
 */
async function storedBytes(): Promise<string> {
  if (DIALECT === 'sqlite') {
    // After the turn's read snapshot on the connection has ended (db/client.ts): a checkpoint inside it is refused.
    await new Promise((resolve) => setImmediate(resolve))
    s.deps.db.$client.exec('PRAGMA wal_checkpoint(FULL)')
  }
  const parts: string[] = []
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else parts.push(readFileSync(p).toString('latin1'))
    }
  }
  walk(s.dataDir)
  parts.push(...Object.values(await databaseRows(s.deps.db)))
  return parts.join('\n')
}

describe('network guard', () => {
  test('classifies loopback, private, link-local and unique-local addresses as local', () => {
    for (const a of ['127.0.0.1', '10.0.0.1', '172.20.1.1', '192.168.0.5', '169.254.169.254', '::1', 'fd12::1', 'fe80::1', '::ffff:127.0.0.1', '0.0.0.0', '64:ff9b::10.0.0.1', '64:ff9b::7f00:1', '::ffff:0:127.0.0.1', '198.18.0.1', '192.0.0.8', '192.0.2.1'])
      expect([a, isLocalAddress(a)]).toEqual([a, true])
    for (const a of ['8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:1.1.1.1', '64:ff9b::808:808', '198.20.0.1']) expect([a, isLocalAddress(a)]).toEqual([a, false])
  })

  test('a loopback address is refused unless local networks are allowed; nothing is created', async () => {
    s.config.migrationsAllowLocalNetworks = false
    try {
      for (const addr of [pubUrl(), pubUrl().replace('127.0.0.1', 'localhost'), `git://127.0.0.1:1/x.git`, `http://[::1]:1/x.git`]) {
        const r = await s.post('/repos/migrate', { clone_addr: addr, uid: alice.user.id, repo_name: 'guarded' }, { token: alice.token })
        expect(r.status).toBe(422)
        expect(r.body.message).toContain('You can not import from disallowed hosts')
      }
      // Local paths: admin-only, and refused by the guard as well.
      const asAdmin = await s.post('/repos/migrate', { clone_addr: s.dataDir, uid: admin.user.id, repo_name: 'guarded' }, { token: admin.token })
      expect(asAdmin.status).toBe(422)
      await expectNothingLeft('alice', 'guarded')
      await expectNothingLeft('root', 'guarded')
    } finally {
      s.config.migrationsAllowLocalNetworks = true
    }
  })
})

describe('POST /repos/migrate', () => {
  test('clones a public repository: refs, default branch from the remote HEAD, metadata, repo.created', async () => {
    const r = await s.post('/repos/migrate', { clone_addr: pubUrl(), uid: alice.user.id, repo_name: 'copy', description: 'a copy' }, { token: alice.token })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ name: 'copy', full_name: 'alice/copy', mirror: false, empty: false, private: false, description: 'a copy', default_branch: 'main' })
    expect(r.body.size).toBeGreaterThan(0)
    expect(r.body.permissions).toEqual({ admin: true, push: true, pull: true })
    const theirs = await refsOf(repoPath(source.dataDir, 'carol', 'pub'))
    expect(await refsOf(repoPath(s.dataDir, 'alice', 'copy'))).toEqual(theirs)
    const events = await eventsOfRepo(s.deps.db, r.body.id)
    expect(events.map((e) => e.kind)).toEqual(['repo.created'])
    // A plain migration is no mirror: no mirror row, and pushes are accepted.
    expect(await s.deps.db.select().from(mirrors).where(eq(mirrors.repoId, r.body.id))).toEqual([])
    const branches = await s.get('/repos/alice/copy/branches', { token: alice.token })
    expect(branches.body.map((b: any) => b.name)).toEqual(['main'])
  })

  test('`wiki`: the remote\'s wiki is cloned beside the repository (private remote, same credentials); without it, or without a remote wiki, none', async () => {
    const page = (title: string, text: string) => source.post('/repos/carol/secret/wiki/new', { title, content_base64: btoa(text) }, { token: carol.token })
    expect((await page('Home', 'welcome')).status).toBe(201)
    expect((await page('Setup', 'step one')).status).toBe(201)
    const migrate = (name: string, extra: object) =>
      s.post('/repos/migrate', { clone_addr: secretUrl(), auth_username: carol.name, auth_password: carol.password, uid: alice.user.id, repo_name: name, ...extra }, { token: alice.token })
    expect((await migrate('with-wiki', { wiki: true })).status).toBe(201)
    const pages = await s.get('/repos/alice/with-wiki/wiki/pages', { token: alice.token })
    expect(pages.status).toBe(200)
    expect(pages.body.map((p: any) => p.title).sort()).toEqual(['Home', 'Setup'])
    const home = await s.get('/repos/alice/with-wiki/wiki/page/Home', { token: alice.token })
    expect(atob(home.body.content_base64)).toBe('welcome')
    // The wiki's refs are the remote wiki's; its credentials are stored nowhere either.
    const wikiOf = (dir: string, owner: string, name: string) => repoPath(dir, owner, name).replace(/\.git$/, '.wiki.git')
    expect(await refsOf(wikiOf(s.dataDir, 'alice', 'with-wiki'))).toEqual(await refsOf(wikiOf(source.dataDir, 'carol', 'secret')))
    expect(readFileSync(join(wikiOf(s.dataDir, 'alice', 'with-wiki'), 'config'), 'utf8')).not.toContain(carol.password)
    // Not asked for: no wiki.
    expect((await migrate('without-wiki', {})).status).toBe(201)
    expect((await s.get('/repos/alice/without-wiki/wiki/pages', { token: alice.token })).status).toBe(404)
    expect(existsSync(wikiOf(s.dataDir, 'alice', 'without-wiki'))).toBe(false)
    // Asked for, but the remote has none: the repository alone, as Gitea.
    const r = await s.post('/repos/migrate', { clone_addr: pubUrl(), uid: alice.user.id, repo_name: 'pub-no-wiki', wiki: true }, { token: alice.token })
    expect(r.status).toBe(201)
    expect(existsSync(wikiOf(s.dataDir, 'alice', 'pub-no-wiki'))).toBe(false)
    // A failed migration leaves no wiki folder either (the name taken: refused before anything is made).
    expect((await migrate('with-wiki', { wiki: true })).status).toBe(409)
  })

  test('a private remote with auth_username/auth_password; the password is stored nowhere', async () => {
    const r = await s.post(
      '/repos/migrate',
      { clone_addr: secretUrl(), auth_username: carol.name, auth_password: carol.password, uid: alice.user.id, repo_name: 'secret-copy', private: true, mirror: true },
      { token: alice.token },
    )
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ private: true, mirror: true, empty: false })
    const row = (await s.deps.db.select().from(mirrors).where(eq(mirrors.repoId, r.body.id)))[0]!
    expect(row.remoteAddress).toBe(secretUrl())
    expect(row.authUsername).toBe(carol.name)
    expect(row.authPasswordSealed).not.toBe('')
    expect(readFileSync(join(repoPath(s.dataDir, 'alice', 'secret-copy'), 'config'), 'utf8')).not.toContain(carol.password)
    expect(await storedBytes()).not.toContain(carol.password)
  })

  test('credentials inside the clone address work too and are taken out of it', async () => {
    const addr = remoteUrl(source.url, 'carol/secret.git', carol.name, carol.password)
    const r = await s.post('/repos/migrate', { clone_addr: addr, uid: alice.user.id, repo_name: 'inline', mirror: true }, { token: alice.token })
    expect(r.status).toBe(201)
    const row = (await s.deps.db.select().from(mirrors).where(eq(mirrors.repoId, r.body.id)))[0]!
    expect(row.remoteAddress).toBe(secretUrl())
    expect(r.text).not.toContain(carol.password)
  })

  test('credentials that fail: a clear 422 without the password, nothing left', async () => {
    const wrong = 'not-the-password-xyz'
    for (const body of [
      { clone_addr: secretUrl(), auth_username: carol.name, auth_password: wrong },
      { clone_addr: remoteUrl(source.url, 'carol/secret.git', carol.name, wrong) },
      { clone_addr: secretUrl() },
    ]) {
      const r = await s.post('/repos/migrate', { ...body, uid: alice.user.id, repo_name: 'nope' }, { token: alice.token })
      expect(r.status).toBe(422)
      expect(r.body.message).toMatch(/Authentication failed|Migration failed/)
      expect(r.text).not.toContain(wrong)
      await expectNothingLeft('alice', 'nope')
    }
  })

  test('unknown uid, taken name, bad URLs, unreachable host, bad interval: 4xx and nothing left', async () => {
    const base = { clone_addr: pubUrl(), uid: alice.user.id, repo_name: 'failing' }
    const cases: [object, number, RegExp][] = [
      [{ uid: 999999 }, 422, /user does not exist/],
      [{ repo_name: 'copy' }, 409, /already exists/],
      [{ repo_name: 'bad name!' }, 422, /Name/],
      [{ clone_addr: 'not a url' }, 422, /Invalid url/],
      [{ clone_addr: 'ftp://127.0.0.1/x.git' }, 422, /Invalid url/],
      [{ clone_addr: 'ext::sh -c touch% /tmp/pwned' }, 422, /Invalid url/],
      [{ clone_addr: 'http://no-such-host.invalid/x.git' }, 422, /resolve/i],
      [{ clone_addr: 'http://127.0.0.1:1/x.git' }, 422, /Migration failed/],
      [{ clone_addr: `${source.url}/carol/missing.git` }, 422, /failed/],
      [{ mirror: true, mirror_interval: 'soon' }, 422, /MirrorInterval/],
      [{ mirror: true, mirror_interval: '5m' }, 422, /minimum/],
    ]
    for (const [change, status, message] of cases) {
      const r = await s.post('/repos/migrate', { ...base, ...change }, { token: alice.token })
      expect([JSON.stringify(change), r.status]).toEqual([JSON.stringify(change), status])
      expect(r.body.message).toMatch(message)
      await expectNothingLeft('alice', 'failing')
    }
    const missing = await s.post('/repos/migrate', { clone_addr: pubUrl(), repo_name: 'failing' }, { token: alice.token })
    expect(missing.status).toBe(422)
  })

  test('mirrors turned off (WARREN_MIRROR_ENABLED=false): a new pull mirror is 403 and nothing is left; a plain migration still works', async () => {
    s.deps.config.mirrorEnabled = false
    try {
      const r = await s.post('/repos/migrate', { clone_addr: pubUrl(), uid: alice.user.id, repo_name: 'nomirror', mirror: true }, { token: alice.token })
      expect(r.status).toBe(403)
      expect(r.body.message).toMatch(/disabled the creation of new pull mirrors/)
      await expectNothingLeft('alice', 'nomirror')
      const plain = await s.post('/repos/migrate', { clone_addr: pubUrl(), uid: alice.user.id, repo_name: 'nomirror', mirror: false }, { token: alice.token })
      expect([plain.status, plain.body.mirror]).toEqual([201, false])
    } finally {
      s.deps.config.mirrorEnabled = true
    }
  })

  test('owners: another user 403, an organisation without permission 403, local paths admin-only, admin anywhere', async () => {
    const body = (uid: number, name: string) => ({ clone_addr: pubUrl(), uid, repo_name: name })
    expect((await s.post('/repos/migrate', body(bob.user.id, 'taken-over'), { token: alice.token })).status).toBe(403)
    await expectNothingLeft('bob', 'taken-over')
    expect((await s.post('/orgs', { username: 'acme' }, { token: alice.token })).status).toBe(201)
    const org = (await s.get('/orgs/acme', { token: alice.token })).body
    expect((await s.post('/repos/migrate', body(org.id, 'org-copy'), { token: bob.token })).status).toBe(403)
    const inOrg = await s.post('/repos/migrate', body(org.id, 'org-copy'), { token: alice.token })
    expect(inOrg.status).toBe(201)
    expect(inOrg.body.full_name).toBe('acme/org-copy')
    const local = await s.post('/repos/migrate', { clone_addr: repoPath(source.dataDir, 'carol', 'pub'), uid: alice.user.id, repo_name: 'local' }, { token: alice.token })
    expect(local.status).toBe(422)
    expect(local.body.message).toContain('not allowed to import local repositories')
    const byAdmin = await s.post('/repos/migrate', { clone_addr: repoPath(source.dataDir, 'carol', 'pub'), uid: bob.user.id, repo_name: 'from-disk' }, { token: admin.token })
    expect(byAdmin.status).toBe(201)
    expect(byAdmin.body.full_name).toBe('bob/from-disk')
    expect((await s.post('/repos/migrate', body(alice.user.id, 'anon'))).status).toBe(401)
  })
})
