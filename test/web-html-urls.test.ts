import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { signInByForm } from './web-session'
import { launchChromium } from './browser-helpers'
import { startReceiver, until, type Receiver } from './webhook-receiver'
import { notifyRound } from '../src/notify/consumer'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { getPackage, setPackageRepository } from '../src/modules/packages/service'

/**
 * Every `html_url` the API hands out opens its page: one record of every kind that carries one
 * (user, organisation, repository, contents and the commits the contents API writes, commits,
 * a branch's head, a tag's archives, a release, an issue and its comment, a pull request, its
 * files, its review and the review's line comment, a notification's subject and latest comment,
 * a push payload's URLs, a package version and the repository it is linked to), each fetched as a browser would: 200, HTML, the record on the page, and
 * the anchor a URL names (`#issuecomment-N`, `#pullrequestreview-N`) present. Then a short pass
 * in a real browser (Debian's Chromium through playwright-core): the pages with an anchor open
 * scrolled to the record, which is the page's `:target`.
 */

let s: TestServer
let alice: TestUser, bob: TestUser
let receiver: Receiver
let worker: ReturnType<typeof startWebhookWorker> | undefined
let cookie = ''
/** The html_url of a comment beyond the first page of its conversation. */
let lastRemark = ''
/** The html_urls of a review and its line comment beyond the first page of their conversation. */
let lateReviewUrl = ''
let lateLineUrl = ''
const b64 = (text: string) => Buffer.from(text).toString('base64')

/** A URL to check: what the page must show, as text or markup. */
interface Expected {
  url: string
  what: string
  shows: string[]
  /** Not a page (an archive): 200 and not HTML. */
  download?: boolean
}
const expected: Expected[] = []
const expectUrl = (what: string, url: string | null | undefined, ...shows: string[]) => expected.push({ url: String(url), what, shows })

