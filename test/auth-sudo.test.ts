import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/** Sudo: a site administrator acting as another user (the `sudo` query parameter or header), as Gitea. */

let s: TestServer
let admin: TestUser
let bob: TestUser
beforeAll(async () => {
  s = await startTestServer({ lfsStartServer: true })
  admin = await s.user('root', { admin: true })
  bob = await s.user('bob')
  await s.user('carol')
  await s.user('alice')
})
afterAll(() => s.stop())

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

  test('as a user barred from signing in is refused', async () => {
    const admin = await s.user('boss', { admin: true })
    await s.user('barred')
    await s.user('sleeper')
    expect((await s.patch('/admin/users/barred', { prohibit_login: true }, { token: admin.token })).status).toBe(200)
    expect((await s.patch('/admin/users/sleeper', { active: false }, { token: admin.token })).status).toBe(200)
    for (const name of ['barred', 'sleeper']) {
      const res = await s.get(`/user?sudo=${name}`, { token: admin.token })
      expect(res.status).toBe(403)
      expect(res.body.message).toBe(`Cannot sudo as ${name}: the account is prohibited from signing in.`)
      const byHeader = await s.post('/user/repos', { name: 'sneaky' }, { token: admin.token, headers: { sudo: name } })
      expect(byHeader.status).toBe(403)
    }
    expect((await s.get('/repos/barred/sneaky', { token: admin.token })).status).toBe(404)
    expect((await s.get('/user?sudo=alice', { token: admin.token })).body.login).toBe('alice')
  })

  test("is the API's only (Gitea's /api/v1): git over HTTP and LFS act as the credentials' own user", async () => {
    expect((await s.post('/user/repos', { name: 'shared', auto_init: true }, { token: bob.token })).status).toBe(201)
    const carol = { authorization: `token ${(await s.user('sudocarol')).token}` }
    // A non-administrator's sudo is not refused there: it is not read.
    const refs = await fetch(`${s.url}/bob/shared.git/info/refs?service=git-upload-pack&sudo=alice`, { headers: { ...carol, sudo: 'alice' } })
    expect(refs.status).toBe(200)
    // An administrator's lock is theirs, not the user's named.
    expect((await s.put('/repos/bob/shared/collaborators/root', { permission: 'write' }, { token: bob.token })).status).toBe(204)
    const lock = await fetch(`${s.url}/bob/shared.git/info/lfs/locks?sudo=bob`, {
      method: 'POST',
      headers: { authorization: `token ${admin.token}`, sudo: 'bob', accept: 'application/vnd.git-lfs+json', 'content-type': 'application/vnd.git-lfs+json' },
      body: JSON.stringify({ path: 'big.bin' }),
    })
    expect(lock.status).toBe(201)
    expect((await lock.json()).lock.owner.name).toBe('root')
  })
})
