import { afterAll, beforeAll, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'
import { contentMark } from './db-snapshot'
import { events, packages } from '../src/db/schema'

/**
 * The package pages at Gitea 1.23's addresses over plain HTTP: an owner's packages (type, name
 * search, paging) and the Packages tab, a package's latest version, a version's page (files with
 * sizes and downloads, the generic installation's curl commands, creator, versions), a file's
 * download, the versions list; the settings (link and unlink a repository, delete a version) for
 * those who may write the owner's packages, through the packages service (the `package.deleted`
 * event); a repository's linked packages and its tab while the unit is on; a private owner's
 * packages hidden (404); every Package record's html_url (and repository link) answering; hostile
 * names escaped and bad input a clear 4xx.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, carol: TestUser, dave: TestUser
let mark: () => Promise<string>
const { page, signIn, submit, expectCsrfRefused, expectSignInAsked } = webVisitors(() => s.url, () => mark())

const HOSTILE = `<script>alert(1)</script>&"'`
/** A text as the pages' JSX writes it. */
const escaped = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')

async function publish(owner: string, name: string, version: string, file: string, body: string, who: TestUser = alice) {
  const res = await fetch(`${s.url}/api/packages/${owner}/generic/${name}/${encodeURIComponent(version)}/${encodeURIComponent(file)}`, {
    method: 'PUT',
    headers: { authorization: `token ${who.token}` },
    body,
  })
  expect([owner, name, version, file, res.status]).toEqual([owner, name, version, file, 201])
}
const html = async (path: string, cookie?: string) => {
  const res = await page(path, cookie)
  return { status: res.status, text: await res.text(), location: res.headers.get('location') }
}
const packageOf = async (owner: string, name: string, version: string) => (await s.get(`/packages/${owner}/generic/${name}/${encodeURIComponent(version)}`, { token: alice.token })).body
const kinds = async () => (await s.deps.db.select({ kind: events.kind }).from(events)).map((e) => e.kind)

let projId = 0, toolsId = 0

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  ;[alice, bob, carol, dave] = await Promise.all([s.user('alice'), s.user('bob'), s.user('carol'), s.user('dave')])
  const asAlice = { token: alice.token }
  for (const org of ['acme', 'hush']) expect((await s.post('/orgs', { username: org, visibility: org === 'hush' ? 'private' : 'public' }, asAlice)).status).toBe(201)
  for (const [team, permission, member] of [['writers', 'write', carol], ['readers', 'read', dave]] as const) {
    const made = await s.post('/orgs/acme/teams', { name: team, permission, units: ['repo.code'] }, asAlice)
    expect(made.status).toBe(201)
    expect((await s.put(`/teams/${made.body.id}/members/${member.name}`, undefined, asAlice)).status).toBe(204)
  }
  const proj = await s.post('/user/repos', { name: 'proj', auto_init: true }, asAlice)
  expect(proj.status).toBe(201)
  projId = proj.body.id
  expect((await s.post('/user/repos', { name: 'secret', private: true }, asAlice)).status).toBe(201)
  const tools = await s.post('/orgs/acme/repos', { name: 'tools' }, asAlice)
  expect(tools.status).toBe(201)
  toolsId = tools.body.id

  await publish('alice', 'tool', '1.0.0', 'tool.bin', 'tool bytes 1.0.0')
  await publish('alice', 'tool', '1.0.0', 'read me.txt', 'notes')
  await publish('alice', 'other', '0.1', 'other.zip', 'zip')
  await publish('alice', 'tool', '2.0.0', 'tool.bin', 'tool bytes 2.0.0!')
  await publish('alice', 'hostile', HOSTILE, 'x.bin', 'x')
  await publish('acme', 'widget', '1.0', 'widget.tar', 'widget')
  await publish('acme', 'widget', '1.1', 'widget.tar', 'widget 1.1')
  await publish('hush', 'hidden', '1.0', 'h.bin', 'hidden')
  await publish('alice', 'slashy', '1.0/beta', 's.bin', 'slash')
  // 22 versions of one package, for the versions list's paging; 21 packages of acme's for the owner's.
  for (let i = 1; i <= 22; i++) await publish('alice', 'many', `0.${i}`, 'm.bin', `m${i}`)
  for (let i = 1; i <= 20; i++) await publish('acme', `lib${String(i).padStart(2, '0')}`, '1.0', 'l.bin', `l${i}`)
})
afterAll(() => s.stop())

