import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { count, eq } from 'drizzle-orm'
import { openDatabase } from '../src/db/client'
import { DIALECT } from '../src/db/dialect'
import { repositories } from '../src/db/schema'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/** Issue 10 item 8: policy gaps. */

let s: TestServer
let admin: TestUser
let alice: TestUser

const repoCount = async (ownerId: number) => (await s.deps.db.select({ n: count() }).from(repositories).where(eq(repositories.ownerId, ownerId)))[0]!.n

beforeAll(async () => {
  s = await startTestServer()
  admin = await s.user('root', { admin: true })
  alice = await s.user('alice')
})
afterAll(() => s.stop())

describe('max_repo_creation (Gitea CanCreateRepoIn)', () => {
  test('0 stops POST /user/repos with a 422 and creates nothing; -1 lifts the limit again', async () => {
    const u = await s.user('capped')
    const set = await s.patch('/admin/users/capped', { max_repo_creation: 0 }, { token: admin.token })
    expect(set.status).toBe(200)
    const refused = await s.post('/user/repos', { name: 'nope' }, { token: u.token })
    expect(refused.status).toBe(422)
    expect(refused.body.message).toContain('You have already reached your limit of 0 repositories.')
    expect(typeof refused.body.url).toBe('string')
    expect(await repoCount(u.user.id)).toBe(0)
    expect(existsSync(join(s.dataDir, 'repositories', 'capped', 'nope.git'))).toBe(false)
    expect((await s.get('/repos/capped/nope', { token: u.token })).status).toBe(404)

    await s.patch('/admin/users/capped', { max_repo_creation: -1 }, { token: admin.token })
    expect((await s.post('/user/repos', { name: 'yes' }, { token: u.token })).status).toBe(201)
  })

  test('N caps the number of repositories the user owns', async () => {
    const u = await s.user('two')
    await s.patch('/admin/users/two', { max_repo_creation: 2 }, { token: admin.token })
    expect((await s.post('/user/repos', { name: 'r1' }, { token: u.token })).status).toBe(201)
    expect((await s.post('/user/repos', { name: 'r2' }, { token: u.token })).status).toBe(201)
    const third = await s.post('/user/repos', { name: 'r3' }, { token: u.token })
    expect(third.status).toBe(422)
    expect(third.body.message).toContain('limit of 2 repositories')
    expect(await repoCount(u.user.id)).toBe(2)
    // Deleting one frees a place.
    expect((await s.del('/repos/two/r1', undefined, { token: u.token })).status).toBe(204)
    expect((await s.post('/user/repos', { name: 'r3' }, { token: u.token })).status).toBe(201)
  })

  test('a site administrator is exempt, for itself and when creating for a capped user', async () => {
    const boss = await s.user('boss', { admin: true })
    await s.patch('/admin/users/boss', { max_repo_creation: 0 }, { token: admin.token })
    expect((await s.post('/user/repos', { name: 'mine' }, { token: boss.token })).status).toBe(201)
    await s.user('managed')
    await s.patch('/admin/users/managed', { max_repo_creation: 0 }, { token: admin.token })
    expect((await s.post('/admin/users/managed/repos', { name: 'given' }, { token: admin.token })).status).toBe(201)
  })
})

