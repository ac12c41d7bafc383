import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { signInByForm, webVisitors } from './web-session'
import { contentMark } from './db-snapshot'

/**
 * The web pages over plain HTTP: statuses and access rules of each page, sessions and CSRF, and
 * hostile content rendered inert.
 */

let s: TestServer
let alice: TestUser, stranger: TestUser
const b64 = (text: string) => Buffer.from(text).toString('base64')
const HOSTILE_README = [
  '# Hello',
  '<script>alert(1)</script>',
  '<img src=x onerror="alert(2)">',
  '[click](javascript:alert(3))',
  '<svg><script>alert(4)</script></svg>',
  '<a href="javascript:alert(5)">x</a>',
].join('\n\n')
const HOSTILE_NAME = '<img src=x onerror=alert(6)>.txt'

const page = (path: string, headers: Record<string, string> = {}) =>
  fetch(s.url + path, { headers: { accept: 'text/html', ...headers }, redirect: 'manual' })

const signIn = (user: TestUser): Promise<string> => signInByForm(s.url, user)

const csrfOf = async (res: Response) => /name="_csrf" value="([0-9a-f]+)"/.exec(await res.text())?.[1]

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  stranger = await s.user('stranger')
  const token = { token: alice.token }
  expect((await s.post('/user/repos', { name: 'pub', auto_init: true, description: 'A <b>public</b> one' }, token)).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'secret', auto_init: true, private: true }, token)).status).toBe(201)
  const files = [
    { operation: 'create', path: 'README.md', content: b64(HOSTILE_README) },
    { operation: 'create', path: 'src/main.ts', content: b64('// entry\nexport const answer: number = 42\n/* a\nblock */\n') },
    { operation: 'create', path: HOSTILE_NAME, content: b64('x') },
    { operation: 'create', path: 'bin.dat', content: b64('\u0000\u0001\u0002') },
  ]
  // auto_init made a README.md: replace it.
  const sha = (await s.get('/repos/alice/pub/contents/README.md', token)).body.sha
  files[0] = { ...files[0]!, operation: 'update', sha } as any
  expect((await s.post('/repos/alice/pub/contents', { files, message: 'files' }, token)).status).toBe(201)
  expect((await s.post('/orgs', { username: 'hidden', visibility: 'private' }, token)).status).toBe(201)
})
afterAll(() => s.stop())

