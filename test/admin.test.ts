import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BAD_WEBSITES, startTestServer, type TestServer, type TestUser } from './helpers'
import { makeOrg } from './access-fixtures'
import { createRepository } from '../src/modules/repos/create'
import { asc, count, eq } from 'drizzle-orm'
import { emailAddresses, issues, repositories, users } from '../src/db/schema'

let s: TestServer
let admin: TestUser
let alice: TestUser
const errorShape = () => ({ message: expect.any(String), url: `${s.config.baseUrl}api/swagger` })
const now = () => Math.floor(Date.now() / 1000)

/** Rows read straight from the database (Drizzle, either dialect), to prove that failed calls changed nothing. */
const userRow = async (name: string) => (await s.deps.db.select().from(users).where(eq(users.lowerName, name.toLowerCase())))[0] ?? null
const emailsOf = (id: number) =>
  s.deps.db
    .select({ email: emailAddresses.email, isPrimary: emailAddresses.isPrimary })
    .from(emailAddresses)
    .where(eq(emailAddresses.userId, id))
    .orderBy(asc(emailAddresses.id))
const userCount = async () => (await s.deps.db.select({ n: count() }).from(users))[0]!.n

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
    expect(await userRow('x1')).toBeNull()
    expect((await userRow('alice'))!.isAdmin).toBe(false)
    expect(await userRow('root')).not.toBeNull()
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
    expect((await userRow('newuser'))!.mustChangePassword).toBe(false)
    expect((await s.get('/user', { basic: ['newuser', 'secret-pw'] })).body.login).toBe('NewUser')
    const explicit = await s.post(
      '/admin/users',
      { username: 'mcp', email: 'mcp@example.com', password: 'pw', must_change_password: true },
      { token: admin.token },
    )
    expect(explicit.status).toBe(201)
    expect((await userRow('mcp'))!.mustChangePassword).toBe(true)
  })

  test('bad input → 422 (400 for malformed JSON), nothing created', async () => {
    const before = await userCount()
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
    expect(await userCount()).toBe(before + 1) // only the org made above
    expect(await userRow('u1')).toBeNull()
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
    const row = (await userRow('edith'))!
    expect(row.maxRepoCreation).toBe(5)
    expect(row.allowCreateOrganization).toBe(false)
    expect(row.isActive).toBe(true)

    const again = await s.patch('/admin/users/edith', { password: 'new-password' }, { token: admin.token })
    expect(again.body.full_name).toBe('Edith E')
    expect((await userRow('edith'))!.passwordHash).not.toBe(row.passwordHash)
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
    expect(await emailsOf(u.user.id)).toEqual([{ email: 'frank2@example.com', isPrimary: true }])
    expect((await s.get('/user', { basic: ['frank2@example.com', u.password] })).status).toBe(200)
    expect((await s.get('/user', { basic: ['frank@example.com', u.password] })).status).toBe(401)
    // an address the user already has becomes primary; the old one stays secondary
    await s.post('/user/emails', { emails: ['frank3@example.com'] }, { token: u.token })
    await s.patch('/admin/users/frank', { email: 'frank3@example.com' }, { token: admin.token })
    expect(await emailsOf(u.user.id)).toEqual([
      { email: 'frank2@example.com', isPrimary: false },
      { email: 'frank3@example.com', isPrimary: true },
    ])
    expect((await userRow('frank'))!.email).toBe('frank3@example.com')
    expect((await s.get('/user/emails', { token: u.token })).body[0]).toEqual({ email: 'frank3@example.com', verified: true, primary: true })
  })

  test('404 unknown, bad input → 4xx and nothing changed', async () => {
    expect((await s.patch('/admin/users/nobody', { full_name: 'x' }, { token: admin.token })).status).toBe(404)
    await s.user('gina')
    const before = (await userRow('gina'))!
    const emailsBefore = await emailsOf(before.id)
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
    expect(await userRow('gina')).toEqual(before)
    expect(await emailsOf(before.id)).toEqual(emailsBefore)
  })

  test('a user website (admin edit user): the same rule', async () => {
    await s.user('webby')
    for (const website of BAD_WEBSITES) {
      const res = await s.patch('/admin/users/webby', { website }, { token: admin.token })
      expect(res.status).toBe(422)
      expect(res.body.errors[0].fieldNames).toEqual(['Website'])
    }
    expect((await s.patch('/admin/users/webby', { website: 'https://webby.example' }, { token: admin.token })).body.website).toBe('https://webby.example')
    expect((await s.patch('/admin/users/webby', { website: '' }, { token: admin.token })).body.website).toBe('')
  })
})

describe('DELETE /admin/users/{username}', () => {
  test('deletes the user with addresses, tokens and follows; counters fixed', async () => {
    const h = await s.user('hank')
    const i = await s.user('ivy')
    await s.put('/user/following/ivy', undefined, { token: h.token })
    await s.put('/user/following/hank', undefined, { token: i.token })
    expect((await userRow('ivy'))!.numFollowers).toBe(1)
    const r = await s.del('/admin/users/hank', undefined, { token: admin.token })
    expect(r.status).toBe(204)
    expect(r.text).toBe('')
    expect(await userRow('hank')).toBeNull()
    expect(await emailsOf(h.user.id)).toEqual([])
    expect((await s.get('/user', { token: h.token })).status).toBe(401)
    expect((await userRow('ivy'))!.numFollowers).toBe(0)
    expect((await userRow('ivy'))!.numFollowing).toBe(0)
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
    expect(await userRow('jack')).not.toBeNull()

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
    expect(await userRow('kim')).not.toBeNull()
    expect(await userRow('lee')).not.toBeNull()
    expect((await s.get('/user', { token: lee.token })).status).toBe(200)

    const mona = await s.user('mona')
    const repo = (await s.deps.db.select({ id: repositories.id }).from(repositories).where(eq(repositories.lowerName, 'proj')))[0]!
    await s.deps.db.insert(issues).values({ repoId: repo.id, index: 1, posterId: mona.user.id, title: 'bug', createdUnix: now(), updatedUnix: now() })
    // As Gitea: having posted issues or comments does not stop the deletion; the posts stay
    // and show the Ghost user as author (test/ghost-user.test.ts).
    const posted = await s.del('/admin/users/mona', undefined, { token: admin.token })
    expect(posted.status).toBe(204)
    expect(await userRow('mona')).toBeNull()
    const kept = await s.deps.db.select({ posterId: issues.posterId }).from(issues).where(eq(issues.repoId, repo.id))
    expect(kept).toEqual([{ posterId: mona.user.id }])
  })

  test('an admin cannot delete their own account (422, nothing changed); sudo does not get around it', async () => {
    const before = await userCount()
    const r = await s.del('/admin/users/root', undefined, { token: admin.token })
    expect(r.status).toBe(422)
    expect(r.body).toEqual({ message: 'you cannot delete yourself', url: `${s.config.baseUrl}api/swagger` })
    const other = await s.user('admin2', { admin: true })
    expect((await s.del('/admin/users/admin2', undefined, { token: admin.token, headers: { sudo: 'admin2' } })).status).toBe(422)
    expect(await userCount()).toBe(before + 1)
    expect((await s.del('/admin/users/admin2', undefined, { token: admin.token })).status).toBe(204)
    expect((await s.get('/user', { token: other.token })).status).toBe(401)
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
