/**
 * A hostile or careless caller against the routes that came with wikis, push mirrors, unadopted
 * repositories, badges, blocks and system/user hooks: odd input everywhere (each refused with a
 * clear 4xx in `{message, url}` and nothing changed), every route as someone who may not use it,
 * and writes racing each other.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, tempDir, git } from './git-fixture'
import { createAccessToken } from '../src/modules/users/service'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { csrfIn, signInByForm } from './web-session'
import { startReceiver, until } from './webhook-receiver'

let s: TestServer
let admin: TestUser, alice: TestUser, bob: TestUser, carol: TestUser
let userOnly: string
const dirs: string[] = []

const b64 = (text: string) => Buffer.from(text).toString('base64')
const asA = () => ({ token: alice.token })
const errorShape = () => ({ message: expect.any(String), url: `${s.config.baseUrl}api/swagger` })
const wikiDir = (owner: string, repo: string) => join(s.dataDir, 'repositories', owner, `${repo}.wiki.git`)
const wikiHeadOf = async (repo: string) => (await gitOk(wikiDir('alice', repo), 'rev-parse', 'HEAD')).trim()

/** `res` is a 4xx with Gitea's error shape. */
function refused(res: { status: number; body: any; text: string }, label: unknown) {
  expect([label, res.status >= 400 && res.status < 500]).toEqual([label, true])
  expect([label, res.body]).toMatchObject([label, errorShape()])
}

