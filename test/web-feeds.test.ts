import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'
import { feedPathOf } from '../src/web/feed-xml'
import { createAccessToken } from '../src/modules/users/service'

/**
 * The RSS and Atom feeds at Gitea's addresses (a person's, a repository's, its releases and tags,
 * a branch's and a file's commits) and the signed-in dashboard's activity: each lists what the
 * API's feeds and lists give the same reader (private repositories only to those who may read
 * them), as well-formed documents in which the users' text is escaped.
 */

let s: TestServer
let alice: TestUser, bob: TestUser
const { page, signIn } = webVisitors(() => s.url, async () => '')
const b64 = (text: string) => Buffer.from(text).toString('base64')
const HOSTILE = 'Broken <script>alert(1)</script> & "quoted" ]]> end'

/** A feed as `who` reads it (a token, as a feed reader given one would send it). */
async function feed(path: string, who?: TestUser) {
  const res = await fetch(s.url + path, { headers: who ? { authorization: `token ${who.token}` } : {} })
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() }
}

/** The texts of `tag` elements, unescaped. */
const texts = (xml: string, tag: string) =>
  [...xml.matchAll(new RegExp(`<${tag}(?: [^>]*)?>([^<]*)</${tag}>`, 'g'))].map((m) => m[1]!.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&'))

/** What a well-formed feed document holds no matter its content: one root, no stray markup from users' text. */
function expectWellFormed(xml: string, root: 'rss' | 'feed') {
  expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n')).toBe(true)
  expect(xml.trimEnd().endsWith(`</${root}>`)).toBe(true)
  expect(xml).not.toContain('<script>')
  // Every element opened is closed, in order.
  const stack: string[] = []
  for (const m of xml.replace(/^<\?xml[^>]*\?>/, '').matchAll(/<(\/?)([a-zA-Z:]+)([^>]*?)(\/?)>/g)) {
    if (m[4]) continue
    if (m[1]) expect(stack.pop()).toBe(m[2])
    else stack.push(m[2]!)
  }
  expect(stack).toEqual([])
}

beforeAll(async () => {
  s = await startTestServer()
  ;[alice, bob] = await Promise.all([s.user('alice'), s.user('bob')])
  const asAlice = { token: alice.token }
  expect((await s.post('/user/repos', { name: 'pub', auto_init: true, description: 'the public one' }, asAlice)).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'secret', private: true, auto_init: true }, asAlice)).status).toBe(201)
  expect((await s.post('/repos/alice/pub/contents/docs/guide.md', { content: b64('# Guide\n'), message: 'Add the guide\n\nWith a body.' }, asAlice)).status).toBe(201)
  expect((await s.post('/repos/alice/pub/contents/other.txt', { content: b64('x\n'), message: 'Add other' }, asAlice)).status).toBe(201)
  const issue = await s.post('/repos/alice/pub/issues', { title: HOSTILE, body: 'text' }, asAlice)
  expect(issue.status).toBe(201)
  expect((await s.post('/repos/alice/pub/issues/1/comments', { body: 'a comment' }, asAlice)).status).toBe(201)
  expect((await s.post('/repos/alice/secret/issues', { title: 'private matter' }, asAlice)).status).toBe(201)
  expect((await s.post('/repos/alice/pub/releases', { tag_name: 'v1.0', name: 'First & best', body: 'Some **bold** news' }, asAlice)).status).toBe(201)
  expect((await s.post('/repos/alice/pub/releases', { tag_name: 'v2.0', name: 'Draft', body: 'not yet', draft: true }, asAlice)).status).toBe(201)
  expect((await s.post('/repos/alice/pub/tags', { tag_name: 'lightweight' }, asAlice)).status).toBe(201)
  // bob watches alice/pub: its events are in his dashboard.
  expect((await s.put('/repos/alice/pub/subscription', undefined, { token: bob.token })).status).toBe(200)
})

afterAll(async () => {
  await s?.stop()
})

test('a feed address whose last segment carries the format reaches the feed routes; other paths are left alone', () => {
  expect(feedPathOf('/alice.rss')).toBe('/alice/-/feed/rss')
  expect(feedPathOf('/alice/pub.atom')).toBe('/alice/pub/-/feed/atom')
  expect(feedPathOf('/a.b.rss')).toBe('/a.b/-/feed/rss')
  for (const other of ['/alice', '/alice/pub/releases.rss', '/alice/pub/raw/branch/main/x.rss', '/.rss', '/-.rss', '/alice/.rss']) expect(feedPathOf(other)).toBeNull()
})

