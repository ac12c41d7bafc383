import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { csrfIn, webVisitors } from './web-session'
import { createAccessToken } from '../src/modules/users/service'
import { contentMark } from './db-snapshot'
import { emailAddresses } from '../src/db/schema'
import { eq } from 'drizzle-orm'

/**
 * The account side of the user settings over plain HTTP (Gitea 1.23's addresses): the e-mail
 * addresses, deleting one's account, the organisations one belongs to (leaving one), the
 * repositories one owns. Each form refused without its CSRF token; each refusal says why and
 * changes nothing; what the forms did, read back through the API.
 */

let s: TestServer
let root: TestUser, alice: TestUser, bob: TestUser, carol: TestUser, dave: TestUser
let mark: () => Promise<string>
const { page, signIn, submit, expectCsrfRefused, expectSignInAsked } = webVisitors(() => s.url, () => mark())

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  root = await s.user('root', { admin: true })
  ;[alice, bob, carol, dave] = await Promise.all(['alice', 'bob', 'carol', 'dave'].map((name) => s.user(name)))
})
afterAll(async () => {
  await s.stop()
})

/** A refused form: its status, its message on the page again, and nothing changed. */
async function expectRefused(user: TestUser, path: string, fields: Record<string, string>, status: number, message: string, from = '/user/settings/account') {
  await signIn(user)
  const before = await mark()
  const res = await submit(user, path, fields, { from })
  expect(res.status).toBe(status)
  expect(res.html).toContain('role="alert"')
  expect(res.html).toContain(message)
  expect(await mark()).toBe(before)
}

const emailsOf = async (user: TestUser) => (await s.get('/user/emails', { token: user.token })).body as { email: string; verified: boolean; primary: boolean }[]
/** The id of one of the user's addresses, from its Delete form on the account page. */
async function addressIdOf(user: TestUser, email: string): Promise<string> {
  const html = await (await page('/user/settings/account', await signIn(user))).text()
  const before = html.slice(0, html.indexOf(`>Delete ${email}<`))
  const id = [...before.matchAll(/name="id" value="([0-9]+)"/g)].pop()?.[1]
  expect(id).toBeDefined()
  return id!
}

describe('the pages', () => {
  test('each needs a signed-in user (the sign-in page asked of anonymous) and shows the user their own, in the settings menu', async () => {
    for (const path of ['/user/settings/account', '/user/settings/organization', '/user/settings/repos']) {
      await expectSignInAsked(path)
      const mine = await page(path, await signIn(alice))
      expect(mine.status).toBe(200)
      const html = await mine.text()
      expect(html).toContain(`href="${path}" aria-current="page"`)
      for (const item of ['/user/settings/account', '/user/settings/organization', '/user/settings/repos']) expect(html).toContain(`href="${item}"`)
    }
    const account = await (await page('/user/settings/account', await signIn(alice))).text()
    expect(account).toContain('alice@example.com')
    expect(account).not.toContain('bob@example.com')
  })
})