describe('pages and their access', () => {
  test('home: JSON for clients, a page with a sign-in link for a browser, the repositories once signed in', async () => {
    expect((await fetch(s.url + '/')).headers.get('content-type')).toContain('application/json')
    const anon = await page('/')
    expect(anon.status).toBe(200)
    expect(anon.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(await anon.text()).toContain('href="/user/login"')
    const cookie = await signIn(alice)
    const mine = await (await page('/', { cookie })).text()
    expect(mine).toContain('href="/alice/pub"')
    expect(mine).toContain('href="/alice/secret"')
  })

  test('profiles: a user and an organisation; a private organisation is a 404 page to anonymous and strangers', async () => {
    const profile = await page('/alice')
    expect(profile.status).toBe(200)
    const text = await profile.text()
    expect(text).toContain('href="/alice/pub"')
    expect(text).not.toContain('secret')
    for (const cookie of [undefined, await signIn(stranger)]) {
      const hidden = await page('/hidden', cookie ? { cookie } : {})
      expect(hidden.status).toBe(404)
      expect(hidden.headers.get('content-type')).toContain('text/html')
    }
    expect((await page('/hidden', { cookie: await signIn(alice) })).status).toBe(200)
    expect((await page('/nobody-here')).status).toBe(404)
  })

  test('repository home: files, README, clone URLs, counts, branch switcher', async () => {
    const res = await page('/alice/pub')
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('href="/alice/pub/src/branch/main/src"')
    expect(html).toContain(`value="${s.config.baseUrl}alice/pub.git"`)
    expect(html).toContain('A &lt;b&gt;public&lt;/b&gt; one')
    expect(html).toContain('Hello</h1>')
    expect(html).toContain('aria-label="Branches"')
    // The same page again (its README kept rendered) reads the same.
    expect(await (await page('/alice/pub')).text()).toBe(html)
    // An empty repository: no branch to list.
    expect((await s.post('/user/repos', { name: 'empty' }, { token: alice.token })).status).toBe(201)
    const empty = await page('/alice/empty')
    expect(empty.status).toBe(200)
    expect(await empty.text()).toContain('This repository is empty.')
  })

  test('folder, file with line anchors, binary file, raw download, unknown paths', async () => {
    const folder = await (await page('/alice/pub/src/branch/main/src')).text()
    expect(folder).toContain('href="/alice/pub/src/branch/main/src/main.ts"')
    const file = await (await page('/alice/pub/src/branch/main/src/main.ts')).text()
    expect(file).toContain('<li id=L2><b>export const</b> <q>answer</q>: <u>number</u> = <u>42</u>')
    // A block comment over two lines stays one element per line.
    expect(file).toContain('<li id=L3><em>/* a</em><li id=L4><em>block */</em></ol>')
    const bin = await (await page('/alice/pub/src/branch/main/bin.dat')).text()
    expect(bin).toContain('binary file')
    expect((await page('/alice/pub/raw/branch/main/src/main.ts')).status).toBe(200)
    const commit = (await s.get('/repos/alice/pub/branches/main')).body.commit.id
    expect((await page(`/alice/pub/src/commit/${commit}/src/main.ts`)).status).toBe(200)
    expect((await page('/alice/pub/src/branch/nope/x')).status).toBe(404)
    expect((await page('/alice/pub/src/branch/main/missing.txt')).status).toBe(404)
    expect((await page('/alice/pub/src/tag/v9/x')).status).toBe(404)
  })

  test('a private repository is a 404 page to anonymous and strangers, its pages open to its owner', async () => {
    for (const path of ['/alice/secret', '/alice/secret/src/branch/main/README.md']) {
      expect((await page(path)).status).toBe(404)
      expect((await page(path, { cookie: await signIn(stranger) })).status).toBe(404)
      expect((await page(path, { cookie: await signIn(alice) })).status).toBe(200)
    }
  })

  test('git over HTTP, the API and the docs keep working beside the pages', async () => {
    expect((await fetch(s.url + '/alice/pub.git/info/refs?service=git-upload-pack')).status).toBe(200)
    expect((await fetch(s.url + '/alice/pub/info/refs?service=git-upload-pack')).status).toBe(200)
    expect((await fetch(s.url + '/api/v1/repos/alice/pub')).status).toBe(200)
    expect((await fetch(s.url + '/api/swagger')).status).toBe(200)
    const missing = await fetch(s.url + '/api/v1/repos/alice/nothing')
    expect(missing.headers.get('content-type')).toContain('application/json')
    // An unknown API path is the API's 404 in its shape, for a browser too; an unknown page a 404 page.
    const unknownApi = await page('/api/v1/nothing/here')
    expect([unknownApi.status, unknownApi.headers.get('content-type')]).toEqual([404, 'application/json; charset=utf-8'])
    const unknownPage = await page('/alice/pub/nothing/here/at/all')
    expect([unknownPage.status, unknownPage.headers.get('content-type')]).toEqual([404, 'text/html; charset=utf-8'])
  })

  test("a page's input refused is refused by the page, as a page: a NUL in its query is a 422 page, in its path a 404 page", async () => {
    for (const [path, status] of [
      ['/explore/repos?q=a%00b', 422],
      ['/alice/pub/src/branch/main/src?x=%00', 422],
      ['/alice/pub/src/branch/ma%00in/src', 404],
    ] as const) {
      const res = await page(path)
      expect([path, res.status, res.headers.get('content-type')]).toEqual([path, status, 'text/html; charset=utf-8'])
    }
  })

  test('the stylesheet is served with a long cache', async () => {
    const html = await (await page('/')).text()
    const href = /<link rel="stylesheet" href="([^"]+)"/.exec(html)![1]!
    const css = await fetch(s.url + href)
    expect(css.status).toBe(200)
    expect(css.headers.get('cache-control')).toContain('max-age=31536000')
  })
})

