import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { PageCache, pageCacheOf } from '../src/db/page-cache'

/**
 * The point reads' records (GET /users/{username}, GET /repos/{owner}/{repo}) are kept as JSON
 * text while the database is unchanged (convert/record-json.ts): each viewer still gets the
 * record made for them, and a write shows in the next read.
 */
let s: TestServer
let alice: TestUser
let bob: TestUser
let admin: TestUser

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  admin = await s.user('root', { admin: true })
  expect((await s.post('/user/repos', { name: 'kept', description: 'first' }, { token: alice.token })).status).toBe(201)
})
afterAll(() => s.stop())

/** What the kind's cache holds now (its cost: the texts' lengths). */
const held = (kind: string): number => pageCacheOf(s.deps.db, `record:${kind}`, () => undefined as unknown as PageCache<string>)?.size ?? 0

describe('point reads kept as JSON text', () => {
  test('a user record: kept, made for each viewer, a write seen at once', async () => {
    const anon = await s.get('/users/alice')
    expect(anon.status).toBe(200)
    expect(anon.headers.get('content-type')).toBe('application/json;charset=utf-8')
    if (s.deps.db.$runtime.dialect === 'sqlite') expect(held('user')).toBeGreaterThan(0)
    expect((await s.get('/users/alice')).body).toEqual(anon.body)
    expect(anon.body.email).not.toBe('alice@example.com')
    expect(anon.body.is_admin).toBe(false)
    // The user herself and a site administrator see her address and privileged fields; another user does not.
    const own = await s.get('/users/alice', { token: alice.token })
    expect(own.body.email).toBe('alice@example.com')
    expect(own.body.active).toBe(true)
    expect((await s.get('/users/alice', { token: admin.token })).body.active).toBe(true)
    expect((await s.get('/users/alice', { token: bob.token })).body.active).toBe(false)
    expect((await s.get('/users/alice')).body).toEqual(anon.body)

    expect((await s.patch('/user/settings', { full_name: 'Alice Again' }, { token: alice.token })).status).toBe(200)
    expect((await s.get('/users/alice')).body.full_name).toBe('Alice Again')
    expect((await s.get('/users/alice', { token: alice.token })).body.full_name).toBe('Alice Again')
    // Unknown and refused names answer as before.
    expect((await s.get('/users/nobody')).status).toBe(404)
  })

  test('a repository record: kept, permissions per viewer, a write seen at once', async () => {
    const anon = await s.get('/repos/alice/kept')
    expect(anon.status).toBe(200)
    expect(anon.headers.get('content-type')).toBe('application/json;charset=utf-8')
    if (s.deps.db.$runtime.dialect === 'sqlite') expect(held('repository')).toBeGreaterThan(0)
    expect((await s.get('/repos/alice/kept')).body).toEqual(anon.body)
    expect(anon.body.permissions).toEqual({ admin: false, push: false, pull: true })
    expect((await s.get('/repos/alice/kept', { token: alice.token })).body.permissions).toEqual({ admin: true, push: true, pull: true })
    expect((await s.get('/repos/alice/kept', { token: bob.token })).body.permissions).toEqual({ admin: false, push: false, pull: true })

    expect((await s.patch('/repos/alice/kept', { description: 'second' }, { token: alice.token })).status).toBe(200)
    expect((await s.get('/repos/alice/kept')).body.description).toBe('second')
    // Made private: hidden from others at once, the owner's record says so.
    expect((await s.patch('/repos/alice/kept', { private: true }, { token: alice.token })).status).toBe(200)
    expect((await s.get('/repos/alice/kept')).status).toBe(404)
    expect((await s.get('/repos/alice/kept', { token: bob.token })).status).toBe(404)
    expect((await s.get('/repos/alice/kept', { token: alice.token })).body.private).toBe(true)
  })
})
