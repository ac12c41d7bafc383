import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { makeOrg } from './access-fixtures'
import { createRepository } from '../src/modules/repos/service'

let s: TestServer
let admin: TestUser
let alice: TestUser
const errorShape = () => ({ message: expect.any(String), url: `${s.config.baseUrl}api/swagger` })
const now = () => Math.floor(Date.now() / 1000)

/** Raw row access, to prove that failed calls changed nothing. */
const userRow = (name: string) => s.deps.db.$client.prepare('SELECT * FROM users WHERE lower_name = ?').get(name.toLowerCase()) as any
const emailsOf = (id: number) =>
  s.deps.db.$client.prepare('SELECT email, is_primary FROM email_addresses WHERE user_id = ? ORDER BY id').all(id) as any[]
const userCount = () => (s.deps.db.$client.prepare('SELECT count(*) AS n FROM users').get() as any).n

beforeAll(async () => {
  s = await startTestServer()
  admin = await s.user('root', { admin: true })
  alice = await s.user('alice')
})
afterAll(() => s.stop())

describe('permissions', () => {
  test('anonymous → 401, non-admin → 403 on every admin route', async () => {
    const calls = [
      () => s.get('/admin/users'),
      () => s.post('/admin/users', { username: 'x1', email: 'x1@example.com', password: 'p' }),
      () => s.patch('/admin/users/alice', { full_name: 'x' }),
      () => s.del('/admin/users/alice'),
    ]
    for (const call of calls) {
      const r = await call()
      expect(r.status).toBe(401)
      expect(r.body).toEqual(errorShape())
    }
    const auth = { token: alice.token }
    expect((await s.get('/admin/users', auth)).status).toBe(403)
    expect((await s.post('/admin/users', { username: 'x1', email: 'x1@example.com', password: 'p' }, auth)).status).toBe(403)
    expect((await s.patch('/admin/users/alice', { admin: true }, auth)).status).toBe(403)
    const del = await s.del('/admin/users/root', undefined, auth)
    expect(del.status).toBe(403)
    expect(del.body).toEqual(errorShape())
    expect(userRow('x1')).toBeNull()
    expect(userRow('alice').is_admin).toBe(0)
    expect(userRow('root')).not.toBeNull()
  })
})

describe('POST /admin/users', () => {
  test('creates a usable user; must_change_password absent = false', async () => {
    const r = await s.post(
      '/admin/users',
      { username: 'NewUser', email: 'New@Example.com', password: 'secret-pw', full_name: 'New User', send_notify: true },
      { token: admin.token },
    )
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ login: 'NewUser', username: 'NewUser', email: 'New@Example.com', full_name: 'New User', is_admin: false })
    expect(userRow('newuser').must_change_password).toBe(0)
    expect((await s.get('/user', { basic: ['newuser', 'secret-pw'] })).body.login).toBe('NewUser')
    const explicit = await s.post(
      '/admin/users',
      { username: 'mcp', email: 'mcp@example.com', password: 'pw', must_change_password: true },
      { token: admin.token },
    )
    expect(explicit.status).toBe(201)
    expect(userRow('mcp').must_change_password).toBe(1)
  })

  test('bad input → 422 (400 for malformed JSON), nothing created', async () => {
    const before = userCount()
    expect((await makeOrg(s, 'taken-org', admin)).org.id).toBeGreaterThan(0)
    const cases: unknown[] = [
      {},
      { email: 'a@example.com', password: 'p' },
      { username: 'u1', password: 'p' },
      { username: 'u1', email: 'u1@example.com' },
      { username: 'u1', email: 'u1@example.com', password: '' },
      { username: 'ALICE', email: 'other@example.com', password: 'p' },
      { username: 'taken-org', email: 'other@example.com', password: 'p' },
      { username: 'u1', email: 'ALICE@example.com', password: 'p' },
      { username: 'admin', email: 'u1@example.com', password: 'p' },
      { username: 'u1.keys', email: 'u1@example.com', password: 'p' },
      { username: 'bad name', email: 'u1@example.com', password: 'p' },
      { username: 'u'.repeat(41), email: 'u1@example.com', password: 'p' },
      { username: 'u1', email: 'not-an-email', password: 'p' },
      { username: 'u1', email: `${'e'.repeat(250)}@example.com`, password: 'p' },
      { username: 'u1', email: 'u1@example.com', password: 'p'.repeat(256) },
      { username: 'u1', email: 'u1@example.com', password: 'p', full_name: 'f'.repeat(101) },
      { username: 'u1', email: 'u1@example.com', password: 'p', source_id: 3 },
      { username: 'u1', email: 'u1@example.com', password: 'p', visibility: 'secret' },
      { username: 5, email: 'u1@example.com', password: 'p' },
      { username: 'u1', email: 'u1@example.com', password: 'p', must_change_password: 'yes' },
    ]
    for (const body of cases) {
      const r = await s.post('/admin/users', body, { token: admin.token })
      expect(r.status).toBe(422)
      expect(r.body).toMatchObject(errorShape())
    }
    const bad = await s.request('POST', '/admin/users', { token: admin.token, raw: '{"username":', headers: { 'content-type': 'application/json' } })
    expect(bad.status).toBe(400)
    expect(bad.body).toEqual(errorShape())
    expect(userCount()).toBe(before + 1) // only the org made above
    expect(userRow('u1')).toBeNull()
  })
})