describe('e-mail addresses', () => {
  test('added (not activated), refused when bad or another user’s, made primary once activated, deleted but never the primary', async () => {
    await expectCsrfRefused(alice, '/user/settings/account/email', { email: 'alice.two@example.com' })
    const added = await submit(alice, '/user/settings/account/email', { email: 'alice.two@example.com' }, { from: '/user/settings/account' })
    expect(added.status).toBe(303)
    expect(added.location).toBe('/user/settings/account?done=email-added')
    expect(await emailsOf(alice)).toEqual([
      { email: 'alice@example.com', verified: true, primary: true },
      { email: 'alice.two@example.com', verified: false, primary: false },
    ])
    // The API's validation: a bad address, one another user has, one she has already.
    await expectRefused(alice, '/user/settings/account/email', { email: 'not an address' }, 422, 'Could not add the address: is not a valid email address')
    await expectRefused(alice, '/user/settings/account/email', { email: 'BOB@example.com' }, 422, 'Email address has been used: bob@example.com')
    await expectRefused(alice, '/user/settings/account/email', { email: 'alice.two@example.com' }, 422, 'Email address has been used')
    await expectRefused(alice, '/user/settings/account/email', { email: 'x'.repeat(300) + '@example.com' }, 422, 'is not a valid email address')

    // Primary: only an activated address (Gitea's MakeActiveEmailPrimary), only one's own.
    const two = await addressIdOf(alice, 'alice.two@example.com')
    await expectRefused(alice, '/user/settings/account/email', { _method: 'PRIMARY', id: two }, 422, 'only an activated address can be the primary one')
    const bobs = (await s.deps.db.select({ id: emailAddresses.id }).from(emailAddresses).where(eq(emailAddresses.userId, bob.user.id)))[0]!.id
    await expectRefused(alice, '/user/settings/account/email', { _method: 'PRIMARY', id: String(bobs) }, 404, 'email address does not exist')
    await expectRefused(alice, '/user/settings/account/email', { _method: 'PRIMARY', id: 'abc' }, 404, 'email address does not exist')
    const activated = await submit(root, '/-/admin/emails/activate', { uid: String(alice.user.id), email: 'alice.two@example.com', activate: 'true' }, { from: '/-/admin/emails' })
    expect(activated.status).toBe(303)
    const html = await (await page('/user/settings/account', await signIn(alice))).text()
    expect(html).toContain('Make alice.two@example.com primary')
    await expectCsrfRefused(alice, '/user/settings/account/email', { _method: 'PRIMARY', id: two })
    const primary = await submit(alice, '/user/settings/account/email', { _method: 'PRIMARY', id: two }, { from: '/user/settings/account' })
    expect(primary.status).toBe(303)
    expect(primary.location).toBe('/user/settings/account?done=email-primary')
    expect((await s.get('/user', { token: alice.token })).body.email).toBe('alice.two@example.com')
    expect(await emailsOf(alice)).toEqual([
      { email: 'alice.two@example.com', verified: true, primary: true },
      { email: 'alice@example.com', verified: true, primary: false },
    ])

    // Delete: not the primary one, not another user's.
    await expectRefused(alice, '/user/settings/account/email/delete', { id: two }, 422, 'the primary email address cannot be deleted')
    await expectRefused(alice, '/user/settings/account/email/delete', { id: String(bobs) }, 404, 'email address does not exist')
    const first = await addressIdOf(alice, 'alice@example.com')
    await expectCsrfRefused(alice, '/user/settings/account/email/delete', { id: first })
    const deleted = await submit(alice, '/user/settings/account/email/delete', { id: first }, { from: '/user/settings/account' })
    expect(deleted.status).toBe(303)
    expect(deleted.location).toBe('/user/settings/account?done=email-deleted')
    expect(await emailsOf(alice)).toEqual([{ email: 'alice.two@example.com', verified: true, primary: true }])
    expect(await (await page('/user/settings/account?done=email-deleted', await signIn(alice))).text()).toContain('The address was deleted.')
  })
})

