import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { csrfIn, webVisitors } from './web-session'
import { contentMark } from './db-snapshot'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { eq, max } from 'drizzle-orm'
import { eventConsumers, events } from '../src/db/schema'
import { startReceiver, until, type Receiver } from './webhook-receiver'

/**
 * The settings, account, creation, explore and administration pages over plain HTTP: each page's
 * status and access rules, every form refused without its CSRF token (nothing changed), and what
 * the forms did, read back through the API.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, stranger: TestUser, root: TestUser
let mark: () => Promise<string>
let keyDir: string
let sshKey: string
const { page, signIn, submit, expectCsrfRefused, expectSignInAsked } = webVisitors(() => s.url, () => mark())

beforeAll(async () => {
  s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05, webhookDeliverTimeout: 5 })
  mark = contentMark(s.deps.db)
  root = await s.user('root', { admin: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
  stranger = await s.user('stranger')
  keyDir = mkdtempSync(join(tmpdir(), 'warren-websettings-'))
  const gen = Bun.spawnSync(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'web@test', '-f', join(keyDir, 'id')])
  expect(gen.exitCode).toBe(0)
  sshKey = readFileSync(join(keyDir, 'id.pub'), 'utf8').trim()
})
afterAll(async () => {
  rmSync(keyDir, { recursive: true, force: true })
  await s.stop()
})

describe('user settings', () => {
  test('every settings page needs a signed-in user (the sign-in page asked for anonymous), and shows the user their own', async () => {
    for (const path of ['/user/settings', '/user/settings/account', '/user/settings/keys', '/user/settings/applications']) {
      await expectSignInAsked(path)
      const mine = await page(path, await signIn(alice))
      expect(mine.status).toBe(200)
      expect(await mine.text()).toContain('aria-current="page"')
    }
  })

  test('profile: saved through the form, seen through the API; refused without the CSRF token', async () => {
    const fields = { full_name: 'Alice Liddell', website: 'https://alice.example', location: 'Wonderland', description: 'Falls down <holes>' }
    await expectCsrfRefused(alice, '/user/settings', fields)
    const res = await submit(alice, '/user/settings', fields, { from: '/user/settings' })
    expect(res.status).toBe(303)
    expect(res.location).toBe('/user/settings?done=saved')
    const user = (await s.get('/user', { token: alice.token })).body
    expect(user.full_name).toBe('Alice Liddell')
    expect(user.website).toBe('https://alice.example')
    expect(user.location).toBe('Wonderland')
    expect(user.description).toBe('Falls down <holes>')
    const shown = await (await page('/user/settings?done=saved', await signIn(alice))).text()
    expect(shown).toContain('Your changes were saved.')
    expect(shown).toContain('Falls down &lt;holes&gt;')
    // A website the API refuses is refused here too, with its message, and nothing changes.
    const before = await mark()
    const bad = await submit(alice, '/user/settings', { ...fields, website: 'javascript:alert(1)' }, { from: '/user/settings' })
    expect(bad.status).toBe(422)
    expect(bad.html).toContain('role="alert"')
    expect(await mark()).toBe(before)
  })

  test('password: the current one is needed; the new one then signs in', async () => {
    const user = await s.user('pwuser')
    await expectCsrfRefused(user, '/user/settings/account', { old_password: user.password, password: 'new-secret-1', retype: 'new-secret-1' })
    const wrong = await submit(user, '/user/settings/account', { old_password: 'nope', password: 'new-secret-1', retype: 'new-secret-1' }, { from: '/user/settings/account' })
    expect(wrong.status).toBe(403)
    expect(wrong.html).toContain('The current password is wrong.')
    const mismatch = await submit(user, '/user/settings/account', { old_password: user.password, password: 'new-secret-1', retype: 'other' }, { from: '/user/settings/account' })
    expect(mismatch.status).toBe(422)
    const ok = await submit(user, '/user/settings/account', { old_password: user.password, password: 'new-secret-1', retype: 'new-secret-1' }, { from: '/user/settings/account' })
    expect(ok.status).toBe(303)
    expect((await s.get('/user', { basic: ['pwuser', 'new-secret-1'] })).status).toBe(200)
    expect((await s.get('/user', { basic: ['pwuser', user.password] })).status).toBe(401)
  })

  test('SSH keys: added and deleted through the forms, seen through the API; a bad key is a clear error', async () => {
    await expectCsrfRefused(alice, '/user/settings/keys', { type: 'ssh', title: 'laptop', content: sshKey })
    const added = await submit(alice, '/user/settings/keys', { type: 'ssh', title: 'laptop', content: sshKey }, { from: '/user/settings/keys' })
    expect(added.status).toBe(303)
    const keys = (await s.get('/user/keys', { token: alice.token })).body
    expect(keys.map((k: any) => k.title)).toEqual(['laptop'])
    const listed = await (await page('/user/settings/keys', await signIn(alice))).text()
    // Its time as every page writes one (it was the raw ISO text).
    expect(listed).toMatch(/added <time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>/)
    expect(listed).toContain(keys[0].fingerprint)
    const bad = await submit(alice, '/user/settings/keys', { type: 'ssh', title: 'junk', content: 'ssh-rsa not-a-key' }, { from: '/user/settings/keys' })
    expect(bad.status).toBe(422)
    expect(bad.html).toContain('role="alert"')
    // Someone else's key id deletes nothing.
    await signIn(bob)
    const before = await mark()
    const others = await submit(bob, '/user/settings/keys/delete', { type: 'ssh', id: String(keys[0].id) }, { from: '/user/settings/keys' })
    expect(others.status).toBe((await s.del(`/user/keys/${keys[0].id}`, undefined, { token: bob.token })).status)
    expect(others.status).toBeGreaterThanOrEqual(403)
    expect(await mark()).toBe(before)
    await expectCsrfRefused(alice, '/user/settings/keys/delete', { type: 'ssh', id: String(keys[0].id) })
    const gone = await submit(alice, '/user/settings/keys/delete', { type: 'ssh', id: String(keys[0].id) }, { from: '/user/settings/keys' })
    expect(gone.status).toBe(303)
    expect((await s.get('/user/keys', { token: alice.token })).body).toEqual([])
  })

  test('access tokens: created with the scopes chosen, shown once, working on the API; deleted', async () => {
    const fields = { name: 'ci', scope_repository: 'read', scope_user: 'write' }
    await expectCsrfRefused(alice, '/user/settings/applications', fields)
    const made = await submit(alice, '/user/settings/applications', fields, { from: '/user/settings/applications' })
    expect(made.status).toBe(201)
    const secret = /data-token>\s*([0-9a-f]{40})\s*</.exec(made.html)?.[1]
    expect(secret).toBeDefined()
    // The token works on the API, within its scopes.
    expect((await s.get('/user', { token: secret })).status).toBe(200)
    expect((await s.get('/repos/search', { token: secret })).status).toBe(200)
    expect((await s.post('/user/repos', { name: 'by-token' }, { token: secret })).status).toBe(403)
    // The list shows its name and scopes, never the secret again.
    const list = await (await page('/user/settings/applications', await signIn(alice))).text()
    expect(list).toContain('read:repository')
    expect(list).toContain('write:user')
    expect(list).not.toContain(secret!)
    const tokens = (await s.get('/users/alice/tokens', { basic: ['alice', alice.password] })).body
    const ci = tokens.find((tk: any) => tk.name === 'ci')
    expect(ci.scopes).toEqual(['read:repository', 'write:user'])
    // No scope at all: the API's refusal, on the form.
    const none = await submit(alice, '/user/settings/applications', { name: 'nothing' }, { from: '/user/settings/applications' })
    expect(none.status).toBe(400)
    expect(none.html).toContain('access token must have a scope')
    await expectCsrfRefused(alice, '/user/settings/applications/delete', { id: String(ci.id) })
    const gone = await submit(alice, '/user/settings/applications/delete', { id: String(ci.id) }, { from: '/user/settings/applications' })
    expect(gone.status).toBe(303)
    expect((await s.get('/user', { token: secret })).status).toBe(401)
  })
})

describe('creating repositories, stars and watches', () => {
  test('/repo/create: for oneself or an organisation one may create in; not for another', async () => {
    await expectSignInAsked('/repo/create')
    expect((await s.post('/orgs', { username: 'acme' }, { token: alice.token })).status).toBe(201)
    const form = await (await page('/repo/create', await signIn(alice))).text()
    expect(form).toContain('<option value="acme"')
    await expectCsrfRefused(alice, '/repo/create', { owner: 'alice', name: 'web-made' })
    const mine = await submit(alice, '/repo/create', { owner: 'alice', name: 'web-made', description: 'from the form', private: 'on', auto_init: 'on' }, { from: '/repo/create' })
    expect(mine.status).toBe(303)
    expect(mine.location).toBe('/alice/web-made')
    const repo = (await s.get('/repos/alice/web-made', { token: alice.token })).body
    expect(repo.private).toBe(true)
    expect(repo.description).toBe('from the form')
    expect(repo.empty).toBe(false)
    // Gitea's choices of a .gitignore, a license and a label set, from the API's template lists.
    expect(form).toContain('<select name="gitignores">')
    expect(form).toContain('<option value="MIT">MIT</option>')
    const templated = await submit(alice, '/repo/create', { owner: 'alice', name: 'templated', auto_init: 'on', gitignores: 'Go', license: 'MIT', issue_labels: 'Default' }, { from: '/repo/create' })
    expect(templated.status).toBe(303)
    const files = ((await s.get('/repos/alice/templated/contents', { token: alice.token })).body as { name: string }[]).map((f) => f.name).sort()
    expect(files).toEqual(['.gitignore', 'LICENSE', 'README.md'])
    expect(((await s.get('/repos/alice/templated/labels', { token: alice.token })).body as unknown[]).length).toBeGreaterThan(0)
    const org = await submit(alice, '/repo/create', { owner: 'acme', name: 'org-made' }, { from: '/repo/create' })
    expect(org.status).toBe(303)
    expect((await s.get('/repos/acme/org-made', { token: alice.token })).body.empty).toBe(true)
    // Bob is no member of acme: the API's 403, with nothing made.
    const before = await mark()
    const refused = await submit(bob, '/repo/create', { owner: 'acme', name: 'sneaky' }, { from: '/repo/create' })
    expect(refused.status).toBe(403)
    expect(await mark()).toBe(before)
    // A taken name: the service's 409/422 on the form.
    const taken = await submit(alice, '/repo/create', { owner: 'alice', name: 'web-made' }, { from: '/repo/create' })
    expect(taken.status).toBeGreaterThanOrEqual(400)
    expect(taken.status).toBeLessThan(500)
    expect(taken.html).toContain('role="alert"')
  })

  test('star and watch buttons on the repository home', async () => {
    expect((await s.post('/user/repos', { name: 'starme', auto_init: true }, { token: alice.token })).status).toBe(201)
    const home = await (await page('/alice/starme', await signIn(bob))).text()
    expect(home).toContain('action="/alice/starme/action/star"')
    expect(home).not.toContain('href="/alice/starme/settings"')
    await expectCsrfRefused(bob, '/alice/starme/action/star', {})
    expect((await submit(bob, '/alice/starme/action/star', {}, { from: '/alice/starme' })).status).toBe(303)
    expect((await s.get('/user/starred/alice/starme', { token: bob.token })).status).toBe(204)
    expect((await submit(bob, '/alice/starme/action/watch', {}, { from: '/alice/starme' })).status).toBe(303)
    expect((await s.get('/repos/alice/starme/subscription', { token: bob.token })).status).toBe(200)
    const after = await (await page('/alice/starme', await signIn(bob))).text()
    expect(after).toContain('action="/alice/starme/action/unstar"')
    expect(after).toContain('1 stars')
    expect((await submit(bob, '/alice/starme/action/unstar', {}, { from: '/alice/starme' })).status).toBe(303)
    expect((await s.get('/user/starred/alice/starme', { token: bob.token })).status).toBe(404)
    // A private repository's actions answer 404 to a stranger; anonymous callers 401 on a public one.
    expect((await submit(stranger, '/alice/web-made/action/star', {}, { from: '/' })).status).toBe(404)
    expect((await fetch(s.url + '/alice/starme/action/star', { method: 'POST', redirect: 'manual' })).status).toBe(401)
    // The owner sees the settings link.
    expect(await (await page('/alice/starme', await signIn(alice))).text()).toContain('href="/alice/starme/settings"')
  })
})

describe('explore, registration, administration', () => {
  test('explore: the same search and visibility as the API, paged', async () => {
    expect((await s.post('/user/repos', { name: 'hidden-gem', private: true }, { token: bob.token })).status).toBe(201)
    for (let i = 0; i < 23; i++) expect((await s.post('/user/repos', { name: `many-${String(i).padStart(2, '0')}` }, { token: bob.token })).status).toBe(201)
    const first = await (await page('/explore/repos?q=many')).text()
    expect(first).toContain('23 results')
    expect(first).toContain('href="/bob/many-00"')
    expect(first).not.toContain('href="/bob/many-20"')
    expect(first).toContain('href="/explore/repos?q=many&amp;page=2"')
    const second = await (await page('/explore/repos?q=many&page=2')).text()
    expect(second).toContain('href="/bob/many-22"')
    expect(await (await page('/explore/repos?q=hidden')).text()).not.toContain('hidden-gem')
    expect(await (await page('/explore/repos?q=hidden', await signIn(stranger))).text()).not.toContain('hidden-gem')
    expect(await (await page('/explore/repos?q=hidden', await signIn(bob))).text()).toContain('href="/bob/hidden-gem"')
    const api = (await s.get('/repos/search?q=many&limit=50')).body.data.length
    expect(api).toBe(23)
    expect(await (await page('/explore/users?q=ali')).text()).toContain('href="/alice"')
    expect((await s.post('/orgs', { username: 'secretorg', visibility: 'private' }, { token: alice.token })).status).toBe(201)
    const orgs = await (await page('/explore/organizations')).text()
    expect(orgs).toContain('href="/acme"')
    expect(orgs).not.toContain('secretorg')
    expect(await (await page('/explore/organizations', await signIn(alice))).text()).toContain('href="/secretorg"')
    expect((await page('/explore')).status).toBe(303)
  })

  test('registration is off by default: 404, and nothing is made', async () => {
    expect((await page('/user/sign_up')).status).toBe(404)
    const before = await mark()
    const res = await fetch(s.url + '/user/sign_up', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ user_name: 'newbie', email: 'n@example.com', password: 'x', retype: 'x' }),
      redirect: 'manual',
    })
    expect(res.status).toBe(404)
    expect(await mark()).toBe(before)
  })

  test('the admin user list: site administrators only (sign-in asked of anonymous, 403 to others, as Gitea), searched and paged', async () => {
    await expectSignInAsked('/-/admin/users')
    await expectSignInAsked('/-/admin/users?q=ali&page=2')
    const refused = await page('/-/admin/users', await signIn(alice))
    expect(refused.status).toBe(403)
    expect(refused.headers.get('content-type')).toContain('text/html')
    // Signing in from there comes back to the list.
    const form = await fetch(s.url + '/user/login?redirect_to=%2F-%2Fadmin%2Fusers', { headers: { accept: 'text/html' }, redirect: 'manual' })
    expect(await form.text()).toContain('name="redirect_to" value="/-/admin/users"')
    const list = await page('/-/admin/users', await signIn(root))
    expect(list.status).toBe(200)
    const html = await list.text()
    // Each account links to its view in the administration (Gitea's /-/admin/users/{id}).
    for (const who of [alice, bob, stranger, root]) expect(html).toContain(`<a href="/-/admin/users/${who.user.id}">${who.name}</a>`)
    expect(html).not.toContain('>acme</a>')
    const found = await (await page('/-/admin/users?q=stran', await signIn(root))).text()
    expect(found).toContain('>stranger</a>')
    expect(found).not.toContain('>bob</a>')
    expect((await page('/admin/users', await signIn(root))).status).toBe(200)
  })

  test('where signing in returns to: a path of this site only; a control character (a tab browsers drop: /\t/host) goes home, beyond ASCII is sent encoded', async () => {
    const cookie = await signIn(alice)
    const back = async (to: string) => (await fetch(`${s.url}/user/login?redirect_to=${encodeURIComponent(to)}`, { headers: { accept: 'text/html', cookie }, redirect: 'manual' })).headers.get('location')
    expect(await back('/alice/tuned?tab=1')).toBe('/alice/tuned?tab=1')
    for (const away of ['//evil.example', '/\\evil.example', '/\t/evil.example/again', '/\n/evil.example', '/a\r\nSet-Cookie: x=1', 'https://evil.example/'])
      expect(await back(away)).toBe('/')
    expect(await back('/alice/caf\u00e9 ok')).toBe('/alice/caf%C3%A9 ok')
  })
})

describe('repository settings', () => {
  let receiver: Receiver
  const asAlice = () => ({ token: alice.token })
  beforeAll(async () => {
    receiver = await startReceiver()
    expect((await s.post('/user/repos', { name: 'tuned', auto_init: true }, asAlice())).status).toBe(201)
    expect((await s.post('/repos/alice/tuned/branches', { new_branch_name: 'develop' }, asAlice())).status).toBe(201)
    expect((await s.put('/repos/alice/tuned/collaborators/bob', { permission: 'read' }, asAlice())).status).toBe(204)
  })
  afterAll(() => receiver.stop())

  test('access: the owner 200; a reader 403; a stranger and anonymous 404 on a private one, anonymous asked to sign in on a public one', async () => {
    const paths = ['/settings', '/settings/collaboration', '/settings/hooks', '/settings/keys']
    for (const p of paths) {
      expect((await page('/alice/tuned' + p, await signIn(alice))).status).toBe(200)
      expect((await page('/alice/tuned' + p, await signIn(bob))).status).toBe(403)
      expect((await page('/alice/tuned' + p, await signIn(stranger))).status).toBe(403)
      await expectSignInAsked('/alice/tuned' + p)
      expect((await page('/alice/web-made' + p, await signIn(stranger))).status).toBe(404)
      expect((await page('/alice/web-made' + p)).status).toBe(404)
    }
    // A reader's POST is refused by the pipeline before anything else, and changes nothing.
    const before = await mark()
    expect((await submit(bob, '/alice/tuned/settings', { action: 'update', repo_name: 'tuned', description: 'bob was here' }, { from: '/alice/tuned' })).status).toBe(403)
    expect(await mark()).toBe(before)
  })

  test('options: description, website, visibility, default branch, units and merge styles, as the API sees them', async () => {
    const fields = {
      action: 'update',
      repo_name: 'tuned',
      description: 'Tuned <by> the web',
      website: 'https://tuned.example',
      private: 'on',
      default_branch: 'develop',
      has_pull_requests: 'on',
      allow_squash_merge: 'on',
      allow_rebase: 'on',
      default_merge_style: 'squash',
    }
    await expectCsrfRefused(alice, '/alice/tuned/settings', fields)
    const res = await submit(alice, '/alice/tuned/settings', fields, { from: '/alice/tuned/settings' })
    expect(res.status).toBe(303)
    expect(res.location).toBe('/alice/tuned/settings?done=saved')
    const repo = (await s.get('/repos/alice/tuned', asAlice())).body
    expect(repo.description).toBe('Tuned <by> the web')
    expect(repo.website).toBe('https://tuned.example')
    expect(repo.private).toBe(true)
    expect(repo.default_branch).toBe('develop')
    expect(repo.has_issues).toBe(false)
    expect(repo.has_pull_requests).toBe(true)
    expect([repo.allow_merge_commits, repo.allow_rebase, repo.allow_squash_merge, repo.allow_fast_forward_only_merge]).toEqual([false, true, true, false])
    expect(repo.default_merge_style).toBe('squash')
    // The stranger lost sight of it with the visibility.
    expect((await page('/alice/tuned/settings', await signIn(stranger))).status).toBe(404)
    // A bad website: the API's refusal on the page, nothing changed.
    const before = await mark()
    const bad = await submit(alice, '/alice/tuned/settings', { ...fields, website: 'javascript:alert(1)' }, { from: '/alice/tuned/settings' })
    expect(bad.status).toBe(422)
    expect(bad.html).toContain('role="alert"')
    expect(await mark()).toBe(before)
    // Renaming answers the new settings URL.
    const renamed = await submit(alice, '/alice/tuned/settings', { ...fields, repo_name: 'tuned2' }, { from: '/alice/tuned/settings' })
    expect(renamed.location).toBe('/alice/tuned2/settings?done=saved')
    expect((await submit(alice, '/alice/tuned2/settings', { ...fields, repo_name: 'tuned', private: '' }, { from: '/alice/tuned2/settings' })).status).toBe(303)
    expect((await s.get('/repos/alice/tuned')).body.private).toBe(false)
  })

  test('collaborators: added, permission changed, removed', async () => {
    await expectCsrfRefused(alice, '/alice/tuned/settings/collaboration', { collaborator: 'stranger', permission: 'write' })
    expect((await submit(alice, '/alice/tuned/settings/collaboration', { collaborator: 'stranger', permission: 'write' }, { from: '/alice/tuned/settings/collaboration' })).status).toBe(303)
    expect((await s.get('/repos/alice/tuned/collaborators/stranger/permission', asAlice())).body.permission).toBe('write')
    expect((await page('/alice/tuned/settings', await signIn(stranger))).status).toBe(403)
    expect((await submit(alice, '/alice/tuned/settings/collaboration', { collaborator: 'stranger', permission: 'admin' }, { from: '/alice/tuned/settings/collaboration' })).status).toBe(303)
    expect((await page('/alice/tuned/settings', await signIn(stranger))).status).toBe(200)
    const listed = await (await page('/alice/tuned/settings/collaboration', await signIn(alice))).text()
    expect(listed).toMatch(/<option value="admin" selected>admin<\/option>/)
    const nobody = await submit(alice, '/alice/tuned/settings/collaboration', { collaborator: 'nobody-at-all', permission: 'read' }, { from: '/alice/tuned/settings/collaboration' })
    expect(nobody.status).toBe(422)
    await expectCsrfRefused(alice, '/alice/tuned/settings/collaboration/delete', { collaborator: 'stranger' })
    expect((await submit(alice, '/alice/tuned/settings/collaboration/delete', { collaborator: 'stranger' }, { from: '/alice/tuned/settings/collaboration' })).status).toBe(303)
    expect((await s.get('/repos/alice/tuned/collaborators/stranger', asAlice())).status).toBe(404)
  })

  test('webhooks: created, tested, its deliveries listed, one redelivered; edited; deleted', async () => {
    // Delivering moves the outbox's position: the worker runs here only, so that the other tests'
    // "nothing changed" marks see no background writes.
    const worker = startWebhookWorker(s.deps, { pollMs: 20 })
    try {
      // Once it has caught up with the events before (none come during the flow), it writes nothing.
      // (The webhook consumer reads the outbox without claiming: its done position is all it moves.)
      const last = (await s.deps.db.select({ n: max(events.id) }).from(events))[0]!.n ?? 0
      await until(async () => {
        const row = (await s.deps.db.select().from(eventConsumers).where(eq(eventConsumers.name, 'webhooks')))[0]
        return (row?.doneId ?? 0) >= last
      }, 'the webhook worker caught up')
      await webhookFlow()
    } finally {
      await worker.stop()
    }
  })

  async function webhookFlow() {
    const fields = { url: receiver.url('/web'), content_type: 'json', secret: 's3cret', branch_filter: '*', events_mode: 'push_only', active: 'on' }
    await expectCsrfRefused(alice, '/alice/tuned/settings/hooks', fields)
    const made = await submit(alice, '/alice/tuned/settings/hooks', fields, { from: '/alice/tuned/settings/hooks' })
    expect(made.status).toBe(303)
    const hooks = (await s.get('/repos/alice/tuned/hooks', asAlice())).body
    expect(hooks.length).toBe(1)
    expect(hooks[0].config.url).toBe(receiver.url('/web'))
    expect(hooks[0].events).toEqual(['push'])
    expect(made.location).toBe(`/alice/tuned/settings/hooks/${hooks[0].id}?done=hook-added`)
    const hookPath = `/alice/tuned/settings/hooks/${hooks[0].id}`
    // A bad URL: the API's message on the form.
    const bad = await submit(alice, '/alice/tuned/settings/hooks', { ...fields, url: 'ftp://nope' }, { from: '/alice/tuned/settings/hooks' })
    expect(bad.status).toBe(422)
    expect(bad.html).toContain('Invalid url')
    await expectCsrfRefused(alice, `${hookPath}/test`, {})
    expect((await submit(alice, `${hookPath}/test`, {}, { from: hookPath })).status).toBe(303)
    const first = await until(() => receiver.received.find((r) => r.path === '/web'), 'the test delivery')
    expect(first.headers['x-gitea-event']).toBe('push')
    const deliveries = await until(async () => {
      const list = (await s.get(`/repos/alice/tuned/hooks/${hooks[0].id}/deliveries`, asAlice())).body
      return list.length === 1 && list[0].delivered ? list : null
    }, 'the delivery recorded')
    const html = await (await page(hookPath, await signIn(alice))).text()
    expect(html).toContain(deliveries[0].uuid)
    expect(html).toContain('ok (200)')
    // Gitea 1.23's replay address, by the delivery's uuid, is the page's button; Warren's older address still answers.
    const redeliver = `${hookPath}/replay/${deliveries[0].uuid}`
    expect(html).toContain(`action="${redeliver}"`)
    await expectCsrfRefused(alice, redeliver, {})
    await expectCsrfRefused(alice, `${hookPath}/deliveries/${deliveries[0].id}/redeliver`, {})
    expect((await submit(alice, redeliver, {}, { from: hookPath })).status).toBe(303)
    const again = await until(() => receiver.received.filter((r) => r.path === '/web')[1], 'the redelivery')
    expect(again.text).toBe(first.text)
    expect(again.headers['x-gitea-delivery']).not.toBe(first.headers['x-gitea-delivery'])
    // Its outcome written (the worker's last write of the flow): the "changed nothing" marks below see no background write.
    await until(async () => {
      const list = (await s.get(`/repos/alice/tuned/hooks/${hooks[0].id}/deliveries`, asAlice())).body
      return list.length === 2 && list.every((d: { delivered: boolean }) => d.delivered)
    }, 'the redelivery recorded')
    // Edited to every event and inactive; the secret kept when left empty.
    expect((await submit(alice, hookPath, { ...fields, secret: '', events_mode: 'send_everything', active: '' }, { from: hookPath })).status).toBe(303)
    const edited = (await s.get(`/repos/alice/tuned/hooks/${hooks[0].id}`, asAlice())).body
    expect(edited.active).toBe(false)
    expect(edited.events.length).toBeGreaterThan(10)
    // Gitea 1.23's delete address, the id in the form (the page's button); the older `{id}/delete` still answers.
    expect(await (await page(hookPath, await signIn(alice))).text()).toContain('action="/alice/tuned/settings/hooks/delete"')
    await expectCsrfRefused(alice, `${hookPath}/delete`, {})
    await expectCsrfRefused(alice, '/alice/tuned/settings/hooks/delete', { id: String(hooks[0].id) })
    expect((await submit(alice, '/alice/tuned/settings/hooks/delete', { id: 'nope' }, { from: hookPath })).status).toBe(404)
    expect((await submit(alice, '/alice/tuned/settings/hooks/delete', { id: String(hooks[0].id) }, { from: hookPath })).status).toBe(303)
    expect((await s.get('/repos/alice/tuned/hooks', asAlice())).body).toEqual([])
    expect((await page(hookPath, await signIn(alice))).status).toBe(404)
  }

  test('deploy keys: added read-only, listed, deleted', async () => {
    const gen = Bun.spawnSync(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'deploy@test', '-f', join(keyDir, 'deploy')])
    expect(gen.exitCode).toBe(0)
    const key = readFileSync(join(keyDir, 'deploy.pub'), 'utf8').trim()
    await expectCsrfRefused(alice, '/alice/tuned/settings/keys', { title: 'ci', content: key })
    expect((await submit(alice, '/alice/tuned/settings/keys', { title: 'ci', content: key }, { from: '/alice/tuned/settings/keys' })).status).toBe(303)
    const keys = (await s.get('/repos/alice/tuned/keys', asAlice())).body
    expect(keys.map((k: any) => [k.title, k.read_only])).toEqual([['ci', true]])
    expect(await (await page('/alice/tuned/settings/keys', await signIn(alice))).text()).toContain(keys[0].fingerprint)
    await expectCsrfRefused(alice, '/alice/tuned/settings/keys/delete', { id: String(keys[0].id) })
    expect((await submit(alice, '/alice/tuned/settings/keys/delete', { id: String(keys[0].id) }, { from: '/alice/tuned/settings/keys' })).status).toBe(303)
    expect((await s.get('/repos/alice/tuned/keys', asAlice())).body).toEqual([])
  })

  test('danger zone: archive and unarchive (owner only), delete with the typed full name', async () => {
    await expectCsrfRefused(alice, '/alice/tuned/settings', { action: 'archive' })
    expect((await submit(alice, '/alice/tuned/settings', { action: 'archive' }, { from: '/alice/tuned/settings' })).status).toBe(303)
    expect((await s.get('/repos/alice/tuned')).body.archived).toBe(true)
    // Archived: the settings page still opens (to unarchive); adding a collaborator is refused as by the API (423).
    expect((await page('/alice/tuned/settings', await signIn(alice))).status).toBe(200)
    expect((await submit(alice, '/alice/tuned/settings/collaboration', { collaborator: 'stranger' }, { from: '/alice/tuned/settings' })).status).toBe(423)
    expect((await submit(alice, '/alice/tuned/settings', { action: 'unarchive' }, { from: '/alice/tuned/settings' })).status).toBe(303)
    expect((await s.get('/repos/alice/tuned')).body.archived).toBe(false)
    // A wrong confirmation deletes nothing.
    const before = await mark()
    const wrong = await submit(alice, '/alice/tuned/settings', { action: 'delete', confirm: 'tuned' }, { from: '/alice/tuned/settings' })
    expect(wrong.status).toBe(422)
    expect(wrong.html).toContain('alice/tuned')
    expect(await mark()).toBe(before)
    await expectCsrfRefused(alice, '/alice/tuned/settings', { action: 'delete', confirm: 'alice/tuned' })
    const gone = await submit(alice, '/alice/tuned/settings', { action: 'delete', confirm: 'alice/tuned' }, { from: '/alice/tuned/settings' })
    expect(gone.status).toBe(303)
    expect(gone.location).toBe('/alice')
    expect((await s.get('/repos/alice/tuned', asAlice())).status).toBe(404)
  })
})

describe('organisations', () => {
  test('members, teams, a team page; its owners add and remove members', async () => {
    const asAlice = { token: alice.token }
    expect((await s.post('/orgs', { username: 'guild' }, asAlice)).status).toBe(201)
    expect((await s.post('/orgs', { username: 'cabal', visibility: 'private' }, asAlice)).status).toBe(201)
    const team = await s.post('/orgs/guild/teams', { name: 'Crafters', permission: 'write', includes_all_repositories: true }, asAlice)
    expect(team.status).toBe(201)
    expect((await s.post('/orgs/guild/repos', { name: 'tools' }, asAlice)).status).toBe(201)
    // Members: everyone sees a public organisation's public members; a private one is 404 to strangers.
    expect((await page('/org/guild/members')).status).toBe(200)
    expect((await page('/org/cabal/members', await signIn(stranger))).status).toBe(404)
    expect((await page('/org/cabal/members')).status).toBe(404)
    expect(await (await page('/org/cabal/members', await signIn(alice))).text()).toContain('href="/alice"')
    // Teams: members of the organisation only (anonymous asked to sign in, 403 to others).
    await expectSignInAsked('/org/guild/teams')
    expect((await page('/org/guild/teams', await signIn(stranger))).status).toBe(403)
    const teams = await (await page('/org/guild/teams', await signIn(alice))).text()
    expect(teams).toContain('href="/org/guild/teams/crafters"')
    const teamPage = await (await page('/org/guild/teams/crafters', await signIn(alice))).text()
    expect(teamPage).toContain('href="/guild/tools"')
    expect(teamPage).toContain('action="/org/guild/teams/crafters/add"')
    expect((await page('/org/guild/teams/crafters', await signIn(stranger))).status).toBe(404)
    expect((await page('/org/guild/teams/nope', await signIn(alice))).status).toBe(404)
    // The owner adds bob; bob, a member now, sees the team but may not change it (404, as the API).
    await expectCsrfRefused(alice, '/org/guild/teams/crafters/add', { uid: 'bob' })
    expect((await submit(alice, '/org/guild/teams/crafters/add', { uid: 'bob' }, { from: '/org/guild/teams/crafters' })).status).toBe(303)
    expect((await s.get(`/teams/${team.body.id}/members/bob`, asAlice)).status).toBe(200)
    const bobs = await (await page('/org/guild/teams/crafters', await signIn(bob))).text()
    expect(bobs).toContain('href="/bob"')
    expect(bobs).not.toContain('/add"')
    await signIn(bob)
    const before = await mark()
    expect((await submit(bob, '/org/guild/teams/crafters/remove', { uid: 'alice' }, { from: '/org/guild/teams/crafters' })).status).toBe(404)
    expect(await mark()).toBe(before)
    const unknown = await submit(alice, '/org/guild/teams/crafters/add', { uid: 'no-such-user' }, { from: '/org/guild/teams/crafters' })
    expect(unknown.status).toBe(404)
    await expectCsrfRefused(alice, '/org/guild/teams/crafters/remove', { uid: 'bob' })
    expect((await submit(alice, '/org/guild/teams/crafters/remove', { uid: 'bob' }, { from: '/org/guild/teams/crafters' })).status).toBe(303)
    expect((await s.get(`/teams/${team.body.id}/members/bob`, asAlice)).status).toBe(404)
  })
})

describe('registration when it is on', () => {
  let r: TestServer
  beforeAll(async () => {
    r = await startTestServer({ webRegistration: true, minPasswordLength: 8 })
  })
  afterAll(() => r.stop())

  test('the form makes a user with the password policy, then signs them in', async () => {
    const form = await fetch(r.url + '/user/sign_up', { headers: { accept: 'text/html' } })
    expect(form.status).toBe(200)
    const pre = form.headers.get('set-cookie')!.split(';')[0]!
    const csrf = csrfIn(await form.text())!
    const post = (fields: Record<string, string>, withCsrf = true) =>
      fetch(r.url + '/user/sign_up', {
        method: 'POST',
        headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...(withCsrf ? { _csrf: csrf } : {}), ...fields }),
        redirect: 'manual',
      })
    const good = { user_name: 'newbie', email: 'newbie@example.com', password: 'long-enough', retype: 'long-enough' }
    expect((await post(good, false)).status).toBe(403)
    const short = await post({ ...good, password: 'short', retype: 'short' })
    expect(short.status).toBe(400)
    expect(await short.text()).toContain('at least 8 characters')
    expect((await r.get('/users/newbie')).status).toBe(404)
    const ok = await post(good)
    expect(ok.status).toBe(303)
    const session = ok.headers.getSetCookie().find((c) => c.startsWith('warren_session='))!.split(';')[0]!
    const home = await (await fetch(r.url + '/', { headers: { accept: 'text/html', cookie: session } })).text()
    expect(home).toContain('Your repositories')
    expect((await r.get('/users/newbie')).status).toBe(200)
    expect((await r.get('/user', { basic: ['newbie', 'long-enough'] })).body.email).toBe('newbie@example.com')
    // A name taken: the service's message.
    const again = await post(good)
    expect(again.status).toBe(422)
    expect(await again.text()).toContain('user already exists')
  })
})

describe('topics', () => {
  test("an administrator sets the topics from the settings; the header links each to the repositories carrying it; bad names change nothing", async () => {
    expect((await s.post('/user/repos', { name: 'tagged', auto_init: true }, { token: alice.token })).status).toBe(201)
    expect((await s.post('/user/repos', { name: 'other', auto_init: true }, { token: alice.token })).status).toBe(201)
    const saved = await submit(alice, '/alice/tagged/topics', { topics: 'web, Database  tools' }, { from: '/alice/tagged/settings' })
    expect([saved.status, saved.location]).toEqual([303, '/alice/tagged/settings?done=topics-saved'])
    expect((await s.get('/repos/alice/tagged/topics', { token: alice.token })).body.topics).toEqual(['database', 'tools', 'web'])
    const home = await (await page('/alice/tagged')).text()
    expect(home).toContain('href="/explore/repos?q=database&amp;topic=1"')
    // The topic's link finds the repository carrying it, not one whose name merely matches.
    expect((await s.put('/repos/alice/other/topics', { topics: [] }, { token: alice.token })).status).toBe(204)
    const explored = await (await page('/explore/repos?q=tools&topic=1')).text()
    expect(explored).toContain('href="/alice/tagged"')
    expect(explored).not.toContain('href="/alice/other"')
    // A name that is no topic: the page again with the service's words, the topics as they were.
    await signIn(bob)
    const before = await mark()
    const bad = await submit(alice, '/alice/tagged/topics', { topics: 'ok, not a valid topic!' }, { from: '/alice/tagged/settings' })
    expect(bad.status).toBe(422)
    expect(bad.html).toContain('value="ok, not a valid topic!"')
    expect((await submit(bob, '/alice/tagged/topics', { topics: 'x' }, { from: '/' })).status).toBe(403)
    await expectCsrfRefused(alice, '/alice/tagged/topics', { topics: 'x' })
    expect(await mark()).toBe(before)
    // Emptied: no topics.
    expect((await submit(alice, '/alice/tagged/topics', { topics: '' }, { from: '/alice/tagged/settings' })).status).toBe(303)
    expect((await s.get('/repos/alice/tagged/topics', { token: alice.token })).body.topics).toEqual([])
  })
})