describe('website: one URL validator for repositories, organisations and users', () => {
  const bad = ['javascript:alert(1)', 'data:text/html,<b>x</b>', 'ftp://example.com/', 'not a url', 'http://']

  test('a repository website must be http(s); empty clears it; a refusal changes nothing', async () => {
    expect((await s.post('/user/repos', { name: 'site' }, { token: alice.token })).status).toBe(201)
    expect((await s.patch('/repos/alice/site', { website: 'https://example.com/x' }, { token: alice.token })).body.website).toBe('https://example.com/x')
    for (const website of bad) {
      const res = await s.patch('/repos/alice/site', { website, description: 'changed' }, { token: alice.token })
      expect(res.status).toBe(422)
      expect(res.body.errors[0].fieldNames).toEqual(['Website'])
    }
    const after = await s.get('/repos/alice/site')
    expect(after.body.website).toBe('https://example.com/x')
    expect(after.body.description).toBe('')
    expect((await s.patch('/repos/alice/site', { website: '' }, { token: alice.token })).body.website).toBe('')
  })

  test('an organisation website: the same rule', async () => {
    for (const website of bad) expect((await s.post('/orgs', { username: 'badsite', website }, { token: alice.token })).status).toBe(422)
    expect((await s.post('/orgs', { username: 'goodsite', website: 'http://example.org' }, { token: alice.token })).status).toBe(201)
    expect((await s.patch('/orgs/goodsite', { website: 'javascript:alert(1)' }, { token: alice.token })).status).toBe(422)
    expect((await s.get('/orgs/goodsite')).body.website).toBe('http://example.org')
  })

  test('a user website (admin edit user): the same rule', async () => {
    await s.user('webby')
    for (const website of bad) {
      const res = await s.patch('/admin/users/webby', { website }, { token: admin.token })
      expect(res.status).toBe(422)
      expect(res.body.errors[0].fieldNames).toEqual(['Website'])
    }
    expect((await s.patch('/admin/users/webby', { website: 'https://webby.example' }, { token: admin.token })).body.website).toBe('https://webby.example')
    expect((await s.patch('/admin/users/webby', { website: '' }, { token: admin.token })).body.website).toBe('')
  })
})

describe('addresses added through POST /user/emails', () => {
  test('are unverified and do not sign in through Basic; the primary one still does', async () => {
    const u = await s.user('mailer')
    const added = await s.post('/user/emails', { emails: ['mailer-work@example.com'] }, { token: u.token })
    expect(added.status).toBe(201)
    expect(added.body).toEqual([{ email: 'mailer-work@example.com', verified: false, primary: false }])
    expect((await s.get('/user', { basic: ['mailer-work@example.com', u.password] })).status).toBe(401)
    expect((await s.get('/user', { basic: ['mailer@example.com', u.password] })).status).toBe(200)
    expect((await s.get('/user', { basic: ['mailer', u.password] })).status).toBe(200)
  })

  test('claiming another person\'s address gives no way in to the claimer\'s account by it', async () => {
    const thief = await s.user('thief')
    expect((await s.post('/user/emails', { emails: ['ceo@example.com'] }, { token: thief.token })).status).toBe(201)
    expect((await s.get('/user', { basic: ['ceo@example.com', thief.password] })).status).toBe(401)
  })

  test('an administrator can still manage them: made primary by admin edit user, the address is verified and signs in', async () => {
    const u = await s.user('managedmail')
    await s.post('/user/emails', { emails: ['managed-2@example.com'] }, { token: u.token })
    expect((await s.patch('/admin/users/managedmail', { email: 'managed-2@example.com' }, { token: admin.token })).status).toBe(200)
    const listed = await s.get('/user/emails', { token: u.token })
    expect(listed.body.find((e: any) => e.email === 'managed-2@example.com')).toEqual({ email: 'managed-2@example.com', verified: true, primary: true })
    expect((await s.get('/user', { basic: ['managed-2@example.com', u.password] })).status).toBe(200)
  })
})

