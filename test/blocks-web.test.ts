import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { userBlocks, users } from '../src/db/schema'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'

/**
 * The blocked users pages over plain HTTP (Gitea 1.23's `/user/settings/blocked_users` and
 * `/org/{org}/settings/blocked_users`): who may see them, every form refused without its CSRF
 * token, blocking with a note, changing the note, unblocking, read back through the API, and each
 * bad input answered on the page with its status and reason (never a 500).
 */

let s: TestServer
let alice: TestUser, bob: TestUser, carol: TestUser
const as = (u: TestUser) => ({ token: u.token })
const USER_PAGE = '/user/settings/blocked_users'
const ORG_PAGE = '/org/acme/settings/blocked_users'

const { page, signIn, submit } = webVisitors(() => s.url, async () => '')

const idOf = async (name: string) => (await s.deps.db.select({ id: users.id }).from(users).where(eq(users.lowerName, name)))[0]!.id
const blocksOf = async (name: string) => await s.deps.db.select({ note: userBlocks.note }).from(userBlocks).where(eq(userBlocks.blockerId, await idOf(name)))
const noteOf = async (blocker: string, blockee: TestUser) =>
  (await s.deps.db.select({ note: userBlocks.note }).from(userBlocks).where(and(eq(userBlocks.blockerId, await idOf(blocker)), eq(userBlocks.blockeeId, await idOf(blockee.name)))))[0]?.note

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  expect((await s.post('/orgs', { username: 'acme' }, as(alice))).status).toBe(201)
  const team = await s.post('/orgs/acme/teams', { name: 'devs', permission: 'read' }, as(alice))
  expect(team.status).toBe(201)
  expect((await s.put(`/teams/${team.body.id}/members/carol`, undefined, as(alice))).status).toBe(204)
})
afterAll(() => s.stop())

describe("a person's blocked users", () => {
  test('signed out: asked to sign in; the menu of the settings links the page', async () => {
    const res = await page(USER_PAGE)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe(`/user/login?redirect_to=${encodeURIComponent(USER_PAGE)}`)
    const settings = await (await page('/user/settings', await signIn(alice))).text()
    expect(settings).toContain(`href="${USER_PAGE}"`)
    const empty = await page(USER_PAGE, await signIn(alice))
    expect(empty.status).toBe(200)
    expect(await empty.text()).toContain('Nobody is blocked.')
  })

  test('without the CSRF token: a 403 page, nobody blocked', async () => {
    const res = await submit(alice, USER_PAGE, { action: 'block', blockee: 'bob' }, { csrf: null })
    expect(res.status).toBe(403)
    expect(res.html).toContain('The form has expired')
    expect(await blocksOf('alice')).toEqual([])
  })

  test('bad input is answered on the page with its status and reason, nothing written', async () => {
    const cases: [Record<string, string>, number, string][] = [
      [{ action: 'block', blockee: '' }, 422, 'Enter the name of a user.'],
      [{ action: 'block', blockee: 'nobody' }, 404, 'user does not exist'],
      [{ action: 'block', blockee: 'alice' }, 400, 'cannot block the user'],
      [{ action: 'block', blockee: 'acme' }, 400, 'cannot block an organization'],
      [{ action: 'unblock', blockee: 'bob' }, 400, 'cannot unblock the user'],
      [{ action: 'note', blockee: 'bob', note: 'x' }, 400, 'bob is not blocked'],
      [{ action: 'explode', blockee: 'bob' }, 422, 'unknown action'],
    ]
    for (const [fields, status, reason] of cases) {
      const res = await submit(alice, USER_PAGE, fields)
      expect([fields.action, res.status]).toEqual([fields.action, status])
      expect(res.html).toContain('role="alert"')
      expect(res.html).toContain(reason)
    }
    // A name or a note past its bound is refused by the form's schema (422), not stored.
    expect((await submit(alice, USER_PAGE, { action: 'block', blockee: 'bob', note: 'n'.repeat(256) })).status).toBe(422)
    expect((await submit(alice, USER_PAGE, { action: 'block', blockee: 'b'.repeat(300) })).status).toBe(422)
    expect(await blocksOf('alice')).toEqual([])
  })

  test('block with a note, change the note, unblock: each a See Other back with its notice, seen by the API', async () => {
    const blocked = await submit(alice, USER_PAGE, { action: 'block', blockee: 'bob', note: ' spammer ' })
    expect(blocked.status).toBe(303)
    expect(blocked.location).toBe(`${USER_PAGE}?done=blocked`)
    expect((await s.get('/user/blocks/bob', as(alice))).status).toBe(204)
    expect(await noteOf('alice', bob)).toBe('spammer')
    const shown = await (await page(`${USER_PAGE}?done=blocked`, await signIn(alice))).text()
    expect(shown).toContain('The user was blocked.')
    expect(shown).toContain('href="/bob"')
    expect(shown).toContain('spammer')
    // Blocking the same person again is Gitea's ErrCanNotBlock.
    expect((await submit(alice, USER_PAGE, { action: 'block', blockee: 'bob' })).status).toBe(400)

    const noted = await submit(alice, USER_PAGE, { action: 'note', blockee: 'bob', note: 'rude in #12' })
    expect(noted.location).toBe(`${USER_PAGE}?done=note-saved`)
    expect(await noteOf('alice', bob)).toBe('rude in #12')

    const unblocked = await submit(alice, USER_PAGE, { action: 'unblock', blockee: 'bob' })
    expect(unblocked.location).toBe(`${USER_PAGE}?done=unblocked`)
    expect((await s.get('/user/blocks/bob', as(alice))).status).toBe(404)
  })

  test('what the page lists escapes what people typed', async () => {
    expect((await s.put(`/user/blocks/bob?note=${encodeURIComponent('<script>x</script>')}`, undefined, as(carol))).status).toBe(204)
    const html = await (await page(USER_PAGE, await signIn(carol))).text()
    expect(html).not.toContain('<script>x</script>')
    expect(html).toContain('&lt;script&gt;x&lt;/script&gt;')
  })
})