describe('PATCH /admin/users/{username}', () => {
  test('absent = unchanged; flags, profile and password change', async () => {
    const u = await s.user('edith')
    const r = await s.patch(
      '/admin/users/EDITH',
      { full_name: 'Edith E', location: 'Paris', website: 'https://e.example', admin: true, max_repo_creation: 5, allow_create_organization: false },
      { token: admin.token },
    )
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ login: 'edith', full_name: 'Edith E', location: 'Paris', website: 'https://e.example', is_admin: true, email: 'edith@example.com' })
    const row = userRow('edith')
    expect(row.max_repo_creation).toBe(5)
    expect(row.allow_create_organization).toBe(0)
    expect(row.is_active).toBe(1)

    const again = await s.patch('/admin/users/edith', { password: 'new-password' }, { token: admin.token })
    expect(again.body.full_name).toBe('Edith E')
    expect(userRow('edith').password_hash).not.toBe(row.password_hash)
    expect((await s.get('/user', { basic: ['edith', 'new-password'] })).status).toBe(200)
    expect((await s.get('/user', { basic: ['edith', u.password] })).status).toBe(401)

    expect((await s.patch('/admin/users/edith', { prohibit_login: true }, { token: admin.token })).status).toBe(200)
    expect((await s.get('/user', { token: u.token })).status).toBe(403)
    expect((await s.patch('/admin/users/edith', { prohibit_login: false, active: true }, { token: admin.token })).status).toBe(200)
    expect((await s.get('/user', { token: u.token })).status).toBe(200)
  })

  test('e-mail change keeps email_addresses in step', async () => {
    const u = await s.user('frank')
    const r = await s.patch('/admin/users/frank', { email: 'frank2@example.com' }, { token: admin.token })
    expect(r.status).toBe(200)
    expect(r.body.email).toBe('frank2@example.com')
    expect(emailsOf(u.user.id)).toEqual([{ email: 'frank2@example.com', is_primary: 1 }])
    expect((await s.get('/user', { basic: ['frank2@example.com', u.password] })).status).toBe(200)
    expect((await s.get('/user', { basic: ['frank@example.com', u.password] })).status).toBe(401)
    // an address the user already has becomes primary; the old one stays secondary
    await s.post('/user/emails', { emails: ['frank3@example.com'] }, { token: u.token })
    await s.patch('/admin/users/frank', { email: 'frank3@example.com' }, { token: admin.token })
    expect(emailsOf(u.user.id)).toEqual([
      { email: 'frank2@example.com', is_primary: 0 },
      { email: 'frank3@example.com', is_primary: 1 },
    ])
    expect(userRow('frank').email).toBe('frank3@example.com')
    expect((await s.get('/user/emails', { token: u.token })).body[0]).toEqual({ email: 'frank3@example.com', verified: true, primary: true })
  })

  test('404 unknown, bad input → 4xx and nothing changed', async () => {
    expect((await s.patch('/admin/users/nobody', { full_name: 'x' }, { token: admin.token })).status).toBe(404)
    await s.user('gina')
    const before = userRow('gina')
    const emailsBefore = emailsOf(before.id)
    for (const body of [
      { email: 'alice@example.com', full_name: 'changed' },
      { email: 'nope', full_name: 'changed' },
      { email: '', full_name: 'changed' },
      { full_name: 'f'.repeat(101) },
      { location: 'l'.repeat(51), full_name: 'changed' },
      { password: 'p'.repeat(256), full_name: 'changed' },
      { admin: 'yes', full_name: 'changed' },
      { max_repo_creation: 'many' },
      { max_repo_creation: -5 },
      { source_id: 2, full_name: 'changed' },
      { visibility: 'hidden', full_name: 'changed' },
      { full_name: 12 },
    ]) {
      const r = await s.patch('/admin/users/gina', body, { token: admin.token })
      expect(r.status).toBe(422)
      expect(r.body).toMatchObject(errorShape())
    }
    const bad = await s.request('PATCH', '/admin/users/gina', { token: admin.token, raw: '{full_name', headers: { 'content-type': 'application/json' } })
    expect(bad.status).toBe(400)
    expect(userRow('gina')).toEqual(before)
    expect(emailsOf(before.id)).toEqual(emailsBefore)
  })
})