describe('tokens on the settings pages', () => {
  test('a token (or a password) with a pre-session cookie and its CSRF token posts no form: not an address, not a new token of wider scope', async () => {
    // Even with the user scope the pages need: a form would make it a token of every scope.
    const { secret } = await createAccessToken(s.deps, dave.user.id, 'narrow', ['write:user'])
    // What anyone gets from the sign-in page: a pre-session cookie and the CSRF token bound to it.
    const login = await page('/user/login')
    const pre = login.headers.get('set-cookie')!.split(';')[0]!
    const csrf = csrfIn(await login.text())!
    const before = await mark()
    for (const authorization of [`token ${secret}`, dave.basic]) {
      for (const [path, fields] of [
        ['/user/settings/account/email', { email: 'dave.evil@example.com' }],
        ['/user/settings/applications', { name: 'wide', scope_repository: 'write', scope_user: 'write' }],
      ] as const) {
        const res = await fetch(s.url + path, {
          method: 'POST',
          headers: { cookie: pre, authorization, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ _csrf: csrf, ...fields }),
          redirect: 'manual',
        })
        expect(res.status).toBe(403)
        expect(await res.text()).toContain('The form has expired')
      }
    }
    expect(await mark()).toBe(before)
  })

  test('read with a token, the settings pages need the user scope (the API’s /user routes’)', async () => {
    const narrow = await createAccessToken(s.deps, dave.user.id, 'narrow pages', ['read:package'])
    const wide = await createAccessToken(s.deps, dave.user.id, 'user pages', ['read:user'])
    for (const path of ['/user/settings/account', '/user/settings/repos', '/user/settings/organization', '/user/settings/applications']) {
      const as = (secret: string) => fetch(s.url + path, { headers: { accept: 'text/html', authorization: `token ${secret}` }, redirect: 'manual' })
      const refused = await as(narrow.secret)
      expect(refused.status).toBe(403)
      expect(await refused.text()).not.toContain('dave@example.com')
      expect((await as(wide.secret)).status).toBe(200)
    }
  })
})

describe('organisations', () => {
  test('listed with a Leave form; a member leaves, the last owner may not, nor may a non-member', async () => {
    expect((await s.post('/orgs', { username: 'guild', full_name: 'The Guild' }, { token: alice.token })).status).toBe(201)
    const team = await s.post('/orgs/guild/teams', { name: 'crafters', permission: 'read' }, { token: alice.token })
    expect((await s.put(`/teams/${team.body.id}/members/bob`, undefined, { token: alice.token })).status).toBe(204)
    const listed = await (await page('/user/settings/organization', await signIn(bob))).text()
    expect(listed).toContain('href="/guild"')
    expect(listed).toContain('The Guild')
    expect(listed).toContain('action="/org/guild/members/action/leave"')
    expect(await (await page('/user/settings/organization', await signIn(carol))).text()).toContain('You are not a member of any organisation.')

    // The last owner stays, with the reason; a non-member is refused by the pipeline; nothing changes.
    await expectRefused(alice, '/org/guild/members/action/leave', {}, 422, 'alice is the last owner of organization guild', '/user/settings/organization')
    await signIn(carol)
    const before = await mark()
    expect((await submit(carol, '/org/guild/members/action/leave', {}, { from: '/user/settings/organization' })).status).toBe(403)
    expect(await mark()).toBe(before)

    await expectCsrfRefused(bob, '/org/guild/members/action/leave', {})
    const left = await submit(bob, '/org/guild/members/action/leave', {}, { from: '/user/settings/organization' })
    expect(left.status).toBe(303)
    expect(left.location).toBe('/user/settings/organization?done=org-left')
    expect((await s.get('/orgs/guild/members/bob', { token: alice.token })).status).toBe(404)
    expect((await s.get(`/teams/${team.body.id}/members/bob`, { token: alice.token })).status).toBe(404)
    expect(await (await page('/user/settings/organization', await signIn(bob))).text()).not.toContain('href="/guild"')
  })
})

