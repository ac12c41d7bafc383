import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'
import { contentMark } from './db-snapshot'
import { gitOk } from './git-fixture'
import { jobBoardOf } from '../src/lib/job-board'
import { configSummary } from '../src/modules/admin/config-summary'
import { loadConfig } from '../src/config'
import { folderMoves, repositories } from '../src/db/schema'
import { eq } from 'drizzle-orm'

/**
 * The site administration's pages over plain HTTP: only site administrators (sign-in asked of
 * the anonymous, 403 to others), the dashboard's counts, status and "run now" through the job
 * board `/admin/cron` runs from, the lists (organisations, repositories, unadopted repositories,
 * e-mail addresses) searched, a repository deleted after its name is typed, unadopted files
 * adopted and deleted, the configuration without secrets; bad input shown on the page, forms
 * without their CSRF token refused, nothing changed.
 */

let s: TestServer
let root: TestUser, alice: TestUser
let v: ReturnType<typeof webVisitors>
let ran = 0
const PAGES = ['/-/admin', '/-/admin/orgs', '/-/admin/repos', '/-/admin/repos/unadopted', '/-/admin/emails', '/-/admin/packages', '/-/admin/config', '/-/admin/repos/delete?id=1']
const html = async (path: string) => {
  const res = await v.page(path, await v.signIn(root))
  expect(res.status).toBe(200)
  return await res.text()
}
const bareFolder = async (owner: string, name: string) => {
  mkdirSync(join(s.dataDir, 'repositories', owner), { recursive: true })
  await gitOk(s.dataDir, 'init', '--bare', '-q', join(s.dataDir, 'repositories', owner, `${name}.git`))
}

