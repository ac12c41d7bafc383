import { afterAll, beforeAll, expect, test } from 'bun:test'
import { count } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { csrfIn, webVisitors } from './web-session'
import { attachments } from '../src/db/schema'

/**
 * Three pages against Gitea 1.23's web interface, over plain HTTP: release attachments on the
 * release forms (files uploaded with the release, renamed and deleted from the edit form, refusals
 * on the form with nothing kept), the notification pages' subscriptions and watching tabs, and
 * the profile README of a public `.profile` repository.
 */

const LIMIT = 2048
let s: TestServer
let alice: TestUser, bob: TestUser
const { page, signIn } = webVisitors(() => s.url, async () => '')

const attachmentCount = async () => (await s.deps.db.select({ n: count() }).from(attachments))[0]!.n

/** Posts a multipart form as `user`, with the CSRF token of `from`: text fields and files. */
async function submitFiles(user: TestUser, path: string, fields: Record<string, string>, files: { name: string; bytes: BlobPart }[], from = '/') {
  const cookie = await signIn(user)
  const form = new FormData()
  form.append('_csrf', csrfIn(await (await page(from, cookie)).text()) ?? '')
  for (const [k, v] of Object.entries(fields)) form.append(k, v)
  for (const f of files) form.append('files', new File([f.bytes], f.name))
  const res = await fetch(s.url + path, { method: 'POST', headers: { cookie }, body: form, redirect: 'manual' })
  return { status: res.status, location: res.headers.get('location'), html: await res.text() }
}

beforeAll(async () => {
  s = await startTestServer({ maxAttachmentSize: LIMIT })
  ;[alice, bob] = await Promise.all([s.user('alice'), s.user('bob')])
  const asAlice = { token: alice.token }
  expect((await s.post('/user/repos', { name: 'proj', auto_init: true }, asAlice)).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'secret', auto_init: true, private: true }, asAlice)).status).toBe(201)
  expect((await s.put('/repos/alice/proj/collaborators/bob', { permission: 'read' }, asAlice)).status).toBe(204)
  expect((await s.put('/repos/alice/secret/collaborators/bob', { permission: 'write' }, asAlice)).status).toBe(204)
})
afterAll(async () => {
  await s.stop()
})

test('a release made with two files from the form; both downloadable', async () => {
  const made = await submitFiles(alice, '/alice/proj/releases/new', { tag_name: 'v1', tag_target: 'main', title: 'One' }, [
    { name: 'a.txt', bytes: 'first file' },
    { name: 'b.bin', bytes: new Uint8Array([0, 1, 2, 3]) },
  ])
  expect(made).toMatchObject({ status: 303, location: '/alice/proj/releases?done=release-published' })
  const release = (await s.get('/repos/alice/proj/releases/tags/v1', { token: alice.token })).body
  expect(release.assets.map((a: any) => [a.name, a.size])).toEqual([['a.txt', 10], ['b.bin', 4]])
  const download = await fetch(`${s.url}/alice/proj/releases/download/v1/a.txt`)
  expect(download.status).toBe(200)
  expect(await download.text()).toBe('first file')
})

test('a too-large or empty file: refused on the form shown again, nothing stored', async () => {
  const before = await attachmentCount()
  const large = await submitFiles(alice, '/alice/proj/releases/new', { tag_name: 'v2', tag_target: 'main', title: 'Kept title' }, [
    { name: 'ok.txt', bytes: 'fine' },
    { name: 'big.bin', bytes: new Uint8Array(LIMIT + 1) },
  ])
  expect(large.status).toBe(413)
  expect(large.html).toContain('role="alert"')
  expect(large.html).toContain('big.bin')
  expect(large.html).toContain('value="Kept title"')
  const empty = await submitFiles(alice, '/alice/proj/releases/new', { tag_name: 'v2', tag_target: 'main', title: 'Kept title' }, [{ name: 'empty.txt', bytes: '' }])
  expect(empty.status).toBe(422)
  expect(empty.html).toContain('empty.txt')
  expect(empty.html).toContain('is empty')
  expect((await s.get('/repos/alice/proj/releases/tags/v2', { token: alice.token })).status).toBe(404)
  expect(await attachmentCount()).toBe(before)
  // On the edit form too: the release and its assets as they were.
  const edit = await submitFiles(alice, '/alice/proj/releases/edit/v1', { title: 'Changed' }, [{ name: 'big.bin', bytes: new Uint8Array(LIMIT + 1) }])
  expect(edit.status).toBe(413)
  expect((await s.get('/repos/alice/proj/releases/tags/v1', { token: alice.token })).body).toMatchObject({ name: 'One' })
  expect(await attachmentCount()).toBe(before)
})