test("a person's feed: what they did, private repositories' only to themself, the same as the API's feed", async () => {
  for (const [who, format] of [[undefined, 'rss'], [bob, 'atom'], [alice, 'rss']] as const) {
    const got = await feed(`/alice.${format}`, who)
    expect(got.status).toBe(200)
    expect(got.type).toBe(format === 'rss' ? 'application/rss+xml;charset=utf-8' : 'application/atom+xml;charset=utf-8')
    expectWellFormed(got.text, format === 'rss' ? 'rss' : 'feed')
    const api = (await s.get('/users/alice/activities/feeds?only-performed-by=true&limit=20', who ? { token: who.token } : {})).body as any[]
    expect(api.length).toBeGreaterThan(3)
    const items = format === 'rss' ? got.text.split('<item>').length - 1 : got.text.split('<entry>').length - 1
    expect(items).toBe(api.length)
    expect(got.text.includes('alice/secret')).toBe(who === alice)
    expect(texts(got.text, 'title')[0]).toBe('Feed of "alice"')
  }
  const rss = (await feed('/alice.rss')).text
  // The hostile title is text in the item's title, escaped.
  expect(texts(rss, 'title')).toContain(`alice opened issue #1 in alice/pub`)
  expect(texts(rss, 'description')).toContain(HOSTILE)
  expect(rss).toContain('<link>' + s.url + '/alice/pub/issues/1</link>')
  expect(rss).toMatch(/<guid isPermaLink="false">\d+: /)
  expect((await feed('/nobody.rss')).status).toBe(404)
  expect((await feed('/alice/-/feed/json')).status).toBe(404)
})

test("a person's feed read with a token: the user scope needed, as the profile's; a public-only one shows public repositories' only", async () => {
  const as = async (scopes: string[]) => {
    const { secret } = await createAccessToken(s.deps, alice.user.id, scopes.join(' '), scopes)
    const res = await fetch(s.url + '/alice.rss', { headers: { authorization: `token ${secret}` } })
    return { status: res.status, text: await res.text() }
  }
  for (const scopes of [['read:package'], ['read:repository', 'read:misc']]) {
    const refused = await as(scopes)
    expect(refused.status).toBe(403)
    expect(refused.text).not.toContain('alice/secret')
  }
  expect((await as(['read:user'])).text).toContain('alice/secret')
  const open = await as(['read:user', 'public-only'])
  expect(open.status).toBe(200)
  expect(open.text).toContain('alice/pub')
  expect(open.text).not.toContain('alice/secret')
})

test("a repository's feed, its releases and tags: readers only", async () => {
  const repoFeed = await feed('/alice/pub.rss')
  expect(repoFeed.status).toBe(200)
  expectWellFormed(repoFeed.text, 'rss')
  const api = (await s.get('/repos/alice/pub/activities/feeds?limit=20')).body as any[]
  expect(repoFeed.text.split('<item>').length - 1).toBe(api.length)
  expect(texts(repoFeed.text, 'description')).toContain('a comment')
  expect(texts(repoFeed.text, 'title')[0]).toBe('Feed of "alice/pub"')
  expect((await feed('/alice/secret.rss')).status).toBe(404)
  expect((await feed('/alice/secret.atom', bob)).status).toBe(404)
  const secret = await feed('/alice/secret.atom', alice)
  expect(secret.status).toBe(200)
  expect(texts(secret.text, 'summary').join('\n')).not.toContain('a comment')

  const releases = await feed('/alice/pub/releases.rss')
  expect(releases.status).toBe(200)
  expectWellFormed(releases.text, 'rss')
  // Published releases only (the draft is the writers'), the notes rendered as the pages render them.
  expect(texts(releases.text, 'title')).toEqual(['Releases for alice/pub', 'First & best'])
  expect(releases.text).toContain('<strong>bold</strong>'.replace(/</g, '&lt;').replace(/>/g, '&gt;'))
  expect(releases.text).toContain(`<link>${s.url}/alice/pub/releases/tag/v1.0</link>`)
  const tags = await feed('/alice/pub/tags.atom')
  expectWellFormed(tags.text, 'feed')
  expect(texts(tags.text, 'title').slice(1).sort()).toEqual(['lightweight', 'v1.0'])
  expect((await feed('/alice/secret/releases.atom')).status).toBe(404)
  expect((await feed('/alice/secret/tags.rss', alice)).status).toBe(200)
})

