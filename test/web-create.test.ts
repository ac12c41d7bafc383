import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { users } from '../src/db/schema'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { csrfIn, webVisitors } from './web-session'
import { contentMark } from './db-snapshot'

/**
 * The migration page (`/repo/migrate`), the new organisation page (`/org/create`) and an
 * organisation's settings (`/org/{org}/settings`, its avatar, `/settings/delete`) over plain HTTP:
 * who may see them, every form refused without its CSRF token (nothing changed), the services'
 * refusals shown on the form again, and what the forms did, read back through the API.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, limited: TestUser
let mark: () => Promise<string>
const { page, signIn, submit, expectCsrfRefused } = webVisitors(() => s.url, () => mark())

beforeAll(async () => {
  // The server migrates from itself over loopback.
  s = await startTestServer({ migrationsAllowLocalNetworks: true })
  mark = contentMark(s.deps.db)
  alice = await s.user('alice')
  bob = await s.user('bob')
  limited = await s.user('limited')
  await s.deps.db.update(users).set({ allowCreateOrganization: false }).where(eq(users.id, limited.user.id))
  expect((await s.post('/user/repos', { name: 'source', auto_init: true }, { token: alice.token })).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
})

describe('signed out', () => {
  test('the creation pages ask to sign in', async () => {
    for (const path of ['/repo/migrate', '/repo/migrate?service_type=1', '/org/create']) {
      const res = await page(path)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe(`/user/login?redirect_to=${encodeURIComponent(path)}`)
    }
  })
})

describe('new organisation', () => {
  test('is linked from the new repository page, with the migration', async () => {
    const html = await (await page('/repo/create', await signIn(alice))).text()
    expect(html).toContain('href="/org/create"')
    expect(html).toContain('href="/repo/migrate"')
  })

  test('without the CSRF token: refused, nothing made', async () => {
    await expectCsrfRefused(alice, '/org/create', { org_name: 'nope' })
    expect((await s.get('/orgs/nope')).status).toBe(404)
  })

  test('creates the organisation with its owner, as POST /orgs', async () => {
    const form = await (await page('/org/create', await signIn(alice))).text()
    expect(form).toContain('name="org_name"')
    const res = await submit(alice, '/org/create', { org_name: 'acme', visibility: 'limited', repo_admin_change_team_access: 'on' })
    expect([res.status, res.location]).toEqual([303, '/acme?done=org-created'])
    const org = (await s.get('/orgs/acme', { token: alice.token })).body
    expect([org.visibility, org.repo_admin_change_team_access]).toEqual(['limited', true])
    expect((await s.get('/orgs/acme/members/alice', { token: alice.token })).status).toBe(204)
    const home = await (await page('/acme?done=org-created', await signIn(alice))).text()
    expect(home).toContain('The organisation was created.')
    // Its home leads to its people and teams, and for its owner to its settings and a new repository in it.
    for (const link of ['<a href="/org/acme/members">Members</a>', '<a href="/org/acme/teams">Teams</a>', '<a href="/repo/create?org=acme">New repository</a>', '<a href="/org/acme/settings">Settings</a>'])
      expect(home).toContain(link)
    const others = await (await page('/acme', await signIn(bob))).text()
    expect(others).toContain('<a href="/org/acme/members">Members</a>')
    expect(others).not.toContain('/org/acme/settings')
    expect(others).not.toContain('/org/acme/teams')
  })

  test("the API's refusals shown on the form again", async () => {
    const taken = await submit(alice, '/org/create', { org_name: 'acme' })
    expect(taken.status).toBe(422)
    expect(taken.html).toContain('name="org_name"')
    expect(taken.html).toContain('role="alert"')
    const bad = await submit(alice, '/org/create', { org_name: 'bad name!' })
    expect(bad.status).toBe(422)
    const visibility = await submit(alice, '/org/create', { org_name: 'vis', visibility: 'secret' })
    expect(visibility.status).toBe(422)
    expect(visibility.html).toContain('must be one of public, limited, private')
    await signIn(limited)
    const before = await mark()
    const notAllowed = await submit(limited, '/org/create', { org_name: 'mine' })
    expect(notAllowed.status).toBe(403)
    expect(notAllowed.html).toContain('You are not allowed to create organizations')
    expect(await mark()).toBe(before)
  })
})

describe('organisation settings', () => {
  test('only for its owners', async () => {
    expect((await page('/org/acme/settings', await signIn(alice))).status).toBe(200)
    expect((await page('/org/acme/settings', await signIn(bob))).status).toBe(403)
    expect((await page('/org/acme/settings/delete', await signIn(bob))).status).toBe(403)
    expect((await page('/org/nothing-here/settings', await signIn(alice))).status).toBe(404)
    const res = await page('/org/acme/settings')
    expect(res.status).toBe(303)
    const before = await mark()
    expect((await submit(bob, '/org/acme/settings', { full_name: 'Taken over' })).status).toBe(403)
    expect(await mark()).toBe(before)
  })

  test('the members page links the settings for owners', async () => {
    expect(await (await page('/org/acme/members', await signIn(alice))).text()).toContain('href="/org/acme/settings"')
  })

  test('options: saved through the API rules', async () => {
    await expectCsrfRefused(alice, '/org/acme/settings', { full_name: 'Acme' })
    const fields = { full_name: 'Acme Inc', description: 'Anvils', website: 'https://acme.example', location: 'Desert', visibility: 'public', email: '' }
    const bad = await submit(alice, '/org/acme/settings', { ...fields, website: 'javascript:alert(1)' })
    expect(bad.status).toBe(422)
    expect(bad.html).toContain('value="Acme Inc"')
    const saved = await submit(alice, '/org/acme/settings', fields)
    expect([saved.status, saved.location]).toEqual([303, '/org/acme/settings?done=saved'])
    const org = (await s.get('/orgs/acme')).body
    expect([org.full_name, org.description, org.website, org.location, org.visibility, org.repo_admin_change_team_access]).toEqual([
      'Acme Inc',
      'Anvils',
      'https://acme.example',
      'Desert',
      'public',
      false,
    ])
    expect(await (await page('/org/acme/settings?done=saved', await signIn(alice))).text()).toContain('Your changes were saved.')
  })

  test('avatar: uploaded and deleted', async () => {
    const cookie = await signIn(alice)
    const csrf = csrfIn(await (await page('/org/acme/settings', cookie)).text())!
    const post = async (path: string, fields: Record<string, string | Blob>) => {
      const form = new FormData()
      for (const [k, v] of Object.entries(fields)) form.append(k, v)
      const res = await fetch(s.url + path, { method: 'POST', headers: { cookie }, body: form, redirect: 'manual' })
      return { status: res.status, location: res.headers.get('location'), html: await res.text() }
    }
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64')
    expect((await post('/org/acme/settings/avatar', { avatar: new File([png], 'a.png') })).status).toBe(403)
    expect((await post('/org/acme/settings/avatar', { _csrf: csrf, avatar: new File(['text'], 'a.txt') })).status).toBe(422)
    const saved = await post('/org/acme/settings/avatar', { _csrf: csrf, avatar: new File([png], 'a.png') })
    expect([saved.status, saved.location]).toEqual([303, '/org/acme/settings?done=org-avatar-saved'])
    expect((await s.get('/orgs/acme')).body.avatar_url).toContain('/avatars/')
    const deleted = await post('/org/acme/settings/avatar/delete', { _csrf: csrf })
    expect([deleted.status, deleted.location]).toEqual([303, '/org/acme/settings?done=org-avatar-deleted'])
    expect((await s.get('/orgs/acme')).body.avatar_url).toStartWith('https://secure.gravatar.com/')
  })
})

describe('migration', () => {
  test('the choice of services, then its form', async () => {
    const cookie = await signIn(alice)
    const choice = await (await page('/repo/migrate', cookie)).text()
    for (const n of ['1', '2', '3', '5']) expect(choice).toContain(`href="/repo/migrate?service_type=${n}"`)
    const git = await (await page('/repo/migrate?service_type=1', cookie)).text()
    expect(git).toContain('name="auth_password"')
    expect(git).toContain('<option value="acme"')
    const github = await (await page('/repo/migrate?service_type=2', cookie)).text()
    expect(github).toContain('name="auth_token"')
  })

  test('without the CSRF token: refused, nothing made', async () => {
    await expectCsrfRefused(alice, '/repo/migrate', { clone_addr: `${s.url}/alice/source.git`, uid: 'alice', repo_name: 'nope' })
  })

  test('clones into the user, and into an organisation they create in', async () => {
    const res = await submit(alice, '/repo/migrate', { service: '1', clone_addr: `${s.url}/alice/source.git`, uid: 'alice', repo_name: 'copy', description: 'A copy' })
    expect([res.status, res.location]).toEqual([303, '/alice/copy?done=migrated'])
    const repo = (await s.get('/repos/alice/copy', { token: alice.token })).body
    expect([repo.description, repo.mirror, repo.empty, repo.private]).toEqual(['A copy', false, false, false])
    expect(await (await page('/alice/copy?done=migrated', await signIn(alice))).text()).toContain('The repository was migrated.')
    const mirror = await submit(alice, '/repo/migrate', {
      service: '3',
      clone_addr: `${s.url}/alice/source.git`,
      uid: 'acme',
      repo_name: 'mirrored',
      mirror: 'on',
      mirror_interval: '1h',
      private: 'on',
    })
    expect([mirror.status, mirror.location]).toEqual([303, '/acme/mirrored?done=migrated'])
    const org = (await s.get('/repos/acme/mirrored', { token: alice.token })).body
    expect([org.mirror, org.private, org.mirror_interval]).toEqual([true, true, '1h0m0s'])
  })

  test('mirrors turned off: the form offers no mirror box and a mirror is refused on it (403), nothing made', async () => {
    const before = await mark()
    s.deps.config.mirrorEnabled = false
    try {
      expect(await (await page('/repo/migrate?service_type=1', await signIn(alice))).text()).not.toContain('name="mirror"')
      const res = await submit(alice, '/repo/migrate', { service: '1', clone_addr: `${s.url}/alice/source.git`, uid: 'alice', repo_name: 'nomirror', mirror: 'on' })
      expect(res.status).toBe(403)
      expect(res.html).toContain('disabled the creation of new pull mirrors')
    } finally {
      s.deps.config.mirrorEnabled = true
    }
    expect(await mark()).toBe(before)
  })

  test("the service's refusals shown on the form again, nothing made", async () => {
    const before = await mark()
    const cases: [Record<string, string>, number, string][] = [
      [{ clone_addr: 'ftp://example.com/x.git' }, 422, 'Invalid url'],
      [{ clone_addr: '' }, 422, 'Enter the clone address'],
      // An unknown name answers as a hidden repository would: the remote asks for credentials.
      [{ clone_addr: `${s.url}/alice/no-such.git` }, 422, 'Authentication failed'],
      [{ repo_name: 'copy' }, 409, 'already exists'],
      [{ mirror: 'on', mirror_interval: 'soon' }, 422, 'invalid mirror interval'],
      [{ uid: 'bob' }, 403, 'You may not migrate'],
    ]
    for (const [fields, status, message] of cases) {
      const res = await submit(alice, '/repo/migrate', { service: '5', clone_addr: `${s.url}/alice/source.git`, uid: 'alice', repo_name: 'again', ...fields })
      expect([fields, res.status]).toEqual([fields, status])
      expect(res.html).toContain(message)
      expect(res.html).toContain('name="clone_addr"')
    }
    expect(await mark()).toBe(before)
  })
})

describe('deleting an organisation', () => {
  test('confirmed by its name, refused while it owns repositories', async () => {
    await expectCsrfRefused(alice, '/org/acme/settings/delete', { org_name: 'acme' })
    const wrong = await submit(alice, '/org/acme/settings/delete', { org_name: 'other' })
    expect(wrong.status).toBe(422)
    expect(wrong.html).toContain('Type the organisation&#39;s name')
    const owns = await submit(alice, '/org/acme/settings/delete', { org_name: 'acme' })
    expect(owns.status).toBe(422)
    expect(owns.html).toContain('still owns 1 repository')
    expect((await s.del('/repos/acme/mirrored', undefined, { token: alice.token })).status).toBe(204)
    const deleted = await submit(alice, '/org/acme/settings/delete', { org_name: 'ACME' })
    expect([deleted.status, deleted.location]).toEqual([303, '/?done=org-deleted'])
    expect((await s.get('/orgs/acme')).status).toBe(404)
    expect(await (await page('/?done=org-deleted', await signIn(alice))).text()).toContain('The organisation was deleted.')
  })
})