describe("an organisation's blocked users", () => {
  test('its owners only: a member and a stranger are refused (403), signed out asked to sign in, an unknown organisation 404', async () => {
    expect((await page(ORG_PAGE, await signIn(alice))).status).toBe(200)
    // The organisation's pages link its settings for its owners only, whose menu links it.
    expect(await (await page('/org/acme/members', await signIn(alice))).text()).toContain('href="/org/acme/settings"')
    expect(await (await page('/org/acme/members', await signIn(carol))).text()).not.toContain('href="/org/acme/settings"')
    expect(await (await page('/org/acme/settings', await signIn(alice))).text()).toContain(`href="${ORG_PAGE}"`)
    for (const user of [carol, bob]) {
      expect((await page(ORG_PAGE, await signIn(user))).status).toBe(403)
      expect((await submit(user, ORG_PAGE, { action: 'block', blockee: 'bob' })).status).toBe(403)
    }
    expect(await blocksOf('acme')).toEqual([])
    expect((await page(ORG_PAGE)).status).toBe(303)
    expect((await page('/org/nothing-here/settings/blocked_users', await signIn(alice))).status).toBe(404)
  })

  test('an owner blocks for the organisation; its members cannot be blocked; unblock', async () => {
    const blocked = await submit(alice, ORG_PAGE, { action: 'block', blockee: 'bob', note: 'for the org' })
    expect(blocked.location).toBe(`${ORG_PAGE}?done=blocked`)
    expect((await s.get('/orgs/acme/blocks/bob', as(alice))).status).toBe(204)
    expect(await noteOf('acme', bob)).toBe('for the org')
    // alice's own blocks are not the organisation's.
    expect((await s.get('/user/blocks/bob', as(alice))).status).toBe(404)
    const member = await submit(alice, ORG_PAGE, { action: 'block', blockee: 'carol' })
    expect(member.status).toBe(400)
    expect(member.html).toContain('cannot block the user')
    const html = await (await page(ORG_PAGE, await signIn(alice))).text()
    expect(html).toContain('for the org')
    expect((await submit(alice, ORG_PAGE, { action: 'unblock', blockee: 'bob' })).location).toBe(`${ORG_PAGE}?done=unblocked`)
    expect((await s.get('/orgs/acme/blocks/bob', as(alice))).status).toBe(404)
  })
})
