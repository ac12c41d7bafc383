import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { signInByForm } from './web-session'
import { issues } from '../src/db/schema'
import { notifyRound } from '../src/notify/consumer'
import { startPullChecker } from '../src/jobs/pull-checker'
import { until } from './webhook-receiver'
import { contentMark } from './db-snapshot'
import { events } from '../src/db/schema'
import { and } from 'drizzle-orm'
import { renderingsKept as renderedTextsHeld } from '../src/modules/markdown/service'

/**
 * The issue tracker's pages over plain HTTP: lists and their filters, an issue's and a pull
 * request's conversation, the forms (CSRF, refusals), the merge box, notifications; access rules
 * (a private repository is a 404 to anonymous visitors and strangers) and hostile text rendered
 * inert.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, stranger: TestUser
let cookies: Record<string, string> = {}
const b64 = (text: string) => Buffer.from(text).toString('base64')
const HOSTILE = [
  '# Heading',
  '<script>alert(1)</script>',
  '<img src=x onerror="alert(2)">',
  '[click](javascript:alert(3))',
  '<svg onload="alert(4)"><script>alert(5)</script></svg>',
  '<a href="javascript:alert(6)">x</a>',
  '<iframe src="https://example.com"></iframe>',
].join('\n\n')
let prIndex = 0
/** The limit of the tests that write much (the machine may be very busy: it catches a hang, it times nothing). */
const LIMIT_MS = 480_000
let labelId = 0

const page = (path: string, who?: string, init: RequestInit = {}) =>
  fetch(s.url + path, { ...init, headers: { accept: 'text/html', ...(who ? { cookie: cookies[who]! } : {}), ...(init.headers ?? {}) }, redirect: 'manual' })

const signIn = (user: TestUser): Promise<string> => signInByForm(s.url, user)

/** The CSRF token of a signed-in user's pages. */
async function csrfOf(who: string, path: string): Promise<string> {
  const text = await (await page(path, who)).text()
  return /name="_csrf" value="([0-9a-f]+)"/.exec(text)![1]!
}

/** Posts a form as `who`. */
const postForm = (path: string, who: string | undefined, fields: Record<string, string>) =>
  page(path, who, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) })

/** Text of a page with its markup gone (for what a reader sees). */
const textOf = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ')

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  stranger = await s.user('stranger')
  const token = { token: alice.token }
  for (const [name, priv] of [['pub', false], ['secret', true], ['old', false]] as const)
    expect((await s.post('/user/repos', { name, auto_init: true, private: priv }, token)).status).toBe(201)
  expect((await s.put('/repos/alice/pub/collaborators/bob', { permission: 'write' }, token)).status).toBe(204)
  labelId = (await s.post('/repos/alice/pub/labels', { name: 'bug', color: '#ee0701' }, token)).body.id
  const milestone = (await s.post('/repos/alice/pub/milestones', { title: 'v1' }, token)).body.id
  expect((await s.post('/repos/alice/pub/issues', { title: 'Hostile <b>title</b>', body: HOSTILE }, token)).status).toBe(201)
  // Changes after filing are the timeline's events.
  expect((await s.post('/repos/alice/pub/issues/1/labels', { labels: [labelId] }, token)).status).toBe(200)
  expect((await s.patch('/repos/alice/pub/issues/1', { milestone, assignees: ['bob'] }, token)).status).toBe(201)
  expect((await s.post('/repos/alice/pub/issues/1/comments', { body: HOSTILE }, token)).status).toBe(201)
  expect((await s.patch('/repos/alice/pub/issues/1', { state: 'closed' }, token)).status).toBe(201)
  expect((await s.patch('/repos/alice/pub/issues/1', { state: 'open' }, token)).status).toBe(201)
  expect((await s.post('/repos/alice/pub/issues', { title: 'Plain second issue', body: 'hello @bob' }, token)).status).toBe(201)
  // A pull request: a branch with one change.
  expect((await s.post('/repos/alice/pub/branches', { new_branch_name: 'feature', old_branch_name: 'main' }, token)).status).toBe(201)
  const files = [{ operation: 'create', path: 'feature.txt', content: b64('one\ntwo\n') }]
  expect((await s.post('/repos/alice/pub/contents', { branch: 'feature', files, message: 'feature' }, token)).status).toBe(201)
  const pr = await s.post('/repos/alice/pub/pulls', { head: 'feature', base: 'main', title: 'Add the feature', body: 'Please **merge**' }, token)
  expect(pr.status).toBe(201)
  prIndex = pr.body.number
  expect((await s.post('/repos/alice/secret/issues', { title: 'Secret issue' }, token)).status).toBe(201)
  expect((await s.post('/repos/alice/old/issues', { title: 'Old issue' }, token)).status).toBe(201)
  for (const u of [alice, bob, stranger]) cookies[u.name] = await signIn(u)
}, LIMIT_MS)
afterAll(() => s.stop())

describe('lists', () => {
  test('issues and pull requests: rows with labels, author, counts; open and closed tabs', async () => {
    const res = await page('/alice/pub/issues')
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('href="/alice/pub/issues/1"')
    expect(html).toContain('Hostile &lt;b&gt;title&lt;/b&gt;')
    expect(html).toContain('href="/alice/pub/issues/2"')
    expect(html).not.toContain(`href="/alice/pub/issues/${prIndex}"`)
    expect(textOf(html)).toContain('2 Open')
    expect(textOf(html)).toContain('0 Closed')
    expect(html).toContain('bug')
    const pulls = await (await page('/alice/pub/pulls')).text()
    expect(pulls).toContain(`href="/alice/pub/pulls/${prIndex}"`)
    expect(pulls).toContain('Add the feature')
    expect(pulls).not.toContain('href="/alice/pub/issues/1"')
  })

  test('filters: label, milestone, poster, assignee, keyword, state; an unknown person says so', async () => {
    const only = async (query: string) => {
      const html = await (await page(`/alice/pub/issues?${query}`)).text()
      return [1, 2].filter((n) => html.includes(`href="/alice/pub/issues/${n}"`))
    }
    expect(await only(`labels=${labelId}`)).toEqual([1])
    expect(await only('milestone=v1')).toEqual([1])
    expect(await only('assignee=bob')).toEqual([1])
    expect(await only('poster=alice')).toEqual([1, 2])
    expect(await only('q=second')).toEqual([2])
    expect(await only('state=closed')).toEqual([])
    expect(await only('state=all')).toEqual([1, 2])
    const unknown = await page('/alice/pub/issues?poster=nobody-here')
    expect(unknown.status).toBe(200)
    expect(await unknown.text()).toContain('No such user')
    // Bad values are bounded, never a 500.
    expect((await page('/alice/pub/issues?page=abc&state=weird&labels=x,y')).status).toBe(200)
    expect((await page(`/alice/pub/issues?q=${'x'.repeat(300)}`)).status).toBe(422)
  })

  test('paging: page links past 20 rows', async () => {
    for (let i = 0; i < 21; i++) expect((await s.post('/repos/alice/old/issues', { title: `Filler ${i}` }, { token: alice.token })).status).toBe(201)
    const first = await (await page('/alice/old/issues')).text()
    expect(first).toContain('href="/alice/old/issues?state=open&amp;page=2"')
    const second = await (await page('/alice/old/issues?page=2')).text()
    expect(second).toContain('href="/alice/old/issues/1"')
    expect(second).not.toContain('href="/alice/old/issues/22"')
  }, LIMIT_MS)
})

describe('access', () => {
  test('a private repository: 404 pages to anonymous visitors and strangers, its pages to its owner', async () => {
    for (const path of ['/alice/secret/issues', '/alice/secret/pulls', '/alice/secret/issues/1', '/alice/secret/issues/new']) {
      for (const who of [undefined, 'stranger']) {
        const res = await page(path, who)
        expect([path, who, res.status]).toEqual([path, who, 404])
        expect(await res.text()).toStartWith('<!doctype html>')
      }
      expect([path, (await page(path, 'alice')).status]).toEqual([path, 200])
    }
    // Its forms too: nothing is learned and nothing changes.
    const csrf = await csrfOf('stranger', '/alice/pub/issues/1')
    expect((await postForm('/alice/secret/issues/1/comments', 'stranger', { _csrf: csrf, content: 'hi' })).status).toBe(404)
    expect((await s.get('/repos/alice/secret/issues/1/comments', { token: alice.token })).body).toHaveLength(0)
  })

  test('unknown issues are 404 pages; a number of the other kind is sent to its page', async () => {
    expect((await page('/alice/pub/issues/999')).status).toBe(404)
    expect((await page('/alice/pub/issues/abc')).status).toBe(404)
    expect((await page('/alice/pub/pulls/999')).status).toBe(404)
    const toPull = await page(`/alice/pub/issues/${prIndex}`)
    expect([toPull.status, toPull.headers.get('location')]).toEqual([303, `/alice/pub/pulls/${prIndex}`])
    const toIssue = await page('/alice/pub/pulls/1')
    expect([toIssue.status, toIssue.headers.get('location')]).toEqual([303, '/alice/pub/issues/1'])
  })

  test('the new issue form: a sign-in redirect for anonymous visitors, the form (with labels for writers) once signed in', async () => {
    const anon = await page('/alice/pub/issues/new')
    expect(anon.status).toBe(303)
    expect(anon.headers.get('location')).toBe('/user/login?redirect_to=%2Falice%2Fpub%2Fissues%2Fnew')
    const writer = await (await page('/alice/pub/issues/new', 'bob')).text()
    expect(writer).toContain('name="label_ids"')
    const reader = await (await page('/alice/pub/issues/new', 'stranger')).text()
    expect(reader).toContain('name="title"')
    expect(reader).not.toContain('name="label_ids"')
  })
})

