import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { createUser } from '../src/modules/users/service'
import { users } from '../src/db/schema'

let s: TestServer
let alice: TestUser
let bob: TestUser
let admin: TestUser
const errorShape = () => ({ message: expect.any(String), url: `${s.config.baseUrl}api/swagger` })

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  admin = await s.user('root', { admin: true })
  await createUser(s.deps, { username: 'Carol.Smith', password: 'pw-carol', email: 'carol@example.com', fullName: 'Carol Ånström' })
  // An organisation row (type 1): found by /users/{name}, never by search.
  const now = Math.floor(Date.now() / 1000)
  await s.deps.db.insert(users).values({ name: 'alice-org', lowerName: 'alice-org', email: '', type: 1, createdUnix: now, updatedUnix: now })
})
afterAll(() => s.stop())

describe('GET /users/search', () => {
  test('substring of login or full name, case-insensitive, users only', async () => {
    const r = await s.get('/users/search?q=ALI')
    expect(r.status).toBe(200)
    expect(r.body.ok).toBe(true)
    expect(r.body.data.map((u: any) => u.login)).toEqual(['alice'])
    expect(r.headers.get('x-total-count')).toBe('1')
    const byFull = await s.get('/users/search?q=smith')
    expect(byFull.body.data.map((u: any) => u.login)).toEqual(['Carol.Smith'])
    const byFullName = await s.get('/users/search?q=CAROL Ånström')
    expect(byFullName.body.data.map((u: any) => u.login)).toEqual(['Carol.Smith'])
  })

  test('e-mail only for signed-in callers', async () => {
    const anon = await s.get('/users/search?q=alice')
    expect(anon.body.data[0].email).not.toBe('alice@example.com')
    const signed = await s.get('/users/search?q=alice', { token: bob.token })
    expect(signed.body.data[0].email).toBe('alice@example.com')
  })

  test('limit (default 10, max 50), page, Link header, uid', async () => {
    for (let i = 0; i < 12; i++) await createUser(s.deps, { username: `zed${i}`, password: 'x', email: `zed${i}@example.com` })
    const first = await s.get('/users/search?q=zed')
    expect(first.body.data.length).toBe(10)
    expect(first.headers.get('x-total-count')).toBe('12')
    expect(first.headers.get('link')).toContain('rel="next"')
    const second = await s.get('/users/search?q=zed&page=2')
    expect(second.body.data.length).toBe(2)
    const big = await s.get('/users/search?q=zed&limit=500')
    expect(big.body.data.length).toBe(12)
    const byUid = await s.get(`/users/search?uid=${bob.user.id}`)
    expect(byUid.body.data.map((u: any) => u.login)).toEqual(['bob'])
    expect((await s.get('/users/search?limit=abc')).status).toBe(422)
  })

  test('GET /users/{username} answers users and organisations, 404 otherwise', async () => {
    expect((await s.get('/users/alice')).body.login).toBe('alice')
    expect((await s.get('/users/alice-org')).body.login).toBe('alice-org')
    const missing = await s.get('/users/nobody')
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual(errorShape())
  })
})