test("the owner's packages: each package's latest version, the type and name filters, paging; a Packages tab on profiles and organisations", async () => {
  const list = await html('/alice/-/packages')
  expect(list.status).toBe(200)
  expect(list.text).toContain('href="/alice/-/packages/generic/tool/2.0.0"')
  // One row a package: the latest version only.
  expect(list.text).not.toContain('href="/alice/-/packages/generic/tool/1.0.0"')
  expect(list.text).toContain('href="/alice/-/packages/generic/other/0.1"')
  expect(list.text).toContain('5 packages')
  expect(list.text).toContain('aria-current="page">Packages</a>')
  const searched = await html('/alice/-/packages?q=OO')
  expect(searched.text).toContain('1 package<')
  expect(searched.text).toContain('/generic/tool/2.0.0')
  expect((await html('/alice/-/packages?type=generic')).text).toContain('5 packages')
  expect((await html('/alice/-/packages?type=npm')).text).toContain('No packages to show.')
  // acme: 21 packages, 20 a page.
  const first = await html('/acme/-/packages')
  expect(first.text).toContain('21 packages')
  expect(first.text).toContain('Page 1 of 2')
  const second = await html('/acme/-/packages?page=2')
  expect(second.text).toContain('Page 2 of 2')
  expect(second.text.match(/href="\/acme\/-\/packages\/generic\/[^"]+"/g)!.length).toBe(1)
  // The tabs.
  expect((await html('/alice')).text).toContain('href="/alice/-/packages"')
  expect((await html('/acme')).text).toContain('href="/acme/-/packages"')
})

test("a package's address goes to its latest version; a version's page: files with sizes and downloads, curl commands, creator, versions", async () => {
  const latest = await html('/alice/-/packages/generic/TOOL')
  expect(latest.status).toBe(303)
  expect(latest.location).toBe('/alice/-/packages/generic/tool/2.0.0')
  const v1 = await html('/alice/-/packages/generic/tool/1.0.0')
  expect(v1.status).toBe(200)
  expect(v1.text).toContain('tool (1.0.0)')
  expect(v1.text).toContain(`curl -OJ ${s.url}/api/packages/alice/generic/tool/1.0.0/tool.bin`)
  expect(v1.text).toContain(`curl -OJ ${s.url}/api/packages/alice/generic/tool/1.0.0/read%20me.txt`)
  expect(v1.text).toContain('16 B')
  expect(v1.text).toContain('href="/api/packages/alice/generic/tool/1.0.0/tool.bin"')
  expect(v1.text).toContain('href="/alice"')
  expect(v1.text).toContain('Versions (2)')
  expect(v1.text).toContain('href="/alice/-/packages/generic/tool/2.0.0"')
  expect(v1.text).toContain('href="/alice/-/packages/generic/tool/versions"')
  // Settings for who may write the owner's packages only.
  expect(v1.text).not.toContain('/settings"')
  expect((await html('/alice/-/packages/generic/tool/1.0.0', await signIn(bob))).text).not.toContain('/settings"')
  expect((await html('/alice/-/packages/generic/tool/1.0.0', await signIn(alice))).text).toContain('href="/alice/-/packages/generic/tool/1.0.0/settings"')

  // The file downloads: the bytes, by the file's id within its version.
  const ids = [...v1.text.matchAll(/href="\/alice\/-\/packages\/generic\/tool\/1\.0\.0\/files\/(\d+)"/g)].map((m) => m[1]!)
  expect(ids.length).toBe(2)
  const got = await page(`/alice/-/packages/generic/tool/1.0.0/files/${ids[0]}`)
  expect(got.status).toBe(200)
  expect(got.headers.get('content-disposition')).toContain('tool.bin')
  expect(await got.text()).toBe('tool bytes 1.0.0')
  expect((await page(`/alice/-/packages/generic/tool/2.0.0/files/${ids[0]}`)).status).toBe(404)
  expect((await page('/alice/-/packages/generic/tool/1.0.0/files/999999')).status).toBe(404)
  expect((await page('/alice/-/packages/generic/tool/1.0.0/files/abc')).status).toBe(404)
  expect((await page('/alice/-/packages/generic/tool/9.9/files/1')).status).toBe(404)
  expect((await page('/alice/-/packages/generic/nothing')).status).toBe(404)
  expect((await page('/alice/-/packages/npm/tool/1.0.0')).status).toBe(404)
})

test('the versions list: paged, searched', async () => {
  const first = await html('/alice/-/packages/generic/many/versions')
  expect(first.status).toBe(200)
  expect(first.text).toContain('Page 1 of 2')
  expect(first.text).toContain('href="/alice/-/packages/generic/many/0.22"')
  const second = await html('/alice/-/packages/generic/many/versions?page=2')
  expect(second.text.match(/href="\/alice\/-\/packages\/generic\/many\/0\.\d+"/g)!.length).toBe(2)
  const searched = await html('/alice/-/packages/generic/many/versions?q=0.2')
  expect(searched.text).toContain('href="/alice/-/packages/generic/many/0.22"')
  expect(searched.text).not.toContain('href="/alice/-/packages/generic/many/0.3"')
  expect((await page('/alice/-/packages/generic/nothing/versions')).status).toBe(404)
})

test("the settings are for who may write the owner's packages: sign-in asked, 403 below, 404 where hidden", async () => {
  await expectSignInAsked('/alice/-/packages/generic/tool/settings')
  expect((await page('/alice/-/packages/generic/tool/settings', await signIn(bob))).status).toBe(403)
  expect((await page('/alice/-/packages/generic/tool/1.0.0/settings', await signIn(bob))).status).toBe(403)
  expect((await page('/acme/-/packages/generic/widget/settings', await signIn(dave))).status).toBe(403)
  expect((await page('/acme/-/packages/generic/widget/settings', await signIn(carol))).status).toBe(200)
  expect((await page('/hush/-/packages/generic/hidden/settings', await signIn(bob))).status).toBe(404)
  const before = await mark()
  for (const who of [bob, dave]) {
    const cookie = await signIn(who)
    const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(await (await page('/', cookie)).text())![1]!
    for (const [path, fields] of [
      ['/acme/-/packages/generic/widget/settings', { action: 'delete', version: '1.0' }],
      ['/acme/-/packages/generic/widget/1.0/delete', {}],
      ['/acme/-/packages/generic/widget/settings', { action: 'link', repo_id: String(toolsId) }],
    ] as const) {
      const res = await fetch(s.url + path, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: csrf, ...fields }), redirect: 'manual' })
      expect([who.name, path, res.status]).toEqual([who.name, path, 403])
    }
  }
  expect(await mark()).toBe(before)
  await expectCsrfRefused(alice, '/alice/-/packages/generic/tool/settings', { action: 'link', repo_id: String(projId) })
})

