import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { signInByForm } from './web-session'

/**
 * The wiki's web pages over plain HTTP: the Home page, the list of pages, a page by the
 * `html_url` the API gives, with its sidebar and footer rendered as markdown (links relative to
 * the wiki, hostile markup inert), the Wiki tab, and who may see them.
 */

let s: TestServer
let alice: TestUser
const b64 = (text: string) => Buffer.from(text).toString('base64')
const page = (path: string, cookie = '') => fetch(s.url + path, { headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) }, redirect: 'manual' })

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  const token = { token: alice.token }
  for (const [name, extra] of [
    ['pub', {}],
    ['secret', { private: true }],
    ['empty', {}],
    ['off', {}],
  ] as const)
    expect((await s.post('/user/repos', { name, auto_init: true, ...extra }, token)).status).toBe(201)
  expect((await s.patch('/repos/alice/off', { has_wiki: false }, token)).status).toBe(200)
  const pages: [string, string, string][] = [
    ['pub', 'Home', '# Welcome\n\nSee [the guide](Getting-Started).\n\n<script>alert(1)</script>\n\n[bad](javascript:alert(2))'],
    ['pub', 'Getting Started', 'Step **one**.'],
    ['pub', '<b>Tricky</b> & 100%', 'tricky page'],
    ['pub', '_Sidebar', '* [Home](Home)'],
    ['pub', '_Footer', 'Footer *text*'],
    ['secret', 'Home', 'secret home'],
  ]
  for (const [repo, title, content] of pages)
    expect((await s.post(`/repos/alice/${repo}/wiki/new`, { title, content_base64: b64(content) }, token)).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
})

