import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { csrfIn, signInByForm, webVisitors } from './web-session'
import { contentMark } from './db-snapshot'
import { users } from '../src/db/schema'
import { jobBoardOf } from '../src/lib/job-board'
import { nowUnix } from '../src/lib/time'
import { totpAt, totpStep } from '../src/lib/totp'
import { createAccessToken } from '../src/modules/users/service'
import { enrollTwoFactor, startEnrollment } from '../src/modules/users/two-factor'

/**
 * The site administrator's user accounts over plain HTTP, at Gitea 1.23's addresses: the list's
 * filters and orders, a new account, an account's view, its edit form (a rename, the fields, the
 * second factor reset), its deletion (refused, then purged) and its avatar; the cron tasks' page.
 * Only site administrators (and tokens with the admin scope); the last administrator never
 * demoted, deactivated or deleted; every refusal said on the page, and bad input changes nothing.
 */

let s: TestServer
let root: TestUser, alice: TestUser, bob: TestUser, carol: TestUser
let v: ReturnType<typeof webVisitors>
let mark: () => Promise<string>
let ran = 0
const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64')

const html = async (path: string) => {
  const res = await v.page(path, await v.signIn(root))
  expect(res.status).toBe(200)
  return await res.text()
}
const rowOf = async (id: number) => (await s.deps.db.select().from(users).where(eq(users.id, id)))[0]
/** The edit form's fields as the page fills them for `who` (everything as stored), with `change` over them. */
async function editFields(who: TestUser | number, change: Record<string, string | undefined> = {}) {
  const row = (await rowOf(typeof who === 'number' ? who : who.user.id))!
  const fields: Record<string, string | undefined> = {
    user_name: row.name,
    full_name: row.fullName,
    email: row.email,
    password: '',
    website: row.website,
    location: row.location,
    description: row.description,
    visibility: row.visibility,
    max_repo_creation: String(row.maxRepoCreation),
    active: row.isActive ? 'on' : undefined,
    admin: row.isAdmin ? 'on' : undefined,
    prohibit_login: row.prohibitLogin ? 'on' : undefined,
    allow_git_hook: row.allowGitHook ? 'on' : undefined,
    allow_import_local: row.allowImportLocal ? 'on' : undefined,
    allow_create_organization: row.allowCreateOrganization ? 'on' : undefined,
    ...change,
  }
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Record<string, string>
}
const edit = async (id: number, fields: Record<string, string>) => await v.submit(root, `/-/admin/users/${id}/edit`, fields, { from: `/-/admin/users/${id}/edit` })
/** Whether the password step of the sign-in form asks for a second factor (true) or signs in at once (false). */
async function asksSecondFactor(user: TestUser): Promise<boolean> {
  const form = await fetch(s.url + '/user/login', { headers: { accept: 'text/html' }, redirect: 'manual' })
  const pre = form.headers.get('set-cookie')!.split(';')[0]!
  const res = await fetch(s.url + '/user/login', {
    method: 'POST',
    headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrfIn(await form.text())!, user_name: user.name, password: user.password, redirect_to: '/' }),
    redirect: 'manual',
  })
  expect(res.status).toBe(303)
  return res.headers.get('location') === '/user/two_factor'
}

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  v = webVisitors(() => s.url, mark)
  root = await s.user('root', { admin: true })
  alice = await s.user('alice', { email: 'alice@example.org' })
  bob = await s.user('bob')
  carol = await s.user('carol')
  expect((await s.post('/user/repos', { name: 'notes', private: true }, { token: bob.token })).status).toBe(201)
  expect((await s.post('/orgs', { username: 'bob-works' }, { token: bob.token })).status).toBe(201)
  jobBoardOf(s.deps).register('users_page_test_job', { schedule: '@every 1h', everyMs: null, runNow: () => void ran++ })
})
afterAll(async () => {
  await s?.stop()
})