describe('repositories', () => {
  test('the ones the user owns, marked private or fork, paged; not another user’s', async () => {
    expect((await s.post('/user/repos', { name: 'secret', private: true }, { token: dave.token })).status).toBe(201)
    expect((await s.post('/user/repos', { name: 'origin', auto_init: true }, { token: bob.token })).status).toBe(201)
    expect((await s.post('/repos/bob/origin/forks', {}, { token: dave.token })).status).toBe(202)
    for (let i = 0; i < 19; i++) expect((await s.post('/user/repos', { name: `r${String(i).padStart(2, '0')}` }, { token: dave.token })).status).toBe(201)
    const first = await (await page('/user/settings/repos', await signIn(dave))).text()
    expect(first).toContain('You own 21 repositories.')
    expect(first).toMatch(/href="\/dave\/origin">\s*dave\/origin\s*<\/a>[\s\S]*?<td>Fork<\/td>/)
    expect(first).toContain('href="/dave/origin/settings"')
    expect(first).toContain('href="/user/settings/repos?page=2"')
    expect(first).not.toContain('href="/bob/origin"')
    const second = await (await page('/user/settings/repos?page=2', await signIn(dave))).text()
    expect(second).toMatch(/href="\/dave\/secret">\s*dave\/secret\s*<\/a>[\s\S]*?<td>Private<\/td>/)
    expect(second).toContain('Page 2 of 2')
    expect(await (await page('/user/settings/repos', await signIn(carol))).text()).toContain('You own no repositories.')
  })
})

describe('deleting one’s account', () => {
  test('the password is needed; refused while the user owns repositories or belongs to an organisation; then done, signed out', async () => {
    await signIn(carol)
    await expectCsrfRefused(carol, '/user/settings/account/delete', { password: carol.password })
    await expectRefused(carol, '/user/settings/account/delete', { password: 'wrong' }, 403, 'The password is wrong: your account was not deleted.')
    await expectRefused(carol, '/user/settings/account/delete', {}, 403, 'The password is wrong')
    expect((await s.post('/user/repos', { name: 'mine' }, { token: carol.token })).status).toBe(201)
    await expectRefused(carol, '/user/settings/account/delete', { password: carol.password }, 422, 'Your account was not deleted: user still owns repositories')
    expect((await s.del('/repos/carol/mine', undefined, { token: carol.token })).status).toBe(204)
    // Alice is guild's only owner.
    await expectRefused(alice, '/user/settings/account/delete', { password: alice.password }, 422, 'user is the only owner of organization guild')

    const cookie = await signIn(carol)
    const gone = await submit(carol, '/user/settings/account/delete', { password: carol.password }, { from: '/user/settings/account' })
    expect(gone.status).toBe(303)
    expect(gone.location).toBe('/')
    expect((await s.get('/users/carol')).status).toBe(404)
    expect((await s.get('/user', { token: carol.token })).status).toBe(401)
    // The session ended with the account: its cookie signs no one in.
    const after = await page('/user/settings', cookie)
    expect(after.status).toBe(303)
    expect(after.headers.get('location')).toBe('/user/login?redirect_to=%2Fuser%2Fsettings')
  })

  test('the cookie is cleared by the answer', async () => {
    const erin = await s.user('erin')
    const cookie = await signIn(erin)
    const form = await (await page('/user/settings/account', cookie)).text()
    const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(form)![1]!
    const res = await fetch(s.url + '/user/settings/account/delete', {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, password: erin.password }),
      redirect: 'manual',
    })
    expect(res.status).toBe(303)
    expect(res.headers.getSetCookie().find((c) => c.startsWith('warren_session='))).toContain('Max-Age=0')
  })

  test('the last site administrator is never deleted by their own form (the command line’s refusal: cli.test.ts); while another remains, an administrator deletes their own account, or is deleted through the API', async () => {
    await expectRefused(root, '/user/settings/account/delete', { password: root.password }, 422, 'user is the last site administrator')
    expect((await s.get('/user', { token: root.token })).status).toBe(200)
    // With another administrator, either may go: one deletes their own account, another is deleted through the API.
    const admin2 = await s.user('admin2', { admin: true })
    const own = await submit(admin2, '/user/settings/account/delete', { password: admin2.password }, { from: '/user/settings/account' })
    expect(own.status).toBe(303)
    expect((await s.get('/user', { token: admin2.token })).status).toBe(401)
    const admin3 = await s.user('admin3', { admin: true })
    expect((await s.del('/admin/users/admin3', undefined, { token: root.token })).status).toBe(204)
    expect((await s.get('/user', { token: admin3.token })).status).toBe(401)
  })
})