beforeAll(async () => {
  s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05, webhookDeliverTimeout: 5 })
  alice = await s.user('alice')
  bob = await s.user('bob')
  receiver = await startReceiver()
  worker = startWebhookWorker(s.deps, { pollMs: 10 })
  const asAlice = { token: alice.token }
  const asBob = { token: bob.token }
  expect((await s.post('/orgs', { username: 'acme', full_name: 'Acme Works' }, asAlice)).status).toBe(201)
  const orgRepo = await s.post('/orgs/acme/repos', { name: 'tools', auto_init: true }, asAlice)
  expect(orgRepo.status).toBe(201)
  // A private repository: every page is seen signed in, as its owner.
  const repo = await s.post('/user/repos', { name: 'proj', auto_init: true, private: true, description: 'The project' }, asAlice)
  expect(repo.status).toBe(201)
  const main = repo.body.default_branch as string
  expect((await s.put('/repos/alice/proj/collaborators/bob', { permission: 'write' }, asAlice)).status).toBe(204)
  const hook = await s.post('/repos/alice/proj/hooks', { type: 'gitea', config: { url: receiver.url('/push'), content_type: 'json' }, events: ['push'], active: true }, asAlice)
  expect(hook.status).toBe(201)
  cookie = await signInByForm(s.url, alice)

  // People and places.
  const user = (await s.get('/users/alice', asAlice)).body
  expectUrl('user', user.html_url, 'alice')
  expectUrl('organisation (a repository owner)', orgRepo.body.owner.html_url, 'Acme Works')
  expectUrl('organisation repository', orgRepo.body.html_url, 'acme/tools')
  expectUrl('repository', repo.body.html_url, 'The project')

  // Contents and the commits the contents API writes.
  const written = await s.post(
    '/repos/alice/proj/contents',
    { message: 'guide', files: [{ operation: 'create', path: 'docs/the guide.md', content: b64('# Guide\n\nRead me first.\n') }] },
    asAlice,
  )
  expect(written.status).toBe(201)
  expectUrl('written file', written.body.files[0].html_url, 'Read me first.')
  expectUrl('written commit', written.body.commit.html_url, 'guide')
  const one = await s.post('/repos/alice/proj/contents/docs/notes.txt', { content: b64('a note\n'), message: 'a note' }, asAlice)
  expect(one.status).toBe(201)
  expectUrl('created file', one.body.content.html_url, 'a note')
  expectUrl('created file commit', one.body.commit.html_url, 'a note')
  const file = (await s.get('/repos/alice/proj/contents/docs/the%20guide.md', asAlice)).body
  expectUrl('contents of a file', file.html_url, 'Read me first.')
  expectUrl('contents _links.html', file._links.html, 'Read me first.')
  const folder = (await s.get('/repos/alice/proj/contents/docs', asAlice)).body
  for (const entry of folder) expectUrl(`folder entry ${entry.name}`, entry.html_url, entry.name === 'notes.txt' ? 'a note' : 'Read me first.')
  const root = (await s.get('/repos/alice/proj/contents', asAlice)).body
  expectUrl('folder', root.find((e: any) => e.name === 'docs').html_url, 'the guide.md', 'notes.txt')

  // Commits, a branch's head, a tag and its archives, a release.
  const commits = (await s.get('/repos/alice/proj/commits?limit=1', asAlice)).body
  expectUrl('commit (list)', commits[0].html_url, 'a note')
  const sha = commits[0].sha as string
  expectUrl('commit (git data)', (await s.get(`/repos/alice/proj/git/commits/${sha}`, asAlice)).body.html_url, 'a note')
  const atCommit = (await s.get(`/repos/alice/proj/contents/docs/notes.txt?ref=${sha}`, asAlice)).body
  expectUrl('contents at a commit', atCommit.html_url, 'a note')
  expect((await s.post('/repos/alice/proj/branches', { new_branch_name: 'feature/x', old_branch_name: main }, asAlice)).status).toBe(201)
  const branch = (await s.get('/repos/alice/proj/branches/feature%2Fx', asAlice)).body
  expectUrl('branch head commit', branch.commit.url, 'a note')
  const tag = await s.post('/repos/alice/proj/tags', { tag_name: 'v1.0', target: main, message: 'first' }, asAlice)
  expect(tag.status).toBe(201)
  expected.push({ what: 'tag zipball', url: tag.body.zipball_url, shows: [], download: true }, { what: 'tag tarball', url: tag.body.tarball_url, shows: [], download: true })
  const atTag = (await s.get('/repos/alice/proj/contents/docs/notes.txt?ref=v1.0', asAlice)).body
  expectUrl('contents at a tag', atTag.html_url, 'a note')
  const release = await s.post('/repos/alice/proj/releases', { tag_name: 'v1.0', name: 'First release', body: 'Release notes here' }, asAlice)
  expect(release.status).toBe(201)
  expectUrl('release', release.body.html_url, 'First release', 'Release notes here')

  // The issue tracker: an issue, its comment, a pull request, its files, a review and its line comment.
  const issue = await s.post('/repos/alice/proj/issues', { title: 'Broken thing', body: 'It is broken' }, asBob)
  expect(issue.status).toBe(201)
  expectUrl('issue', issue.body.html_url, 'Broken thing', 'It is broken')
  const comment = await s.post(`/repos/alice/proj/issues/${issue.body.number}/comments`, { body: 'Confirmed here' }, asBob)
  expect(comment.status).toBe(201)
  expectUrl('issue comment', comment.body.html_url, 'Confirmed here')
  expectUrl("issue comment's issue", comment.body.issue_url, 'Broken thing')
  const change = await s.post('/repos/alice/proj/contents', { branch: 'feature/x', message: 'change', files: [{ operation: 'create', path: 'new.txt', content: b64('one\ntwo\n') }] }, asAlice)
  expect(change.status).toBe(201)
  const pull = await s.post('/repos/alice/proj/pulls', { head: 'feature/x', base: main, title: 'Add new.txt', body: 'Please merge' }, asAlice)
  expect(pull.status).toBe(201)
  expectUrl('pull request', pull.body.html_url, 'Add new.txt', 'Please merge')
  const asIssue = (await s.get(`/repos/alice/proj/issues/${pull.body.number}`, asAlice)).body
  expectUrl('pull request as an issue', asIssue.html_url, 'Add new.txt')
  expectUrl("issue's pull_request.html_url", asIssue.pull_request.html_url, 'Add new.txt')
  const pullComment = await s.post(`/repos/alice/proj/issues/${pull.body.number}/comments`, { body: 'A word on the pull' }, asBob)
  expectUrl('pull request comment', pullComment.body.html_url, 'A word on the pull')
  expectUrl("pull request comment's pull_request_url", pullComment.body.pull_request_url, 'Add new.txt')
  const changed = (await s.get(`/repos/alice/proj/pulls/${pull.body.number}/files`, asAlice)).body
  expectUrl('changed file', changed[0].html_url, 'two')
  const review = await s.post(`/repos/alice/proj/pulls/${pull.body.number}/reviews`, { event: 'COMMENT', body: 'Some thoughts', comments: [{ path: 'new.txt', new_position: 2, body: 'Why two?' }] }, asBob)
  expect(review.status).toBe(200)
  expectUrl('review', review.body.html_url, 'Some thoughts')
  expectUrl("review's pull request", review.body.pull_request_url, 'Add new.txt')
  const lineComments = (await s.get(`/repos/alice/proj/pulls/${pull.body.number}/reviews/${review.body.id}/comments`, asAlice)).body
  expectUrl('review line comment', lineComments[0].html_url, 'Why two?')

  // A long conversation: its last comment is on the second page of comments.
  const talk = await s.post('/repos/alice/proj/issues', { title: 'Long talk' }, asAlice)
  for (let i = 1; i <= 52; i++) {
    const said = await s.post(`/repos/alice/proj/issues/${talk.body.number}/comments`, { body: `Remark number ${i}` }, asAlice)
    expect(said.status).toBe(201)
    lastRemark = said.body.html_url
  }

  // A long pull request conversation: its review and the review's line comment come after the first page of comments.
  expect((await s.post('/repos/alice/proj/branches', { new_branch_name: 'feature/y', old_branch_name: main }, asAlice)).status).toBe(201)
  const yChange = await s.post('/repos/alice/proj/contents', { branch: 'feature/y', message: 'why', files: [{ operation: 'create', path: 'y.txt', content: b64('y\nz\n') }] }, asAlice)
  expect(yChange.status).toBe(201)
  const longPull = await s.post('/repos/alice/proj/pulls', { head: 'feature/y', base: main, title: 'Add y.txt' }, asAlice)
  expect(longPull.status).toBe(201)
  for (let i = 1; i <= 51; i++) expect((await s.post(`/repos/alice/proj/issues/${longPull.body.number}/comments`, { body: `Pull remark ${i}` }, asAlice)).status).toBe(201)
  const lateReview = await s.post(`/repos/alice/proj/pulls/${longPull.body.number}/reviews`, { event: 'COMMENT', body: 'A late review', comments: [{ path: 'y.txt', new_position: 2, body: 'Why z?' }] }, asBob)
  expect(lateReview.status).toBe(200)
  lateReviewUrl = lateReview.body.html_url
  lateLineUrl = (await s.get(`/repos/alice/proj/pulls/${longPull.body.number}/reviews/${lateReview.body.id}/comments`, asAlice)).body[0].html_url

  // Packages: a version's page, the owner's and an organisation's, and the repository a package is linked to.
  for (const [owner, name, version] of [['alice', 'tool', '1.0 beta'], ['acme', 'Widget', '2.0']] as const) {
    const put = await fetch(`${s.url}/api/packages/${owner}/generic/${name}/${encodeURIComponent(version)}/file.bin`, { method: 'PUT', headers: { authorization: `token ${alice.token}` }, body: 'bytes' })
    expect(put.status).toBe(201)
  }
  const pkg = (await s.get('/packages/alice/generic/tool/1.0%20beta', asAlice)).body
  await setPackageRepository(s.deps, alice.user, await getPackage(s.deps, alice.user.id, 'generic', 'tool'), repo.body.id)
  const linked = (await s.get('/packages/alice/generic/tool/1.0%20beta', asAlice)).body
  expectUrl('package version', pkg.html_url, 'tool (1.0 beta)', 'file.bin')
  expectUrl('package repository', linked.repository.html_url, 'The project')
  expectUrl('organisation package version', (await s.get('/packages/acme', asAlice)).body[0].html_url, 'Widget (2.0)')

  // A notification of bob's comment: its subject and latest comment.
  while ((await notifyRound(s.deps)) > 0) {}
  const threads = (await s.get('/notifications?all=true', asAlice)).body
  const thread = threads.find((t: any) => t.subject.title === 'Broken thing')
  expect(thread).toBeTruthy()
  expectUrl('notification subject', thread.subject.html_url, 'Broken thing')
  expectUrl('notification latest comment', thread.subject.latest_comment_html_url, 'Confirmed here')

  // The push payload of the contents API's first write: its repository, sender, commits, compare.
  const push = await until(() => receiver.received.find((r) => r.payload?.head_commit?.message?.startsWith('guide')), 'the push delivery')
  expectUrl('push payload repository', push.payload.repository.html_url, 'The project')
  expectUrl('push payload sender', push.payload.sender.html_url, 'alice')
  expectUrl('push payload head commit', push.payload.head_commit.url, 'guide')
  for (const c of push.payload.commits) expectUrl('push payload commit', c.url, 'guide')
  expectUrl('push payload compare', push.payload.compare_url, 'the guide.md')
}, 240_000)
afterAll(async () => {
  await worker?.stop()
  receiver?.stop()
  await s?.stop()
})