describe('hostile content', () => {
  test('README scripts, event handlers, javascript: links and file names render inert', async () => {
    const html = await (await page('/alice/pub')).text()
    expect(html).not.toMatch(/<script/i)
    expect(html).not.toMatch(/<[^>]*\sonerror=/i)
    expect(html).not.toMatch(/href="javascript:/i)
    expect(html).toContain('&lt;img src=x onerror=alert(6)&gt;.txt')
  })
})

describe('sessions', () => {
  test('the session cookie signs in web pages only, never the API', async () => {
    const cookie = await signIn(alice)
    expect((await fetch(s.url + '/api/v1/user', { headers: { cookie } })).status).toBe(401)
    expect((await fetch(s.url + '/api/v1/repos/alice/secret', { headers: { cookie } })).status).toBe(404)
  })

  test('a wrong password shows the form again and opens no session', async () => {
    const form = await page('/user/login')
    const pre = form.headers.get('set-cookie')!.split(';')[0]!
    const csrf = (await csrfOf(form))!
    const res = await fetch(s.url + '/user/login', {
      method: 'POST',
      headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, user_name: 'alice', password: 'wrong' }),
      redirect: 'manual',
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('set-cookie')).toBeNull()
    expect(await res.text()).toContain('Wrong username or password.')
  })

  test('a POST without its CSRF token (or with a wrong one) is refused with a 403 page and changes nothing', async () => {
    const mark = contentMark(s.deps.db)
    const before = await mark()
    const login = await fetch(s.url + '/user/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ user_name: 'alice', password: alice.password }),
      redirect: 'manual',
    })
    expect(login.status).toBe(403)
    expect(login.headers.get('content-type')).toContain('text/html')
    expect(login.headers.get('set-cookie')).toBeNull()
    const cookie = await signIn(alice)
    const withSession = await mark()
    for (const token of [undefined, '0'.repeat(64)]) {
      const out = await fetch(s.url + '/user/logout', {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(token ? { _csrf: token } : {}),
        redirect: 'manual',
      })
      expect(out.status).toBe(403)
    }
    expect(await mark()).toBe(withSession)
    expect(withSession).not.toBe(before)
    // With its token, sign-out ends the session.
    const csrf = (await csrfOf(await page('/', { cookie })))!
    const out = await fetch(s.url + '/user/logout', {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf }),
      redirect: 'manual',
    })
    expect(out.status).toBe(303)
    expect(await (await page('/', { cookie })).text()).toContain('href="/user/login"')
  })
})