const csrfOf = async (res: Response) => /name="_csrf" value="([0-9a-f]+)"/.exec(await res.text())?.[1]
const postForm = (path: string, fields: Record<string, string>, cookie: string) =>
  fetch(s.url + path, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' }, body: new URLSearchParams(fields).toString(), redirect: 'manual' })

describe('wiki pages', () => {
  test('/wiki shows Home rendered, with the sidebar and footer; its relative links point into the wiki; hostile markup is inert', async () => {
    const res = await page('/alice/pub/wiki')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    const html = await res.text()
    expect(html).toContain('>Welcome</h1>')
    expect(html).toContain(`href="${s.url}/alice/pub/wiki/Getting-Started"`)
    expect(html).not.toContain('<script>alert')
    expect(html).not.toContain('javascript:alert')
    expect(html).toContain('aria-label="Sidebar"')
    expect(html).toContain('<em>text</em>')
    expect(html).toContain('aria-current="page">Wiki</a>')
    expect(html).toContain('1 revision')
  })

  test('a page at the html_url the API gives; the list links every page; an unknown page is 404', async () => {
    const record = await s.get('/repos/alice/pub/wiki/page/Getting-Started', { token: alice.token })
    const res = await fetch(record.body.html_url, { headers: { accept: 'text/html' } })
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('<strong>one</strong>')
    expect(html).toContain('<h2>Getting Started</h2>')

    const list = await (await page('/alice/pub/wiki/_pages')).text()
    const pages = await s.get('/repos/alice/pub/wiki/pages', { token: alice.token })
    expect(pages.body.length).toBe(5)
    for (const p of pages.body) expect(list).toContain(`href="/alice/pub/wiki/${p.sub_url}"`)
    // The title is escaped, never markup.
    expect(list).toContain('&lt;b&gt;Tricky&lt;/b&gt; &amp; 100%')
    const tricky = pages.body.find((p: { title: string }) => p.title.startsWith('<b>'))
    expect((await page(`/alice/pub/wiki/${tricky.sub_url}`)).status).toBe(200)

    expect((await page('/alice/pub/wiki/Nowhere')).status).toBe(404)
  })

  test('a wiki without pages says so; the wiki turned off is 404 and has no tab; a private wiki is for its readers', async () => {
    const empty = await page('/alice/empty/wiki')
    expect(empty.status).toBe(200)
    const emptyText = await empty.text()
    expect(emptyText).toContain('This wiki has no pages yet.')
    // Its writers are offered the first page; a visitor is not.
    expect(emptyText).not.toContain('Create the first page')
    expect(await (await page('/alice/empty/wiki', await signInByForm(s.url, alice))).text()).toContain('<a href="/alice/empty/wiki?action=_new">Create the first page</a>')
    expect((await page('/alice/empty/wiki/_pages')).status).toBe(200)

    expect((await page('/alice/off/wiki')).status).toBe(404)
    expect(await (await page('/alice/off')).text()).not.toContain('>Wiki</a>')
    expect(await (await page('/alice/pub')).text()).toContain('href="/alice/pub/wiki"')

    expect([302, 303, 404]).toContain((await page('/alice/secret/wiki')).status)
    const cookie = await signInByForm(s.url, alice)
    const mine = await page('/alice/secret/wiki', cookie)
    expect(mine.status).toBe(200)
    expect(await mine.text()).toContain('secret home')
  })

  test("writers make and edit pages through Gitea's forms (?action=_new, ?action=_edit); without the form's token nothing changes", async () => {
    const cookie = await signInByForm(s.url, alice)
    const form = await page('/alice/pub/wiki?action=_new', cookie)
    expect(form.status).toBe(200)
    const csrf = await csrfOf(form)
    expect(csrf).toBeTruthy()
    const made = await postForm('/alice/pub/wiki?action=_new', { _csrf: csrf!, title: 'Form Page', content: 'made **here**\r\nsecond line', message: '' }, cookie)
    expect(made.status).toBe(303)
    expect(made.headers.get('location')).toBe('/alice/pub/wiki/Form-Page')
    const shown = await (await page('/alice/pub/wiki/Form-Page', cookie)).text()
    expect(shown).toContain('<strong>here</strong>')
    expect(shown).toContain('href="/alice/pub/wiki/Form-Page?action=_edit"')
    const api = await s.get('/repos/alice/pub/wiki/page/Form-Page', { token: alice.token })
    expect(Buffer.from(api.body.content_base64, 'base64').toString()).toBe('made **here**\nsecond line')
    // The form's text is the page's UTF-8 bytes, as it reads back in the edit form.
    const accented = await postForm('/alice/pub/wiki?action=_new', { _csrf: csrf!, title: 'Café', content: 'déjà vu ✓', message: '' }, cookie)
    expect(accented.status).toBe(303)
    const accentedApi = await s.get(`/repos/alice/pub/wiki/page/${accented.headers.get('location')!.split('/').pop()}`, { token: alice.token })
    expect(Buffer.from(accentedApi.body.content_base64, 'base64')).toEqual(Buffer.from('déjà vu ✓'))
    expect(await (await page(`${accented.headers.get('location')}?action=_edit`, cookie)).text()).toContain('déjà vu ✓')

    const edit = await page('/alice/pub/wiki/Form-Page?action=_edit', cookie)
    const editHtml = await edit.text()
    expect(editHtml).toContain('value="Form Page"')
    expect(editHtml).toContain('made **here**')
    const token = /name="_csrf" value="([0-9a-f]+)"/.exec(editHtml)![1]!
    const renamed = await postForm('/alice/pub/wiki/Form-Page?action=_edit', { _csrf: token, title: 'Form Renamed', content: 'v2', message: 'via the form' }, cookie)
    expect(renamed.status).toBe(303)
    expect(renamed.headers.get('location')).toBe('/alice/pub/wiki/Form-Renamed')
    const after = await s.get('/repos/alice/pub/wiki/page/Form-Renamed', { token: alice.token })
    expect(after.body.last_commit.message).toBe('via the form\n')

    // No token: 403 and nothing written; a page that exists already: the service's 400.
    expect((await postForm('/alice/pub/wiki', { title: 'No Token', content: 'x' }, cookie)).status).toBe(403)
    expect((await s.get('/repos/alice/pub/wiki/page/No-Token', { token: alice.token })).status).toBe(404)
    expect((await postForm('/alice/pub/wiki', { _csrf: token, title: 'Home', content: 'x' }, cookie)).status).toBe(400)
    // Readers see no edit link and get no form.
    expect(await (await page('/alice/pub/wiki/Form-Renamed')).text()).not.toContain('action=_edit')
    expect((await page('/alice/pub/wiki?action=_new')).status).toBe(403)
  })

  test("a page's revisions (?action=_revision), newest first; writers delete a page (?action=_delete), readers may not", async () => {
    const cookie = await signInByForm(s.url, alice)
    const token = { token: alice.token }
    expect((await s.post('/repos/alice/pub/wiki/new', { title: 'Changing', content_base64: b64('one'), message: 'First words' }, token)).status).toBe(201)
    expect((await s.patch('/repos/alice/pub/wiki/page/Changing', { title: 'Changing', content_base64: b64('two'), message: 'Second <b>words</b>' }, token)).status).toBe(200)
    const view = await (await page('/alice/pub/wiki/Changing')).text()
    expect(view).toContain('href="/alice/pub/wiki/Changing?action=_revision"')
    const revisions = await (await page('/alice/pub/wiki/Changing?action=_revision')).text()
    const listed = revisions.slice(revisions.indexOf('aria-label="Revisions"'))
    expect(listed.indexOf('Second &lt;b&gt;words&lt;/b&gt;')).toBeGreaterThan(0)
    expect(listed.indexOf('Second &lt;b&gt;words&lt;/b&gt;')).toBeLessThan(listed.indexOf('First words'))
    expect(revisions).toContain('2 revisions')
    expect((await page('/alice/pub/wiki/No-Such-Page?action=_revision')).status).toBe(404)

    // Deleted through its page's button: gone for the API too; the list is where one lands.
    const withForm = await (await page('/alice/pub/wiki/Changing', cookie)).text()
    expect(withForm).toContain('action="/alice/pub/wiki/Changing?action=_delete"')
    const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(withForm)![1]!
    expect((await postForm('/alice/pub/wiki/Changing?action=_delete', {}, cookie)).status).toBe(403)
    const deleted = await postForm('/alice/pub/wiki/Changing?action=_delete', { _csrf: csrf }, cookie)
    expect([deleted.status, deleted.headers.get('location')]).toEqual([303, '/alice/pub/wiki/_pages'])
    expect((await s.get('/repos/alice/pub/wiki/page/Changing', token)).status).toBe(404)
    expect((await postForm('/alice/pub/wiki/Changing?action=_delete', { _csrf: csrf }, cookie)).status).toBe(404)
    // Readers see no delete button.
    expect(await (await page('/alice/pub/wiki/Home')).text()).not.toContain('action=_delete')
  })
})
