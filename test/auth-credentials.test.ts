import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import { csrfIn, signInByForm } from './web-session'

/**
 * Who a request's credentials name: tokens (header, query, Basic), passwords by login or e-mail
 * address, accounts that may not sign in, tokens made for another user, addresses that sign in.
 * The limits on failed attempts are test/auth-hardening.test.ts's; acting as another user is
 * test/auth-sudo.test.ts's.
 */

let s: TestServer
let admin: TestUser
let alice: TestUser
let bob: TestUser
let carol: TestUser
const dirs: string[] = []
beforeAll(async () => {
  s = await startTestServer()
  admin = await s.user('root', { admin: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('credentials', () => {
  test('GET /user needs credentials; token, Basic and query tokens work', async () => {
    expect((await s.get('/user')).status).toBe(401)
    expect((await s.get('/user', { token: alice.token })).body.login).toBe('alice')
    expect((await s.get('/user', { headers: { authorization: `Bearer ${alice.token}` } })).body.login).toBe('alice')
    expect((await s.get('/user', { basic: ['alice', alice.password] })).body.login).toBe('alice')
    expect((await s.get('/user', { basic: ['alice@example.com', alice.password] })).body.login).toBe('alice')
    expect((await s.get(`/user?token=${alice.token}`)).body.login).toBe('alice')
    expect((await s.get(`/user?access_token=${alice.token}`)).body.login).toBe('alice')
    expect((await s.get('/user', { basic: [alice.token, ''] })).body.login).toBe('alice')
    expect((await s.get('/user', { basic: ['alice', alice.token] })).body.login).toBe('alice')
  })

  test('wrong credentials answer 401', async () => {
    expect((await s.get('/user', { basic: ['alice', 'wrong'] })).status).toBe(401)
    expect((await s.get('/user', { token: 'f'.repeat(40) })).status).toBe(401)
    expect((await s.get('/users/alice', { basic: ['nobody', 'x'] })).status).toBe(401)
  })
})

describe('tokens in Basic credentials', () => {
  test('a token as the password works whatever the user name', async () => {
    for (const name of ['oauth2', 'x-access-token', 'anything', 'alice', 'someone-else', ''])
      expect([name, (await s.get('/user', { basic: [name, alice.token] })).body.login]).toEqual([name, 'alice'])
    // Still: a token as the user name with an empty password or x-oauth-basic.
    expect((await s.get('/user', { basic: [alice.token, ''] })).body.login).toBe('alice')
    expect((await s.get('/user', { basic: [alice.token, 'x-oauth-basic'] })).body.login).toBe('alice')
    // A wrong token is a wrong password.
    expect((await s.get('/user', { basic: ['oauth2', '0'.repeat(40)] })).status).toBe(401)
  })

  test('git clone of a private repository with oauth2:TOKEN in the URL', async () => {
    expect((await s.post('/user/repos', { name: 'hidden', private: true }, { token: alice.token })).status).toBe(201)
    const work = tempDir()
    dirs.push(work)
    await gitOk(work, 'init', '-q', '-b', 'master')
    writeFileSync(join(work, 'secret.txt'), 'only for alice\n')
    await gitOk(work, 'add', 'secret.txt')
    await gitOk(work, 'commit', '-q', '-m', 'first')
    await gitOk(work, 'push', remoteUrl(s.url, 'alice/hidden.git', 'x-access-token', alice.token), 'master')
    const clone = tempDir()
    dirs.push(clone)
    await gitOk(clone, 'clone', '-q', remoteUrl(s.url, 'alice/hidden.git', 'oauth2', alice.token), 'out')
    expect(readFileSync(join(clone, 'out', 'secret.txt'), 'utf8')).toBe('only for alice\n')
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

describe('a password an administrator set, on the web (Gitea’s /user/settings/change_password)', () => {
  test('a session goes to the change page from every page (signing out stays possible); a token on a page is refused; the new password twice ends it', async () => {
    const u = await s.user('flagged3')
    expect((await s.patch('/admin/users/flagged3', { must_change_password: true }, { token: admin.token })).status).toBe(200)
    const cookie = await signInByForm(s.url, u)
    const visit = (path: string, headers: Record<string, string> = { cookie }) => fetch(s.url + path, { headers: { accept: 'text/html', ...headers }, redirect: 'manual' })
    for (const path of ['/', '/explore/repos', '/user/settings/keys', '/repo/create'])  {
      const res = await visit(path)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/user/settings/change_password')
    }
    // A form posted elsewhere changes nothing.
    const elsewhere = await fetch(s.url + '/repo/create', { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: 'repo_name=sneaky', redirect: 'manual' })
    expect(elsewhere.status).toBe(303)
    expect((await s.get('/repos/flagged3/sneaky', { token: admin.token })).status).toBe(404)
    // With a token or the password, a page is refused as the API is.
    expect((await visit('/explore/repos', { authorization: `token ${u.token}` })).status).toBe(403)
    const form = await visit('/user/settings/change_password')
    expect(form.status).toBe(200)
    const html = await form.text()
    expect(html).not.toContain('name="old_password"')
    const change = (password: string, retype: string) =>
      fetch(s.url + '/user/settings/change_password', { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: csrfIn(html)!, password, retype }), redirect: 'manual' })
    expect((await change('new-secret-1', 'other')).status).toBe(422)
    const done = await change('new-secret-1', 'new-secret-1')
    expect(done.status).toBe(303)
    expect(done.headers.get('location')).toBe('/')
    expect((await visit('/explore/repos')).status).toBe(200)
    expect((await s.get('/user', { basic: ['flagged3', 'new-secret-1'] })).body.login).toBe('flagged3')
    // The page is then for nobody: home.
    expect((await visit('/user/settings/change_password')).headers.get('location')).toBe('/')
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

describe('addresses added through POST /user/emails', () => {
  test('are unverified and do not sign in through Basic; the primary one still does', async () => {
    const u = await s.user('mailer')
    const added = await s.post('/user/emails', { emails: ['mailer-work@example.com'] }, { token: u.token })
    expect(added.status).toBe(201)
    expect(added.body).toEqual([{ email: 'mailer-work@example.com', verified: false, primary: false }])
    expect((await s.get('/user', { basic: ['mailer-work@example.com', u.password] })).status).toBe(401)
    expect((await s.get('/user', { basic: ['mailer@example.com', u.password] })).status).toBe(200)
    expect((await s.get('/user', { basic: ['mailer', u.password] })).status).toBe(200)
  })

  test('claiming another person\'s address gives no way in to the claimer\'s account by it', async () => {
    const thief = await s.user('thief')
    expect((await s.post('/user/emails', { emails: ['ceo@example.com'] }, { token: thief.token })).status).toBe(201)
    expect((await s.get('/user', { basic: ['ceo@example.com', thief.password] })).status).toBe(401)
  })

  test('an administrator can still manage them: made primary by admin edit user, the address is verified and signs in', async () => {
    const u = await s.user('managedmail')
    await s.post('/user/emails', { emails: ['managed-2@example.com'] }, { token: u.token })
    expect((await s.patch('/admin/users/managedmail', { email: 'managed-2@example.com' }, { token: admin.token })).status).toBe(200)
    const listed = await s.get('/user/emails', { token: u.token })
    expect(listed.body.find((e: any) => e.email === 'managed-2@example.com')).toEqual({ email: 'managed-2@example.com', verified: true, primary: true })
    expect((await s.get('/user', { basic: ['managed-2@example.com', u.password] })).status).toBe(200)
  })
})