beforeAll(async () => {
  s = await startTestServer()
  v = webVisitors(() => s.url, contentMark(s.deps.db))
  root = await s.user('root', { admin: true })
  alice = await s.user('alice', { email: 'alice@example.org' })
  expect((await s.post('/orgs', { username: 'acme-corp', full_name: 'Acme Corporation' }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'tracker', auto_init: true }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'secret-plans', private: true }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/repos/alice/tracker/issues', { title: 'first' }, { token: alice.token })).status).toBe(201)
  await bareFolder('alice', 'stray')
  await bareFolder('alice', 'junk')
  jobBoardOf(s.deps).register('admin_page_test_job', { schedule: '@every 1h', everyMs: null, runNow: () => void ran++ })
})
afterAll(async () => {
  await s.stop()
})

describe('site administration pages', () => {
  test('site administrators only: sign-in asked of the anonymous, 403 to others, forms refused', async () => {
    for (const path of PAGES) {
      const anonymous = await v.page(path)
      expect(anonymous.status).toBe(303)
      expect(anonymous.headers.get('location')).toBe(`/user/login?redirect_to=${encodeURIComponent(path)}`)
      expect((await v.page(path, await v.signIn(alice))).status).toBe(403)
    }
    for (const [path, fields] of [
      ['/-/admin', { op: 'admin_page_test_job' }],
      ['/-/admin/repos/delete', { id: '1', confirm: 'alice/tracker' }],
      ['/-/admin/repos/unadopted', { id: 'alice/stray', action: 'adopt' }],
    ] as const)
      expect((await v.submit(alice, path, fields)).status).toBe(403)
    expect(ran).toBe(0)
    // The header links the site administration for its administrators only.
    expect(await (await v.page('/', await v.signIn(alice))).text()).not.toContain('href="/-/admin"')
    expect(await html('/')).toContain('<a href="/-/admin">Site administration</a>')
    expect((await s.get('/repos/alice/tracker', { token: alice.token })).status).toBe(200)
  })

  test('the dashboard: counts, the process status, the jobs with "run now"; an unknown job said on the page', async () => {
    const page = await html('/-/admin')
    for (const menu of ['href="/-/admin/users"', 'href="/-/admin/orgs"', 'href="/-/admin/repos/unadopted"', 'href="/-/admin/emails"', 'href="/-/admin/config"']) expect(page).toContain(menu)
    expect(page).toMatch(/<td>Users<\/td><td>2<\/td>/)
    expect(page).toMatch(/<td>Organisations<\/td><td>1<\/td>/)
    expect(page).toMatch(/<td>Repositories<\/td><td>2<\/td>/)
    expect(page).toMatch(/<td>Issues<\/td><td>1<\/td>/)
    expect(page).toMatch(/<td>Pull requests<\/td><td>0<\/td>/)
    expect(page).toContain('Uptime')
    expect(page).toMatch(/Resident memory<\/td><td>\d+\.\d MiB/)
    expect(page).toContain('<td>admin_page_test_job</td><td>@every 1h</td>')
    expect(page).toContain('aria-label="Run admin_page_test_job now"')

    const run = await v.submit(root, '/-/admin', { op: 'admin_page_test_job' }, { from: '/-/admin' })
    expect(run.status).toBe(303)
    expect(run.location).toBe('/-/admin?done=job-started')
    await Bun.sleep(0)
    expect(ran).toBe(1)
    expect(await html('/-/admin?done=job-started')).toContain('The job was started')
    // The API lists and runs the same job.
    const cron = (await s.get('/admin/cron', { token: root.token })).body as { name: string; exec_times: number }[]
    expect(cron.find((j) => j.name === 'admin_page_test_job')).toBeTruthy()

    const unknown = await v.submit(root, '/-/admin', { op: 'no_such_job' }, { from: '/-/admin' })
    expect(unknown.status).toBe(404)
    expect(unknown.html).toContain('No background job named &quot;no_such_job&quot; runs in this process.')
    expect(unknown.html).toContain('Background jobs of this process')
    const tooLong = await v.submit(root, '/-/admin', { op: 'x'.repeat(200) }, { from: '/-/admin' })
    expect(tooLong.status).toBeGreaterThanOrEqual(400)
    expect(tooLong.status).toBeLessThan(500)
    await v.expectCsrfRefused(root, '/-/admin', { op: 'admin_page_test_job' })
    expect(ran).toBe(1)
  })

  test('organisations and e-mail addresses: listed and searched', async () => {
    const orgs = await html('/-/admin/orgs')
    expect(orgs).toContain('href="/acme-corp"')
    expect(orgs).toContain('Acme Corporation')
    expect(orgs).not.toContain('href="/alice"')
    expect(await html('/-/admin/orgs?q=corp')).toContain('href="/acme-corp"')
    expect(await html('/-/admin/orgs?q=nothing-like-it')).toContain('No organisations match.')
    const emails = await html('/-/admin/emails')
    expect(emails).toContain('alice@example.org')
    const found = await html('/-/admin/emails?q=ALICE@')
    expect(found).toContain('alice@example.org')
    expect(found).not.toContain(root.user.email)
  })

  test("e-mail addresses: deactivated and activated again, a primary one with its account; one's own primary refused", async () => {
    const activeOf = async () => ((await s.get('/users/search?q=alice', { token: root.token })).body.data as { login: string; active: boolean }[]).find((u) => u.login === 'alice')!.active
    const from = { from: '/-/admin/emails' }
    const off = await v.submit(root, '/-/admin/emails/activate', { uid: String(alice.user.id), email: 'Alice@Example.org', activate: 'false', q: 'alice' }, from)
    expect(off.status).toBe(303)
    expect(off.location).toBe('/-/admin/emails?q=alice&done=email-deactivated')
    expect(await activeOf()).toBe(false)
    const page = await html('/-/admin/emails?q=alice&done=email-deactivated')
    expect(page).toContain('The address was deactivated.')
    expect(page).toContain('Activate alice@example.org')
    expect((await v.submit(root, '/-/admin/emails/activate', { uid: String(alice.user.id), email: 'alice@example.org', activate: 'true' }, from)).location).toBe('/-/admin/emails?done=email-activated')
    expect(await activeOf()).toBe(true)

    const before = await contentMark(s.deps.db)()
    const self = await v.submit(root, '/-/admin/emails/activate', { uid: String(root.user.id), email: root.user.email, activate: 'false' }, from)
    expect(self.status).toBe(422)
    expect(self.html).toContain('You cannot deactivate your own primary address')
    expect((await v.submit(root, '/-/admin/emails/activate', { uid: String(alice.user.id), email: 'nobody@example.org', activate: 'false' }, from)).status).toBe(404)
    expect((await v.submit(root, '/-/admin/emails/activate', { uid: 'x', email: 'alice@example.org', activate: 'false' }, from)).status).toBe(404)
    expect((await v.submit(root, '/-/admin/emails/activate', { uid: String(alice.user.id), email: 'alice@example.org', activate: 'maybe' }, from)).status).toBe(422)
    expect((await v.submit(alice, '/-/admin/emails/activate', { uid: String(alice.user.id), email: 'alice@example.org', activate: 'false' })).status).toBe(403)
    await v.expectCsrfRefused(root, '/-/admin/emails/activate', { uid: String(alice.user.id), email: 'alice@example.org', activate: 'false' })
    expect(await contentMark(s.deps.db)()).toBe(before)
  })

  test("packages: every owner's versions listed and searched; one deleted, its package with its last version", async () => {
    const put = (owner: TestUser, name: string, version: string) =>
      fetch(`${s.url}/api/packages/${owner.name}/generic/${name}/${version}/file.txt`, { method: 'PUT', headers: { authorization: `token ${owner.token}` }, body: `${name} ${version}` })
    expect((await put(alice, 'widget', '1.0.0')).status).toBe(201)
    expect((await put(alice, 'widget', '2.0.0')).status).toBe(201)
    expect((await put(root, 'gadget', '0.1.0')).status).toBe(201)
    const all = await html('/-/admin/packages')
    for (const text of ['widget', 'gadget', '2.0.0', '0.1.0', 'href="/alice/-/packages/generic/widget/1.0.0"']) expect(all).toContain(text)
    const found = await html('/-/admin/packages?q=WIDG')
    expect(found).toContain('widget')
    expect(found).not.toContain('gadget')
    const versions = async () => ((await s.get('/packages/alice', { token: alice.token })).body as any[]).map((p) => `${p.name} ${p.version}`).sort()
    expect(await versions()).toEqual(['widget 1.0.0', 'widget 2.0.0'])
    const row = found.split('<tr>').find((r) => r.includes('Delete widget 1.0.0'))!
    const id = /name="id" value="(\d+)"/.exec(row)?.[1]
    expect(id).toBeDefined()
    const from = { from: '/-/admin/packages' }
    expect((await v.submit(alice, '/-/admin/packages/delete', { id: id!, q: '' })).status).toBe(403)
    const deleted = await v.submit(root, '/-/admin/packages/delete', { id: id!, q: 'widg' }, from)
    expect([deleted.status, deleted.location]).toEqual([303, '/-/admin/packages?q=widg&done=package-version-deleted'])
    expect(await versions()).toEqual(['widget 2.0.0'])
    expect((await v.submit(root, '/-/admin/packages/delete', { id: id!, q: '' }, from)).status).toBe(404)
    expect((await v.submit(root, '/-/admin/packages/delete', { id: 'x', q: '' }, from)).status).toBe(404)
    // gadget's only version: the package goes with it.
    const gadget = /name="id" value="(\d+)"/.exec((await html('/-/admin/packages?q=gadget')).split('<tr>').find((r) => r.includes('Delete gadget'))!)![1]!
    expect((await v.submit(root, '/-/admin/packages/delete', { id: gadget, q: '' }, from)).status).toBe(303)
    expect((await s.get('/packages/root', { token: root.token })).body).toEqual([])
    expect(await html('/root/-/packages')).not.toContain('gadget')
    expect(await html('/-/admin')).toContain('href="/-/admin/packages"')
  })

  test('the configuration: effective settings with their variables, never a secret', async () => {
    const page = await html('/-/admin/config')
    expect(page).toContain('<code>WARREN_DEFAULT_BRANCH</code></td><td>main</td>')
    expect(page).toContain('WARREN_BASE_URL')
    expect(page).not.toContain('postgres://')
    // A URL's credentials and query, and the initial administrator's password, appear nowhere.
    const config = loadConfig({
      WARREN_DATABASE_URL: 'postgres://warren:hunter2@db.example:5433/forge?password=hunter3',
      WARREN_ADMIN_USER: 'boss',
      WARREN_ADMIN_PASSWORD: 'hunter4',
      WARREN_ADMIN_EMAIL: 'boss@example.org',
    })
    const shown = JSON.stringify(configSummary(config))
    expect(shown).toContain('PostgreSQL, db.example:5433/forge')
    for (const secret of ['hunter2', 'hunter3', 'hunter4', 'warren:']) expect(shown).not.toContain(secret)
  })

  test('repositories: every one listed (private too), searched; deleted once its name is typed', async () => {
    const list = await html('/-/admin/repos')
    expect(list).toContain('href="/alice/secret-plans"')
    expect(list).toContain('href="/alice/tracker"')
    const found = await html('/-/admin/repos?q=secret')
    expect(found).toContain('href="/alice/secret-plans"')
    expect(found).not.toContain('href="/alice/tracker"')
    const id = (await s.get('/repos/alice/secret-plans', { token: alice.token })).body.id as number
    const confirm = await html(`/-/admin/repos/delete?id=${id}`)
    expect(confirm).toContain('Type the repository&#39;s full name, alice/secret-plans, to confirm')
    expect((await v.page('/-/admin/repos/delete?id=999999', await v.signIn(root))).status).toBe(404)
    expect((await v.page('/-/admin/repos/delete?id=abc', await v.signIn(root))).status).toBe(404)
    // A repository not ready (being migrated, adopted or created) is not there to delete, as the API's lookups answer.
    const now = Math.floor(Date.now() / 1000)
    const [migrating] = await s.deps.db
      .insert(repositories)
      .values({ ownerId: alice.user.id, ownerName: 'alice', name: 'arriving', lowerName: 'arriving', status: 'migrating', createdUnix: now, updatedUnix: now })
      .returning({ id: repositories.id })
    expect((await v.page(`/-/admin/repos/delete?id=${migrating!.id}`, await v.signIn(root))).status).toBe(404)
    expect((await v.submit(root, '/-/admin/repos/delete', { id: String(migrating!.id), confirm: 'alice/arriving' }, { from: '/-/admin/repos' })).status).toBe(404)
    expect((await s.deps.db.select({ status: repositories.status }).from(repositories).where(eq(repositories.id, migrating!.id)))[0]?.status).toBe('migrating')
    await s.deps.db.delete(repositories).where(eq(repositories.id, migrating!.id))

    const wrong = await v.submit(root, '/-/admin/repos/delete', { id: String(id), confirm: 'alice/tracker' }, { from: '/-/admin/repos' })
    expect(wrong.status).toBe(422)
    expect(wrong.html).toContain("Type the repository&#39;s full name, alice/secret-plans, to delete it.")
    expect(wrong.html).toContain('value="alice/tracker"')
    expect((await v.submit(root, '/-/admin/repos/delete', { id: '999999', confirm: 'x/y' }, { from: '/-/admin/repos' })).status).toBe(404)
    await v.expectCsrfRefused(root, '/-/admin/repos/delete', { id: String(id), confirm: 'alice/secret-plans' })
    expect((await s.get('/repos/alice/secret-plans', { token: alice.token })).status).toBe(200)

    const done = await v.submit(root, '/-/admin/repos/delete', { id: String(id), confirm: 'Alice/Secret-Plans' }, { from: '/-/admin/repos' })
    expect(done.status).toBe(303)
    expect(done.location).toBe('/-/admin/repos?done=repo-deleted')
    expect((await s.get('/repos/alice/secret-plans', { token: alice.token })).status).toBe(404)
    expect(await html('/-/admin/repos?done=repo-deleted')).not.toContain('secret-plans')
  })

  test('unadopted repositories: listed, adopted and deleted through the API\'s service; bad names said on the page', async () => {
    const list = await html('/-/admin/repos/unadopted')
    expect(list).toContain('<td>alice/junk</td>')
    expect(list).toContain('<td>alice/stray</td>')
    expect(await html('/-/admin/repos/unadopted?q=alice/st*')).not.toContain('alice/junk')

    const bad = await v.submit(root, '/-/admin/repos/unadopted', { id: 'no-slash', action: 'adopt' }, { from: '/-/admin/repos/unadopted' })
    expect(bad.status).toBe(422)
    expect(bad.html).toContain('Name the repository as owner/name.')
    expect((await v.submit(root, '/-/admin/repos/unadopted', { id: 'alice/stray', action: 'explode' }, { from: '/-/admin/repos/unadopted' })).status).toBe(422)
    const missing = await v.submit(root, '/-/admin/repos/unadopted', { id: 'alice/nothing-here', action: 'adopt' }, { from: '/-/admin/repos/unadopted' })
    expect(missing.status).toBe(404)
    expect(missing.html).toContain('Unadopted repositories')
    await v.expectCsrfRefused(root, '/-/admin/repos/unadopted', { id: 'alice/stray', action: 'adopt' })
    // A folder a pending move names (a rename between its folder's move and its rows): refused, said on the page.
    const [moving] = await s.deps.db.insert(folderMoves).values({ fromPath: 'alice/old-stray.git', toPath: 'alice/stray.git', createdUnix: 0 }).returning({ id: folderMoves.id })
    for (const action of ['adopt', 'delete']) {
      const busy = await v.submit(root, '/-/admin/repos/unadopted', { id: 'alice/stray', action }, { from: '/-/admin/repos/unadopted' })
      expect(busy.status).toBe(409)
      expect(busy.html).toContain('the repository files are being moved (a rename or transfer is under way) [name: alice/stray]')
    }
    await s.deps.db.delete(folderMoves).where(eq(folderMoves.id, moving!.id))
    expect(existsSync(join(s.dataDir, 'repositories', 'alice', 'stray.git'))).toBe(true)

    const adopted = await v.submit(root, '/-/admin/repos/unadopted', { id: 'alice/stray', action: 'adopt' }, { from: '/-/admin/repos/unadopted' })
    expect(adopted.status).toBe(303)
    expect(adopted.location).toBe('/-/admin/repos/unadopted?done=repo-adopted')
    expect((await s.get('/repos/alice/stray', { token: alice.token })).body.private).toBe(true)

    const deleted = await v.submit(root, '/-/admin/repos/unadopted', { id: 'alice/junk', action: 'delete' }, { from: '/-/admin/repos/unadopted' })
    expect(deleted.location).toBe('/-/admin/repos/unadopted?done=unadopted-deleted')
    expect(existsSync(join(s.dataDir, 'repositories', 'alice', 'junk.git'))).toBe(false)
    const after = await html('/-/admin/repos/unadopted?done=unadopted-deleted')
    expect(after).toContain('The unadopted files were deleted.')
    expect(after).toContain('No unadopted repositories.')
  })
})