describe('an issue page', () => {
  test('title, state, body, comments, labels, milestone, assignees and the timeline events', async () => {
    const res = await page('/alice/pub/issues/1')
    expect(res.status).toBe(200)
    const html = await res.text()
    const text = textOf(html)
    expect(html).toContain('Hostile &lt;b&gt;title&lt;/b&gt;')
    expect(text).toContain('Open')
    expect(html).toMatch(/<div class="markdown"><h1[^>]*>Heading<\/h1>/)
    expect(text).toContain('bug')
    expect(text).toContain('v1')
    expect(text).toContain('alice closed this')
    expect(text).toContain('alice reopened this')
    expect(text).toContain('alice assigned bob')
    expect(text).toContain('added the bug label')
    expect(text).toContain('added this to the v1 milestone')
    expect(html).toContain('id="issuecomment-')
    // Anonymous visitors are asked to sign in, not shown the form.
    expect(html).not.toContain('name="content"')
    expect(html).toContain('href="/user/login?redirect_to=%2Falice%2Fpub%2Fissues%2F1"')
  })

  test('hostile body and comment: no script, no event handler, no javascript: link, no frame', async () => {
    const html = await (await page('/alice/pub/issues/1', 'alice')).text()
    // The edit forms hold the texts as written, escaped: inert text inside a textarea, left out of the checks below.
    const texts = [...html.matchAll(/<textarea[^>]*>([\s\S]*?)<\/textarea>/g)].map((m) => m[1]!)
    expect(texts.filter((t) => t.includes('&lt;script&gt;alert(1)&lt;/script&gt;'))).toHaveLength(2)
    expect(texts.join('')).not.toContain('<')
    const body = html.slice(html.indexOf('<main')).replace(/<textarea[^>]*>[\s\S]*?<\/textarea>/g, '<textarea></textarea>')
    expect(body).not.toMatch(/<script/i)
    expect(body).not.toMatch(/\son[a-z]+\s*=/i)
    expect(body).not.toMatch(/href\s*=\s*["']?\s*javascript:/i)
    expect(body).not.toMatch(/<iframe/i)
    expect(body).not.toMatch(/<svg[^>]*onload/i)
    // The page's own script policy holds whatever the text.
    expect((await page('/alice/pub/issues/1')).headers.get('content-security-policy')).toContain("script-src 'self'")
  })

  test('an issue with many comments: 50 a page, with links to the others', async () => {
    const created = await s.post('/repos/alice/old/issues', { title: 'Busy' }, { token: alice.token })
    const n = created.body.number
    for (let i = 0; i < 120; i++) expect((await s.post(`/repos/alice/old/issues/${n}/comments`, { body: `comment number ${i}` }, { token: alice.token })).status).toBe(201)
    const first = await (await page(`/alice/old/issues/${n}`)).text()
    expect(first.match(/<article class="comment" id="issuecomment-/g)).toHaveLength(50)
    expect(first).toContain('comment number 0<')
    expect(first).not.toContain('comment number 50<')
    expect(first).toContain(`href="/alice/old/issues/${n}?page=3"`)
    const last = await (await page(`/alice/old/issues/${n}?page=3`)).text()
    expect(last.match(/<article class="comment" id="issuecomment-/g)).toHaveLength(20)
    expect(last).toContain('comment number 119<')
    expect((await page(`/alice/old/issues/${n}?page=99999999999`)).status).toBe(200)
  }, LIMIT_MS)
})

describe('forms', () => {
  test('a comment without its CSRF token (or with another session\'s) is refused with a 403 page; nothing changes', async () => {
    const before = (await s.get('/repos/alice/pub/issues/2/comments', { token: alice.token })).body.length
    const none = await postForm('/alice/pub/issues/2/comments', 'alice', { content: 'sneaky' })
    expect(none.status).toBe(403)
    expect(await none.text()).toContain('The form has expired')
    const other = await csrfOf('bob', '/alice/pub/issues/2')
    expect((await postForm('/alice/pub/issues/2/comments', 'alice', { _csrf: other, content: 'sneaky', status: 'close' })).status).toBe(403)
    expect((await s.get('/repos/alice/pub/issues/2/comments', { token: alice.token })).body.length).toBe(before)
    expect((await s.get('/repos/alice/pub/issues/2', { token: alice.token })).body.state).toBe('open')
    // Anonymous: a sign-in page answer, nothing written.
    expect((await postForm('/alice/pub/issues/2/comments', undefined, { content: 'anon' })).status).toBe(401)
  })

  test('comment, comment and close, reopen: each through the services, seen through the API', async () => {
    const csrf = await csrfOf('bob', '/alice/pub/issues/2')
    const res = await postForm('/alice/pub/issues/2/comments', 'bob', { _csrf: csrf, content: 'From the **web**' })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toMatch(/^\/alice\/pub\/issues\/2\?page=1#issuecomment-\d+$/)
    const listed = (await s.get('/repos/alice/pub/issues/2/comments', { token: alice.token })).body
    expect(listed.at(-1).body).toBe('From the **web**')
    expect(listed.at(-1).user.login).toBe('bob')
    const closed = await postForm('/alice/pub/issues/2/comments', 'bob', { _csrf: csrf, content: 'Closing', status: 'close' })
    expect(closed.status).toBe(303)
    expect((await s.get('/repos/alice/pub/issues/2', { token: alice.token })).body.state).toBe('closed')
    const reopened = await postForm('/alice/pub/issues/2/comments', 'bob', { _csrf: csrf, content: '', status: 'reopen' })
    expect(reopened.status).toBe(303)
    expect(reopened.headers.get('location')).toBe('/alice/pub/issues/2')
    expect((await s.get('/repos/alice/pub/issues/2', { token: alice.token })).body.state).toBe('open')
    const html = await (await page('/alice/pub/issues/2', 'bob')).text()
    expect(html).toContain('<strong>web</strong>')
    expect(textOf(html)).toContain('bob closed this')
    expect(textOf(html)).toContain('bob reopened this')
  })

  test('a new issue through the form: labels, milestone and assignees for a writer', async () => {
    const csrf = await csrfOf('bob', '/alice/pub/issues/new')
    const res = await postForm('/alice/pub/issues/new', 'bob', { _csrf: csrf, title: 'Filed from the web', content: 'Body *here*', label_ids: String(labelId), assignees: 'alice' })
    expect(res.status).toBe(303)
    const index = Number(/\/issues\/(\d+)$/.exec(res.headers.get('location')!)![1])
    const issue = (await s.get(`/repos/alice/pub/issues/${index}`, { token: alice.token })).body
    expect([issue.title, issue.body, issue.user.login, issue.labels.map((l: any) => l.name), issue.assignees.map((a: any) => a.login)]).toEqual([
      'Filed from the web',
      'Body *here*',
      'bob',
      ['bug'],
      ['alice'],
    ])
    // A missing title is refused with a message, and nothing is filed.
    const empty = await postForm('/alice/pub/issues/new', 'bob', { _csrf: csrf, title: '  ' })
    expect(empty.status).toBe(422)
    expect(await empty.text()).toContain('Title')
  })

  test('refusals say why: a locked issue to a non-writer, a stranger closing, an archived repository', async () => {
    await s.deps.db.update(issues).set({ isLocked: true }).where(eq(issues.title, 'Plain second issue'))
    const csrf = await csrfOf('stranger', '/alice/pub/issues/2')
    expect(await (await page('/alice/pub/issues/2', 'stranger')).text()).toContain('This conversation is locked')
    const locked = await postForm('/alice/pub/issues/2/comments', 'stranger', { _csrf: csrf, content: 'let me in' })
    expect(locked.status).toBe(403)
    expect(await locked.text()).toContain('The issue is locked')
    await s.deps.db.update(issues).set({ isLocked: false }).where(eq(issues.title, 'Plain second issue'))
    const close = await postForm('/alice/pub/issues/2/comments', 'stranger', { _csrf: csrf, content: '', status: 'close' })
    expect(close.status).toBe(403)
    expect(await close.text()).toContain('Only the poster or a writer')
    expect((await s.get('/repos/alice/pub/issues/2', { token: alice.token })).body.state).toBe('open')
    expect((await s.patch('/repos/alice/old', { archived: true }, { token: alice.token })).status).toBe(200)
    try {
      const archived = await postForm('/alice/old/issues/1/comments', 'alice', { _csrf: await csrfOf('alice', '/alice/old/issues/1'), content: 'x' })
      expect(archived.status).toBe(423)
      expect(await archived.text()).toContain('archived')
      expect(await (await page('/alice/old/issues/1', 'alice')).text()).toContain('This repository is archived')
    } finally {
      expect((await s.patch('/repos/alice/old', { archived: false }, { token: alice.token })).status).toBe(200)
    }
  })
})

describe('editing a conversation', () => {
  /** The kinds of the outbox's events of an issue by an actor, in order. */
  const eventsOf = async (issueId: number, actorId: number) =>
    (await s.deps.db.select({ kind: events.kind }).from(events).where(and(eq(events.issueId, issueId), eq(events.actorId, actorId))).orderBy(events.id)).map((e) => e.kind)

  test('title, text and comments: the poster and writers edit, others are refused and change nothing; the API sees each change', async () => {
    const filed = await s.post('/repos/alice/pub/issues', { title: 'Stranger files', body: 'first text' }, { token: stranger.token })
    expect(filed.status).toBe(201)
    const n = filed.body.number
    const path = `/alice/pub/issues/${n}`
    // The forms are shown to those who may use them: the poster edits but does not lock; a writer does both; anonymous visitors neither.
    const own = await (await page(path, 'stranger')).text()
    expect(own).toContain(`action="${path}/title"`)
    expect(own).toContain(`action="${path}/content"`)
    expect(own).not.toContain(`action="${path}/lock"`)
    expect(await (await page(path, 'bob')).text()).toContain(`action="${path}/lock"`)
    expect(await (await page(path)).text()).not.toContain(`action="${path}/title"`)
    expect(await (await page('/alice/pub/issues/2', 'stranger')).text()).not.toContain('action="/alice/pub/issues/2/title"')

    const csrf = await csrfOf('stranger', path)
    const title = await postForm(`${path}/title`, 'stranger', { _csrf: csrf, title: '  Stranger renames  ' })
    expect([title.status, title.headers.get('location')]).toEqual([303, path])
    const content = await postForm(`${path}/content`, 'stranger', { _csrf: csrf, content: 'second\r\ntext' })
    expect(content.status).toBe(303)
    let issue = (await s.get(`/repos/alice/pub/issues/${n}`, { token: alice.token })).body
    expect([issue.title, issue.body]).toEqual(['Stranger renames', 'second\ntext'])
    expect(await eventsOf(issue.id, stranger.user.id)).toEqual(['issue.opened', 'issue.edited', 'issue.edited'])
    const bobCsrf = await csrfOf('bob', path)
    expect((await postForm(`${path}/title`, 'bob', { _csrf: bobCsrf, title: 'A writer renames' })).status).toBe(303)
    expect((await s.get(`/repos/alice/pub/issues/${n}`, { token: alice.token })).body.title).toBe('A writer renames')
    expect(textOf(await (await page(path)).text())).toContain('bob changed the title from Stranger renames')

    // Refused: another reader's issue, an empty title; nothing changes.
    const mark = contentMark(s.deps.db)
    let before = await mark()
    const other = await postForm('/alice/pub/issues/2/title', 'stranger', { _csrf: csrf, title: 'Taken over' })
    expect(other.status).toBe(403)
    expect(await other.text()).toContain('Only the poster or a writer')
    expect((await postForm('/alice/pub/issues/2/content', 'stranger', { _csrf: csrf, content: 'x' })).status).toBe(403)
    const empty = await postForm(`${path}/title`, 'bob', { _csrf: bobCsrf, title: '   ' })
    expect(empty.status).toBe(422)
    expect(await empty.text()).toContain('The title must not be empty')
    // An issue's number under /pulls (and a pull request's under /issues) is no such thing.
    expect((await postForm(`/alice/pub/pulls/${n}/title`, 'bob', { _csrf: bobCsrf, title: 'x' })).status).toBe(404)
    expect(await mark()).toBe(before)

    // Comments: their author, or a repository administrator (the API's rule).
    const bobSays = (await s.post(`/repos/alice/pub/issues/${n}/comments`, { body: 'bob says' }, { token: bob.token })).body
    const strangerSays = (await s.post(`/repos/alice/pub/issues/${n}/comments`, { body: 'stranger says' }, { token: stranger.token })).body
    const seen = await (await page(path, 'stranger')).text()
    expect(seen).toContain(`action="/alice/pub/comments/${strangerSays.id}"`)
    expect(seen).not.toContain(`action="/alice/pub/comments/${bobSays.id}"`)
    before = await mark()
    const refused = await postForm(`/alice/pub/comments/${bobSays.id}`, 'stranger', { _csrf: csrf, content: 'rewritten' })
    expect(refused.status).toBe(403)
    expect(await refused.text()).toContain('Only the author or a repository admin')
    expect((await postForm(`/alice/pub/comments/${bobSays.id}/delete`, 'stranger', { _csrf: csrf })).status).toBe(403)
    expect((await postForm('/alice/pub/comments/99999999/delete', 'stranger', { _csrf: csrf })).status).toBe(404)
    expect(await mark()).toBe(before)
    const edited = await postForm(`/alice/pub/comments/${bobSays.id}`, 'bob', { _csrf: bobCsrf, content: 'bob says **more**' })
    expect([edited.status, edited.headers.get('location')]).toEqual([303, `${path}?comment=${bobSays.id}#issuecomment-${bobSays.id}`])
    const aliceCsrf = await csrfOf('alice', path)
    expect((await postForm(`/alice/pub/comments/${strangerSays.id}`, 'alice', { _csrf: aliceCsrf, content: 'moderated' })).status).toBe(303)
    const deleted = await postForm(`/alice/pub/comments/${bobSays.id}/delete`, 'bob', { _csrf: bobCsrf })
    expect([deleted.status, deleted.headers.get('location')]).toEqual([303, path])
    const listed = (await s.get(`/repos/alice/pub/issues/${n}/comments`, { token: alice.token })).body
    expect(listed.map((c: any) => [c.id, c.body])).toEqual([[strangerSays.id, 'moderated']])
    const bobKinds = await eventsOf(issue.id, bob.user.id)
    expect(bobKinds).toEqual(['issue.edited', 'comment.created', 'comment.edited', 'comment.deleted'])

    // Without the CSRF token (or with a wrong one), every form is a 403 page and changes nothing.
    before = await mark()
    for (const [route, fields] of [
      [`${path}/title`, { title: 'csrf' }],
      [`${path}/content`, { content: 'csrf' }],
      [`${path}/lock`, { reason: '' }],
      [`/alice/pub/comments/${strangerSays.id}`, { content: 'csrf' }],
      [`/alice/pub/comments/${strangerSays.id}/delete`, {}],
    ] as const) {
      for (const token of [undefined, 'f'.repeat(64)]) {
        const res = await postForm(route, 'alice', { ...(token ? { _csrf: token } : {}), ...fields })
        expect([route, res.status]).toEqual([route, 403])
        expect(await res.text()).toContain('The form has expired')
      }
    }
    expect(await mark()).toBe(before)
    issue = (await s.get(`/repos/alice/pub/issues/${n}`, { token: alice.token })).body
    expect([issue.title, issue.is_locked]).toEqual(['A writer renames', false])
  }, LIMIT_MS)

  test('lock and unlock: writers only, with a reason; a locked conversation refuses readers; the API sees it', async () => {
    const n = (await s.post('/repos/alice/pub/issues', { title: 'Heated' }, { token: stranger.token })).body.number
    const path = `/alice/pub/issues/${n}`
    const mark = contentMark(s.deps.db)
    const csrf = await csrfOf('stranger', path)
    let before = await mark()
    const poster = await postForm(`${path}/lock`, 'stranger', { _csrf: csrf, reason: 'Resolved' })
    expect(poster.status).toBe(403)
    expect(await poster.text()).toContain('Only collaborators with write access')
    const bobCsrf = await csrfOf('bob', path)
    const unknown = await postForm(`${path}/lock`, 'bob', { _csrf: bobCsrf, reason: 'Because' })
    expect(unknown.status).toBe(400)
    expect(await unknown.text()).toContain('Unknown lock reason')
    expect((await postForm(`${path}/unlock`, 'bob', { _csrf: bobCsrf })).status).toBe(400)
    expect(await mark()).toBe(before)
    const locked = await postForm(`${path}/lock`, 'bob', { _csrf: bobCsrf, reason: 'Too heated' })
    expect([locked.status, locked.headers.get('location')]).toEqual([303, path])
    expect((await s.get(`/repos/alice/pub/issues/${n}`, { token: alice.token })).body.is_locked).toBe(true)
    const again = await postForm(`${path}/lock`, 'bob', { _csrf: bobCsrf, reason: '' })
    expect(again.status).toBe(400)
    expect(await again.text()).toContain('already locked')
    expect(textOf(await (await page(path)).text())).toContain('bob locked as Too heated and limited conversation to collaborators')
    expect(await (await page(path, 'stranger')).text()).toContain('This conversation is locked')
    expect((await postForm(`${path}/comments`, 'stranger', { _csrf: csrf, content: 'but' })).status).toBe(403)
    expect((await s.post(`/repos/alice/pub/issues/${n}/comments`, { body: 'calm down' }, { token: bob.token })).status).toBe(201)
    before = await mark()
    expect((await postForm(`${path}/unlock`, 'stranger', { _csrf: csrf })).status).toBe(403)
    expect(await mark()).toBe(before)
    expect((await postForm(`${path}/unlock`, 'bob', { _csrf: bobCsrf })).status).toBe(303)
    expect((await s.get(`/repos/alice/pub/issues/${n}`, { token: alice.token })).body.is_locked).toBe(false)
    const timeline = (await s.get(`/repos/alice/pub/issues/${n}/timeline`, { token: alice.token })).body
    expect(timeline.filter((e: any) => e.type === 'lock' || e.type === 'unlock').map((e: any) => [e.type, e.body, e.user.login])).toEqual([
      ['lock', 'Too heated', 'bob'],
      ['unlock', '', 'bob'],
    ])
    // A pull request locks and is renamed at its own address, through the pulls service.
    const prPath = `/alice/pub/pulls/${prIndex}`
    const prCsrf = await csrfOf('bob', prPath)
    expect(await (await page(prPath, 'bob')).text()).toContain(`action="${prPath}/lock"`)
    expect((await postForm(`${prPath}/lock`, 'bob', { _csrf: prCsrf, reason: 'Spam' })).status).toBe(303)
    expect((await postForm(`${prPath}/title`, 'bob', { _csrf: prCsrf, title: 'Add the feature, renamed' })).status).toBe(303)
    const pull = (await s.get(`/repos/alice/pub/pulls/${prIndex}`, { token: alice.token })).body
    expect([pull.title, pull.is_locked]).toEqual(['Add the feature, renamed', true])
    expect((await postForm(`${prPath}/unlock`, 'bob', { _csrf: prCsrf })).status).toBe(303)
    expect((await postForm(`${prPath}/title`, 'bob', { _csrf: prCsrf, title: 'Add the feature' })).status).toBe(303)
    expect((await postForm(`/alice/pub/issues/${prIndex}/title`, 'bob', { _csrf: prCsrf, title: 'x' })).status).toBe(404)
  }, LIMIT_MS)

  test('subscribe and unsubscribe: every signed-in reader, their own subscription (the API\'s check sees it); CSRF and a bad value refused; anonymous sent to sign in', async () => {
    const n = (await s.post('/repos/alice/pub/issues', { title: 'Follow me' }, { token: alice.token })).body.number
    const path = `/alice/pub/issues/${n}`
    const check = async (user: TestUser) => (await s.get(`/repos/alice/pub/issues/${n}/subscriptions/check`, { token: user.token })).body.subscribed
    expect(await check(stranger)).toBe(false)
    const html = await (await page(path, 'stranger')).text()
    expect(html).toContain(`action="${path}/watch"`)
    expect(html).toContain('name="watch" value="true"')
    const csrf = await csrfOf('stranger', path)
    const mark = contentMark(s.deps.db)
    const before = await mark()
    expect((await postForm(`${path}/watch`, 'stranger', { watch: 'true' })).status).toBe(403)
    expect((await postForm(`${path}/watch`, 'stranger', { _csrf: csrf, watch: 'maybe' })).status).toBe(400)
    expect((await postForm(`${path}/watch`, undefined, { _csrf: csrf, watch: 'true' })).status).toBe(401)
    expect(await mark()).toBe(before)
    const on = await postForm(`${path}/watch`, 'stranger', { _csrf: csrf, watch: 'true' })
    expect([on.status, on.headers.get('location')]).toEqual([303, path])
    expect(await check(stranger)).toBe(true)
    expect(await (await page(path, 'stranger')).text()).toContain('name="watch" value="false"')
    // The poster follows by default; unsubscribing silences them.
    expect(await check(alice)).toBe(true)
    expect((await postForm(`${path}/watch`, 'alice', { _csrf: await csrfOf('alice', path), watch: 'false' })).status).toBe(303)
    expect(await check(alice)).toBe(false)
    expect(await check(stranger)).toBe(true)
    // A pull request at its own address.
    const prPath = `/alice/pub/pulls/${prIndex}`
    expect((await postForm(`${prPath}/watch`, 'stranger', { _csrf: await csrfOf('stranger', prPath), watch: 'true' })).status).toBe(303)
    expect((await s.get(`/repos/alice/pub/issues/${prIndex}/subscriptions/check`, { token: stranger.token })).body.subscribed).toBe(true)
  }, LIMIT_MS)

  test('reactions: shown with their counts to everyone, given and taken back by a signed-in reader through the service (its allowed set); CSRF refused; the API sees them', async () => {
    const n = (await s.post('/repos/alice/pub/issues', { title: 'React to me' }, { token: alice.token })).body.number
    const comment = (await s.post(`/repos/alice/pub/issues/${n}/comments`, { body: 'and to me' }, { token: alice.token })).body
    const path = `/alice/pub/issues/${n}`
    const html = await (await page(path, 'stranger')).text()
    expect(html).toContain(`action="${path}/reactions/react"`)
    expect(html).toContain(`action="/alice/pub/comments/${comment.id}/reactions/react"`)
    const csrf = await csrfOf('stranger', path)
    const mark = contentMark(s.deps.db)
    const before = await mark()
    expect((await postForm(`${path}/reactions/react`, 'stranger', { content: 'heart' })).status).toBe(403)
    expect((await postForm(`${path}/reactions/react`, 'stranger', { _csrf: csrf, content: 'not-a-reaction' })).status).toBe(403)
    expect((await postForm(`${path}/reactions/shrug`, 'stranger', { _csrf: csrf, content: 'heart' })).status).toBe(400)
    expect((await postForm(`${path}/reactions/react`, undefined, { _csrf: csrf, content: 'heart' })).status).toBe(401)
    expect(await mark()).toBe(before)
    const given = await postForm(`${path}/reactions/react`, 'stranger', { _csrf: csrf, content: 'heart' })
    expect([given.status, given.headers.get('location')]).toEqual([303, path])
    expect((await postForm(`/alice/pub/comments/${comment.id}/reactions/react`, 'stranger', { _csrf: csrf, content: '+1' })).headers.get('location')).toBe(`${path}#issuecomment-${comment.id}`)
    expect((await postForm(`/alice/pub/comments/${comment.id}/reactions/react`, 'bob', { _csrf: await csrfOf('bob', path), content: '+1' })).status).toBe(303)
    const api = async () => ({
      issue: (await s.get(`/repos/alice/pub/issues/${n}/reactions`, { token: alice.token })).body.map((r: any) => [r.content, r.user.login]),
      comment: (await s.get(`/repos/alice/pub/issues/comments/${comment.id}/reactions`, { token: alice.token })).body.map((r: any) => [r.content, r.user.login]),
    })
    expect(await api()).toEqual({ issue: [['heart', 'stranger']], comment: [['+1', 'stranger'], ['+1', 'bob']] })
    // Counted on the page, the reader's own pressed; an anonymous visitor sees the counts only.
    const after = await (await page(path, 'stranger')).text()
    expect(after).toMatch(/aria-pressed="true"[^>]*>👍 2</)
    // Each count names who gave it (Gitea's tooltip), oldest first.
    expect(after).toContain('title="stranger, bob reacted with :+1:"')
    expect(after).toContain('title="stranger reacted with :heart:"')
    expect(after).toContain(`action="${path}/reactions/unreact"`)
    const anonymous = await (await page(path)).text()
    expect(anonymous).toContain('👍 2')
    expect(anonymous).toContain('title="stranger, bob reacted with :+1:"')
    expect(anonymous).not.toContain('/reactions/react"')
    expect((await postForm(`${path}/reactions/unreact`, 'stranger', { _csrf: csrf, content: 'heart' })).status).toBe(303)
    expect((await api()).issue).toEqual([])
  }, LIMIT_MS)

  test('reactions: at most 10 names a count, then "and N more" (one query for the page); refused with its message to one the poster or the owner blocked, nothing written', async () => {
    const n = (await s.post('/repos/alice/pub/issues', { title: 'Popular' }, { token: bob.token })).body.number
    const path = `/alice/pub/issues/${n}`
    const crowd: TestUser[] = []
    for (let i = 0; i < 12; i++) crowd.push(await s.user(`fan${i}`))
    for (const fan of crowd) expect((await s.post(`/repos/alice/pub/issues/${n}/reactions`, { content: 'rocket' }, { token: fan.token })).status).toBe(201)
    const names = crowd.slice(0, 10).map((u) => u.name).join(', ')
    expect(await (await page(path)).text()).toContain(`title="${names} and 2 more reacted with :rocket:"`)
    // The issue's poster (bob) blocks fan10, the owner (alice) fan11: the page's form answers the service's refusal.
    expect((await s.put('/user/blocks/fan10', undefined, { token: bob.token })).status).toBe(204)
    expect((await s.put('/user/blocks/fan11', undefined, { token: alice.token })).status).toBe(204)
    for (const fan of crowd.slice(10)) {
      cookies[fan.name] = await signIn(fan)
      const csrf = await csrfOf(fan.name, path)
      const mark = contentMark(s.deps.db)
      const before = await mark()
      const refused = await postForm(`${path}/reactions/react`, fan.name, { _csrf: csrf, content: 'heart' })
      expect(refused.status).toBe(403)
      expect(await refused.text()).toContain('user is blocked')
      expect(await mark()).toBe(before)
    }
  }, LIMIT_MS)

  test("a pull request's number at the issues addresses (one sequence of numbers): watch and react, back to the pull request's page; an issue's at the pulls ones", async () => {
    const prPath = `/alice/pub/pulls/${prIndex}`
    const csrf = await csrfOf('stranger', prPath)
    const watched = await postForm(`/alice/pub/issues/${prIndex}/watch`, 'stranger', { _csrf: csrf, watch: 'false' })
    expect([watched.status, watched.headers.get('location')]).toEqual([303, prPath])
    expect((await s.get(`/repos/alice/pub/issues/${prIndex}/subscriptions/check`, { token: stranger.token })).body.subscribed).toBe(false)
    expect((await postForm(`/alice/pub/issues/${prIndex}/watch`, 'stranger', { _csrf: csrf, watch: 'true' })).status).toBe(303)
    const reacted = await postForm(`/alice/pub/issues/${prIndex}/reactions/react`, 'stranger', { _csrf: csrf, content: 'eyes' })
    expect([reacted.status, reacted.headers.get('location')]).toEqual([303, prPath])
    expect((await s.get(`/repos/alice/pub/issues/${prIndex}/reactions`, { token: stranger.token })).body.map((r: any) => [r.content, r.user.login])).toEqual([['eyes', 'stranger']])
    expect((await postForm(`/alice/pub/issues/${prIndex}/reactions/unreact`, 'stranger', { _csrf: csrf, content: 'eyes' })).status).toBe(303)
    expect((await s.get(`/repos/alice/pub/issues/${prIndex}/reactions`, { token: stranger.token })).body).toEqual([])
    // An issue's number at the pull request addresses, likewise (Gitea's {type:issues|pulls}).
    const back = await postForm('/alice/pub/pulls/2/watch', 'stranger', { _csrf: csrf, watch: 'false' })
    expect([back.status, back.headers.get('location')]).toEqual([303, '/alice/pub/issues/2'])
    expect((await s.get('/repos/alice/pub/issues/2/subscriptions/check', { token: stranger.token })).body.subscribed).toBe(false)
    expect((await postForm('/alice/pub/issues/99999/watch', 'stranger', { _csrf: csrf, watch: 'true' })).status).toBe(404)
    expect((await postForm('/alice/pub/issues/99999/reactions/react', 'stranger', { _csrf: csrf, content: 'eyes' })).status).toBe(404)
    expect((await postForm('/alice/pub/pulls/1e3/watch', 'stranger', { _csrf: csrf, watch: 'true' })).status).toBe(404)
  }, LIMIT_MS)

  test('the sidebar forms: labels, assignees and milestone for writers (issue_ids), refused to others; the API sees each change', async () => {
    const filed = (await s.post('/repos/alice/pub/issues', { title: 'To sort' }, { token: stranger.token })).body
    const path = `/alice/pub/issues/${filed.number}`
    const milestone = (await s.get('/repos/alice/pub/milestones', { token: alice.token })).body[0].id
    const html = await (await page(path, 'bob')).text()
    expect(html).toContain('action="/alice/pub/issues/labels"')
    expect(html).toContain('Assign alice')
    expect(await (await page(path, 'stranger')).text()).not.toContain('action="/alice/pub/issues/labels"')
    const csrf = await csrfOf('bob', path)
    const ids = String(filed.id)
    const mark = contentMark(s.deps.db)
    let before = await mark()
    const strangerCsrf = await csrfOf('stranger', path)
    for (const [route, fields] of [
      ['labels', { action: 'attach', id: String(labelId) }],
      ['assignee', { action: 'attach', id: String(alice.user.id) }],
      ['milestone', { id: String(milestone) }],
    ] as const) {
      expect((await postForm(`/alice/pub/issues/${route}`, 'stranger', { _csrf: strangerCsrf, issue_ids: ids, ...fields })).status).toBe(403)
      expect((await postForm(`/alice/pub/issues/${route}`, 'bob', { issue_ids: ids, ...fields })).status).toBe(403)
    }
    expect((await postForm('/alice/pub/issues/labels', 'bob', { _csrf: csrf, issue_ids: ids, action: 'attach', id: '99999999' })).status).toBe(422)
    expect((await postForm('/alice/pub/issues/labels', 'bob', { _csrf: csrf, issue_ids: '99999999', action: 'attach', id: String(labelId) })).status).toBe(404)
    expect((await postForm('/alice/pub/issues/labels', 'bob', { _csrf: csrf, issue_ids: 'x', action: 'attach', id: String(labelId) })).status).toBe(400)
    expect((await postForm('/alice/pub/issues/labels', 'bob', { _csrf: csrf, issue_ids: ids, action: 'toggle-all', id: String(labelId) })).status).toBe(400)
    expect(await mark()).toBe(before)
    const label = await postForm('/alice/pub/issues/labels', 'bob', { _csrf: csrf, issue_ids: ids, action: 'attach', id: String(labelId) })
    expect([label.status, label.headers.get('location')]).toEqual([303, path])
    expect((await postForm('/alice/pub/issues/assignee', 'bob', { _csrf: csrf, issue_ids: ids, action: 'attach', id: String(alice.user.id) })).status).toBe(303)
    expect((await postForm('/alice/pub/issues/assignee', 'bob', { _csrf: csrf, issue_ids: ids, action: 'attach', id: String(bob.user.id) })).status).toBe(303)
    expect((await postForm('/alice/pub/issues/milestone', 'bob', { _csrf: csrf, issue_ids: ids, id: String(milestone) })).status).toBe(303)
    let issue = (await s.get(`/repos/alice/pub/issues/${filed.number}`, { token: alice.token })).body
    expect([issue.labels.map((l: any) => l.id), issue.assignees.map((a: any) => a.login).sort(), issue.milestone?.id]).toEqual([[labelId], ['alice', 'bob'], milestone])
    expect(await (await page(path, 'bob')).text()).toContain('Unassign alice')
    expect((await postForm('/alice/pub/issues/labels', 'bob', { _csrf: csrf, issue_ids: ids, action: 'detach', id: String(labelId) })).status).toBe(303)
    expect((await postForm('/alice/pub/issues/assignee', 'bob', { _csrf: csrf, issue_ids: ids, action: 'detach', id: String(alice.user.id) })).status).toBe(303)
    expect((await postForm('/alice/pub/issues/milestone', 'bob', { _csrf: csrf, issue_ids: ids, id: '0' })).status).toBe(303)
    issue = (await s.get(`/repos/alice/pub/issues/${filed.number}`, { token: alice.token })).body
    expect([issue.labels, issue.assignees.map((a: any) => a.login), issue.milestone]).toEqual([[], ['bob'], null])
    const text = textOf(await (await page(path)).text())
    expect(text).toContain('bob added the bug label')
    expect(text).toContain('bob assigned alice')
    expect(text).toContain('bob removed this from the v1 milestone')
    before = await mark()
    expect((await postForm('/alice/pub/issues/milestone', 'bob', { issue_ids: ids, id: String(milestone), _csrf: 'f'.repeat(64) })).status).toBe(403)
    expect(await mark()).toBe(before)
  }, LIMIT_MS)
})

describe('the pull request page', () => {
  test('its conversation and merge box; the merge blocked by protection says which rule; a review; then the merge', async () => {
    const url = `/alice/pub/pulls/${prIndex}`
    const anon = await (await page(url)).text()
    expect(anon).toContain('<strong>merge</strong>')
    expect(anon).toContain('<code>feature</code> into <code>main</code>')
    expect(anon).not.toContain('Merge pull request</button>')
    // Protection: one approval needed.
    expect((await s.post('/repos/alice/pub/branch_protections', { rule_name: 'main', required_approvals: 1 }, { token: alice.token })).status).toBe(201)
    const blocked = await (await page(url, 'alice')).text()
    expect(blocked).toContain('Merging is blocked: PR is not ready to be merged: Does not have enough approvals')
    expect(blocked).toContain('value="merge"')
    // The admin's form offers the override; a merge without it is refused with the rule.
    const csrf = await csrfOf('alice', url)
    const refused = await postForm(`${url}/merge`, 'alice', { _csrf: csrf, do: 'merge' })
    expect(refused.status).toBe(405)
    expect(await refused.text()).toContain('Does not have enough approvals')
    expect((await s.get(`/repos/alice/pub/pulls/${prIndex}`, { token: alice.token })).body.merged).toBe(false)
    // A stranger (a reader) may not merge: 403, nothing merged.
    expect((await postForm(`${url}/merge`, 'stranger', { _csrf: await csrfOf('stranger', url), do: 'merge' })).status).toBe(403)
    // Bob approves with a line comment through the review form.
    const bobCsrf = await csrfOf('bob', url)
    const review = await postForm(`${url}/reviews`, 'bob', { _csrf: bobCsrf, type: 'approve', content: 'Looks **good**', line_path: 'feature.txt', line_number: '2', line_content: 'nice line' })
    expect(review.status).toBe(303)
    const reviews = (await s.get(`/repos/alice/pub/pulls/${prIndex}/reviews`, { token: alice.token })).body
    expect(reviews.map((r: any) => [r.user.login, r.state, r.comments_count])).toEqual([['bob', 'APPROVED', 1]])
    const withReview = await (await page(url)).text()
    expect(withReview).toContain('approved these changes')
    expect(withReview).toContain('<code>feature.txt</code> line 2')
    expect(withReview).toContain('nice line')
    expect(withReview).not.toContain('Merging is blocked')
    // A line that does not exist is refused with the reason.
    const bad = await postForm(`${url}/reviews`, 'bob', { _csrf: bobCsrf, type: 'comment', content: 'x', line_path: 'feature.txt', line_number: '99', line_content: 'y' })
    expect(bad.status).toBe(422)
    expect(await bad.text()).toContain('has no line 99')
    // The merge, as a squash.
    const merged = await postForm(`${url}/merge`, 'alice', { _csrf: csrf, do: 'squash' })
    expect(merged.status).toBe(303)
    expect(merged.headers.get('location')).toBe(url)
    expect((await s.get(`/repos/alice/pub/pulls/${prIndex}`, { token: alice.token })).body.merged).toBe(true)
    const after = textOf(await (await page(url)).text())
    expect(after).toContain('merged this pull request')
    expect(after).toContain('alice merged commit')
  }, LIMIT_MS)
})

describe('a pull request\'s head branch after it ends', () => {
  test('Delete branch: offered to writers of the head repository once merged or closed and nothing pushed since; refused to others (nothing changes), once the branch moved on and while another open pull request uses it; through the push path', async () => {
    const token = { token: alice.token }
    const open = async (branch: string, title: string) => {
      expect((await s.post('/repos/alice/pub/branches', { new_branch_name: branch, old_branch_name: 'main' }, token)).status).toBe(201)
      expect((await s.post('/repos/alice/pub/contents', { branch, files: [{ operation: 'create', path: `${branch}.txt`, content: b64('x\n') }], message: branch }, token)).status).toBe(201)
      return (await s.post('/repos/alice/pub/pulls', { head: branch, base: 'tidy-base', title }, token)).body.number as number
    }
    // A base of their own: main's protection (an earlier test) is not what is tested here.
    expect((await s.post('/repos/alice/pub/branches', { new_branch_name: 'tidy-base', old_branch_name: 'main' }, token)).status).toBe(201)
    const n = await open('tidy', 'Tidy up')
    const path = `/alice/pub/pulls/${n}`
    expect(await (await page(path, 'alice')).text()).not.toContain(`action="${path}/cleanup"`)
    expect((await postForm(`${path}/cleanup`, 'alice', { _csrf: await csrfOf('alice', path) })).status).toBe(409)
    expect((await s.post(`/repos/alice/pub/pulls/${n}/merge`, { Do: 'merge' }, token)).status).toBe(200)
    expect(await (await page(path, 'alice')).text()).toContain(`action="${path}/cleanup"`)
    expect(await (await page(path, 'stranger')).text()).not.toContain(`action="${path}/cleanup"`)
    const mark = contentMark(s.deps.db)
    const before = await mark()
    expect((await postForm(`${path}/cleanup`, 'stranger', { _csrf: await csrfOf('stranger', path) })).status).toBe(403)
    expect((await postForm(`${path}/cleanup`, 'alice', {})).status).toBe(403)
    expect(await mark()).toBe(before)
    const done = await postForm(`${path}/cleanup`, 'alice', { _csrf: await csrfOf('alice', path) })
    expect([done.status, done.headers.get('location')]).toEqual([303, `${path}?done=branch-deleted`])
    expect((await s.get('/repos/alice/pub/branches/tidy', token)).status).toBe(404)
    expect(await (await page(path, 'alice')).text()).not.toContain(`action="${path}/cleanup"`)
    // Closed, but the branch moved on since: kept, and said why.
    const m = await open('later', 'Later')
    expect((await s.patch(`/repos/alice/pub/pulls/${m}`, { state: 'closed' }, token)).status).toBe(201)
    expect((await s.post('/repos/alice/pub/contents', { branch: 'later', files: [{ operation: 'create', path: 'more.txt', content: b64('y\n') }], message: 'more' }, token)).status).toBe(201)
    const moved = await postForm(`/alice/pub/pulls/${m}/cleanup`, 'alice', { _csrf: await csrfOf('alice', `/alice/pub/pulls/${m}`) })
    expect(moved.status).toBe(409)
    expect(await moved.text()).toContain('commits the pull request does not')
    expect((await s.get('/repos/alice/pub/branches/later', token)).status).toBe(200)
    // Another open pull request from the same branch keeps it.
    const shared = await open('shared', 'Shared one')
    expect((await s.post('/repos/alice/pub/branches', { new_branch_name: 'other-base', old_branch_name: 'main' }, token)).status).toBe(201)
    expect((await s.post('/repos/alice/pub/pulls', { head: 'shared', base: 'other-base', title: 'Shared two' }, token)).status).toBe(201)
    expect((await s.patch(`/repos/alice/pub/pulls/${shared}`, { state: 'closed' }, token)).status).toBe(201)
    const used = await postForm(`/alice/pub/pulls/${shared}/cleanup`, 'alice', { _csrf: await csrfOf('alice', `/alice/pub/pulls/${shared}`) })
    expect(used.status).toBe(409)
    expect(await used.text()).toContain('another open pull request uses the head branch')
    expect((await s.get('/repos/alice/pub/branches/shared', token)).status).toBe(200)
  }, LIMIT_MS)
})

describe("a pull request's files", () => {
  test('line comments at their lines, a form per line for the signed-in (CSRF), old lines too; outdated ones listed apart', async () => {
    const token = { token: alice.token }
    // Beside main (protected by an earlier test): a base branch with the file, and a head changing it.
    expect((await s.post('/repos/alice/pub/branches', { new_branch_name: 'lines-base', old_branch_name: 'main' }, token)).status).toBe(201)
    expect((await s.post('/repos/alice/pub/contents', { branch: 'lines-base', files: [{ operation: 'create', path: 'lines.txt', content: b64('a\nb\nc\nd\n') }], message: 'lines' }, token)).status).toBe(201)
    expect((await s.post('/repos/alice/pub/branches', { new_branch_name: 'lines', old_branch_name: 'lines-base' }, token)).status).toBe(201)
    const update = async (text: string) => {
      const sha = (await s.get('/repos/alice/pub/contents/lines.txt?ref=lines', token)).body.sha
      expect((await s.put('/repos/alice/pub/contents/lines.txt', { branch: 'lines', sha, content: b64(text), message: `lines: ${text.split('\n')[1]}` }, token)).status).toBe(200)
    }
    await update('a\nB\nc\nd\n')
    const pr = await s.post('/repos/alice/pub/pulls', { head: 'lines', base: 'lines-base', title: 'Change a line' }, token)
    expect(pr.status).toBe(201)
    const url = `/alice/pub/pulls/${pr.body.number}`
    // Anonymous visitors read the diff with plain numbers.
    const anon = await (await page(`${url}/files`)).text()
    expect(anon).toContain('<tr class=del><td>2<td><td>-b<tr class=add><td><td>2<td>+B')
    expect(anon).not.toContain('?comment=')
    // A signed-in reader: each number links to its form, which opens under its line.
    const files = await (await page(`${url}/files`, 'bob')).text()
    expect(files).toContain('<tr class=add><td><td><a href="?comment=1-R2#line-form" aria-label="Comment on line 2">2</a><td>+B')
    expect(files).toContain('<a href="?comment=1-L2#line-form" aria-label="Comment on old line 2">2</a>')
    const form = await (await page(`${url}/files?comment=1-R2`, 'bob')).text()
    const opened = form.slice(form.indexOf('<tr class=add><td><td>'))
    expect(opened).toMatch(/^<tr class=add><td><td><a [^>]+>2<\/a><td>\+B<tr class=notes><td colspan=3><div class="line-comments"><form class="stack wide" method="post" action="\/alice\/pub\/pulls\/\d+\/reviews" id="line-form">/)
    for (const field of ['name="line_path" value="lines.txt"', 'name="line_number" value="2"', 'name="line_side" value="new"', 'Comment on lines.txt, line 2']) expect(opened).toContain(field)
    expect(await (await page(`${url}/files?comment=1-R99`, 'bob')).text()).not.toContain('id="line-form"')
    // Without its CSRF token nothing is written; with it, a review of that one comment, and back to it.
    const fields = { type: 'comment', return_to: 'files', line_path: 'lines.txt', line_number: '2', line_side: 'new', line_content: 'Why **B**?' }
    expect((await postForm(`${url}/reviews`, 'bob', fields)).status).toBe(403)
    expect((await s.get(`/repos/alice/pub/pulls/${pr.body.number}/reviews`, token)).body).toEqual([])
    const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(opened)![1]!
    const made = await postForm(`${url}/reviews`, 'bob', { ...fields, _csrf: csrf })
    expect(made.status).toBe(303)
    const oldSide = await postForm(`${url}/reviews`, 'bob', { ...fields, _csrf: csrf, line_side: 'old', line_content: 'b was fine' })
    expect(oldSide.status).toBe(303)
    expect((await postForm(`${url}/reviews`, 'bob', { ...fields, _csrf: csrf, line_content: ' ' })).status).toBe(422)
    const reviews = (await s.get(`/repos/alice/pub/pulls/${pr.body.number}/reviews`, token)).body
    expect(reviews.map((r: any) => [r.user.login, r.state, r.comments_count])).toEqual([['bob', 'COMMENT', 1], ['bob', 'COMMENT', 1]])
    const [comment] = (await s.get(`/repos/alice/pub/pulls/${pr.body.number}/reviews/${reviews[0].id}/comments`, token)).body
    const [old] = (await s.get(`/repos/alice/pub/pulls/${pr.body.number}/reviews/${reviews[1].id}/comments`, token)).body
    expect([comment.path, comment.position, old.original_position]).toEqual(['lines.txt', 2, 2])
    // The comment's html_url is where the form sent the browser: its place on the files page.
    expect(comment.html_url).toBe(`${s.config.baseUrl}${url.slice(1)}/files#issuecomment-${comment.id}`)
    expect(made.headers.get('location')).toBe(`${url}/files#issuecomment-${comment.id}`)
    const shown = await (await page(`${url}/files`)).text()
    expect(shown).toContain(`<tr class=del><td>2<td><td>-b<tr class=notes><td colspan=3><div class="line-comments"><div class="line-comment" id="issuecomment-${old.id}">`)
    expect(shown).toContain(`<tr class=add><td><td>2<td>+B<tr class=notes><td colspan=3><div class="line-comments"><div class="line-comment" id="issuecomment-${comment.id}">`)
    expect(shown).toContain('Why <strong>B</strong>?')
    expect(shown).not.toContain('Outdated comments')
    // The conversation links each line comment to its place in the diff.
    expect(await (await page(url)).text()).toContain(`<a href="${comment.html_url}">in the diff</a>`)
    // A push changing line 2 makes its comment outdated: listed apart with the hunk it was made on; the old line's stays.
    const checker = startPullChecker(s.deps)
    try {
      await update('a\nBB\nc\nd\n')
      await until(async () => (await s.get(`/repos/alice/pub/pulls/${pr.body.number}/reviews/${reviews[0].id}/comments`, token)).body[0].position === 0, 'the comment outdated')
    } finally {
      await checker.stop()
    }
    const later = await (await page(`${url}/files`)).text()
    const apart = later.slice(later.indexOf('Outdated comments'), later.indexOf('<section class="diff-view"'))
    expect(apart).toContain(`id="issuecomment-${comment.id}"`)
    expect(apart).toContain('<code>lines.txt</code> line 2')
    expect(apart).toContain('+B')
    expect(later).toContain('<tr class=add><td><td>2<td>+BB<tr><td>3<td>3<td> c')
    expect(later).toContain(`<tr class=del><td>2<td><td>-b<tr class=notes><td colspan=3><div class="line-comments"><div class="line-comment" id="issuecomment-${old.id}">`)
  }, LIMIT_MS)

  test('a locked pull request: no line form for a non-writer, whose review (form or API) is refused; its owner still reviews', async () => {
    const token = { token: alice.token }
    const pr = (await s.get('/repos/alice/pub/pulls?state=open', token)).body.find((p: any) => p.title === 'Change a line')
    const url = `/alice/pub/pulls/${pr.number}`
    await s.deps.db.update(issues).set({ isLocked: true }).where(eq(issues.title, 'Change a line'))
    try {
      const files = await (await page(`${url}/files?comment=1-R2`, 'stranger')).text()
      expect(files).not.toContain('id="line-form"')
      expect(files).not.toContain('?comment=')
      const csrf = await csrfOf('stranger', url)
      const fields = { _csrf: csrf, type: 'comment', return_to: 'files', line_path: 'lines.txt', line_number: '2', line_side: 'new', line_content: 'let me in' }
      const before = (await s.get(`/repos/alice/pub/pulls/${pr.number}/reviews`, token)).body.length
      const refused = await postForm(`${url}/reviews`, 'stranger', fields)
      expect(refused.status).toBe(403)
      expect(await refused.text()).toContain('locked')
      const api = await s.post(`/repos/alice/pub/pulls/${pr.number}/reviews`, { event: 'COMMENT', body: 'let me in' }, { token: stranger.token })
      expect(api.status).toBe(403)
      expect(api.body).toEqual({ message: expect.stringContaining('locked'), url: expect.any(String) })
      expect((await s.get(`/repos/alice/pub/pulls/${pr.number}/reviews`, token)).body.length).toBe(before)
      expect(await (await page(`${url}/files?comment=1-R2`, 'alice')).text()).toContain('id="line-form"')
      expect((await s.post(`/repos/alice/pub/pulls/${pr.number}/reviews`, { event: 'COMMENT', body: 'owner may' }, token)).status).toBe(200)
    } finally {
      await s.deps.db.update(issues).set({ isLocked: false }).where(eq(issues.title, 'Change a line'))
    }
  }, LIMIT_MS)
})

describe("a pull request's commits, its update from the base, its head branch restored", () => {
  const token = () => ({ token: alice.token })
  /** A branch from `from` with one commit per file, and a pull request from it into `base`; its number. */
  const openPull = async (repo: string, branch: string, from: string, base: string, fileNames: string[]) => {
    expect((await s.post(`/repos/alice/${repo}/branches`, { new_branch_name: branch, old_branch_name: from }, token())).status).toBe(201)
    for (const f of fileNames)
      expect((await s.post(`/repos/alice/${repo}/contents`, { branch, files: [{ operation: 'create', path: f, content: b64(`${f}\n`) }], message: `add ${f}` }, token())).status).toBe(201)
    const pr = await s.post(`/repos/alice/${repo}/pulls`, { head: branch, base, title: `From ${branch}` }, token())
    expect(pr.status).toBe(201)
    return pr.body.number as number
  }
  const branchSha = async (name: string) => (await s.get(`/repos/alice/pub/branches/${name}`, token())).body.commit.id as string

  test('the Commits tab: the commits the API lists, each linked to its commit page; a tab with the count; 404 for strangers on a private repository', async () => {
    expect((await s.post('/repos/alice/pub/branches', { new_branch_name: 'tabs-base', old_branch_name: 'main' }, token())).status).toBe(201)
    const n = await openPull('pub', 'tabs', 'tabs-base', 'tabs-base', ['one.txt', 'two.txt'])
    const listed = (await s.get(`/repos/alice/pub/pulls/${n}/commits`, token())).body as { sha: string; commit: { message: string } }[]
    expect(listed.map((c) => c.commit.message.trim())).toEqual(['add two.txt', 'add one.txt'])
    const res = await page(`/alice/pub/pulls/${n}/commits`)
    expect(res.status).toBe(200)
    const html = await res.text()
    for (const c of listed) {
      expect(html).toContain(`<a href="/alice/pub/commit/${c.sha}"><code>${c.sha.slice(0, 10)}</code></a>`)
      expect(html).toContain(`<a href="/alice/pub/commit/${c.sha}">${c.commit.message.trim()}</a>`)
    }
    expect(html.indexOf('add two.txt')).toBeLessThan(html.indexOf('add one.txt'))
    expect(textOf(html)).toContain('Commits (2)')
    expect(textOf(await (await page(`/alice/pub/pulls/${n}`)).text())).toContain('Commits (2)')
    expect(await (await page(`/alice/pub/pulls/${n}/commits?page=2`)).text()).not.toContain('add one.txt')
    expect((await page(`/alice/pub/pulls/999/commits`)).status).toBe(404)
    const hidden = await openPull('secret', 'hidden', 'main', 'main', ['hidden.txt'])
    expect((await page(`/alice/secret/pulls/${hidden}/commits`)).status).toBe(404)
    expect((await page(`/alice/secret/pulls/${hidden}/commits`, 'stranger')).status).toBe(404)
    const own = await page(`/alice/secret/pulls/${hidden}/commits`, 'alice')
    expect(own.status).toBe(200)
    expect(await own.text()).toContain('add hidden.txt')
  }, LIMIT_MS)

  test('Update branch: shown behind its count, by merge moves the head through the service; refused to a reader and without CSRF (nothing changes); a protected head is not rebased', async () => {
    expect((await s.post('/repos/alice/pub/branches', { new_branch_name: 'upd-base', old_branch_name: 'main' }, token())).status).toBe(201)
    const n = await openPull('pub', 'upd', 'upd-base', 'upd-base', ['upd.txt'])
    const path = `/alice/pub/pulls/${n}`
    expect(textOf(await (await page(path, 'alice')).text())).not.toContain('out-of-date')
    for (const f of ['base1.txt', 'base2.txt'])
      expect((await s.post('/repos/alice/pub/contents', { branch: 'upd-base', files: [{ operation: 'create', path: f, content: b64('b\n') }], message: f }, token())).status).toBe(201)
    const mine = await (await page(path, 'alice')).text()
    expect(textOf(mine)).toContain('This branch is out-of-date with the base branch: 2 commits behind.')
    expect(mine).toContain(`action="${path}/update?style=merge"`)
    expect(mine).toContain(`action="${path}/update?style=rebase"`)
    // A reader sees the state, not the buttons; their POST is refused by the service's rule.
    const theirs = await (await page(path, 'stranger')).text()
    expect(textOf(theirs)).toContain('2 commits behind')
    expect(theirs).not.toContain(`${path}/update`)
    const mark = contentMark(s.deps.db)
    const before = await mark()
    const head = await branchSha('upd')
    const refused = await postForm(`${path}/update?style=merge`, 'stranger', { _csrf: await csrfOf('stranger', path) })
    expect(refused.status).toBe(403)
    expect(await refused.text()).toContain('you may not push to the head branch')
    expect((await postForm(`${path}/update?style=merge`, 'alice', {})).status).toBe(403)
    expect((await postForm(`${path}/update?style=squash`, 'alice', { _csrf: await csrfOf('alice', path) })).status).toBe(422)
    expect(await mark()).toBe(before)
    expect(await branchSha('upd')).toBe(head)
    const done = await postForm(`${path}/update?style=merge`, 'alice', { _csrf: await csrfOf('alice', path) })
    expect([done.status, done.headers.get('location')]).toEqual([303, `${path}?done=branch-updated`])
    const merged = await branchSha('upd')
    expect(merged).not.toBe(head)
    const parents = (await s.get(`/repos/alice/pub/git/commits/${merged}`, token())).body.parents.map((p: { sha: string }) => p.sha)
    expect(parents).toEqual([head, await branchSha('upd-base')])
    const after = textOf(await (await page(`${path}?done=branch-updated`, 'alice')).text())
    expect(after).toContain('The branch was updated')
    expect(after).not.toContain('out-of-date')
    // Behind again, by a conflicting change, its head branch protected with pushes allowed: by merge
    // offered (refused for the conflict, said so), by rebase neither offered nor done; pushes disallowed: neither.
    expect((await s.post('/repos/alice/pub/contents', { branch: 'upd-base', files: [{ operation: 'create', path: 'upd.txt', content: b64('other\n') }], message: 'clash' }, token())).status).toBe(201)
    const rule = await s.post('/repos/alice/pub/branch_protections', { rule_name: 'upd', enable_push: true }, token())
    expect(rule.status).toBe(201)
    const guarded = await (await page(path, 'alice')).text()
    expect(textOf(guarded)).toContain('1 commit behind')
    expect(guarded).toContain(`action="${path}/update?style=merge"`)
    expect(guarded).not.toContain(`action="${path}/update?style=rebase"`)
    const rebase = await postForm(`${path}/update?style=rebase`, 'alice', { _csrf: await csrfOf('alice', path) })
    expect(rebase.status).toBe(403)
    expect(await rebase.text()).toContain('is protected')
    const clash = await postForm(`${path}/update?style=merge`, 'alice', { _csrf: await csrfOf('alice', path) })
    expect(clash.status).toBe(409)
    expect(await clash.text()).toContain('merge failed because of conflict (upd.txt)')
    expect((await s.patch('/repos/alice/pub/branch_protections/upd', { enable_push: false }, token())).status).toBe(200)
    expect(await (await page(path, 'alice')).text()).not.toContain(`${path}/update`)
    expect(await branchSha('upd')).toBe(merged)
  }, LIMIT_MS)

  test('Restore branch: after Delete branch, for writers of the head repository, at the head commit; refused while a branch of that name exists; a protected head branch is not deletable', async () => {
    expect((await s.post('/repos/alice/pub/branches', { new_branch_name: 'rest-base', old_branch_name: 'main' }, token())).status).toBe(201)
    const n = await openPull('pub', 'rest', 'rest-base', 'rest-base', ['rest.txt'])
    const path = `/alice/pub/pulls/${n}`
    const headSha = await branchSha('rest')
    expect((await s.post(`/repos/alice/pub/pulls/${n}/merge`, { Do: 'merge' }, token())).status).toBe(200)
    expect((await postForm(`${path}/restore`, 'alice', { _csrf: await csrfOf('alice', path) })).status).toBe(409)
    expect((await postForm(`${path}/cleanup`, 'alice', { _csrf: await csrfOf('alice', path) })).status).toBe(303)
    expect((await s.get('/repos/alice/pub/branches/rest', token())).status).toBe(404)
    expect(await (await page(path, 'alice')).text()).toContain(`action="${path}/restore"`)
    expect(await (await page(path, 'stranger')).text()).not.toContain(`action="${path}/restore"`)
    const mark = contentMark(s.deps.db)
    const before = await mark()
    expect((await postForm(`${path}/restore`, 'stranger', { _csrf: await csrfOf('stranger', path) })).status).toBe(403)
    expect((await postForm(`${path}/restore`, 'alice', {})).status).toBe(403)
    expect(await mark()).toBe(before)
    const restored = await postForm(`${path}/restore`, 'alice', { _csrf: await csrfOf('alice', path) })
    expect([restored.status, restored.headers.get('location')]).toEqual([303, `${path}?done=branch-restored`])
    expect(await branchSha('rest')).toBe(headSha)
    expect(textOf(await (await page(`${path}?done=branch-restored`, 'alice')).text())).toContain('The branch was restored.')
    const again = await postForm(`${path}/restore`, 'alice', { _csrf: await csrfOf('alice', path) })
    expect(again.status).toBe(409)
    expect(await again.text()).toContain('a branch named rest exists')
    // Back at the head commit it is deletable again, unless a protection rule matches it.
    expect(await (await page(path, 'alice')).text()).toContain(`action="${path}/cleanup"`)
    expect((await s.post('/repos/alice/pub/branch_protections', { rule_name: 're*' }, token())).status).toBe(201)
    expect(await (await page(path, 'alice')).text()).not.toContain(`action="${path}/cleanup"`)
    const protectedOne = await postForm(`${path}/cleanup`, 'alice', { _csrf: await csrfOf('alice', path) })
    expect(protectedOne.status).toBe(403)
    expect(await protectedOne.text()).toContain('the head branch rest is protected')
    expect(await branchSha('rest')).toBe(headSha)
  }, LIMIT_MS)
})

describe('notifications', () => {
  test('unread threads link to their issue; mark read (CSRF) moves them to the read tab', async () => {
    while ((await notifyRound(s.deps)) > 0) {}
    expect((await page('/notifications')).status).toBe(303)
    const html = await (await page('/notifications', 'bob')).text()
    expect(html).toContain('href="/alice/pub/issues/2"')
    const id = /name="notification_id" value="(\d+)"/.exec(html)![1]!
    expect((await postForm('/notifications/status', 'bob', { notification_id: id, status: 'read' })).status).toBe(403)
    expect((await s.get(`/notifications/threads/${id}`, { token: bob.token })).body.unread).toBe(true)
    const csrf = await csrfOf('bob', '/notifications')
    const res = await postForm('/notifications/status', 'bob', { _csrf: csrf, notification_id: id, status: 'read' })
    expect([res.status, res.headers.get('location')]).toEqual([303, '/notifications'])
    expect((await s.get(`/notifications/threads/${id}`, { token: bob.token })).body.unread).toBe(false)
    expect(await (await page('/notifications?q=read', 'bob')).text()).toContain(`id="notification-${id}"`)
    expect(await (await page('/notifications', 'bob')).text()).not.toContain(`id="notification-${id}"`)
    // Another user's thread: refused, unchanged.
    expect((await postForm('/notifications/status', 'stranger', { _csrf: await csrfOf('stranger', '/notifications'), notification_id: id, status: 'unread' })).status).toBe(403)
    expect((await s.get(`/notifications/threads/${id}`, { token: bob.token })).body.unread).toBe(false)
    // Mark all read.
    expect((await postForm('/notifications/purge', 'bob', { _csrf: csrf })).status).toBe(303)
    expect(await (await page('/notifications', 'bob')).text()).toContain('You have no unread notifications.')
  })

  test('a private repository\'s threads vanish for a user who loses access', async () => {
    expect((await s.put('/repos/alice/secret/collaborators/stranger', { permission: 'read' }, { token: alice.token })).status).toBe(204)
    expect((await s.post('/repos/alice/secret/issues', { title: 'For the stranger', body: 'hello @stranger' }, { token: alice.token })).status).toBe(201)
    while ((await notifyRound(s.deps)) > 0) {}
    expect(await (await page('/notifications', 'stranger')).text()).toContain('For the stranger')
    expect((await s.del('/repos/alice/secret/collaborators/stranger', undefined, { token: alice.token })).status).toBe(204)
    expect(await (await page('/notifications', 'stranger')).text()).not.toContain('For the stranger')
  })
})

describe('rendering kept', () => {
  test("an issue's page viewed again renders nothing anew; an edited comment is rendered from its new text", async () => {
    const token = { token: alice.token }
    expect((await s.post('/user/repos', { name: 'rendered', auto_init: true }, token)).status).toBe(201)
    const issue = (await s.post('/repos/alice/rendered/issues', { title: 'Rendered once', body: 'The **body**' }, token)).body
    const comment = (await s.post(`/repos/alice/rendered/issues/${issue.number}/comments`, { body: 'A *first* take' }, token)).body
    const first = await (await page(`/alice/rendered/issues/${issue.number}`, 'alice')).text()
    expect(first).toContain('<strong>body</strong>')
    expect(first).toContain('<em>first</em>')
    const held = renderedTextsHeld()
    expect(held).toBeGreaterThan(0)
    const again = await (await page(`/alice/rendered/issues/${issue.number}`, 'alice')).text()
    expect(renderedTextsHeld()).toBe(held)
    expect(again).toContain('<em>first</em>')
    expect((await s.patch(`/repos/alice/rendered/issues/comments/${comment.id}`, { body: 'A *second* take' }, token)).status).toBe(200)
    const edited = await (await page(`/alice/rendered/issues/${issue.number}`, 'alice')).text()
    expect(edited).toContain('<em>second</em>')
    expect(edited).not.toContain('<em>first</em>')
    expect(renderedTextsHeld()).toBeGreaterThan(held)
  })
})

describe('a refused comment form changes nothing', () => {
  test('one who may not close an issue (neither its poster nor a writer) has the whole form refused: no comment is written', async () => {
    const before = (await s.get('/repos/alice/pub/issues/1', { token: alice.token })).body
    const csrf = await csrfOf('stranger', '/alice/pub/issues/1')
    for (const status of ['close', 'reopen']) {
      const res = await postForm('/alice/pub/issues/1/comments', 'stranger', { _csrf: csrf, content: 'sneaky', status })
      expect([status, res.status]).toEqual([status, 403])
      expect(await res.text()).toContain('Only the poster or a writer may close or reopen this issue')
    }
    const after = (await s.get('/repos/alice/pub/issues/1', { token: alice.token })).body
    expect([after.comments, after.state]).toEqual([before.comments, before.state])
    // The same comment without a state change is theirs to post.
    expect((await postForm('/alice/pub/issues/1/comments', 'stranger', { _csrf: csrf, content: 'a reader may comment' })).status).toBe(303)
  })

  test("a state change the issue refuses (open dependencies) leaves the comment posted and says why, as Gitea's; without a comment the form is refused whole", async () => {
    const token = { token: alice.token }
    const blocked = (await s.post('/repos/alice/pub/issues', { title: 'Blocked' }, token)).body.number as number
    const blocker = (await s.post('/repos/alice/pub/issues', { title: 'Blocker' }, token)).body.number as number
    expect((await s.post(`/repos/alice/pub/issues/${blocked}/dependencies`, { owner: 'alice', repo: 'pub', index: blocker }, token)).status).toBe(201)
    const csrf = await csrfOf('alice', `/alice/pub/issues/${blocked}`)
    const alone = await postForm(`/alice/pub/issues/${blocked}/comments`, 'alice', { _csrf: csrf, content: '', status: 'close' })
    expect(alone.status).toBe(412)
    expect((await s.get(`/repos/alice/pub/issues/${blocked}`, token)).body).toMatchObject({ state: 'open', comments: 0 })
    const withComment = await postForm(`/alice/pub/issues/${blocked}/comments`, 'alice', { _csrf: csrf, content: 'closing it', status: 'close' })
    expect(withComment.status).toBe(303)
    const location = withComment.headers.get('location')!
    expect(location).toMatch(new RegExp(`^/alice/pub/issues/${blocked}\\?page=1&done=state-unchanged#issuecomment-\\d+$`))
    expect((await s.get(`/repos/alice/pub/issues/${blocked}`, token)).body).toMatchObject({ state: 'open', comments: 1 })
    expect(await (await page(location.split('#')[0]!, 'alice')).text()).toContain('Your comment was posted, but the state was not changed')
  })
})