test('link and unlink a repository of the owner: the record, the repository page and its tab follow; other owners\u2019 repositories refused', async () => {
  const settings = await html('/alice/-/packages/generic/tool/settings', await signIn(alice))
  expect(settings.text).toContain(`<option value="${projId}">proj</option>`)
  expect(settings.text).toContain('Not linked to a repository.')
  const linked = await submit(alice, '/alice/-/packages/generic/tool/settings', { action: 'link', repo_id: String(projId) }, { from: '/alice/-/packages/generic/tool/settings' })
  expect(linked.status).toBe(303)
  expect(linked.location).toBe('/alice/-/packages/generic/tool/settings?done=package-linked')
  const record = await packageOf('alice', 'tool', '2.0.0')
  expect(record.repository.full_name).toBe('alice/proj')
  expect((await s.get(record.repository.html_url.replace(s.url, ''), {})).status).toBeLessThan(500)
  // The repository's packages and its tab.
  const repoPage = await html('/alice/proj/packages')
  expect(repoPage.status).toBe(200)
  expect(repoPage.text).toContain('href="/alice/-/packages/generic/tool/2.0.0"')
  expect(repoPage.text).not.toContain('/generic/other/')
  expect(repoPage.text).toContain('aria-current="page">Packages</a>')
  expect((await html('/alice/proj')).text).toContain('href="/alice/proj/packages"')
  // The version page names the repository.
  expect((await html('/alice/-/packages/generic/tool/1.0.0')).text).toContain('href="/alice/proj"')

  // Another owner's repository, a missing one, a malformed id: refused, nothing changed.
  const before = await mark()
  const other = await submit(alice, '/alice/-/packages/generic/tool/settings', { action: 'link', repo_id: String(toolsId) }, { from: '/alice/-/packages/generic/tool/settings' })
  expect(other.status).toBe(404)
  expect(other.html).toContain('role="alert"')
  expect((await submit(alice, '/alice/-/packages/generic/tool/settings', { action: 'link', repo_id: 'abc' }, { from: '/' })).status).toBe(422)
  expect((await submit(alice, '/alice/-/packages/generic/tool/settings', { action: 'rename' }, { from: '/' })).status).toBe(400)
  expect(await mark()).toBe(before)

  // The packages unit off: no tab, no page.
  expect((await s.patch('/repos/alice/proj', { has_packages: false }, { token: alice.token })).body.has_packages).toBe(false)
  expect((await html('/alice/proj')).text).not.toContain('href="/alice/proj/packages"')
  expect((await page('/alice/proj/packages')).status).toBe(404)
  expect((await s.patch('/repos/alice/proj', { has_packages: true }, { token: alice.token })).body.has_packages).toBe(true)

  // Unlink (Gitea 1.23's version settings address too).
  const unlinked = await submit(alice, '/alice/-/packages/generic/tool/1.0.0/settings', { action: 'unlink' }, { from: '/' })
  expect(unlinked.location).toBe('/alice/-/packages/generic/tool/1.0.0/settings?done=package-unlinked')
  expect((await packageOf('alice', 'tool', '2.0.0')).repository).toBeNull()
  expect((await html('/alice/proj/packages')).text).toContain('No packages are linked to this repository.')

  // An organisation's writer links its package; a deleted repository lets its packages go.
  expect((await submit(carol, '/acme/-/packages/generic/widget/settings', { action: 'link', repo_id: String(toolsId) }, { from: '/' })).status).toBe(303)
  expect((await packageOf('acme', 'widget', '1.1')).repository.full_name).toBe('acme/tools')
  expect((await s.del('/repos/acme/tools', undefined, { token: alice.token })).status).toBe(204)
  expect((await s.deps.db.select({ repoId: packages.repoId }).from(packages).where(eq(packages.name, 'widget')))[0]!.repoId).toBeNull()
  expect((await packageOf('acme', 'widget', '1.1')).repository).toBeNull()

  // A transferred repository leaves its old owner's packages unlinked.
  const moving = await s.post('/user/repos', { name: 'moving' }, { token: alice.token })
  expect((await submit(alice, '/alice/-/packages/generic/other/settings', { action: 'link', repo_id: String(moving.body.id) }, { from: '/' })).status).toBe(303)
  expect((await packageOf('alice', 'other', '0.1')).repository.full_name).toBe('alice/moving')
  expect((await s.post('/repos/alice/moving/transfer', { new_owner: 'acme' }, { token: alice.token })).status).toBe(202)
  expect((await packageOf('alice', 'other', '0.1')).repository).toBeNull()
})

