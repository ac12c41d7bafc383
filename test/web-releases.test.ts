import { afterAll, beforeAll, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { csrfIn, webVisitors } from './web-session'
import { contentMark } from './db-snapshot'
import { events } from '../src/db/schema'

/**
 * The release forms (new, edit, delete), the fork form and the stars, watchers and forks lists over
 * plain HTTP: who may open them, every form refused without its CSRF token (nothing changed), the
 * service's refusals shown on the form again, and what the forms did, read back through the API.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, carol: TestUser
let mark: () => Promise<string>
const { page, signIn, submit, expectCsrfRefused } = webVisitors(() => s.url, () => mark())

const releasesOf = async (repo: string) => (await s.get(`/repos/${repo}/releases`, { token: alice.token })).body as any[]
const kindsOf = async () => (await s.deps.db.select({ kind: events.kind }).from(events)).map((e) => e.kind)

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  ;[alice, bob, carol] = await Promise.all([s.user('alice'), s.user('bob'), s.user('carol')])
  const asAlice = { token: alice.token }
  expect((await s.post('/user/repos', { name: 'proj', auto_init: true, description: 'The project' }, asAlice)).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'secret', auto_init: true, private: true }, asAlice)).status).toBe(201)
  expect((await s.post('/repos/alice/proj/branches', { new_branch_name: 'next', old_branch_name: 'main' }, asAlice)).status).toBe(201)
  expect((await s.post('/orgs', { username: 'acme' }, { token: bob.token })).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
})

test('the release forms are for writers: a sign-in redirect for the signed-out, 403 for readers, 404 where hidden', async () => {
  const res = await page('/alice/proj/releases/new')
  expect(res.status).toBe(303)
  expect(res.headers.get('location')).toBe(`/user/login?redirect_to=${encodeURIComponent('/alice/proj/releases/new')}`)
  expect((await page('/alice/proj/releases/new', await signIn(bob))).status).toBe(403)
  expect((await page('/alice/secret/releases/new', await signIn(bob))).status).toBe(404)
  const list = await (await page('/alice/proj/releases', await signIn(bob))).text()
  expect(list).not.toContain('New release')
  const own = await page('/alice/proj/releases/new', await signIn(alice))
  expect(own.status).toBe(200)
  const html = await own.text()
  expect(html).toContain('name="tag_name"')
  expect(html).toContain('<option value="next">')
  expect(await (await page('/alice/proj/releases', await signIn(alice))).text()).toContain('href="/alice/proj/releases/new"')
})

test('new release: published, draft, refusals on the form, CSRF', async () => {
  await expectCsrfRefused(alice, '/alice/proj/releases/new', { tag_name: 'v1.0', title: 'One' })
  const bad = await submit(alice, '/alice/proj/releases/new', { tag_name: 'bad..tag', tag_target: 'main', title: 'Bad', content: 'kept text' })
  expect(bad.status).toBe(422)
  expect(bad.html).toContain('role="alert"')
  expect(bad.html).toContain('kept text')
  const missing = await submit(alice, '/alice/proj/releases/new', { tag_name: 'v0.1', tag_target: 'nowhere', title: 'Nowhere' })
  expect(missing.status).toBe(404)
  expect(missing.html).toContain('nowhere')
  expect(await releasesOf('alice/proj')).toEqual([])

  const made = await submit(alice, '/alice/proj/releases/new', { tag_name: 'v1.0', tag_target: 'next', title: 'First', content: '**bold** notes', prerelease: 'on' })
  expect(made).toMatchObject({ status: 303, location: '/alice/proj/releases?done=release-published' })
  const draft = await submit(alice, '/alice/proj/releases/new', { tag_name: 'v2.0', tag_target: 'main', title: 'Second', draft: '1' })
  expect(draft).toMatchObject({ status: 303, location: '/alice/proj/releases?done=release-draft-saved' })
  const listed = await releasesOf('alice/proj')
  const first = listed.find((r) => r.tag_name === 'v1.0')
  expect(first).toMatchObject({ name: 'First', body: '**bold** notes', prerelease: true, draft: false, target_commitish: 'next' })
  expect(listed.find((r) => r.tag_name === 'v2.0')).toMatchObject({ name: 'Second', draft: true })
  expect((await s.get('/repos/alice/proj/tags/v1.0', { token: alice.token })).status).toBe(200)
  expect((await s.get('/repos/alice/proj/tags/v2.0', { token: alice.token })).status).toBe(404)
  expect((await kindsOf()).filter((k) => k === 'release.published')).toHaveLength(1)

  const again = await submit(alice, '/alice/proj/releases/new', { tag_name: 'v1.0', tag_target: 'main', title: 'Again' })
  expect(again.status).toBe(409)
  expect(again.html).toContain('release tag already exists')
  const shown = await (await page('/alice/proj/releases?done=release-published', await signIn(alice))).text()
  expect(shown).toContain('The release was published.')
  expect(shown).toContain('href="/alice/proj/releases/edit/v1.0"')
})

test('edit release: title, notes emptied, draft published; delete with confirmation', async () => {
  expect((await page('/alice/proj/releases/edit/v1.0', await signIn(bob))).status).toBe(403)
  expect((await page('/alice/proj/releases/edit/nope', await signIn(alice))).status).toBe(404)
  const form = await (await page('/alice/proj/releases/edit/v1.0', await signIn(alice))).text()
  expect(form).toContain('**bold** notes')
  expect(form).toContain('Update release')
  await expectCsrfRefused(alice, '/alice/proj/releases/edit/v1.0', { title: 'Changed' })

  const saved = await submit(alice, '/alice/proj/releases/edit/v1.0', { title: 'First, renamed', content: '' })
  expect(saved).toMatchObject({ status: 303, location: '/alice/proj/releases?done=release-saved' })
  expect((await releasesOf('alice/proj')).find((r) => r.tag_name === 'v1.0')).toMatchObject({ name: 'First, renamed', body: '', prerelease: false, draft: false })
  expect(await kindsOf()).toContain('release.updated')

  const published = await submit(alice, '/alice/proj/releases/edit/v2.0', { title: 'Second', content: 'out now' })
  expect(published).toMatchObject({ status: 303, location: '/alice/proj/releases?done=release-published' })
  expect((await releasesOf('alice/proj')).find((r) => r.tag_name === 'v2.0')).toMatchObject({ draft: false, body: 'out now' })
  expect((await s.get('/repos/alice/proj/tags/v2.0', { token: alice.token })).status).toBe(200)

  const id = String((await releasesOf('alice/proj')).find((r) => r.tag_name === 'v2.0').id)
  await expectCsrfRefused(alice, '/alice/proj/releases/delete', { id, confirm: 'on' })
  const before = await mark()
  const unconfirmed = await submit(alice, '/alice/proj/releases/delete', { id })
  expect(unconfirmed.status).toBe(422)
  expect(unconfirmed.html).toContain('Tick the confirmation')
  expect(await mark()).toBe(before)
  expect((await submit(bob, '/alice/proj/releases/delete', { id, confirm: 'on' })).status).toBe(403)
  const deleted = await submit(alice, '/alice/proj/releases/delete', { id, confirm: 'on' })
  expect(deleted).toMatchObject({ status: 303, location: '/alice/proj/releases?done=release-deleted' })
  expect((await releasesOf('alice/proj')).map((r) => r.tag_name)).toEqual(['v1.0'])
  expect(await kindsOf()).toContain('release.deleted')
  expect((await s.get('/repos/alice/proj/tags/v2.0', { token: alice.token })).status).toBe(200)
  expect((await submit(alice, '/alice/proj/releases/delete', { id: '999999', confirm: 'on' })).status).toBe(404)
})

test('fork form: owners offered, fork made through the service, refusals on the form', async () => {
  const res = await page('/alice/proj/fork')
  expect(res.status).toBe(303)
  expect((await page('/alice/secret/fork', await signIn(bob))).status).toBe(404)
  const form = await (await page('/alice/proj/fork', await signIn(bob))).text()
  expect(form).toContain('<option value="bob" selected>')
  expect(form).toContain('<option value="acme">')
  expect(form).toContain('The project')
  await expectCsrfRefused(bob, '/alice/proj/fork', { owner: 'bob', repo_name: 'proj' })

  const made = await submit(bob, '/alice/proj/fork', { owner: 'bob', repo_name: 'my-proj', description: 'my copy' })
  expect(made).toMatchObject({ status: 303, location: '/bob/my-proj' })
  const fork = (await s.get('/repos/bob/my-proj', { token: bob.token })).body
  expect(fork).toMatchObject({ fork: true, description: 'my copy', parent: { full_name: 'alice/proj' } })
  expect(await kindsOf()).toContain('repo.forked')

  const twice = await submit(bob, '/alice/proj/fork', { owner: 'bob', repo_name: 'other', description: '' })
  expect(twice.status).toBe(409)
  expect(twice.html).toContain('already forked')
  expect(twice.html).toContain('value="other"')
  const org = await submit(bob, '/alice/proj/fork', { owner: 'acme', repo_name: 'proj' })
  expect(org).toMatchObject({ status: 303, location: '/acme/proj' })
  const notAllowed = await submit(carol, '/alice/proj/fork', { owner: 'acme', repo_name: 'proj2' })
  expect(notAllowed.status).toBe(403)
  expect(notAllowed.html).toContain('role="alert"')
})

test('stars, watchers and forks lists, linked from the header counts', async () => {
  expect((await s.put('/user/starred/alice/proj', {}, { token: bob.token })).status).toBe(204)
  expect((await s.put('/user/starred/alice/proj', {}, { token: carol.token })).status).toBe(204)
  const home = await (await page('/alice/proj')).text()
  expect(home).toContain('href="/alice/proj/stars"')
  expect(home).toContain('href="/alice/proj/forks"')
  expect(home).toContain('href="/alice/proj/watchers"')
  const stars = await (await page('/alice/proj/stars')).text()
  expect(stars).toContain('Stargazers')
  expect(stars).toContain('href="/bob"')
  expect(stars).toContain('href="/carol"')
  const watchers = await (await page('/alice/proj/watchers')).text()
  expect(watchers).toContain('href="/alice"')
  const forks = await (await page('/alice/proj/forks')).text()
  expect(forks).toContain('href="/bob/my-proj"')
  expect(forks).toContain('href="/acme/proj"')
  expect((await page('/alice/secret/stars')).status).toBe(404)
  expect((await page('/alice/secret/forks', await signIn(bob))).status).toBe(404)
  // Paging: the query is bounded, a page past the end is empty.
  expect(await (await page('/alice/proj/stars?page=99')).text()).toContain('Nobody has starred')
  expect((await page('/alice/proj/stars?page=' + 'x'.repeat(50))).status).toBe(422)
})