describe('user accounts in the site administration', () => {
  test('site administrators only: sign-in asked of the anonymous, 403 to others and to tokens without the admin scope; forms refused', async () => {
    const id = bob.user.id
    for (const path of ['/-/admin/users/new', `/-/admin/users/${id}`, `/-/admin/users/${id}/edit`, '/-/admin/monitor/cron', '/-/admin/users?status_filter[is_admin]=true']) {
      await v.expectSignInAsked(path)
      expect((await v.page(path, await v.signIn(alice))).status).toBe(403)
    }
    const before = await mark()
    for (const [path, fields] of [
      ['/-/admin/users/new', { user_name: 'mallory', email: 'm@example.org', password: 'x' }],
      [`/-/admin/users/${id}/edit`, { user_name: 'bobby', email: 'b@example.org' }],
      [`/-/admin/users/${id}/delete`, { purge: 'on' }],
      [`/-/admin/users/${id}/avatar/delete`, {}],
    ] as const)
      expect((await v.submit(alice, path, fields)).status).toBe(403)
    expect(await mark()).toBe(before)
    // A site administrator's token reaches the pages only with the admin scope, as the API's /admin routes.
    const narrow = await createAccessToken(s.deps, root.user.id, 'narrow', ['write:user', 'write:repository'])
    const wide = await createAccessToken(s.deps, root.user.id, 'wide', ['read:admin'])
    const withToken = (token: string) => fetch(`${s.url}/-/admin/users/${id}`, { headers: { accept: 'text/html', authorization: `token ${token}` }, redirect: 'manual' })
    expect((await withToken(narrow.secret)).status).toBe(403)
    expect((await withToken(wide.secret)).status).toBe(200)
    // No such account: 404, said on the page.
    for (const path of ['/-/admin/users/999999', '/-/admin/users/abc/edit', `/-/admin/users/${(await s.deps.db.select({ id: users.id }).from(users).where(eq(users.name, 'bob-works')))[0]!.id}`]) {
      const res = await v.page(path, await v.signIn(root))
      expect(res.status).toBe(404)
    }
  })

  test("the list: links to each account's view and edit form, Gitea's status filters and orders, searched by e-mail too", async () => {
    const list = await html('/-/admin/users')
    expect(list).toContain('href="/-/admin/users/new"')
    expect(list).toContain(`href="/-/admin/users/${alice.user.id}"`)
    expect(list).toContain(`href="/-/admin/users/${alice.user.id}/edit"`)
    const admins = await html('/-/admin/users?status_filter[is_admin]=true')
    expect(admins).toContain(`href="/-/admin/users/${root.user.id}"`)
    expect(admins).not.toContain('>alice</a>')
    expect(admins).toContain('<option value="true" selected>Yes</option>')
    const notAdmins = await html('/-/admin/users?status_filter%5Bis_admin%5D=false')
    expect(notAdmins).toContain('>alice</a>')
    expect(notAdmins).not.toContain(`href="/-/admin/users/${root.user.id}"`)
    expect(await html('/-/admin/users?status_filter[is_restricted]=true')).toContain('No accounts match.')
    expect(await html('/-/admin/users?status_filter[is_active]=false')).toContain('No accounts match.')
    expect(await html('/-/admin/users?status_filter[is_prohibit_login]=true')).toContain('No accounts match.')
    expect(await html('/-/admin/users?status_filter[is_2fa_enabled]=true')).toContain('No accounts match.')
    const newest = await html('/-/admin/users?sort=newest')
    expect(newest.indexOf('>carol</a>')).toBeLessThan(newest.indexOf('>alice</a>'))
    const alphabetical = await html('/-/admin/users?sort=nonsense')
    expect(alphabetical.indexOf('>alice</a>')).toBeLessThan(alphabetical.indexOf('>carol</a>'))
    const byEmail = await html('/-/admin/users?q=ALICE@EXAMPLE')
    expect(byEmail).toContain('>alice</a>')
    expect(byEmail).not.toContain('>bob</a>')
    // The old address answers the same list.
    expect((await v.page('/admin/users', await v.signIn(root))).status).toBe(200)
  })

  test('a new account: created through the API\'s service, on to its view; refusals shown on the form with what was typed, nothing created', async () => {
    const from = { from: '/-/admin/users/new' }
    const form = await html('/-/admin/users/new')
    expect(form).toContain('name="must_change_password" checked')
    expect(form).toContain('Warren sends no e-mail')
    const before = await mark()
    const refused: [Record<string, string>, number, string][] = [
      [{ user_name: 'alice', email: 'new@example.org', password: 'pw' }, 422, 'Username: user already exists [name: alice]'],
      [{ user_name: 'bad name', email: 'new@example.org', password: 'pw' }, 422, 'Username: must be valid alpha or numeric'],
      [{ user_name: 'dave', email: 'not-an-address', password: 'pw' }, 422, 'E-mail address: is not a valid email address'],
      [{ user_name: 'dave', email: 'alice@example.org', password: 'pw' }, 422, 'E-mail address: e-mail already in use'],
      [{ user_name: 'dave', email: 'dave@example.org', password: '' }, 422, 'Password: Required'],
      [{ user_name: 'dave', email: 'dave@example.org', password: 'pw', visibility: 'secret' }, 422, 'Visibility: must be one of public, limited, private'],
    ]
    for (const [fields, status, message] of refused) {
      const res = await v.submit(root, '/-/admin/users/new', fields, from)
      expect(res.status).toBe(status)
      expect(res.html).toContain(message)
      expect(res.html).toContain(`value="${fields.user_name}"`)
    }
    expect((await v.submit(root, '/-/admin/users/new', { user_name: 'x'.repeat(300), email: 'a@b.c', password: 'p' }, from)).status).toBeLessThan(500)
    await v.expectCsrfRefused(root, '/-/admin/users/new', { user_name: 'dave', email: 'dave@example.org', password: 'pw' })
    expect(await mark()).toBe(before)

    const made = await v.submit(root, '/-/admin/users/new', { user_name: 'dave', email: 'dave@example.org', password: 'dave-pass', must_change_password: 'on', visibility: 'limited', send_notify: 'on' }, from)
    expect(made.status).toBe(303)
    const dave = (await s.deps.db.select().from(users).where(eq(users.name, 'dave')))[0]!
    expect(made.location).toBe(`/-/admin/users/${dave.id}?done=user-created`)
    expect(dave.mustChangePassword).toBe(true)
    expect(dave.visibility).toBe('limited')
    expect(dave.isActive).toBe(true)
    expect(await html(made.location!)).toContain('The account was created.')
    await signInByForm(s.url, { name: 'dave', password: 'dave-pass' })
  })

  test("an account's view: its details, e-mail addresses, repositories (private too), organisations, second factor", async () => {
    const page = await html(`/-/admin/users/${bob.user.id}`)
    expect(page).toContain('<h2>Account bob</h2>')
    expect(page).toContain('bob@example.com')
    expect(page).toContain('href="/bob/notes"')
    expect(page).toContain('href="/bob-works"')
    expect(page).toContain('<td>Two-factor authentication</td><td>disabled</td>')
    expect(page).toContain(`href="/-/admin/users/${bob.user.id}/edit"`)
  })

  test('the edit form: every field saved; refusals (a taken name, a bad website, a bad number, an address in use) change nothing', async () => {
    const before = await mark()
    const refused: [Record<string, string | undefined>, number, string][] = [
      [{ user_name: 'alice' }, 422, 'Username: user already exists [name: alice]'],
      [{ user_name: '-bad-' }, 422, 'Username: must not begin or end with a dash or dot'],
      [{ user_name: 'admin' }, 422, 'Username: name is reserved'],
      [{ user_name: 'carla', website: 'javascript:alert(1)' }, 422, 'Website:'],
      [{ user_name: 'carla', max_repo_creation: 'lots' }, 422, 'Maximum number of repositories: must be a whole number'],
      [{ user_name: 'carla', max_repo_creation: '-5' }, 422, 'Maximum number of repositories:'],
      [{ user_name: 'carla', email: 'alice@example.org' }, 422, 'E-mail address: e-mail already in use'],
      [{ user_name: 'carla', visibility: 'secret' }, 422, 'Visibility:'],
    ]
    for (const [change, status, message] of refused) {
      const res = await edit(carol.user.id, await editFields(carol, change))
      expect(res.status).toBe(status)
      expect(res.html).toContain(message)
      // The form comes back with what was typed.
      expect(res.html).toContain(`value="${change.user_name}"`)
    }
    await v.expectCsrfRefused(root, `/-/admin/users/${carol.user.id}/edit`, await editFields(carol, { full_name: 'Nope' }))
    expect(await mark()).toBe(before)
    expect((await rowOf(carol.user.id))!.name).toBe('carol')

    const saved = await edit(
      carol.user.id,
      await editFields(carol, {
        full_name: 'Carol Jones',
        website: 'https://carol.example.org',
        location: 'Lisbon',
        description: 'Writes things',
        visibility: 'private',
        max_repo_creation: '3',
        allow_git_hook: 'on',
        allow_create_organization: undefined,
        email: 'carol.jones@example.org',
        password: 'carol-new-password',
      }),
    )
    expect(saved.status).toBe(303)
    expect(saved.location).toBe(`/-/admin/users/${carol.user.id}?done=user-saved`)
    const row = (await rowOf(carol.user.id))!
    expect(row).toMatchObject({ fullName: 'Carol Jones', website: 'https://carol.example.org', location: 'Lisbon', description: 'Writes things', visibility: 'private', maxRepoCreation: 3, allowGitHook: true, allowCreateOrganization: false, email: 'carol.jones@example.org' })
    await signInByForm(s.url, { name: 'carol', password: 'carol-new-password' })
    carol.password = 'carol-new-password'
    expect(await html(saved.location!)).toContain('The account was updated.')
  })

  test('a rename through the form: the repositories follow; a change of case only', async () => {
    const renamed = await edit(bob.user.id, await editFields(bob, { user_name: 'robert' }))
    expect(renamed.status).toBe(303)
    expect((await s.get('/repos/robert/notes', { token: root.token })).status).toBe(200)
    expect((await s.get('/users/bob', { token: root.token })).status).toBe(404)
    expect((await edit(bob.user.id, await editFields(bob, { user_name: 'Robert' }))).status).toBe(303)
    expect((await rowOf(bob.user.id))!.name).toBe('Robert')
    expect((await s.get('/repos/Robert/notes', { token: root.token })).status).toBe(200)
    bob.name = 'Robert'
  })

  test('the last active administrator is never demoted, deactivated or locked out (the form and the API); another one may be', async () => {
    const before = await mark()
    for (const change of [{ admin: undefined }, { active: undefined }]) {
      const res = await edit(root.user.id, await editFields(root, change))
      expect(res.status).toBe(422)
      expect(res.html).toContain('user is the last site administrator')
    }
    const api = await s.patch('/admin/users/root', { admin: false }, { token: root.token })
    expect(api.status).toBe(422)
    expect(api.body.message).toContain('last site administrator')
    expect((await s.patch('/admin/users/root', { active: false }, { token: root.token })).status).toBe(422)
    expect(await mark()).toBe(before)
    // Signing oneself out for good is not the form's to do: the field is left as it is.
    expect((await edit(root.user.id, await editFields(root, { prohibit_login: 'on' }))).status).toBe(303)
    expect((await rowOf(root.user.id))!.prohibitLogin).toBe(false)
    const self = await v.submit(root, `/-/admin/users/${root.user.id}/delete`, {}, { from: `/-/admin/users/${root.user.id}/edit` })
    expect(self.status).toBe(422)
    expect(self.html).toContain('you cannot delete yourself')
    expect((await rowOf(root.user.id))!.isAdmin).toBe(true)

    // With a second administrator the first may be demoted, and back.
    expect((await edit(alice.user.id, await editFields(alice, { admin: 'on' }))).status).toBe(303)
    expect((await s.patch('/admin/users/alice', { admin: false }, { token: root.token })).status).toBe(200)
    expect((await rowOf(alice.user.id))!.isAdmin).toBe(false)
  })

  test('reset two-factor authentication: the TOTP removed, the user signs in with the password alone', async () => {
    const enrollment = await startEnrollment(s.deps, alice.user)
    await enrollTwoFactor(s.deps, alice.user, enrollment.ticket, totpAt(enrollment.secret, totpStep(nowUnix())))
    expect(await asksSecondFactor(alice)).toBe(true)
    expect(await html(`/-/admin/users/${alice.user.id}`)).toContain('<td>Two-factor authentication</td><td>enabled</td>')
    expect(await html('/-/admin/users?status_filter[is_2fa_enabled]=true')).toContain('>alice</a>')
    expect(await html(`/-/admin/users/${alice.user.id}/edit`)).toContain('name="reset_2fa"')

    const reset = await edit(alice.user.id, await editFields(alice, { reset_2fa: 'on' }))
    expect(reset.status).toBe(303)
    expect(await asksSecondFactor(alice)).toBe(false)
    await signInByForm(s.url, alice)
    expect(await html(`/-/admin/users/${alice.user.id}`)).toContain('<td>Two-factor authentication</td><td>disabled</td>')
    expect(await html(`/-/admin/users/${alice.user.id}/edit`)).not.toContain('name="reset_2fa"')
  })

  test("the avatar: uploaded and deleted from the edit page; a file that is no image refused", async () => {
    const post = async (path: string, file?: Blob) => {
      const cookie = await v.signIn(root)
      const body = new FormData()
      body.append('_csrf', csrfIn(await (await v.page(`/-/admin/users/${carol.user.id}/edit`, cookie)).text())!)
      if (file) body.append('avatar', file, 'avatar.png')
      const res = await fetch(s.url + path, { method: 'POST', headers: { cookie }, body, redirect: 'manual' })
      return { status: res.status, location: res.headers.get('location'), html: await res.text() }
    }
    const base = `/-/admin/users/${carol.user.id}`
    const bad = await post(`${base}/avatar`, new Blob(['not an image']))
    expect(bad.status).toBe(422)
    expect((await rowOf(carol.user.id))!.avatar).toBe('')
    const up = await post(`${base}/avatar`, new Blob([PNG_1X1], { type: 'image/png' }))
    expect(up.status).toBe(303)
    expect(up.location).toBe(`${base}/edit?done=user-avatar-saved`)
    expect((await rowOf(carol.user.id))!.avatar).not.toBe('')
    const gone = await post(`${base}/avatar/delete`)
    expect(gone.location).toBe(`${base}/edit?done=user-avatar-deleted`)
    expect((await rowOf(carol.user.id))!.avatar).toBe('')
  })

  test('deleting an account: refused while it owns repositories or organisations; purged, they go with it', async () => {
    const from = { from: `/-/admin/users/${bob.user.id}/edit` }
    const before = await mark()
    const refused = await v.submit(root, `/-/admin/users/${bob.user.id}/delete`, {}, from)
    expect(refused.status).toBe(422)
    expect(refused.html).toContain('user still owns repositories')
    expect(refused.html).toContain('<h2>Edit account Robert</h2>')
    await v.expectCsrfRefused(root, `/-/admin/users/${bob.user.id}/delete`, { purge: 'on' })
    expect(await mark()).toBe(before)

    // Carol belongs to bob-works without owning it: purging Bob deletes the organisation he alone owns.
    const team = (await s.post('/orgs/bob-works/teams', { name: 'writers', permission: 'write' }, { token: root.token })).body
    expect((await s.put(`/teams/${team.id}/members/carol`, undefined, { token: root.token })).status).toBe(204)
    expect((await s.post('/orgs/bob-works/repos', { name: 'site' }, { token: root.token })).status).toBe(201)
    const purged = await v.submit(root, `/-/admin/users/${bob.user.id}/delete`, { purge: 'on' }, from)
    expect(purged.status).toBe(303)
    expect(purged.location).toBe('/-/admin/users?done=user-deleted')
    expect(await rowOf(bob.user.id)).toBeUndefined()
    expect((await s.get('/repos/Robert/notes', { token: root.token })).status).toBe(404)
    expect((await s.get('/orgs/bob-works', { token: root.token })).status).toBe(404)
    expect((await s.get('/repos/bob-works/site', { token: root.token })).status).toBe(404)
    expect(await html('/-/admin/users?done=user-deleted')).toContain('The account was deleted.')

    // A member (not the last owner) of an organisation leaves it when purged; the organisation stays.
    expect((await s.post('/orgs', { username: 'alice-co' }, { token: alice.token })).status).toBe(201)
    const aliceTeam = (await s.post('/orgs/alice-co/teams', { name: 'readers', permission: 'read' }, { token: alice.token })).body
    expect((await s.put(`/teams/${aliceTeam.id}/members/carol`, undefined, { token: alice.token })).status).toBe(204)
    const fromCarol = { from: `/-/admin/users/${carol.user.id}/edit` }
    expect((await v.submit(root, `/-/admin/users/${carol.user.id}/delete`, {}, fromCarol)).html).toContain('member of organisation alice-co')
    expect((await v.submit(root, `/-/admin/users/${carol.user.id}/delete`, { purge: 'on' }, fromCarol)).status).toBe(303)
    expect((await s.get('/orgs/alice-co', { token: alice.token })).status).toBe(200)
    expect((await s.get('/orgs/alice-co/members', { token: alice.token })).body.map((m: { login: string }) => m.login)).toEqual(['alice'])
  })

  test('the cron tasks: the background jobs with last and next run, run from the page and back to it', async () => {
    const page = await html('/-/admin/monitor/cron')
    expect(page).toContain('<h2>Cron tasks</h2>')
    expect(page).toContain('<td>users_page_test_job</td><td>@every 1h</td>')
    expect(page).toContain('name="from" value="monitor"')
    const run = await v.submit(root, '/-/admin', { op: 'users_page_test_job', from: 'monitor' }, { from: '/-/admin/monitor/cron' })
    expect(run.status).toBe(303)
    expect(run.location).toBe('/-/admin/monitor/cron?done=job-started')
    await Bun.sleep(0)
    expect(ran).toBe(1)
    const unknown = await v.submit(root, '/-/admin', { op: 'nothing_here', from: 'monitor' }, { from: '/-/admin/monitor/cron' })
    expect(unknown.status).toBe(404)
    expect(unknown.html).toContain('<h2>Cron tasks</h2>')
    expect(unknown.html).toContain('No background job named &quot;nothing_here&quot; runs in this process.')
    expect((await v.submit(alice, '/-/admin', { op: 'users_page_test_job', from: 'monitor' })).status).toBe(403)
    expect(ran).toBe(1)
  })
})