beforeAll(async () => {
  // Push mirrors may push to this server itself, and webhooks reach a receiver, on loopback.
  s = await startTestServer({ migrationsAllowLocalNetworks: true, webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05 })
  admin = await s.user('root', { admin: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  userOnly = (await createAccessToken(s.deps, alice.user.id, 'uo', ['read:user'])).secret
  for (const [name, extra] of [['pub', {}], ['priv', { private: true }], ['bare', {}]] as const)
    expect((await s.post('/user/repos', { name, auto_init: true, ...extra }, asA())).status).toBe(201)
  expect((await s.put('/repos/alice/priv/collaborators/carol', { permission: 'read' }, asA())).status).toBe(204)
  for (const repo of ['pub', 'priv']) expect((await s.post(`/repos/alice/${repo}/wiki/new`, { title: 'Home', content_base64: b64('the secret page') }, asA())).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('wiki: hostile input changes nothing', () => {
  test('bodies of the wrong types, base64 that is not, NUL and control characters in the message: 4xx, the branch unmoved', async () => {
    const before = await wikiHeadOf('pub')
    const bodies: unknown[] = [
      { title: 'x', content_base64: 'not base64!!' },
      { title: 'x', content_base64: 12 },
      { title: 12, content_base64: b64('x') },
      { title: ['x'], content_base64: b64('x') },
      { title: 'x'.repeat(300), content_base64: b64('x') },
      { title: 'x', content_base64: b64('x'), message: 'nul\0inside' },
      { title: 'x', content_base64: b64('x'), message: 7 },
      { title: '_pages', content_base64: b64('x') },
      'just text',
      [],
      null,
    ]
    for (const body of bodies) {
      refused(await s.post('/repos/alice/pub/wiki/new', body, asA()), ['new', body])
      refused(await s.patch('/repos/alice/pub/wiki/page/Home', body, asA()), ['edit', body])
    }
    // A title of spaces names no page to make (an edit keeps the title, as Gitea).
    refused(await s.post('/repos/alice/pub/wiki/new', { title: '   ', content_base64: b64('x') }, asA()), 'blank title')
    expect(await wikiHeadOf('pub')).toBe(before)
  })

  test('page names that climb, hide or escape are 4xx or a page of the wiki root only; the repository itself untouched', async () => {
    const repoHead = (await s.get('/repos/alice/pub/branches', asA())).body[0].commit.id
    for (const name of ['..', '%2e%2e', '..%2F..%2Fpub.git%2Fconfig', '%2e%2e%2fconfig.md', '..%5C..%5Cconfig.md', '.git', 'HEAD.md', '%00', 'a%0Ab', 'x'.repeat(1100), '%', '%zz']) {
      for (const method of ['GET', 'PATCH', 'DELETE']) {
        const res = await s.request(method, `/repos/alice/pub/wiki/page/${name}`, { ...asA(), body: method === 'PATCH' ? { content_base64: b64('owned') } : undefined })
        refused(res, [method, name])
      }
      refused(await s.get(`/repos/alice/pub/wiki/revisions/${name}`, asA()), ['revisions', name])
    }
    expect((await s.get('/repos/alice/pub/branches', asA())).body[0].commit.id).toBe(repoHead)
    const pages = (await s.get('/repos/alice/pub/wiki/pages', asA())).body.map((p: any) => p.title)
    expect(pages).toEqual(['Home'])
  })

  test('a page of the longest title in the widest characters reads, edits, lists and deletes by the sub_url it was given', async () => {
    for (const title of ['€'.repeat(255), '😀'.repeat(127) + '-', '%'.repeat(255)]) {
      const made = await s.post('/repos/alice/pub/wiki/new', { title, content_base64: b64('wide') }, asA())
      expect(made.status).toBe(201)
      const sub = made.body.sub_url
      expect(made.body.title).toBe(title)
      const read = await s.get(`/repos/alice/pub/wiki/page/${sub}`, asA())
      expect([read.status, read.body.title]).toEqual([200, title])
      expect((await s.get(`/repos/alice/pub/wiki/revisions/${sub}`, asA())).status).toBe(200)
      expect((await s.patch(`/repos/alice/pub/wiki/page/${sub}`, { content_base64: b64('wider') }, asA())).status).toBe(200)
      expect((await fetch(`${s.url}/alice/pub/wiki/${sub}`)).status).toBe(200)
      expect((await s.del(`/repos/alice/pub/wiki/page/${sub}`, undefined, asA())).status).toBe(204)
    }
  })

  test('an edit or a delete of a repository without a wiki is 404 and makes no wiki folder', async () => {
    refused(await s.patch('/repos/alice/bare/wiki/page/Home', { content_base64: b64('x') }, asA()), 'edit')
    refused(await s.del('/repos/alice/bare/wiki/page/Home', undefined, asA()), 'delete')
    refused(await s.patch('/repos/alice/bare/wiki/page/Home', { content_base64: 'not base64!!' }, asA()), 'edit bad')
    expect(existsSync(wikiDir('alice', 'bare'))).toBe(false)
  })
})

describe('wiki: files pushed by git with hostile names', () => {
  test('every page the list shows reads back by its sub_url through the API and the web page; files that are no page are left out; nothing is 500', async () => {
    expect((await s.post('/user/repos', { name: 'pushed', auto_init: true }, asA())).status).toBe(201)
    const work = tempDir('warren-adv-push-')
    dirs.push(work)
    await gitOk(work, 'init', '-q', '-b', 'main')
    const names = ['%zz.md', 'a%2Fb.md', '..md', ' .md', 'Ü ber.md', 'x\ty.md', '-.md', '.-.md', '%2e%2e.md', 'a+b.md', 'q?x#y.md', '100%.md', 'Home.md']
    for (const name of names) await Bun.write(join(work, name), `page ${name}`)
    mkdirSync(join(work, 'sub'))
    await Bun.write(join(work, 'sub', 'dir.md'), 'nested')
    symlinkSync('/etc/passwd', join(work, 'link.md'))
    await gitOk(work, 'add', '-A')
    await gitOk(work, '-c', 'user.name=A', '-c', 'user.email=a@example.com', 'commit', '-q', '-m', 'hostile names')
    await gitOk(work, 'push', '-q', remoteUrl(s.url, 'alice/pushed.wiki.git', alice.name, alice.token), 'main')
    const list = await s.get('/repos/alice/pushed/wiki/pages?limit=50', asA())
    expect(list.status).toBe(200)
    expect(list.body.length).toBeGreaterThan(5)
    // As in Gitea (its WebPath/GitPath rules), a file name that does not map back onto itself
    // (`a+b.md` is listed as `a-b`, `Ü ber.md` as `%C3%9C-ber`, `..md` as `.`) is listed but not
    // found by its sub_url: 404 then, never a 500; one that does not unescape (`%zz.md`) is no page.
    const readable: string[] = []
    for (const p of list.body) {
      const one = await s.get(`/repos/alice/pushed/wiki/page/${p.sub_url}`, asA())
      expect([p.sub_url, [200, 404].includes(one.status)]).toEqual([p.sub_url, true])
      if (one.status !== 200) continue
      readable.push(p.sub_url)
      expect(Buffer.from(one.body.content_base64, 'base64').toString()).not.toContain('root:')
      expect([p.sub_url, (await s.get(`/repos/alice/pushed/wiki/revisions/${p.sub_url}`, asA())).status]).toEqual([p.sub_url, 200])
      const web = await fetch(`${s.url}/alice/pushed/wiki/${p.sub_url}`, { headers: { accept: 'text/html' } })
      expect([p.sub_url, web.status]).toEqual([p.sub_url, 200])
    }
    expect(readable).toEqual(expect.arrayContaining(['Home', 'q%3Fx%23y', 'x%09y', 'a%2Fb']))
    expect(list.body.map((p: any) => p.title)).not.toContain('%zz')
    expect(list.body.map((p: any) => p.title)).not.toContain('link')
    expect((await fetch(`${s.url}/alice/pushed/wiki/_pages`)).status).toBe(200)
    expect((await fetch(`${s.url}/alice/pushed/wiki`)).status).toBe(200)
  })
})

describe('wiki: who may see it', () => {
  test('a private wiki is 404 to anonymous and a stranger through the API, the web pages and git HTTP; 403 to a token of another category; a reader may not write', async () => {
    for (const path of ['/repos/alice/priv/wiki/pages', '/repos/alice/priv/wiki/page/Home', '/repos/alice/priv/wiki/revisions/Home']) {
      for (const auth of [{}, { token: bob.token }]) refused(await s.get(path, auth), [path, auth])
      expect((await s.get(path, { token: userOnly })).status).toBe(403)
      expect((await s.get(path, { token: carol.token })).status).toBe(200)
    }
    for (const path of ['/alice/priv/wiki', '/alice/priv/wiki/Home', '/alice/priv/wiki/_pages', '/alice/priv/wiki?action=_new', '/alice/priv/wiki/Home?action=_edit']) {
      const anonymous = await fetch(s.url + path, { redirect: 'manual' })
      expect([path, anonymous.status === 404 || (anonymous.status >= 300 && anonymous.status < 400)]).toEqual([path, true])
      expect(await anonymous.text()).not.toContain('the secret page')
      const stranger = await fetch(s.url + path, { headers: { authorization: bob.basic }, redirect: 'manual' })
      expect([path, stranger.status === 404 || (stranger.status >= 300 && stranger.status < 400)]).toEqual([path, true])
    }
    const work = tempDir('warren-adv-wiki-')
    dirs.push(work)
    for (const who of [undefined, bob]) {
      const res = await git(work, 'clone', '-q', remoteUrl(s.url, 'alice/priv.wiki.git', who?.name, who?.token), `c-${who?.name ?? 'anon'}`)
      expect(res.code).not.toBe(0)
    }
    refused(await s.post('/repos/alice/priv/wiki/new', { title: 'Carol', content_base64: b64('x') }, { token: carol.token }), 'reader writes')
    refused(await s.patch('/repos/alice/priv/wiki/page/Home', { content_base64: b64('x') }, { token: carol.token }), 'reader edits')
    refused(await s.del('/repos/alice/priv/wiki/page/Home', undefined, { token: carol.token }), 'reader deletes')
  })
})

describe('wiki: tokens and paging', () => {
  test('a token without write:repository may not write the wiki; odd pages of revisions are 4xx or empty, never 500', async () => {
    const readOnly = (await createAccessToken(s.deps, alice.user.id, 'ro', ['read:repository'])).secret
    const publicOnly = (await createAccessToken(s.deps, alice.user.id, 'po', ['public-only', 'write:repository'])).secret
    const before = await wikiHeadOf('priv')
    expect((await s.post('/repos/alice/priv/wiki/new', { title: 'Scoped', content_base64: b64('x') }, { token: readOnly })).status).toBe(403)
    expect((await s.patch('/repos/alice/priv/wiki/page/Home', { content_base64: b64('x') }, { token: readOnly })).status).toBe(403)
    expect((await s.del('/repos/alice/priv/wiki/page/Home', undefined, { token: readOnly })).status).toBe(403)
    expect((await s.get('/repos/alice/priv/wiki/page/Home', { token: readOnly })).status).toBe(200)
    for (const path of ['/repos/alice/priv/wiki/page/Home', '/repos/alice/priv/wiki/pages']) expect((await s.get(path, { token: publicOnly })).status).toBe(403)
    expect((await s.post('/repos/alice/priv/wiki/new', { title: 'Scoped', content_base64: b64('x') }, { token: publicOnly })).status).toBe(403)
    expect(await wikiHeadOf('priv')).toBe(before)
    for (const q of ['page=0', 'page=-1', 'page=1e9', 'page=x', 'page=99999999999999999999', 'limit=-5', 'limit=100000']) {
      for (const path of [`/repos/alice/pub/wiki/revisions/Home?${q}`, `/repos/alice/pub/wiki/pages?${q}`]) {
        const res = await s.get(path, asA())
        expect([path, res.status === 200 || (res.status >= 400 && res.status < 500)]).toEqual([path, true])
      }
    }
  })
})

describe('wiki: the web forms', () => {
  const page = (path: string, cookie?: string) => fetch(s.url + path, { headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) }, redirect: 'manual' })
  const postForm = (path: string, fields: Record<string, string>, cookie: string) =>
    fetch(s.url + path, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' }, body: new URLSearchParams(fields).toString(), redirect: 'manual' })

  test("a reader gets no form and may not post one; a writer's hostile form fields and page names are 4xx, the wiki unchanged", async () => {
    const before = await wikiHeadOf('priv')
    const reader = await signInByForm(s.url, carol)
    const csrf = csrfIn(await (await page('/alice/priv/wiki', reader)).text())!
    expect(csrf).toBeTruthy()
    expect((await page('/alice/priv/wiki?action=_new', reader)).status).toBe(403)
    expect((await page('/alice/priv/wiki/Home?action=_edit', reader)).status).toBe(403)
    expect((await postForm('/alice/priv/wiki?action=_new', { _csrf: csrf, title: 'Carol', content: 'x' }, reader)).status).toBe(403)
    expect((await postForm('/alice/priv/wiki/Home?action=_edit', { _csrf: csrf, title: '', content: 'x' }, reader)).status).toBe(403)

    const writer = await signInByForm(s.url, alice)
    const token = csrfIn(await (await page('/alice/priv/wiki?action=_new', writer)).text())!
    for (const fields of <Record<string, string>[]>[
      { title: 'Nul', content: 'x', message: 'a\0b' },
      { title: 'x'.repeat(300), content: 'x' },
      { title: '_edit', content: 'x' },
      { title: '', content: 'x' },
    ]) {
      const res = await postForm('/alice/priv/wiki?action=_new', { _csrf: token, ...fields }, writer)
      expect([fields, res.status >= 400 && res.status < 500]).toEqual([fields, true])
    }
    expect([400, 422]).toContain((await postForm('/alice/priv/wiki/Home?action=_edit', { _csrf: token, title: '', content: 'x', message: 'a\0b' }, writer)).status)
    for (const name of ['%zz', '%00', 'x'.repeat(1100), '..%2F..%2Fpriv.git%2Fconfig.md']) {
      const res = await page(`/alice/priv/wiki/${name}`, writer)
      expect([name, res.status >= 400 && res.status < 500]).toEqual([name, true])
      const edit = await postForm(`/alice/priv/wiki/${name}?action=_edit`, { _csrf: token, title: '', content: 'owned' }, writer)
      expect([name, edit.status >= 400 && edit.status < 500]).toEqual([name, true])
    }
    expect(await wikiHeadOf('priv')).toBe(before)
  })
})

describe('wiki: the webhook', () => {
  test("a private repository's wiki events reach its owner's user hooks and the system hooks with Gitea's WikiPayload keys, never another user's hooks", async () => {
    const rx = await startReceiver()
    const worker = startWebhookWorker(s.deps, { pollMs: 10 })
    try {
      const hook = (path: string) => ({ type: 'gitea', config: { url: rx.url(path), content_type: 'json' }, events: ['wiki'], active: true })
      expect((await s.post('/user/hooks', hook('/alice'), asA())).status).toBe(201)
      expect((await s.post('/user/hooks', hook('/bob'), { token: bob.token })).status).toBe(201)
      expect((await s.post('/repos/alice/priv/hooks', hook('/repo'), asA())).status).toBe(201)
      expect((await s.post('/admin/hooks', { ...hook('/system'), is_system_webhook: true }, { token: admin.token })).status).toBe(201)
      expect((await s.post('/repos/alice/priv/wiki/new', { title: 'Hooked', content_base64: b64('x'), message: 'by hook' }, asA())).status).toBe(201)
      expect((await s.del('/repos/alice/priv/wiki/page/Hooked', undefined, asA())).status).toBe(204)
      for (const path of ['/repo', '/alice', '/system']) {
        const created = await until(() => rx.received.find((r) => r.path === path && r.payload?.action === 'created' && r.payload.page === 'Hooked'), `${path} created`)
        expect(created.headers['x-gitea-event']).toBe('wiki')
        expect(Object.keys(created.payload).sort()).toEqual(['action', 'comment', 'page', 'repository', 'sender'])
        expect(created.payload).toMatchObject({ comment: 'by hook', repository: { full_name: 'alice/priv', private: true }, sender: { login: 'alice' } })
        const deleted = await until(() => rx.received.find((r) => r.path === path && r.payload?.action === 'deleted' && r.payload.page === 'Hooked'), `${path} deleted`)
        expect(deleted.payload.comment).toBe('')
      }
      expect(rx.received.filter((r) => r.path === '/bob')).toEqual([])
    } finally {
      await worker.stop()
      rx.stop()
    }
  })
})

describe('wiki: races', () => {
  test("a first page (or first push) while the repository's folder has moved away makes no wiki where no repository is: 409", async () => {
    // As a rename or transfer leaves it between the request finding the repository and its write.
    expect((await s.post('/user/repos', { name: 'mover', auto_init: true }, asA())).status).toBe(201)
    const folder = join(s.dataDir, 'repositories', 'alice', 'mover.git')
    const away = join(s.dataDir, 'repositories', 'alice', 'mover-away.git')
    renameSync(folder, away)
    try {
      refused(await s.post('/repos/alice/mover/wiki/new', { title: 'Home', content_base64: b64('lost') }, asA()), 'new page')
      const work = tempDir('warren-adv-mover-')
      dirs.push(work)
      await gitOk(work, 'init', '-q', '-b', 'main')
      await gitOk(work, '-c', 'user.name=A', '-c', 'user.email=a@example.com', 'commit', '-q', '--allow-empty', '-m', 'first')
      expect((await git(work, 'push', '-q', remoteUrl(s.url, 'alice/mover.wiki.git', alice.name, alice.token), 'main')).code).not.toBe(0)
      expect(existsSync(wikiDir('alice', 'mover'))).toBe(false)
    } finally {
      renameSync(away, folder)
    }
    expect((await s.post('/repos/alice/mover/wiki/new', { title: 'Home', content_base64: b64('kept') }, asA())).status).toBe(201)
  })

  test('one title created twice at once: one 201, the other 4xx; one file, one commit', async () => {
    const before = Number(await gitOk(wikiDir('alice', 'pub'), 'rev-list', '--count', 'HEAD'))
    const answers = await Promise.all([1, 2, 3].map((n) => s.post('/repos/alice/pub/wiki/new', { title: 'Same Title', content_base64: b64(`take ${n}`) }, asA())))
    const statuses = answers.map((a) => a.status).sort()
    expect(statuses[0]).toBe(201)
    for (const other of statuses.slice(1)) expect([400, 409]).toContain(other)
    expect(Number(await gitOk(wikiDir('alice', 'pub'), 'rev-list', '--count', 'HEAD'))).toBe(before + 1)
    expect((await gitOk(wikiDir('alice', 'pub'), 'ls-tree', '--name-only', 'HEAD')).split('\n').filter((f) => f === 'Same-Title.md')).toHaveLength(1)
  })

  test('content past WARREN_MAX_BLOB_SIZE, and a body past the request limit, are 413 with nothing written', async () => {
    const before = await wikiHeadOf('pub')
    const big = b64('x'.repeat(s.config.maxBlobSize + 1))
    refused(await s.post('/repos/alice/pub/wiki/new', { title: 'Big', content_base64: big }, asA()), 'big new')
    refused(await s.patch('/repos/alice/pub/wiki/page/Home', { content_base64: big }, asA()), 'big edit')
    const huge = await s.post('/repos/alice/pub/wiki/new', { title: 'Huge', content_base64: 'A'.repeat(64 * 1024 * 1024) }, asA())
    expect(huge.status).toBe(413)
    expect(await wikiHeadOf('pub')).toBe(before)
  })

  test('two edits of one page at once: both are answered 200 or 409, each 200 a commit, no merge', async () => {
    const before = Number(await gitOk(wikiDir('alice', 'pub'), 'rev-list', '--count', 'HEAD'))
    const answers = await Promise.all(['one', 'two'].map((text) => s.patch('/repos/alice/pub/wiki/page/Home', { content_base64: b64(text) }, asA())))
    for (const a of answers) expect([200, 409]).toContain(a.status)
    const ok = answers.filter((a) => a.status === 200).length
    expect(ok).toBeGreaterThan(0)
    expect(Number(await gitOk(wikiDir('alice', 'pub'), 'rev-list', '--count', 'HEAD'))).toBe(before + ok)
  })

  test('a delete during an edit: the page is either gone or edited, never both answered as done on a page that is not', async () => {
    expect((await s.post('/repos/alice/pub/wiki/new', { title: 'Doomed', content_base64: b64('x') }, asA())).status).toBe(201)
    const [edit, del] = await Promise.all([
      s.patch('/repos/alice/pub/wiki/page/Doomed', { content_base64: b64('edited') }, asA()),
      s.del('/repos/alice/pub/wiki/page/Doomed', undefined, asA()),
    ])
    expect([200, 404, 409]).toContain(edit.status)
    expect([204, 404, 409]).toContain(del.status)
    const after = await s.get('/repos/alice/pub/wiki/page/Doomed', asA())
    if (del.status === 204) {
      // The delete came last or the edit never happened.
      expect(after.status === 404 || edit.status === 200).toBe(true)
    }
    if (after.status === 200) expect(edit.status).toBe(200)
  })
})

describe('push mirrors: hostile input', () => {
  test('intervals that are not durations, negative, huge or in exponent form; addresses and credentials that are not: 4xx, no mirror made', async () => {
    const target = `${s.url}/alice/bare.git`
    const add = (body: unknown, auth: { token?: string } = asA()) => s.post('/repos/alice/pub/push_mirrors', body, auth)
    for (const interval of ['-1h', '2562048h', '2562047h47m17s', '999999999h999999999h', '1e9s', 'h', '1h-1h', '\u0000', 'NaN', 'Infinityh', '1' + '0'.repeat(35) + 's', '1m'])
      refused(await add({ remote_address: target, interval }), interval)
    for (const remote_address of ['', 'file:///etc', '/tmp/x.git', 'ext::sh -c touch% /tmp/pwned', '-uhelp', 'https://', 'x'.repeat(5000), 12])
      refused(await add({ remote_address, interval: '8h' }), remote_address)
    for (const creds of [{ remote_username: 'a\0b', remote_password: 'p' }, { remote_username: 'a', remote_password: 'p\0q' }, { remote_username: 'x'.repeat(300) }, { remote_password: 12 }])
      refused(await add({ remote_address: target, interval: '8h', ...creds }), creds)
    refused(await add({ remote_address: target, interval: '8h', use_ssh: true }), 'use_ssh')
    expect((await s.get('/repos/alice/pub/push_mirrors', asA())).body).toEqual([])
    // The same address and interval, well formed, are taken (the refusals above were the input's).
    const made = await add({ remote_address: target, interval: '10m' })
    expect(made.status).toBe(200)
    // Go's longest duration is still one (as Gitea takes it).
    const longest = await add({ remote_address: target, interval: '2562047h47m16s' })
    expect([longest.status, longest.body.interval]).toEqual([200, '2562047h47m16s'])
    expect((await s.del(`/repos/alice/pub/push_mirrors/${longest.body.remote_name}`, undefined, asA())).status).toBe(204)
    for (const name of ['x'.repeat(2000), '%00', '%2F']) refused(await s.get(`/repos/alice/pub/push_mirrors/${name}`, asA()), name)
    for (const auth of [{}, { token: bob.token }, { token: carol.token }]) refused(await s.post('/repos/alice/priv/push_mirrors', { remote_address: target, interval: '8h' }, auth), ['add', auth])
    refused(await s.post('/repos/alice/priv/push_mirrors-sync', undefined, { token: carol.token }), 'sync as reader')
    refused(await s.get('/repos/alice/priv/push_mirrors', { token: carol.token }), 'list as reader')
    refused(await s.del(`/repos/alice/pub/push_mirrors/${made.body.remote_name}`, undefined, { token: bob.token }), 'delete as stranger')
    expect((await s.del(`/repos/alice/pub/push_mirrors/${made.body.remote_name}`, undefined, asA())).status).toBe(204)
  })
})

describe('badges: hostile input', () => {
  test('odd slugs and bodies are 4xx; users that do not exist are 404; only site administrators', async () => {
    for (const body of [{ badge_slugs: ['../x'] }, { badge_slugs: ['nope'] }, { badge_slugs: 'x' }, { badge_slugs: [12] }, { badge_slugs: Array.from({ length: 5000 }, (_, i) => `s${i}`) }, { badge_slugs: ['x'.repeat(5000)] }, { badge_slugs: ['\0'] }])
      for (const method of ['POST', 'DELETE']) refused(await s.request(method, '/admin/users/alice/badges', { token: admin.token, body }), [method, body])
    expect((await s.get('/admin/users/alice/badges', { token: admin.token })).body).toEqual([])
    refused(await s.get('/admin/users/nobody/badges', { token: admin.token }), 'nobody')
    refused(await s.get('/admin/users/alice/badges', { token: alice.token }), 'plain user')
    refused(await s.get('/admin/users/alice/badges'), 'anonymous')
  })
})

describe('unadopted: hostile names', () => {
  test('climbing names, .git suffixes, symlinks out of the root: 4xx and nothing adopted or deleted', async () => {
    const outside = tempDir('warren-adv-outside-')
    dirs.push(outside)
    await gitOk(outside, 'init', '--bare', '-q', 'victim.git')
    mkdirSync(join(s.dataDir, 'repositories', 'alice'), { recursive: true })
    symlinkSync(join(outside, 'victim.git'), join(s.dataDir, 'repositories', 'alice', 'linked.git'))
    for (const [owner, name] of [['alice', '..'], ['alice', '%2e%2e'], ['..', 'alice'], ['alice', 'pub.git'], ['alice', 'linked'], ['alice', 'x%2F..%2F..'], ['alice', 'a\\b'], ['alice', 'x'.repeat(300)], ['alice', '%00']]) {
      for (const method of ['POST', 'DELETE']) refused(await s.request(method, `/admin/unadopted/${owner}/${name}`, { token: admin.token }), [method, owner, name])
    }
    // A repository's wiki folder is no unadopted repository: neither listed, adopted nor deleted.
    for (const name of ['pub.wiki', 'PUB.wiki', 'pub'])
      for (const method of ['POST', 'DELETE']) refused(await s.request(method, `/admin/unadopted/alice/${name}`, { token: admin.token }), [method, name])
    expect((await s.get('/admin/unadopted', { token: admin.token })).body).not.toContain('alice/pub.wiki')
    expect((await s.get('/repos/alice/pub/wiki/page/Home', asA())).status).toBe(200)
    expect(existsSync(join(outside, 'victim.git', 'HEAD'))).toBe(true)
    expect((await s.get('/repos/alice/linked', asA())).status).toBe(404)
    expect((await s.get('/repos/alice/pub', asA())).status).toBe(200)
    for (const q of ['..', '%', '*', '[', 'x'.repeat(1000)]) {
      const res = await s.get(`/admin/unadopted?pattern=${encodeURIComponent(q)}`, { token: admin.token })
      expect([q, res.status === 200 || (res.status >= 400 && res.status < 500)]).toEqual([q, true])
    }
  })

  test('adopting one folder twice at once: one 204, the other 4xx; one repository', async () => {
    const dir = join(s.dataDir, 'repositories', 'alice', 'twice.git')
    await gitOk(s.dataDir, 'init', '--bare', '-q', dir)
    const answers = await Promise.all([1, 2].map(() => s.post('/admin/unadopted/alice/twice', undefined, { token: admin.token })))
    expect(answers.map((a) => a.status).sort()).toEqual([204, 409])
    expect((await s.get('/repos/alice/twice', asA())).status).toBe(200)
  })

  test('adopting and deleting one folder at once: either a repository with its folder, or neither', async () => {
    for (let round = 0; round < 3; round++) {
      const name = `contest${round}`
      const dir = join(s.dataDir, 'repositories', 'alice', `${name}.git`)
      await gitOk(s.dataDir, 'init', '--bare', '-q', dir)
      const [adopt, del] = await Promise.all([s.post(`/admin/unadopted/alice/${name}`, undefined, { token: admin.token }), s.del(`/admin/unadopted/alice/${name}`, undefined, { token: admin.token })])
      // One claims the folder; the other finds it claimed (409) or, coming after, nothing to act on (404).
      const [first, second] = [adopt.status, del.status].sort()
      expect(first).toBe(204)
      expect([404, 409]).toContain(second!)
      const repo = await s.get(`/repos/alice/${name}`, asA())
      expect([name, repo.status, existsSync(dir)]).toEqual(adopt.status === 204 ? [name, 200, true] : [name, 404, false])
    }
  })
})

describe('blocks and hooks: hostile input', () => {
  test('blocks: self, unknown, odd names, long notes; only the blocker sees the list', async () => {
    for (const name of ['alice', 'nobody', '..', 'x'.repeat(300), '%00']) refused(await s.put(`/user/blocks/${name}`, undefined, asA()), name)
    refused(await s.put(`/user/blocks/bob?note=${'n'.repeat(300)}`, undefined, asA()), 'long note')
    expect((await s.get('/user/blocks', asA())).body).toEqual([])
    refused(await s.get('/user/blocks'), 'anonymous')
    refused(await s.put('/orgs/nope/blocks/bob', undefined, asA()), 'no org')
  })

  test("a writer the owner blocks loses the wiki's writes at once, over the API and git HTTP", async () => {
    expect((await s.post('/user/repos', { name: 'shared', auto_init: true }, asA())).status).toBe(201)
    expect((await s.put('/repos/alice/shared/collaborators/bob', { permission: 'write' }, asA())).status).toBe(204)
    expect((await s.post('/repos/alice/shared/wiki/new', { title: 'Bob', content_base64: b64('x') }, { token: bob.token })).status).toBe(201)
    const head = await wikiHeadOf('shared')
    expect((await s.put('/user/blocks/bob', undefined, asA())).status).toBe(204)
    refused(await s.post('/repos/alice/shared/wiki/new', { title: 'Bob 2', content_base64: b64('x') }, { token: bob.token }), 'create')
    refused(await s.patch('/repos/alice/shared/wiki/page/Bob', { content_base64: b64('y') }, { token: bob.token }), 'edit')
    refused(await s.del('/repos/alice/shared/wiki/page/Bob', undefined, { token: bob.token }), 'delete')
    const work = tempDir('warren-adv-blocked-')
    dirs.push(work)
    await gitOk(work, 'clone', '-q', remoteUrl(s.url, 'alice/shared.wiki.git', bob.name, bob.token), '.')
    await gitOk(work, '-c', 'user.name=Bob', '-c', 'user.email=bob@example.com', 'commit', '-q', '--allow-empty', '-m', 'blocked')
    expect((await git(work, 'push', '-q', remoteUrl(s.url, 'alice/shared.wiki.git', bob.name, bob.token), 'HEAD:main')).code).not.toBe(0)
    expect(await wikiHeadOf('shared')).toBe(head)
    expect((await s.del('/user/blocks/bob', undefined, asA())).status).toBe(204)
  })

  test('hooks: wrong types, bad urls, unknown events, odd ids: 4xx, none made; others may not see them', async () => {
    const good = { type: 'gitea', config: { url: 'https://example.com/h', content_type: 'json' }, events: ['push'], active: true }
    const hooksBefore = (await s.get('/user/hooks', asA())).body
    for (const body of [
      { ...good, type: 'nope' },
      { ...good, config: { url: 'javascript:alert(1)', content_type: 'json' } },
      { ...good, config: { content_type: 'json' } },
      { ...good, config: { url: 'https://example.com/h', content_type: 'yaml' } },
      { ...good, events: 'push' },
      { ...good, events: [12] },
      { ...good, active: 'yes' },
      { ...good, config: { url: 'https://example.com/h', content_type: 'json', x: 'y'.repeat(100000) } },
      { ...good, branch_filter: '{'.repeat(10000) },
    ]) {
      refused(await s.post('/user/hooks', body, asA()), ['user', body])
      refused(await s.post('/admin/hooks', body, { token: admin.token }), ['admin', body])
    }
    expect((await s.get('/user/hooks', asA())).body).toEqual(hooksBefore)
    refused(await s.post('/admin/hooks', good, asA()), 'admin hooks by a user')
    const made = await s.post('/user/hooks', good, asA())
    expect(made.status).toBe(201)
    for (const body of [{ config: { url: 'javascript:x' } }, { events: [12] }, { active: 'no' }, { branch_filter: '{'.repeat(10000) }, { config: { content_type: 'yaml' } }]) {
      refused(await s.patch(`/user/hooks/${made.body.id}`, body, asA()), ['patch', body])
    }
    expect((await s.get(`/user/hooks/${made.body.id}`, asA())).body).toEqual(made.body)
    for (const id of ['0', '-1', 'x', '1e3', '99999999999999999999', String(made.body.id + 1)]) refused(await s.get(`/user/hooks/${id}`, asA()), id)
    refused(await s.get(`/user/hooks/${made.body.id}`, { token: bob.token }), 'another user')
    refused(await s.del(`/user/hooks/${made.body.id}`, undefined, { token: bob.token }), 'another user deletes')
    refused(await s.get(`/admin/hooks/${made.body.id}`, { token: admin.token }), 'user hook as site hook')
    expect((await s.get(`/user/hooks/${made.body.id}`, asA())).status).toBe(200)
  })
})