test('a feed reader asking the profile, an organisation or a repository for a feed by its Accept header gets it, as from the feed address', async () => {
  expect((await s.post('/orgs', { username: 'acme' }, { token: alice.token })).status).toBe(201)
  const asked = async (path: string, accept: string, who?: TestUser) => {
    const res = await fetch(s.url + path, { headers: { accept, ...(who ? { authorization: `token ${who.token}` } : {}) } })
    return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() }
  }
  for (const [path, format, accept] of [
    ['/alice', 'rss', 'application/rss+xml'],
    ['/alice', 'atom', 'application/atom+xml, text/xml;q=0.9'],
    ['/acme', 'atom', 'application/atom+xml'],
    ['/alice/pub', 'rss', 'application/atom+xml, application/rss+xml'],
  ] as const) {
    const got = await asked(path, accept)
    expect(got.status).toBe(200)
    expect(got.type).toBe(`application/${format}+xml;charset=utf-8`)
    expectWellFormed(got.text, format === 'rss' ? 'rss' : 'feed')
    // The channel was published when its newest item was (items come newest first): the same
    // items make the same document, whenever it is asked for.
    if (format === 'rss') expect(texts(got.text, 'pubDate')[0]).toBe(texts(got.text, 'pubDate')[1]!)
    // The same items as the feed address's, bar the time the document was made.
    const strip = (xml: string) => xml.replace(/<(lastBuildDate|updated)>[^<]*</g, '<$1><')
    expect(strip(got.text)).toBe(strip((await feed(`${path}.${format}`)).text))
  }
  // The page itself otherwise; a hidden repository stays hidden, a private one shown to its owner.
  expect((await asked('/alice/pub', 'text/html')).type).toStartWith('text/html')
  expect((await asked('/alice/secret', 'application/rss+xml')).status).toBe(404)
  expect((await asked('/alice/secret', 'application/rss+xml', alice)).type).toBe('application/rss+xml;charset=utf-8')
  expect((await asked('/nobody', 'application/rss+xml')).status).toBe(404)
  // Fixed pages are not feeds.
  expect((await asked('/explore/repos', 'application/rss+xml')).type).toStartWith('text/html')
})

test("a branch's latest commits, and a file's", async () => {
  const branch = await feed('/alice/pub/rss/branch/main')
  expect(branch.status).toBe(200)
  expectWellFormed(branch.text, 'rss')
  const commits = ((await s.get('/repos/alice/pub/commits?sha=main&limit=10&stat=false')).body as any[]).map((c) => c.commit.message.split('\n')[0])
  expect(texts(branch.text, 'title')).toEqual(['Latest commits for branch main', ...commits])
  const file = await feed('/alice/pub/atom/branch/main/docs/guide.md')
  expect(file.status).toBe(200)
  expectWellFormed(file.text, 'feed')
  expect(texts(file.text, 'title')).toEqual(['Latest commits for file docs/guide.md', 'Add the guide'])
  expect(texts(file.text, 'summary')).toEqual(['Add the guide\n\nWith a body.'])
  expect((await feed('/alice/pub/rss/branch/nope')).status).toBe(404)
  expect((await feed('/alice/pub/rss/tag/v1.0')).status).toBe(404)
  expect((await feed('/alice/pub/rss/branch/main/no/such/file')).status).toBe(404)
  expect((await feed('/alice/secret/rss/branch/main')).status).toBe(404)
})

test('the dashboard: the activity of the repositories one watches and one\'s own, private ones to their readers only', async () => {
  const mine = await (await page('/', await signIn(alice))).text()
  expect(mine).toContain('<h1>Dashboard</h1>')
  expect(mine).toContain('aria-label="Activity"')
  expect(mine).toContain('href="/alice/secret"')
  expect(mine).toContain('<a href="/alice/pub/issues/1">#1</a>')
  expect(mine).not.toContain('<script>alert')
  const bobs = await (await page('/', await signIn(bob))).text()
  expect(bobs).toContain('<h1>Dashboard</h1>')
  expect(bobs).toContain('alice/pub')
  expect(bobs).not.toContain('alice/secret')
  expect(bobs).toContain('You have no repositories yet.')
  // Past the end: nothing listed, no error.
  expect(await (await page('/?page=999', await signIn(alice))).text()).toContain('Nothing happened yet')
  const anonymous = await (await page('/')).text()
  expect(anonymous).toContain('Sign in')
  // Read with a token, the dashboard needs the user scope, as the profile and the person's feed.
  const narrow = await createAccessToken(s.deps, alice.user.id, 'dashboard narrow', ['read:package'])
  const refused = await fetch(s.url + '/', { headers: { accept: 'text/html', authorization: `token ${narrow.secret}` } })
  expect(refused.status).toBe(403)
  expect(await refused.text()).not.toContain('alice/secret')
  const wide = await createAccessToken(s.deps, alice.user.id, 'dashboard user', ['read:user'])
  expect(await (await fetch(s.url + '/', { headers: { accept: 'text/html', authorization: `token ${wide.secret}` } })).text()).toContain('href="/alice/secret"')
})