/** The text of a page, its markup gone and its entities read. */
const textOf = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')

/** What is wrong with one URL's page, if anything. */
async function problemOf(e: Expected): Promise<string | null> {
  if (!URL.canParse(e.url)) return `${e.what}: "${e.url}" is not a URL`
  const url = new URL(e.url)
  if (url.origin !== new URL(s.url).origin) return `${e.what}: ${e.url} is not on this site`
  const res = await fetch(url.origin + url.pathname + url.search, { headers: { accept: 'text/html', cookie } })
  const type = res.headers.get('content-type') ?? ''
  if (res.status !== 200) return `${e.what}: ${e.url} answered ${res.status}`
  if (e.download) {
    await res.arrayBuffer()
    return type.includes('text/html') ? `${e.what}: ${e.url} is a page, not a download` : null
  }
  if (!type.includes('text/html')) return `${e.what}: ${e.url} answered ${type}`
  const html = await res.text()
  const text = textOf(html)
  for (const shown of e.shows) if (!text.includes(shown)) return `${e.what}: ${e.url} does not show "${shown}"`
  if (url.hash && !html.includes(`id="${url.hash.slice(1)}"`)) return `${e.what}: ${e.url} has no element ${url.hash}`
  return null
}

test('every html_url the API handed out answers 200 HTML with its record, and its anchor', async () => {
  expect(expected.length).toBeGreaterThan(35)
  const problems: string[] = []
  for (const e of expected) {
    const problem = await problemOf(e)
    if (problem) problems.push(problem)
  }
  expect(problems).toEqual([])
})

