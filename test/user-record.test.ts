import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { users } from '../src/db/schema'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/** The User record: which of its fields each kind of viewer sees (self, site admin, another user, anonymous). */

let s: TestServer
let admin: TestUser
let alice: TestUser
let bob: TestUser
beforeAll(async () => {
  s = await startTestServer()
  admin = await s.user('root', { admin: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
  await s.user('carol')
})
afterAll(() => s.stop())

describe('the User record by viewer', () => {
  test('e-mail hidden from anonymous callers', async () => {
    const anon = await s.get('/users/ALICE')
    expect(anon.status).toBe(200)
    expect(anon.body.login).toBe('alice')
    expect(anon.body.email).not.toBe('alice@example.com')
    const signed = await s.get('/users/alice', { token: alice.token })
    expect(signed.body.email).toBe('alice@example.com')
  })

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