test("an organisation's and a team's dashboards, from the switcher: its repositories' activity for its members only", async () => {
  const asAlice = { token: alice.token }
  expect((await s.post('/orgs', { username: 'dash' }, asAlice)).status).toBe(201)
  expect((await s.post('/orgs/dash/repos', { name: 'work', private: true, auto_init: true }, asAlice)).status).toBe(201)
  expect((await s.post('/orgs/dash/repos', { name: 'other', private: true, auto_init: true }, asAlice)).status).toBe(201)
  expect((await s.post('/repos/dash/work/issues', { title: 'work item <b>' }, asAlice)).status).toBe(201)
  expect((await s.post('/repos/dash/other/issues', { title: 'other matter' }, asAlice)).status).toBe(201)
  // The owner's dashboard offers the organisation's.
  const home = await (await page('/', await signIn(alice))).text()
  expect(home).toContain('aria-label="Dashboard of"')
  expect(home).toContain('href="/org/dash/dashboard"')
  const owners = await (await page('/org/dash/dashboard', await signIn(alice))).text()
  expect(owners).toContain('<h1>Dashboard of dash</h1>')
  expect(owners).toContain('href="/org/dash/dashboard" aria-current="page"')
  expect(owners).toContain('work item &lt;b&gt;')
  expect(owners).toContain('other matter')
  expect(owners).toContain('href="/dash/work"')
  // bob, not a member: refused; anonymous: sent to sign in.
  expect((await page('/org/dash/dashboard', await signIn(bob))).status).toBe(403)
  expect((await page('/org/dash/dashboard')).status).toBe(303)
  // In a team given one repository: the organisation's dashboard shows what he may read, the team's that repository's.
  const team = await s.post('/orgs/dash/teams', { name: 'devs', permission: 'read', units: ['repo.code', 'repo.issues'] }, asAlice)
  expect(team.status).toBe(201)
  expect((await s.put(`/teams/${team.body.id}/members/bob`, undefined, asAlice)).status).toBe(204)
  expect((await s.put(`/teams/${team.body.id}/repos/dash/work`, undefined, asAlice)).status).toBe(204)
  const bobsOrg = await (await page('/org/dash/dashboard', await signIn(bob))).text()
  expect(bobsOrg).toContain('work item')
  expect(bobsOrg).not.toContain('other matter')
  const bobsTeam = await (await page('/org/dash/dashboard/-/devs', await signIn(bob))).text()
  expect(bobsTeam).toContain('<h1>Dashboard of dash: devs</h1>')
  expect(bobsTeam).toContain('work item')
  expect(bobsTeam).toContain('href="/dash/work"')
  expect(bobsTeam).not.toContain('other matter')
  expect((await page('/org/dash/dashboard/-/nosuchteam', await signIn(bob))).status).toBe(404)
  expect((await page('/org/dash/dashboard?page=abc', await signIn(bob))).status).toBe(200)
})

test('the pages offer their feeds to feed readers, and each offered address answers', async () => {
  const offered = async (path: string) => {
    const html = await (await page(path)).text()
    return [...html.matchAll(/<link rel="alternate" type="application\/(rss|atom)\+xml" title="[^"]*" href="([^"]+)"/g)].map((m) => [m[1]!, m[2]!.replace(/&amp;/g, '&')] as const)
  }
  const expected: Record<string, string[]> = {
    '/alice': ['/alice.rss', '/alice.atom'],
    '/alice/pub': ['/alice/pub.rss', '/alice/pub.atom'],
    '/alice/pub/releases': ['/alice/pub/releases.rss', '/alice/pub/releases.atom'],
    '/alice/pub/tags': ['/alice/pub/tags.rss', '/alice/pub/tags.atom'],
    '/alice/pub/commits/branch/main': ['/alice/pub/rss/branch/main', '/alice/pub/atom/branch/main'],
    '/alice/pub/commits/branch/main/docs/guide.md': ['/alice/pub/rss/branch/main/docs/guide.md', '/alice/pub/atom/branch/main/docs/guide.md'],
  }
  for (const [path, feeds] of Object.entries(expected)) {
    const links = await offered(path)
    expect(links.map(([, href]) => href)).toEqual(feeds)
    for (const [format, href] of links) {
      const got = await feed(href)
      expect(got.status).toBe(200)
      expect(got.type).toStartWith(`application/${format}+xml`)
    }
  }
  // A page with no feed offers none; the profile also links its feed in the page.
  expect(await offered('/alice/pub/branches')).toEqual([])
  expect(await (await page('/alice')).text()).toContain('<a href="/alice.rss">RSS feed</a>')
})