describe('access tokens', () => {
  test('create with Basic password, list without the secret, use, delete', async () => {
    const created = await s.post('/users/alice/tokens', { name: 'ci', scopes: ['all'] }, { basic: ['alice', alice.password] })
    expect(created.status).toBe(201)
    expect(created.body.sha1).toMatch(/^[0-9a-f]{40}$/)
    expect(created.body.token_last_eight).toBe(created.body.sha1.slice(-8))
    expect(created.body.name).toBe('ci')
    expect((await s.get('/user', { token: created.body.sha1 })).body.login).toBe('alice')

    const list = await s.get('/users/alice/tokens', { basic: ['alice', alice.password] })
    expect(list.status).toBe(200)
    expect(list.body.map((t: any) => t.name)).toEqual(['test', 'ci'])
    expect(list.body.every((t: any) => t.sha1 === '')).toBe(true)
    expect(list.headers.get('x-total-count')).toBe('2')

    const del = await s.del(`/users/alice/tokens/${created.body.id}`, undefined, { basic: ['alice', alice.password] })
    expect(del.status).toBe(204)
    expect((await s.get('/user', { token: created.body.sha1 })).status).toBe(401)
    expect((await s.del(`/users/alice/tokens/${created.body.id}`, undefined, { basic: ['alice', alice.password] })).status).toBe(404)
  })

  test('form-encoded body works too', async () => {
    const r = await s.request('POST', '/users/alice/tokens', {
      basic: ['alice', alice.password],
      raw: 'name=form-token&scopes=all',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(r.status).toBe(201)
    expect(r.body.name).toBe('form-token')
  })

  test('a token, no credentials or a wrong password → 401; another user → 403', async () => {
    expect((await s.get('/users/alice/tokens', { token: alice.token })).status).toBe(401)
    expect((await s.post('/users/alice/tokens', { name: 'x' }, { token: alice.token })).status).toBe(401)
    expect((await s.get('/users/alice/tokens')).status).toBe(401)
    expect((await s.get('/users/alice/tokens', { basic: ['alice', 'nope'] })).status).toBe(401)
    const other = await s.get('/users/alice/tokens', { basic: ['bob', bob.password] })
    expect(other.status).toBe(403)
    expect(other.body).toEqual(errorShape())
    expect((await s.post('/users/alice/tokens', { name: 'x' }, { basic: ['bob', bob.password] })).status).toBe(403)
  })

  test("a site admin may manage another user's tokens; another user's token id → 404", async () => {
    const mine = await s.post('/users/bob/tokens', { name: 'mine', scopes: ['all'] }, { basic: ['bob', bob.password] })
    const list = await s.get('/users/bob/tokens', { basic: ['root', admin.password] })
    expect(list.status).toBe(200)
    expect(list.body.map((t: any) => t.name)).toContain('mine')
    expect((await s.get('/users/nobody/tokens', { basic: ['root', admin.password] })).status).toBe(404)
    // alice cannot delete bob's token through her own path
    expect((await s.del(`/users/alice/tokens/${mine.body.id}`, undefined, { basic: ['alice', alice.password] })).status).toBe(404)
    expect((await s.del('/users/alice/tokens/abc', undefined, { basic: ['alice', alice.password] })).status).toBe(404)
    expect((await s.get('/user', { token: mine.body.sha1 })).body.login).toBe('bob')
  })

  test('bad input: missing/empty/wrong-typed/over-long name, malformed JSON → 4xx, nothing created', async () => {
    const auth = { basic: ['alice', alice.password] as [string, string] }
    const before = (await s.get('/users/alice/tokens', auth)).body.length
    for (const body of [{}, { name: '' }, { name: 5 }, { name: 'x'.repeat(256) }, { name: ['a'] }]) {
      const r = await s.post('/users/alice/tokens', body, auth)
      expect(r.status).toBe(422)
      expect(r.body).toMatchObject(errorShape())
    }
    const bad = await s.request('POST', '/users/alice/tokens', { ...auth, raw: '{"name": ', headers: { 'content-type': 'application/json' } })
    expect(bad.status).toBe(400)
    expect(bad.body).toEqual(errorShape())
    expect((await s.get('/users/alice/tokens', auth)).body.length).toBe(before)
  })
})

describe('/user/emails', () => {
  test('list, add, delete', async () => {
    const auth = { token: alice.token }
    expect((await s.get('/user/emails', auth)).body).toEqual([{ email: 'alice@example.com', verified: true, primary: true }])
    const added = await s.post('/user/emails', { emails: ['a2@example.com', 'A3@Example.com'] }, auth)
    expect(added.status).toBe(201)
    // Added addresses are unverified and do not sign in (Gitea without e-mail confirmation activates them).
    expect(added.body).toEqual([
      { email: 'a2@example.com', verified: false, primary: false },
      { email: 'A3@Example.com', verified: false, primary: false },
    ])
    expect((await s.get('/user/emails', auth)).body.length).toBe(3)
    expect((await s.get('/user', { basic: ['a2@example.com', alice.password] })).status).toBe(401)
    expect((await s.del('/user/emails', { emails: ['a3@example.com'] }, auth)).status).toBe(204)
    expect((await s.get('/user/emails', auth)).body.map((e: any) => e.email)).toEqual(['alice@example.com', 'a2@example.com'])
    expect((await s.del('/user/emails', { emails: [] }, auth)).status).toBe(204)
    expect((await s.get('/user/emails', auth)).body.length).toBe(2)
  })

  test('401 without credentials', async () => {
    expect((await s.get('/user/emails')).status).toBe(401)
    expect((await s.post('/user/emails', { emails: ['x@example.com'] })).status).toBe(401)
    expect((await s.del('/user/emails', { emails: ['alice@example.com'] })).status).toBe(401)
  })

  test('add: empty list, bad format, used address, wrong types → 422 and nothing added', async () => {
    const auth = { token: bob.token }
    const before = (await s.get('/user/emails', auth)).body
    for (const body of [
      {},
      { emails: [] },
      { emails: ['not-an-address'] },
      { emails: ['ok@example.org', 'alice@example.com'] },
      { emails: ['BOB@example.com'] },
      { emails: ['dup@example.org', 'DUP@example.org'] },
      { emails: [`${'x'.repeat(250)}@example.com`] },
      { emails: 'bob2@example.com' },
      { emails: [5] },
    ]) {
      const r = await s.post('/user/emails', body, auth)
      expect(r.status).toBe(422)
      expect(r.body).toMatchObject(errorShape())
    }
    const bad = await s.request('POST', '/user/emails', { ...auth, raw: '{emails', headers: { 'content-type': 'application/json' } })
    expect(bad.status).toBe(400)
    expect((await s.get('/user/emails', auth)).body).toEqual(before)
  })

  test("delete: someone else's or unknown address → 404, primary → 422, nothing removed", async () => {
    const auth = { token: bob.token }
    await s.post('/user/emails', { emails: ['bob2@example.com'] }, auth)
    const before = (await s.get('/user/emails', auth)).body
    const foreign = await s.del('/user/emails', { emails: ['bob2@example.com', 'alice@example.com'] }, auth)
    expect(foreign.status).toBe(404)
    expect(foreign.body).toEqual(errorShape())
    expect((await s.del('/user/emails', { emails: ['nobody@example.com'] }, auth)).status).toBe(404)
    const primary = await s.del('/user/emails', { emails: ['bob2@example.com', 'bob@example.com'] }, auth)
    expect(primary.status).toBe(422)
    expect(primary.body).toMatchObject(errorShape())
    expect((await s.del('/user/emails', { emails: 'bob2@example.com' }, auth)).status).toBe(422)
    expect((await s.get('/user/emails', auth)).body).toEqual(before)
    expect((await s.get('/user/emails', { token: alice.token })).body.map((e: any) => e.email)).toContain('alice@example.com')
  })
})

describe('followers', () => {
  test('follow, check, list, counters, unfollow (idempotent)', async () => {
    const dave = await s.user('dave')
    const erin = await s.user('erin')
    expect((await s.put('/user/following/erin', undefined, { token: dave.token })).status).toBe(204)
    expect((await s.put('/user/following/ERIN', undefined, { token: dave.token })).status).toBe(204)
    expect((await s.put('/user/following/dave', undefined, { token: erin.token })).status).toBe(204)
    expect((await s.put('/user/following/alice', undefined, { token: dave.token })).status).toBe(204)

    expect((await s.get('/user/following/erin', { token: dave.token })).status).toBe(204)
    expect((await s.get('/user/following/bob', { token: dave.token })).status).toBe(404)
    expect((await s.get('/users/dave/following/erin', { token: bob.token })).status).toBe(204)
    expect((await s.get('/users/erin/following/alice', { token: bob.token })).status).toBe(404)
    expect((await s.get('/users/nobody/following/erin', { token: bob.token })).status).toBe(404)

    const following = await s.get('/user/following', { token: dave.token })
    expect(following.status).toBe(200)
    expect(following.body.map((u: any) => u.login)).toEqual(['erin', 'alice'])
    expect(following.headers.get('x-total-count')).toBe('2')
    const paged = await s.get('/users/dave/following?limit=1&page=2', { token: bob.token })
    expect(paged.body.map((u: any) => u.login)).toEqual(['alice'])
    expect((await s.get('/user/followers', { token: dave.token })).body.map((u: any) => u.login)).toEqual(['erin'])
    expect((await s.get('/users/erin/followers', { token: bob.token })).body.map((u: any) => u.login)).toEqual(['dave'])

    const daveRow = (await s.get('/users/dave', { token: bob.token })).body
    expect(daveRow.following_count).toBe(2)
    expect(daveRow.followers_count).toBe(1)
    expect((await s.get('/users/erin')).body.followers_count).toBe(1)

    expect((await s.del('/user/following/erin', undefined, { token: dave.token })).status).toBe(204)
    expect((await s.del('/user/following/erin', undefined, { token: dave.token })).status).toBe(204)
    expect((await s.get('/user/following/erin', { token: dave.token })).status).toBe(404)
    expect((await s.get('/users/dave')).body.following_count).toBe(1)
    expect((await s.get('/users/erin')).body.followers_count).toBe(0)
  })

  test('yourself → 422, unknown → 404, anonymous → 401, nothing changed', async () => {
    const self = await s.put('/user/following/alice', undefined, { token: alice.token })
    expect(self.status).toBe(422)
    expect(self.body).toMatchObject(errorShape())
    expect((await s.put('/user/following/nobody', undefined, { token: alice.token })).status).toBe(404)
    expect((await s.del('/user/following/nobody', undefined, { token: alice.token })).status).toBe(404)
    expect((await s.put('/user/following/alice-org', undefined, { token: bob.token })).status).toBe(404)
    expect((await s.put('/user/following/bob')).status).toBe(401)
    expect((await s.get('/user/followers')).status).toBe(401)
    expect((await s.get('/user/following')).status).toBe(401)
    expect((await s.get('/user/following/bob')).status).toBe(401)
    expect((await s.get('/users/alice/followers')).status).toBe(401)
    expect((await s.get('/users/alice/following')).status).toBe(401)
    expect((await s.get('/users/alice/following/bob')).status).toBe(401)
    expect((await s.get('/users/nobody/followers', { token: bob.token })).status).toBe(404)
    const a = (await s.get('/users/alice')).body
    expect(a.following_count).toBe(0)
    expect((await s.get('/user/following', { token: alice.token })).body).toEqual([])
  })
})