describe('deleting a missing label or milestone', () => {
  let otherLabel = 0
  let otherMilestone = 0
  beforeAll(async () => {
    expect((await s.post('/user/repos', { name: 'tracker' }, { token: alice.token })).status).toBe(201)
    expect((await s.post('/user/repos', { name: 'other' }, { token: alice.token })).status).toBe(201)
    otherLabel = (await s.post('/repos/alice/other/labels', { name: 'elsewhere', color: '#00ff00' }, { token: alice.token })).body.id
    otherMilestone = (await s.post('/repos/alice/other/milestones', { title: 'elsewhere' }, { token: alice.token })).body.id
  })

  test('label: 404 for an unknown id, a non-numeric one, one of another repository, and a second delete', async () => {
    for (const id of ['999999', 'abc', String(otherLabel)]) {
      const res = await s.del(`/repos/alice/tracker/labels/${id}`, undefined, { token: alice.token })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ message: "The target couldn't be found.", url: expect.any(String) })
    }
    expect((await s.get(`/repos/alice/other/labels/${otherLabel}`)).status).toBe(200)
    const own = (await s.post('/repos/alice/tracker/labels', { name: 'mine', color: '#0000ff' }, { token: alice.token })).body.id
    expect((await s.del(`/repos/alice/tracker/labels/${own}`, undefined, { token: alice.token })).status).toBe(204)
    expect((await s.del(`/repos/alice/tracker/labels/${own}`, undefined, { token: alice.token })).status).toBe(404)
  })

  test('milestone: 404 for an unknown id or title, one of another repository, and a second delete', async () => {
    for (const id of ['999999', 'no-such-title', String(otherMilestone)]) {
      const res = await s.del(`/repos/alice/tracker/milestones/${id}`, undefined, { token: alice.token })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ message: "The target couldn't be found.", url: expect.any(String) })
    }
    expect((await s.get(`/repos/alice/other/milestones/${otherMilestone}`)).status).toBe(200)
    const own = (await s.post('/repos/alice/tracker/milestones', { title: 'mine' }, { token: alice.token })).body.id
    expect((await s.del(`/repos/alice/tracker/milestones/${own}`, undefined, { token: alice.token })).status).toBe(204)
    expect((await s.del(`/repos/alice/tracker/milestones/${own}`, undefined, { token: alice.token })).status).toBe(404)
  })
})

// The modes of warren.db and its -wal/-shm files, set by the SQLite opener. On PostgreSQL the
// database is not in the data folder: its files are the PostgreSQL server's, under its own modes.
describe.skipIf(DIALECT === 'postgres')('file modes of the data folder', () => {
  const mode = (path: string) => statSync(path).mode & 0o777

  test('a new data folder: 0700, warren.db and its -wal/-shm 0600', () => {
    const parent = mkdtempSync(join(tmpdir(), 'warren-modes-'))
    try {
      const dir = join(parent, 'data')
      const db = openDatabase(dir)
      db.$client.exec('CREATE TABLE IF NOT EXISTS mode_probe (x)')
      expect(mode(dir)).toBe(0o700)
      for (const name of ['warren.db', 'warren.db-wal', 'warren.db-shm']) {
        expect(existsSync(join(dir, name))).toBe(true)
        expect(mode(join(dir, name))).toBe(0o600)
      }
      db.$client.close()
    } finally {
      rmSync(parent, { recursive: true, force: true })
    }
  })

  test('an existing data folder made world-readable is narrowed at start (a leftover -wal too)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-modes-'))
    // An older Warren still running (or crashed): its -wal file is in place when the next one starts.
    const older = openDatabase(dir)
    try {
      older.$client.exec('CREATE TABLE IF NOT EXISTS mode_probe (x)')
      chmodSync(dir, 0o755)
      chmodSync(join(dir, 'warren.db'), 0o644)
      chmodSync(join(dir, 'warren.db-wal'), 0o666)
      const db = openDatabase(dir)
      expect(mode(dir)).toBe(0o700)
      expect(mode(join(dir, 'warren.db'))).toBe(0o600)
      expect(mode(join(dir, 'warren.db-wal'))).toBe(0o600)
      expect(mode(join(dir, 'warren.db-shm'))).toBe(0o600)
      db.$client.close()
    } finally {
      older.$client.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('the running test server\'s database is not readable by others', () => {
    expect(mode(s.dataDir)).toBe(0o700)
    expect(mode(join(s.dataDir, 'warren.db')) & 0o077).toBe(0)
  })
})