test('the anchors are Gitea forms: #issuecomment-N for comments and line comments, #pullrequestreview-N for reviews', () => {
  const anchors = expected.filter((e) => URL.canParse(e.url)).map((e) => new URL(e.url).hash).filter(Boolean)
  expect(anchors.some((a) => /^#pullrequestreview-\d+$/.test(a))).toBe(true)
  expect(anchors.filter((a) => /^#issuecomment-\d+$/.test(a)).length).toBeGreaterThanOrEqual(3)
  expect(anchors.every((a) => /^#(issuecomment|pullrequestreview)-\d+$/.test(a))).toBe(true)
})

test('in a browser, a URL with an anchor opens on its record (the :target), signed in by the session cookie', async () => {
  const browser = await launchChromium()
  try {
    const context = await browser.newContext()
    const [name, value] = cookie.split('=') as [string, string]
    await context.addCookies([{ name, value, url: s.url }])
    const page = await context.newPage()
    const anchored = expected.filter((e) => URL.canParse(e.url) && new URL(e.url).hash)
    expect(anchored.length).toBeGreaterThanOrEqual(4)
    for (const e of anchored) {
      // From elsewhere: a URL differing only in its anchor would not load the page again.
      await page.goto('about:blank')
      const res = await page.goto(e.url)
      expect(res?.status()).toBe(200)
      const target = page.locator(':target')
      expect(await target.count()).toBe(1)
      expect(await target.getAttribute('id')).toBe(new URL(e.url).hash.slice(1))
      expect(await target.isVisible()).toBe(true)
      for (const shown of e.shows) expect(await target.textContent()).toContain(shown)
    }
    // A comment on the second page of its conversation: the script asks for that page.
    await page.goto('about:blank')
    await page.goto(lastRemark)
    await page.waitForURL(/\?comment=\d+#issuecomment-\d+$/)
    expect(await page.locator(':target').getAttribute('id')).toBe(new URL(lastRemark).hash.slice(1))
    expect(await page.locator(':target').textContent()).toContain('Remark number 52')
    // A review beyond the first page: the script asks for the page holding it.
    await page.goto('about:blank')
    await page.goto(lateReviewUrl)
    await page.waitForURL(/\?review=\d+#pullrequestreview-\d+$/)
    expect(await page.locator(':target').getAttribute('id')).toBe(new URL(lateReviewUrl).hash.slice(1))
    expect(await page.locator(':target').textContent()).toContain('A late review')
    // Its line comment is on the files page, under its line, however long the conversation.
    await page.goto('about:blank')
    expect((await page.goto(lateLineUrl))?.status()).toBe(200)
    expect(await page.locator(':target').getAttribute('id')).toBe(new URL(lateLineUrl).hash.slice(1))
    expect(await page.locator(':target').textContent()).toContain('Why z?')
    // A page without an anchor: the repository's home, its record's description shown.
    const home = expected.find((e) => e.what === 'repository')!
    expect((await page.goto(home.url))?.status()).toBe(200)
    expect(await page.locator('body').textContent()).toContain('The project')
  } finally {
    await browser.close()
  }
}, 240_000)

test("a comment beyond the first page: its page loads the script, and ?comment=N (the script's request) answers the page holding it", async () => {
  const url = new URL(lastRemark)
  const first = await (await fetch(url.origin + url.pathname, { headers: { accept: 'text/html', cookie } })).text()
  expect(first).not.toContain(`id="${url.hash.slice(1)}"`)
  expect(first).toMatch(/<script src="\/assets\/[^"]+\.js" defer><\/script>/)
  const held = await (await fetch(`${url.origin}${url.pathname}?comment=${url.hash.slice('#issuecomment-'.length)}`, { headers: { accept: 'text/html', cookie } })).text()
  expect(held).toContain(`id="${url.hash.slice(1)}"`)
  expect(held).toContain('Remark number 52')
  expect(held).toContain('Page 2 of 2')
  // A number that is no comment of this issue: the first page.
  expect(await (await fetch(`${url.origin}${url.pathname}?comment=999999`, { headers: { accept: 'text/html', cookie } })).text()).toContain('Remark number 1<')
})

test('a review beyond the first page: ?review=N answers the page holding it (and ?comment=N of its line comment, in the conversation too)', async () => {
  const lineId = new URL(lateLineUrl).hash.slice('#issuecomment-'.length)
  const conversation = new URL(lateReviewUrl)
  for (const [late, query, shown] of [[lateReviewUrl, 'review', 'A late review'], [`${conversation.origin}${conversation.pathname}#issuecomment-${lineId}`, 'comment', 'Why z?']] as const) {
    const url = new URL(late)
    const anchor = url.hash.slice(1)
    expect(await (await fetch(url.origin + url.pathname, { headers: { accept: 'text/html', cookie } })).text()).not.toContain(`id="${anchor}"`)
    const held = await (await fetch(`${url.origin}${url.pathname}?${query}=${anchor.replace(/^\D+/, '')}`, { headers: { accept: 'text/html', cookie } })).text()
    expect(held).toContain(`id="${anchor}"`)
    expect(held).toContain(shown)
    expect(held).toContain('Page 2 of 2')
  }
})