test("delete a version (its page's address and the settings form) through the service: the package event, back to the package or the owner's list", async () => {
  const before = (await kinds()).filter((k) => k === 'package.deleted').length
  const one = await submit(carol, '/acme/-/packages/generic/widget/1.0/delete', {}, { from: '/' })
  expect(one.status).toBe(303)
  expect(one.location).toBe('/acme/-/packages/generic/widget/settings?done=package-version-deleted')
  expect((await page('/acme/-/packages/generic/widget/1.0')).status).toBe(404)
  const last = await submit(carol, '/acme/-/packages/generic/widget/settings', { action: 'delete', version: '1.1' }, { from: '/' })
  expect(last.location).toBe('/acme/-/packages?done=package-version-deleted')
  expect((await page('/acme/-/packages/generic/widget')).status).toBe(404)
  expect((await kinds()).filter((k) => k === 'package.deleted').length).toBe(before + 2)
  const missing = await submit(carol, '/acme/-/packages/generic/lib01/settings', { action: 'delete', version: '9.9' }, { from: '/' })
  expect(missing.status).toBe(404)
  expect(missing.html).toContain('package does not exist')
})

test("a private organisation's packages are hidden from strangers (404) and shown to its members", async () => {
  for (const path of ['/hush/-/packages', '/hush/-/packages/generic/hidden', '/hush/-/packages/generic/hidden/1.0', '/hush/-/packages/generic/hidden/versions', '/hush/-/packages/generic/hidden/1.0/files/1']) {
    expect([path, (await page(path)).status]).toEqual([path, 404])
    expect([path, (await page(path, await signIn(bob))).status]).toEqual([path, 404])
  }
  const own = await html('/hush/-/packages/generic/hidden/1.0', await signIn(alice))
  expect(own.status).toBe(200)
  expect(own.text).toContain('hidden (1.0)')
})

test("every Package record's html_url answers its page", async () => {
  const records = [...((await s.get('/packages/alice?limit=50', { token: alice.token })).body as any[]), ...((await s.get('/packages/hush', { token: alice.token })).body as any[])]
  expect(records.length).toBeGreaterThan(5)
  const cookie = await signIn(alice)
  for (const r of records) {
    const res = await html(r.html_url.replace(s.url, ''), cookie)
    expect([r.html_url, res.status]).toEqual([r.html_url, 200])
    expect(res.text).toContain(`${escaped(r.name)} (${escaped(r.version)})`)
  }
})

test('hostile names are escaped; bad input is a clear 4xx', async () => {
  const record = await packageOf('alice', 'hostile', HOSTILE)
  const res = await html(record.html_url.replace(s.url, ''))
  expect(res.status).toBe(200)
  expect(res.text).not.toContain('<script>alert(1)')
  expect(res.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
  const list = await html('/alice/-/packages')
  expect(list.text).not.toContain('<script>alert(1)')
  expect((await page(`/alice/-/packages/generic/${'n'.repeat(300)}/1.0`)).status).toBe(422)
  expect((await page(`/alice/-/packages?type=${'t'.repeat(40)}`)).status).toBe(422)
  expect((await page('/alice/-/packages?page=abc')).status).toBe(200)
  expect((await page('/alice/-/packages/generic/..%2F..%2Fetc/1.0')).status).toBe(404)
  expect((await page('/nobody/-/packages')).status).toBe(404)
})