describe('DELETE /admin/users/{username}', () => {
  test('deletes the user with addresses, tokens and follows; counters fixed', async () => {
    const h = await s.user('hank')
    const i = await s.user('ivy')
    await s.put('/user/following/ivy', undefined, { token: h.token })
    await s.put('/user/following/hank', undefined, { token: i.token })
    expect(userRow('ivy').num_followers).toBe(1)
    const r = await s.del('/admin/users/hank', undefined, { token: admin.token })
    expect(r.status).toBe(204)
    expect(r.text).toBe('')
    expect(userRow('hank')).toBeNull()
    expect(emailsOf(h.user.id)).toEqual([])
    expect((await s.get('/user', { token: h.token })).status).toBe(401)
    expect(userRow('ivy').num_followers).toBe(0)
    expect(userRow('ivy').num_following).toBe(0)
    // the name and address are free again
    const again = await s.post('/admin/users', { username: 'hank', email: 'hank@example.com', password: 'p' }, { token: admin.token })
    expect(again.status).toBe(201)
    expect((await s.del('/admin/users/nobody', undefined, { token: admin.token })).status).toBe(404)
    expect((await s.del('/admin/users/taken-org', undefined, { token: admin.token })).status).toBe(404)
  })

  test('422 while the user owns repositories, is the last owner of an org, or is a member (not for having posted)', async () => {
    const jack = await s.user('jack')
    await createRepository(s.deps, jack.user, { name: 'proj' })
    const owns = await s.del('/admin/users/jack', undefined, { token: admin.token })
    expect(owns.status).toBe(422)
    expect(owns.body.message).toContain('repositories')
    expect(userRow('jack')).not.toBeNull()

    const kim = await s.user('kim')
    const lee = await s.user('lee')
    await makeOrg(s, 'kim-org', kim, [lee])
    const sole = await s.del('/admin/users/kim', undefined, { token: admin.token })
    expect(sole.status).toBe(422)
    expect(sole.body.message).toContain('kim-org')
    expect(sole.body.url).toBe(`${s.config.baseUrl}api/swagger`)
    const member = await s.del('/admin/users/lee', undefined, { token: admin.token })
    expect(member.status).toBe(422)
    expect(member.body.message).toContain('kim-org')
    expect(userRow('kim')).not.toBeNull()
    expect(userRow('lee')).not.toBeNull()
    expect((await s.get('/user', { token: lee.token })).status).toBe(200)

    const mona = await s.user('mona')
    const repo = s.deps.db.$client.prepare("SELECT id FROM repositories WHERE lower_name = 'proj'").get() as any
    s.deps.db.$client
      .prepare("INSERT INTO issues (repo_id, \"index\", poster_id, title, created_unix, updated_unix) VALUES (?, 1, ?, 'bug', ?, ?)")
      .run(repo.id, mona.user.id, now(), now())
    // As Gitea: having posted issues or comments does not stop the deletion; the posts stay
    // and show the Ghost user as author (test/ghost-user.test.ts).
    const posted = await s.del('/admin/users/mona', undefined, { token: admin.token })
    expect(posted.status).toBe(204)
    expect(userRow('mona')).toBeNull()
    const kept = s.deps.db.$client.prepare('SELECT poster_id FROM issues WHERE repo_id = ?').all(repo.id) as any[]
    expect(kept).toEqual([{ poster_id: mona.user.id }])
  })
})

describe('GET /admin/users', () => {
  test('pages through individual users only, with real flags', async () => {
    const all = await s.get('/admin/users?limit=50', { token: admin.token })
    expect(all.status).toBe(200)
    const logins = all.body.map((u: any) => u.login)
    expect(logins).toContain('root')
    expect(logins).toContain('alice')
    expect(logins).not.toContain('taken-org')
    expect(all.body.find((u: any) => u.login === 'root').is_admin).toBe(true)
    const total = Number(all.headers.get('x-total-count'))
    expect(total).toBe(logins.length)
    const page2 = await s.get('/admin/users?limit=2&page=2', { token: admin.token })
    expect(page2.body.map((u: any) => u.login)).toEqual(logins.slice(2, 4))
    expect(page2.headers.get('link')).toContain('rel="prev"')
  })
})
