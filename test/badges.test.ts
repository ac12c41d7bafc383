import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { userBadges } from '../src/db/schema'
import { createBadge, deleteBadge, listBadges } from '../src/modules/admin/badges'
import { ApiError } from '../src/lib/errors'

let s: TestServer
let admin: TestUser
let alice: TestUser
const asAdmin = () => ({ token: admin.token })
const errorShape = () => ({ message: expect.any(String), url: `${s.config.baseUrl}api/swagger` })
const slugsOf = async (name: string) => ((await s.get(`/admin/users/${name}/badges`, asAdmin())).body as { slug: string }[]).map((b) => b.slug)
const refusal = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (e) {
    return e instanceof ApiError ? e.status : -1
  }
  return 0
}

beforeAll(async () => {
  s = await startTestServer()
  admin = await s.user('root', { admin: true })
  alice = await s.user('alice')
  await createBadge(s.deps, { slug: 'first', description: 'The first one', imageUrl: 'https://example.com/first.png' })
  await createBadge(s.deps, { slug: 'second', description: '', imageUrl: '' })
  await createBadge(s.deps, { slug: 'third', description: 'Third', imageUrl: '' })
})
afterAll(() => s.stop())

describe('badges (the operator makes them)', () => {
  test('slugs are checked and unique; listed by slug', async () => {
    expect(await refusal(createBadge(s.deps, { slug: 'first', description: '', imageUrl: '' }))).toBe(409)
    expect(await refusal(createBadge(s.deps, { slug: 'has space', description: '', imageUrl: '' }))).toBe(422)
    expect(await refusal(createBadge(s.deps, { slug: '', description: '', imageUrl: '' }))).toBe(422)
    expect(await refusal(createBadge(s.deps, { slug: 'ok', description: '', imageUrl: 'javascript:alert(1)' }))).toBe(422)
    expect((await listBadges(s.deps)).map((b) => b.slug)).toEqual(['first', 'second', 'third'])
  })
})

describe('/admin/users/{username}/badges', () => {
  test('site administrators only; an unknown user is 404', async () => {
    const anonymous = await s.get('/admin/users/alice/badges')
    expect(anonymous.status).toBe(401)
    expect(anonymous.body).toEqual(errorShape())
    expect((await s.get('/admin/users/alice/badges', { token: alice.token })).status).toBe(403)
    expect((await s.post('/admin/users/alice/badges', { badge_slugs: ['first'] }, { token: alice.token })).status).toBe(403)
    expect((await s.del('/admin/users/alice/badges', { badge_slugs: ['first'] }, { token: alice.token })).status).toBe(403)
    expect(await slugsOf('alice')).toEqual([])
    const unknown = await s.get('/admin/users/nobody/badges', asAdmin())
    expect(unknown.status).toBe(404)
    expect(unknown.body).toEqual(errorShape())
    expect((await s.post('/admin/users/nobody/badges', { badge_slugs: ['first'] }, asAdmin())).status).toBe(404)
  })

  test('gives badges (each once), lists the records, takes them', async () => {
    expect((await s.post('/admin/users/alice/badges', { badge_slugs: ['first', 'second', 'first'] }, asAdmin())).status).toBe(204)
    const list = await s.get('/admin/users/alice/badges', asAdmin())
    expect(list.status).toBe(200)
    expect(list.headers.get('x-total-count')).toBe('2')
    expect(list.body).toEqual([
      { id: expect.any(Number), slug: 'first', description: 'The first one', image_url: 'https://example.com/first.png' },
      { id: expect.any(Number), slug: 'second', description: '', image_url: '' },
    ])
    // Given again: nothing doubles.
    expect((await s.post('/admin/users/alice/badges', { badge_slugs: ['second', 'third'] }, asAdmin())).status).toBe(204)
    expect(await slugsOf('alice')).toEqual(['first', 'second', 'third'])
    expect((await s.deps.db.select().from(userBadges).where(eq(userBadges.userId, alice.user.id))).length).toBe(3)
    const page = await s.get('/admin/users/alice/badges?limit=1&page=2', asAdmin())
    expect(page.body.map((b: { slug: string }) => b.slug)).toEqual(['second'])
    expect(page.headers.get('x-total-count')).toBe('3')
    // Taken (one not held is no error); others' badges are untouched.
    expect((await s.post('/admin/users/root/badges', { badge_slugs: ['first'] }, asAdmin())).status).toBe(204)
    expect((await s.del('/admin/users/alice/badges', { badge_slugs: ['first'] }, asAdmin())).status).toBe(204)
    expect((await s.del('/admin/users/alice/badges', { badge_slugs: ['first'] }, asAdmin())).status).toBe(204)
    expect(await slugsOf('alice')).toEqual(['second', 'third'])
    expect(await slugsOf('root')).toEqual(['first'])
  })

  test('a slug no badge has is 422 and nothing changes; a malformed body is 422', async () => {
    const before = await slugsOf('alice')
    const add = await s.post('/admin/users/alice/badges', { badge_slugs: ['first', 'nope'] }, asAdmin())
    expect(add.status).toBe(422)
    expect(add.body.message).toContain('nope')
    const del = await s.del('/admin/users/alice/badges', { badge_slugs: ['second', 'nope'] }, asAdmin())
    expect(del.status).toBe(422)
    expect(await slugsOf('alice')).toEqual(before)
    expect((await s.post('/admin/users/alice/badges', { badge_slugs: 'first' }, asAdmin())).status).toBe(422)
    expect((await s.post('/admin/users/alice/badges', { badge_slugs: ['x'.repeat(300)] }, asAdmin())).status).toBe(422)
    expect((await s.post('/admin/users/alice/badges', { badge_slugs: Array(101).fill('first') }, asAdmin())).status).toBe(422)
    // An empty list changes nothing.
    expect((await s.post('/admin/users/alice/badges', {}, asAdmin())).status).toBe(204)
    expect(await slugsOf('alice')).toEqual(before)
  })

  test('a deleted badge is taken from everyone', async () => {
    await deleteBadge(s.deps, 'second')
    expect(await slugsOf('alice')).toEqual(['third'])
    // The rows go with it (the foreign key's ON DELETE CASCADE), not only out of the listing's join.
    expect((await s.deps.db.select().from(userBadges).where(eq(userBadges.userId, alice.user.id))).length).toBe(1)
    expect(await refusal(deleteBadge(s.deps, 'second'))).toBe(404)
    const gone = await s.post('/admin/users/alice/badges', { badge_slugs: ['second'] }, asAdmin())
    expect(gone.status).toBe(422)
  })
})