describe("a person's profile: its tabs and following", () => {
  const visitors = webVisitors(() => s.url, () => contentMark(s.deps.db)())
  let bob: TestUser, carol: TestUser
  /** The links of the list a page labels `label`. */
  const listed = (html: string, label: string): string[] => {
    const list = new RegExp(`<ul class="entries" aria-label="${label}">([\\s\\S]*?)</ul>`).exec(html)?.[1]
    expect(list).toBeDefined()
    return [...list!.matchAll(/<li><a href="\/([^"]+)">/g)].map((m) => m[1]!)
  }
  const as = (who: TestUser | null) => (who ? { token: who.token } : {})
  const profile = async (path: string, who: TestUser | null) => {
    const res = await visitors.page(path, who ? await visitors.signIn(who) : undefined)
    expect(res.status).toBe(200)
    return await res.text()
  }
  const followersOf = async (name: string) => ((await s.get(`/users/${name}/followers`, as(alice))).body as { login: string }[]).map((u) => u.login)

  beforeAll(async () => {
    bob = await s.user('bob')
    carol = await s.user('carol')
    for (const repo of ['alice/pub', 'alice/secret']) expect((await s.put(`/user/starred/${repo}`, undefined, as(alice))).status).toBe(204)
    expect((await s.put('/user/following/alice', undefined, as(bob))).status).toBe(204)
    expect((await s.put('/user/following/bob', undefined, as(alice))).status).toBe(204)
    expect((await s.put('/user/blocks/stranger', undefined, as(carol))).status).toBe(204)
  })

  test('each tab lists what the API lists for its visitor; a private repository and its star show to its owner only', async () => {
    for (const who of [alice, stranger, null]) {
      // The API's lists of stars and people need a signed-in caller: an anonymous visitor sees what a stranger does.
      const api = async (path: string) => (await s.get(path, as(who ?? stranger))).body as any[]
      const repos = listed(await profile('/alice', who), 'Repositories')
      expect(repos).toEqual(((await s.get('/users/alice/repos', as(who))).body as any[]).map((r) => r.full_name))
      expect(listed(await profile('/alice?tab=repositories&page=1', who), 'Repositories')).toEqual(repos)
      const stars = listed(await profile('/alice?tab=stars', who), 'Repositories')
      expect(stars).toEqual((await api('/users/alice/starred')).map((r) => r.full_name))
      expect(stars.includes('alice/secret')).toBe(who === alice)
      expect(stars).toContain('alice/pub')
      expect(listed(await profile('/alice?tab=followers', who), 'Followers')).toEqual((await api('/users/alice/followers')).map((u) => u.login))
      expect(listed(await profile('/alice?tab=following', who), 'Following')).toEqual((await api('/users/alice/following')).map((u) => u.login))
      const activity = await profile('/alice?tab=activity', who)
      const feed = await api('/users/alice/activities/feeds?only-performed-by=true&limit=20')
      expect(feed.length).toBeGreaterThan(0)
      expect(activity.match(/<time /g)?.length).toBe(feed.length)
      expect(activity.includes('alice/secret')).toBe(who === alice)
    }
    const anon = await profile('/alice?tab=followers', null)
    expect(listed(anon, 'Followers')).toEqual(['bob'])
    expect(anon).toContain('1 follower</a>')
    expect(anon).not.toContain('action=follow')
    // A page past the end lists nothing; an unknown tab is the repositories.
    expect(await profile('/alice?tab=stars&page=99', null)).toContain('No starred repositories to show.')
    expect(listed(await profile('/alice?tab=nonsense', null), 'Repositories')).toEqual(listed(await profile('/alice', null), 'Repositories'))
  })

  test('the repositories and stars tabs are paged, 15 at a time, together the whole of what the API lists', async () => {
    for (let i = 0; i < 14; i++) {
      expect((await s.post('/user/repos', { name: `many-${i}` }, as(alice))).status).toBe(201)
      expect((await s.put(`/user/starred/alice/many-${i}`, undefined, as(alice))).status).toBe(204)
    }
    for (const tab of ['repositories', 'stars']) {
      const all = ((await s.get(tab === 'stars' ? '/users/alice/starred?limit=50' : '/users/alice/repos?limit=50', as(alice))).body as any[]).map((r) => r.full_name)
      expect(all.length).toBeGreaterThan(15)
      const first = await profile(`/alice?tab=${tab}`, alice)
      expect(first).toContain(`href="/alice?tab=${tab}&amp;page=2"`)
      const second = listed(await profile(`/alice?tab=${tab}&page=2`, alice), 'Repositories')
      expect([...listed(first, 'Repositories'), ...second]).toEqual(all)
      expect(second.length).toBe(all.length - 15)
    }
  })

  test('follow and unfollow through the form change the followers the API lists; without CSRF or signed out, nothing changes', async () => {
    expect(await profile('/alice', stranger)).toContain('action="/alice?action=follow"')
    expect(await profile('/alice', alice)).not.toContain('action=follow')
    await visitors.expectCsrfRefused(stranger, '/alice?action=follow', {})
    const anon = await fetch(s.url + '/alice?action=follow', { method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, body: '', redirect: 'manual' })
    expect(anon.status).toBe(401)
    expect(anon.headers.get('content-type')).toContain('text/html')
    expect(await followersOf('alice')).toEqual(['bob'])
    const follow = await visitors.submit(stranger, '/alice?action=follow', {}, { from: '/alice' })
    expect(follow).toMatchObject({ status: 303, location: '/alice' })
    expect(await followersOf('alice')).toEqual(['bob', 'stranger'])
    expect(await profile('/alice', stranger)).toContain('action="/alice?action=unfollow"')
    expect((await visitors.submit(stranger, '/alice', { action: 'unfollow' }, { from: '/alice' })).status).toBe(303)
    expect(await followersOf('alice')).toEqual(['bob'])
    expect((await visitors.submit(stranger, '/alice?action=dance', {}, { from: '/alice' })).status).toBe(400)
  })

  test('a blocked visitor may not follow: the profile again with the refusal; an organisation has no follow', async () => {
    const mark = contentMark(s.deps.db)
    const before = await mark()
    const refused = await visitors.submit(stranger, '/carol?action=follow', {}, { from: '/carol' })
    expect(refused.status).toBe(403)
    expect(refused.html).toContain('role="alert"')
    expect(await mark()).toBe(before)
    expect(await followersOf('carol')).toEqual([])
    expect((await s.put('/user/following/carol', undefined, as(stranger))).status).toBe(403)
    expect((await visitors.submit(alice, '/hidden?action=follow', {}, { from: '/alice' })).status).toBe(404)
    expect(await profile('/hidden', alice)).not.toContain('action=follow')
  })
})
