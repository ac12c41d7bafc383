import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { MAX_API_BODY } from '../src/config'
import { count, eq } from 'drizzle-orm'
import { users } from '../src/db/schema'

/** Review of the foundation: sudo, account states, body limits, the User record, the docs. */

let s: TestServer
let admin: TestUser
let bob: TestUser
let carol: TestUser
beforeAll(async () => {
  s = await startTestServer()
  admin = await s.user('root', { admin: true })
  bob = await s.user('bob')
  carol = await s.user('carol')
})
afterAll(() => s.stop())

const userCount = async () => (await s.deps.db.select({ n: count() }).from(users))[0]!.n

describe('sudo', () => {
  test('a non-admin (or anonymous) caller gets 403 with exactly Gitea\'s body (no url)', async () => {
    for (const auth of [{ token: bob.token }, {}]) {
      const q = await s.get('/user?sudo=carol', auth)
      expect(q.status).toBe(403)
      expect(q.body).toEqual({ message: 'Only administrators allowed to sudo.' })
      const h = await s.get('/user', { ...auth, headers: { sudo: 'carol' } })
      expect(h.status).toBe(403)
      expect(h.body).toEqual({ message: 'Only administrators allowed to sudo.' })
    }
  })

  test('an unknown login answers 404 in the error shape', async () => {
    for (const r of [await s.get('/user?sudo=nobody', { token: admin.token }), await s.get('/user', { token: admin.token, headers: { sudo: 'nobody' } })]) {
      expect(r.status).toBe(404)
      expect(r.body).toEqual({ message: expect.stringContaining('nobody'), url: `${s.config.baseUrl}api/swagger` })
    }
  })

  test('query and header both act as that user, for reads and for created objects', async () => {
    const me = await s.get('/user?sudo=Bob', { token: admin.token })
    expect(me.status).toBe(200)
    expect(me.body.login).toBe('bob')
    expect(me.body.is_admin).toBe(false)
    const repo = await s.post('/user/repos', { name: 'made-by-sudo' }, { token: admin.token, headers: { sudo: 'bob' } })
    expect(repo.status).toBe(201)
    expect(repo.body.owner.login).toBe('bob')
    // Acting as bob, the admin has only bob's rights.
    const denied = await s.post('/admin/users', { username: 'x1', email: 'x1@example.com', password: 'p' }, { token: admin.token, headers: { sudo: 'bob' } })
    expect(denied.status).toBe(403)
    const key = await s.post(
      '/user/keys',
      { title: 'sudo-key', key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl a@b' },
      { basic: ['root', admin.password], headers: { sudo: 'bob' } },
    )
    expect(key.status).toBe(201)
    const bobsKeys = await s.get('/user/keys', { token: bob.token })
    expect(bobsKeys.body.map((k: any) => k.title)).toEqual(['sudo-key'])
    expect((await s.get('/user/keys', { token: admin.token })).body).toEqual([])
  })
})

describe('account states', () => {
  test('prohibit_login and inactive users are refused (403) with Gitea\'s message, whatever the credentials', async () => {
    const u = await s.user('flagged1')
    for (const flag of [{ prohibit_login: true }, { active: false }]) {
      expect((await s.patch('/admin/users/flagged1', { prohibit_login: false, active: true, ...flag }, { token: admin.token })).status).toBe(200)
      for (const auth of [{ token: u.token }, { basic: ['flagged1', u.password] as [string, string] }, { basic: ['flagged1@example.com', u.password] as [string, string] }]) {
        const r = await s.get('/user', auth)
        expect(r.status).toBe(403)
        expect(r.body.message).toBe('This account is prohibited from signing in, please contact your site administrator.')
      }
    }
    await s.patch('/admin/users/flagged1', { prohibit_login: false, active: true }, { token: admin.token })
    expect((await s.get('/user', { token: u.token })).status).toBe(200)
  })

  test('must_change_password blocks API calls (403) until an admin clears it', async () => {
    const u = await s.user('flagged2')
    expect((await s.patch('/admin/users/flagged2', { must_change_password: true }, { token: admin.token })).body.login).toBe('flagged2')
    for (const auth of [{ token: u.token }, { basic: ['flagged2', u.password] as [string, string] }]) {
      const r = await s.get('/user', auth)
      expect(r.status).toBe(403)
      expect(r.body).toEqual({ message: expect.stringContaining('You must change your password'), url: `${s.config.baseUrl}api/swagger` })
    }
    expect((await s.post('/user/repos', { name: 'blocked' }, { token: u.token })).status).toBe(403)
    expect((await s.get('/repos/flagged2/blocked', { token: admin.token })).status).toBe(404)
    const reset = await s.patch('/admin/users/flagged2', { password: 'new-secret', must_change_password: false }, { token: admin.token })
    expect(reset.status).toBe(200)
    expect((await s.get('/user', { basic: ['flagged2', 'new-secret'] })).body.login).toBe('flagged2')
  })
})

describe('tokens of another user', () => {
  test('a site admin (Basic) lists and creates tokens for another user; others get 403, tokens 401', async () => {
    const list = await s.get('/users/carol/tokens', { basic: ['root', admin.password] })
    expect(list.status).toBe(200)
    expect(list.body).toEqual([{ id: expect.any(Number), name: 'test', sha1: '', token_last_eight: carol.token.slice(-8), scopes: ['all'] }])
    const made = await s.post('/users/carol/tokens', { name: 'by-admin', scopes: ['all'] }, { basic: ['root', admin.password] })
    expect(made.status).toBe(201)
    expect((await s.get('/user', { token: made.body.sha1 })).body.login).toBe('carol')
    const before = (await s.get('/users/carol/tokens', { basic: ['root', admin.password] })).body.length
    expect((await s.post('/users/carol/tokens', { name: 'x' }, { basic: ['bob', bob.password] })).status).toBe(403)
    expect((await s.get('/users/carol/tokens', { basic: ['bob', bob.password] })).status).toBe(403)
    expect((await s.post('/users/carol/tokens', { name: 'x' }, { token: admin.token })).status).toBe(401)
    expect((await s.post('/users/nobody/tokens', { name: 'x' }, { basic: ['root', admin.password] })).status).toBe(404)
    expect((await s.get('/users/carol/tokens', { basic: ['root', admin.password] })).body.length).toBe(before)
  })
})

describe('the User record by viewer', () => {
  test('self and site admin see language, is_admin and the flags; others and anonymous do not', async () => {
    await s.deps.db.update(users).set({ language: 'de-DE' }).where(eq(users.lowerName, 'root'))
    const self = (await s.get('/users/root', { token: admin.token })).body
    expect(self).toMatchObject({ login: 'root', email: 'root@example.com', language: 'de-DE', is_admin: true, active: true })
    const byAdmin = (await s.get('/users/carol', { token: admin.token })).body
    expect(byAdmin).toMatchObject({ email: 'carol@example.com', is_admin: false, active: true })
    const byOther = (await s.get('/users/root', { token: bob.token })).body
    expect(byOther).toMatchObject({ email: 'root@example.com', language: '', is_admin: false, active: false })
    const anon = (await s.get('/users/root')).body
    expect(anon).toMatchObject({ email: `root@${s.config.noReplyDomain}`, language: '', is_admin: false })
    const search = (await s.get('/users/search?q=roo')).body
    expect(search.data[0].email).toBe(`root@${s.config.noReplyDomain}`)
  })
})

describe('bodies', () => {
  test('a body over the limit answers 413 in the error shape and changes nothing', async () => {
    const before = await userCount()
    const big = JSON.stringify({ username: 'huge', email: 'huge@example.com', password: 'x'.repeat(MAX_API_BODY) })
    for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded']) {
      const r = await s.request('POST', '/admin/users', { token: admin.token, raw: big, headers: { 'content-type': type } })
      expect(r.status).toBe(413)
      expect(r.body).toEqual({ message: expect.stringContaining('larger than'), url: `${s.config.baseUrl}api/swagger` })
    }
    const raw = await s.request('POST', '/markdown/raw', { raw: 'x'.repeat(MAX_API_BODY + 1), headers: { 'content-type': 'text/plain' } })
    expect(raw.status).toBe(413)
    expect(await userCount()).toBe(before)
  })

  test('a wrong method on a known path is a JSON 404, never HTML or an empty body', async () => {
    for (const [method, path] of [['PUT', '/version'], ['DELETE', '/user'], ['PATCH', '/markdown']]) {
      const r = await s.request(method, path, { token: admin.token })
      expect(r.status).toBe(404)
      expect(r.headers.get('content-type')).toContain('application/json')
      expect(r.body.message).toEqual(expect.any(String))
    }
  })
})

