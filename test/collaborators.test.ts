import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { makeOrg } from './access-fixtures'
import { collaborations } from '../src/db/schema'

let s: TestServer
let alice: TestUser
let bob: TestUser
let carol: TestUser
let dave: TestUser
let admin: TestUser
let repoId: number

const modeOf = async (userId: number) =>
  (await s.deps.db.select().from(collaborations).where(and(eq(collaborations.repoId, repoId), eq(collaborations.userId, userId))))[0]?.mode

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  dave = await s.user('dave')
  admin = await s.user('root', { admin: true })
  repoId = (await s.post('/user/repos', { name: 'proj', private: true }, { token: alice.token })).body.id
  await s.post('/user/repos', { name: 'open' }, { token: alice.token })
})
afterAll(() => s.stop())

describe('collaborators', () => {
  test('PUT adds with write by default, with an empty body or none, without Content-Type', async () => {
    const r = await s.request('PUT', '/repos/alice/proj/collaborators/bob', { token: alice.token })
    expect(r.status).toBe(204)
    expect(await modeOf(bob.user.id)).toBe(2)
    const raw = await s.request('PUT', '/repos/alice/proj/collaborators/carol', {
      token: alice.token,
      raw: JSON.stringify({ permission: 'read' }),
    })
    expect(raw.status).toBe(204)
    expect(await modeOf(carol.user.id)).toBe(1)
    // Bytes with no Content-Type at all (fetch sets none for a binary body), as the 2017 SDK sends.
    const bare = await fetch(`${s.url}/api/v1/repos/alice/proj/collaborators/carol`, {
      method: 'PUT',
      headers: { authorization: `token ${alice.token}` },
      body: new TextEncoder().encode(JSON.stringify({ permission: 'admin' })),
    })
    expect(bare.status).toBe(204)
    expect(await modeOf(carol.user.id)).toBe(3)
    expect((await s.put('/repos/alice/proj/collaborators/carol', {}, { token: alice.token })).status).toBe(204)
    expect(await modeOf(carol.user.id)).toBe(2)
  })

  test('PUT on an existing collaborator updates the permission', async () => {
    expect((await s.put('/repos/alice/proj/collaborators/bob', { permission: 'admin' }, { token: alice.token })).status).toBe(204)
    expect(await modeOf(bob.user.id)).toBe(3)
    expect((await s.put('/repos/alice/proj/collaborators/BOB', { permission: 'READ' }, { token: alice.token })).status).toBe(204)
    expect(await modeOf(bob.user.id)).toBe(1)
    expect((await s.deps.db.select().from(collaborations).where(eq(collaborations.repoId, repoId))).length).toBe(2)
  })

  test('bad input answers 422 and changes nothing', async () => {
    expect((await s.put('/repos/alice/proj/collaborators/bob', { permission: 'owner' }, { token: alice.token })).status).toBe(422)
    expect((await s.put('/repos/alice/proj/collaborators/bob', { permission: 'superuser' }, { token: alice.token })).status).toBe(422)
    expect((await s.put('/repos/alice/proj/collaborators/bob', { permission: 5 }, { token: alice.token })).status).toBe(422)
    expect(await modeOf(bob.user.id)).toBe(1)
    expect((await s.put('/repos/alice/proj/collaborators/ghost', {}, { token: alice.token })).status).toBe(422)
    expect((await s.put('/repos/alice/proj/collaborators/alice', {}, { token: alice.token })).status).toBe(422)
    await makeOrg(s, 'someorg', dave)
    expect((await s.put('/repos/alice/proj/collaborators/someorg', {}, { token: alice.token })).status).toBe(422)
    expect(await modeOf(alice.user.id)).toBeUndefined()
  })

  test('only repository admins change collaborators: 401 anonymous, 403 others, 404 private to outsiders', async () => {
    expect((await s.put('/repos/alice/open/collaborators/dave', {})).status).toBe(401)
    expect((await s.del('/repos/alice/open/collaborators/dave')).status).toBe(401)
    expect((await s.put('/repos/alice/open/collaborators/dave', {}, { token: dave.token })).status).toBe(403)
    expect((await s.put('/repos/alice/proj/collaborators/dave', {}, { token: dave.token })).status).toBe(404)
    // carol has write: not enough.
    expect((await s.put('/repos/alice/proj/collaborators/dave', {}, { token: carol.token })).status).toBe(403)
    expect((await s.del('/repos/alice/proj/collaborators/bob', undefined, { token: carol.token })).status).toBe(403)
    expect(await modeOf(dave.user.id)).toBeUndefined()
    // A collaborator with admin may; so may a site admin.
    await s.put('/repos/alice/proj/collaborators/bob', { permission: 'admin' }, { token: alice.token })
    expect((await s.put('/repos/alice/proj/collaborators/dave', { permission: 'read' }, { token: bob.token })).status).toBe(204)
    expect((await s.put('/repos/alice/proj/collaborators/dave', { permission: 'write' }, { token: admin.token })).status).toBe(204)
    expect(await modeOf(dave.user.id)).toBe(2)
  })

  test('GET list and check need read access', async () => {
    const list = await s.get('/repos/alice/proj/collaborators', { token: carol.token })
    expect(list.status).toBe(200)
    expect(list.body.map((u: any) => u.login)).toEqual(['bob', 'carol', 'dave'])
    expect(list.headers.get('x-total-count')).toBe('3')
    const paged = await s.get('/repos/alice/proj/collaborators?limit=2&page=2', { token: alice.token })
    expect(paged.body.map((u: any) => u.login)).toEqual(['dave'])
    expect((await s.get('/repos/alice/proj/collaborators')).status).toBe(404)
    const outsider = await s.user('eve')
    expect((await s.get('/repos/alice/proj/collaborators', { token: outsider.token })).status).toBe(404)
    expect((await s.get('/repos/alice/open/collaborators')).body).toEqual([])
    expect((await s.get('/repos/alice/proj/collaborators/bob', { token: carol.token })).status).toBe(204)
    expect((await s.get('/repos/alice/proj/collaborators/eve', { token: carol.token })).status).toBe(404)
    expect((await s.get('/repos/alice/proj/collaborators/nobody', { token: carol.token })).status).toBe(422)
    expect((await s.get('/repos/alice/proj/collaborators/bob', { token: outsider.token })).status).toBe(404)
  })

  test('collaborators gain the access they were given', async () => {
    const r = await s.get('/repos/alice/proj', { token: dave.token })
    expect(r.status).toBe(200)
    expect(r.body.permissions).toEqual({ admin: false, push: true, pull: true })
  })

  test('DELETE removes (idempotent) and takes the access away', async () => {
    expect((await s.del('/repos/alice/proj/collaborators/dave', undefined, { token: alice.token })).status).toBe(204)
    expect(await modeOf(dave.user.id)).toBeUndefined()
    expect((await s.del('/repos/alice/proj/collaborators/dave', undefined, { token: alice.token })).status).toBe(204)
    expect((await s.del('/repos/alice/proj/collaborators/ghost', undefined, { token: alice.token })).status).toBe(422)
    expect((await s.get('/repos/alice/proj', { token: dave.token })).status).toBe(404)
    expect((await s.get('/repos/alice/proj/collaborators/dave', { token: alice.token })).status).toBe(404)
  })
})