test('the edit form lists the assets; a writer renames and deletes them, a reader is refused', async () => {
  const release = (await s.get('/repos/alice/proj/releases/tags/v1', { token: alice.token })).body
  const [a, b] = release.assets as { uuid: string; name: string }[]
  const form = await (await page('/alice/proj/releases/edit/v1', await signIn(alice))).text()
  expect(form).toContain(`name="attachment-edit-${a!.uuid}" maxlength="255" value="a.txt"`)
  expect(form).toContain(`name="attachment-del-${b!.uuid}"`)
  expect(form).toContain('enctype="multipart/form-data"')

  const fields = { title: 'One', [`attachment-edit-${a!.uuid}`]: 'renamed.txt', [`attachment-del-${b!.uuid}`]: 'true' }
  expect((await page('/alice/proj/releases/edit/v1', await signIn(bob))).status).toBe(403)
  expect((await submitFiles(bob, '/alice/proj/releases/edit/v1', fields, [])).status).toBe(403)
  expect(((await s.get('/repos/alice/proj/releases/tags/v1', { token: alice.token })).body.assets as any[]).map((x) => x.name)).toEqual(['a.txt', 'b.bin'])

  const bad = await submitFiles(alice, '/alice/proj/releases/edit/v1', { ...fields, [`attachment-edit-${a!.uuid}`]: 'no/slash' }, [])
  expect(bad.status).toBe(422)
  expect(bad.html).toContain('invalid attachment name')
  expect(((await s.get('/repos/alice/proj/releases/tags/v1', { token: alice.token })).body.assets as any[]).length).toBe(2)

  const done = await submitFiles(alice, '/alice/proj/releases/edit/v1', fields, [{ name: 'c.txt', bytes: 'third' }])
  expect(done.status).toBe(303)
  const after = (await s.get('/repos/alice/proj/releases/tags/v1', { token: alice.token })).body.assets as any[]
  expect(after.map((x) => x.name)).toEqual(['renamed.txt', 'c.txt'])
  expect((await fetch(`${s.url}/alice/proj/releases/download/v1/renamed.txt`)).status).toBe(200)
  expect((await fetch(`${s.url}/alice/proj/releases/download/v1/b.bin`)).status).toBe(404)
})

test('subscriptions and watching: filters, tabs, a private repository gone once access is lost', async () => {
  const asBob = { token: bob.token }
  expect((await page('/notifications/subscriptions')).status).toBe(303)
  expect((await s.post('/repos/alice/proj/issues', { title: 'Bob open issue' }, asBob)).status).toBe(201)
  const closed = (await s.post('/repos/alice/proj/issues', { title: 'Bob closed issue' }, asBob)).body
  expect((await s.patch(`/repos/alice/proj/issues/${closed.number}`, { state: 'closed' }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/repos/alice/proj/issues', { title: 'Alice <b>own</b> issue' }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/repos/alice/secret/issues', { title: 'Secret issue' }, asBob)).status).toBe(201)
  expect((await s.put('/repos/alice/secret/subscription', undefined, asBob)).status).toBe(200)
  const cookie = await signIn(bob)

  const all = await (await page('/notifications/subscriptions', cookie)).text()
  expect(all).toContain('href="/notifications/subscriptions" aria-current="page"')
  expect(all).toContain('Bob open issue')
  expect(all).toContain('Bob closed issue')
  expect(all).toContain('Secret issue')
  expect(all).not.toContain('own</b>')
  expect(all).not.toContain('Alice &lt;b&gt;own')
  const open = await (await page('/notifications/subscriptions?state=open', cookie)).text()
  expect(open).toContain('Bob open issue')
  expect(open).not.toContain('Bob closed issue')
  const onlyClosed = await (await page('/notifications/subscriptions?state=closed&sort=oldest', cookie)).text()
  expect(onlyClosed).toContain('Bob closed issue')
  expect(onlyClosed).not.toContain('Bob open issue')
  expect(await (await page('/notifications/subscriptions?issueType=pulls', cookie)).text()).toContain('No subscriptions.')
  // An explicit unsubscription takes a posted issue off the list.
  expect((await s.del(`/repos/alice/proj/issues/${closed.number}/subscriptions/bob`, undefined, asBob)).status).toBe(201)
  expect(await (await page('/notifications/subscriptions', cookie)).text()).not.toContain('Bob closed issue')
  expect((await page('/notifications/subscriptions?state=bogus&page=x', cookie)).status).toBe(200)

  const watching = await (await page('/notifications/watching', cookie)).text()
  expect(watching).toContain('href="/alice/secret"')
  expect(watching).toContain('href="/notifications/watching" aria-current="page"')

  // Access lost: the private repository's issue and the repository itself leave both lists.
  expect((await s.del('/repos/alice/secret/collaborators/bob', undefined, { token: alice.token })).status).toBe(204)
  expect(await (await page('/notifications/subscriptions', cookie)).text()).not.toContain('Secret issue')
  expect(await (await page('/notifications/watching', cookie)).text()).not.toContain('href="/alice/secret"')
})

test('profile README: shown from a public .profile, sanitised; hidden once private; an organisation too', async () => {
  const asAlice = { token: alice.token }
  expect((await s.post('/user/repos', { name: '.profile' }, asAlice)).status).toBe(201)
  expect(await (await page('/alice')).text()).not.toContain('Profile README')
  const text = '# Hello from Alice\n\n<script>alert(1)</script>\n\n<img src="x" onerror="alert(2)">\n\n*kind* words'
  expect((await s.post('/repos/alice/.profile/contents/README.md', { content: Buffer.from(text).toString('base64') }, asAlice)).status).toBe(201)
  const shown = await (await page('/alice')).text()
  expect(shown).toContain('aria-label="Profile README"')
  expect(shown).toContain('Hello from Alice')
  expect(shown).toContain('<em>kind</em>')
  expect(shown).not.toContain('<script>alert')
  expect(shown).not.toContain('onerror')
  expect((await s.patch('/repos/alice/.profile', { private: true }, asAlice)).status).toBe(200)
  expect(await (await page('/alice', await signIn(alice))).text()).not.toContain('Hello from Alice')
  expect(await (await page('/alice')).text()).not.toContain('Hello from Alice')

  expect((await s.post('/orgs', { username: 'acme' }, { token: bob.token })).status).toBe(201)
  expect((await s.post('/orgs/acme/repos', { name: '.profile' }, { token: bob.token })).status).toBe(201)
  expect((await s.post('/repos/acme/.profile/contents/README.md', { content: Buffer.from('Welcome to **Acme**').toString('base64') }, { token: bob.token })).status).toBe(201)
  expect(await (await page('/acme')).text()).toContain('<strong>Acme</strong>')
})