describe('API document', () => {
  test('markdown answers are documented as text/html', async () => {
    const doc: any = await (await fetch(`${s.url}/swagger.v1.json`)).json()
    for (const path of ['/api/v1/markdown', '/api/v1/markdown/raw']) {
      const op = doc.paths[path].post
      expect(Object.keys(op.responses['200'].content)).toEqual(['text/html'])
      expect(op['x-content-type']).toBeUndefined()
    }
    expect(Object.keys(doc.paths['/api/v1/markdown/raw'].post.requestBody.content)).toEqual(['text/plain'])
    // Served twice (cached document): still right.
    const again: any = await (await fetch(`${s.url}/swagger.v1.json`)).json()
    expect(Object.keys(again.paths['/api/v1/markdown'].post.responses['200'].content)).toEqual(['text/html'])
  })
})

describe('admin deleting users', () => {
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

describe('request bodies (options.md §0)', () => {
  test('a JSON body is read whatever its Content-Type (text/plain too, or none); garbage is 400', async () => {
    expect((await s.post('/user/repos', { name: 'bodies' }, { token: bob.token })).status).toBe(201)
    for (const type of ['text/plain', 'application/octet-stream', undefined]) {
      const description = `sent as ${type ?? 'no type'}`
      const headers: Record<string, string> = type ? { 'content-type': type } : {}
      const r = await s.request('PATCH', '/repos/bob/bodies', { raw: JSON.stringify({ description }), token: bob.token, headers })
      expect(r.status).toBe(200)
      expect(r.body.description).toBe(description)
    }
    const bad = await s.request('PATCH', '/repos/bob/bodies', { raw: 'not json', token: bob.token, headers: { 'content-type': 'text/plain' } })
    expect(bad.status).toBe(400)
    expect(bad.body.message).toBeString()
    expect((await s.get('/repos/bob/bodies', { token: bob.token })).body.description).toBe('sent as no type')
  })
})
