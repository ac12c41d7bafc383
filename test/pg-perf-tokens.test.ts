/**
 * Tokens found are kept in memory while the database is unchanged (auth/caller.ts findToken),
 * which spares a query on every request signed with one; any write forgets them. So a token
 * deleted, or its owner deactivated, is refused by the very next request, and a kept token gives
 * each request a user row of its own. Both databases.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from './helpers'

let s: TestServer

beforeAll(async () => {
  s = await startTestServer()
}, 240_000)
afterAll(async () => {
  await s?.stop()
})

describe('tokens kept while the database is unchanged', () => {
  test('a deleted token is refused at the next request', async () => {
    const u = await s.user('keeper')
    for (let i = 0; i < 3; i++) expect((await s.get('/user', { token: u.token })).body.login).toBe('keeper')
    const tokens = await s.get('/users/keeper/tokens', { basic: [u.name, u.password] })
    expect(tokens.status).toBe(200)
    expect((await s.del(`/users/keeper/tokens/${tokens.body[0].id}`, undefined, { basic: [u.name, u.password] })).status).toBe(204)
    expect((await s.get('/user', { token: u.token })).status).toBe(401)
  }, 240_000)

  test('an owner made inactive by an administrator is refused at the next request', async () => {
    const admin = await s.user('overseer', { admin: true })
    const u = await s.user('fading')
    expect((await s.get('/user', { token: u.token })).status).toBe(200)
    const edit = await s.patch('/admin/users/fading', { login_name: 'fading', source_id: 0, active: false }, { token: admin.token })
    expect(edit.status).toBe(200)
    expect((await s.get('/user', { token: u.token })).status).toBe(403)
  }, 240_000)

  test("each request gets its own copy of the kept user: a change one makes is not another's", async () => {
    const u = await s.user('copied')
    const first = await s.deps.auth.byToken(u.token)
    ;(first.user as { fullName: string }).fullName = 'changed in memory'
    const second = await s.deps.auth.byToken(u.token)
    expect(second.user!.fullName).not.toBe('changed in memory')
    expect(second.user!.id).toBe(u.user.id)
  }, 240_000)
})
