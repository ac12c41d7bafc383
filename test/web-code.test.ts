// runs in one half: postgresql
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { signInByForm } from './web-session'
import { contentMark } from './db-snapshot'
import { LONG_TS_LINES, pushCodeFixture } from './web-code-fixture'

/**
 * The code pages over plain HTTP: raw files and their content types, history and commits with
 * their diffs, branches, tags, releases, comparisons opening a pull request through the form, a
 * pull request's files; access (a private repository is a 404 page to anonymous visitors and
 * strangers on every page), hostile content inert, and the size cases bounded.
 */

let s: TestServer
let alice: TestUser, stranger: TestUser
let sha: (rev: string) => Promise<string>
let pullIndex = 0
const MANY = 5000

const page = (path: string, headers: Record<string, string> = {}) => fetch(s.url + path, { headers: { accept: 'text/html', ...headers }, redirect: 'manual' })

const signIn = (user: TestUser): Promise<string> => signInByForm(s.url, user)

/** No script, handler or javascript: URL that came from user content. */
function expectInert(html: string) {
  expect(html).not.toContain('<script>alert')
  expect(html).not.toMatch(/<img[^>]* onerror=/i)
  expect(html).not.toContain('href="javascript:')
  expect(html).not.toMatch(/<script(?![^>]*src="\/assets\/warren-[0-9a-f]+\.js")/)
}

beforeAll(async () => {
  // Highlighting runs in the render pool: a generous budget, the machine may be busy.
  s = await startTestServer({ markdownTimeoutMs: 120_000 })
  alice = await s.user('alice')
  stranger = await s.user('stranger')
  ;({ sha } = await pushCodeFixture(s, alice, 'pub', { manyFiles: MANY }))
  await pushCodeFixture(s, alice, 'secret', { private: true })
  const token = { token: alice.token }
  for (const repo of ['pub', 'secret']) {
    const release = await s.post(`/repos/alice/${repo}/releases`, { tag_name: 'v1.0', name: 'First release', body: '## Notes\n\n<script>alert(5)</script>\n\n[bad](javascript:alert(6))' }, token)
    expect(release.status).toBe(201)
    const form = new FormData()
    form.append('attachment', new Blob(['asset bytes']), 'tool.zip')
    const up = await fetch(`${s.url}/api/v1/repos/alice/${repo}/releases/${release.body.id}/assets?name=tool.zip`, { method: 'POST', headers: { authorization: `token ${alice.token}` }, body: form })
    expect(up.status).toBe(201)
  }
  const pull = await s.post('/repos/alice/pub/pulls', { head: 'feature', base: 'master', title: 'Change the answer' }, token)
  expect(pull.status).toBe(201)
  pullIndex = pull.body.number
  expect((await s.post('/repos/alice/secret/pulls', { head: 'feature', base: 'master', title: 'Secret change' }, token)).status).toBe(201)
}, 600_000)
afterAll(() => s.stop())

describe('raw files', () => {
  test('text is text/plain, never HTML; binary is an attachment; every answer sandboxed; the legacy form too', async () => {
    const text = await page('/alice/pub/raw/branch/master/src/main.ts')
    expect(text.status).toBe(200)
    expect(text.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(await text.text()).toContain('six times nine')
    for (const path of ['evil.html', 'evil.svg']) {
      const res = await page(`/alice/pub/raw/branch/master/${path}`)
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8')
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('content-security-policy')).toContain('sandbox')
    }
    const bin = await page('/alice/pub/raw/branch/master/bin.dat')
    expect(bin.headers.get('content-type')).toBe('application/octet-stream')
    expect(bin.headers.get('content-disposition')).toStartWith('attachment;')
    const tagged = await page('/alice/pub/raw/tag/v1.0/src/main.ts')
    expect(await tagged.text()).toContain('six times nine')
    const first = await sha('master~1')
    expect(await (await page(`/alice/pub/raw/commit/${first}/src/main.ts`)).text()).not.toContain('six times nine')
    // Gitea's legacy form: the ref's name first.
    expect(await (await page('/alice/pub/raw/feature/src/main.ts')).text()).toContain('= 43')
    // 10 MB streams whole.
    const big = await page('/alice/pub/raw/branch/master/big.txt')
    expect((await big.arrayBuffer()).byteLength).toBeGreaterThanOrEqual(10 * 1024 * 1024)
    expect((await page('/alice/pub/raw/branch/master/nope.txt')).status).toBe(404)
  })

  test('a private repository\'s raw file: 404 to anonymous and strangers (a page, not JSON), served to its owner signed in', async () => {
    for (const cookie of [undefined, await signIn(stranger)]) {
      const res = await page('/alice/secret/raw/branch/master/src/main.ts', cookie ? { cookie } : {})
      expect(res.status).toBe(404)
      expect(await res.text()).not.toContain('six times nine')
    }
    const own = await page('/alice/secret/raw/branch/master/src/main.ts', { cookie: await signIn(alice) })
    expect(own.status).toBe(200)
    expect(await own.text()).toContain('six times nine')
  })
})

describe('file views', () => {
  test('a 2,000-line file is highlighted, every line anchored, in few bytes; the enhancement script is served from its hashed path', async () => {
    const res = await page('/alice/pub/src/branch/master/long.ts')
    const html = await res.text()
    expect(res.status).toBe(200)
    // One list item a line, its id the line's anchor; each colour one short element, quotes unescaped.
    expect(html).toContain(`<li id=L${LONG_TS_LINES}><b>export const</b> <q>v${LONG_TS_LINES}</q>: <u>number</u> = <u>${LONG_TS_LINES}</u> <em>// line ${LONG_TS_LINES}</em></ol>`)
    expect(html.match(/<li id=L\d+>/g)!.length).toBe(LONG_TS_LINES)
    // The bytes are the text's (some 80 KB here) and little more: well within the 300 KB a 2,000-line file may take.
    expect(Buffer.byteLength(html)).toBeLessThan(200 * 1024)
    const script = /<script src="(\/assets\/warren-[0-9a-f]+\.js)" defer/.exec(html)![1]!
    const js = await fetch(s.url + script)
    expect(js.headers.get('content-type')).toContain('javascript')
    expect(js.headers.get('cache-control')).toContain('immutable')
    expect(await js.text()).toContain('#L')
  })

  test('a 10 MB file, a file of one 1 MB line and a binary file: a notice and the raw link, no content', async () => {
    for (const [path, words] of [
      ['big.txt', 'too large'],
      ['oneline.js', 'lines too long'],
      ['bin.dat', 'binary file'],
    ] as const) {
      const res = await page(`/alice/pub/src/branch/master/${path}`)
      expect(res.status).toBe(200)
      const html = await res.text()
      expect(html).toContain(words)
      expect(html).toContain(`href="/alice/pub/raw/branch/master/${path}"`)
      expect(html.length).toBeLessThan(50_000)
    }
  })
})

describe('history and commits', () => {
  test('blame: each line with the commit that last changed it, a commit once a run of lines, anchored; offered from the file view; binary, too-large and folders refused; private hidden', async () => {
    const [first, second, changed] = await Promise.all([sha('master~1'), sha('master'), sha('feature')])
    const view = await (await page('/alice/pub/src/branch/master/src/main.ts')).text()
    expect(view).toContain('href="/alice/pub/blame/branch/master/src/main.ts"')
    const res = await page('/alice/pub/blame/branch/master/src/main.ts')
    expect(res.status).toBe(200)
    const html = await res.text()
    // Lines 1-2 from the first commit (one cell spanning both), line 3 from the second.
    const runs = [...html.matchAll(/<tr id="L(\d+)"[^>]*><td class="blame-commit" rowspan="(\d+)"><a href="\/alice\/pub\/commit\/([0-9a-f]+)"/g)].map((m) => [m[1], m[2], m[3]])
    expect(runs).toEqual([['1', '2', first], ['3', '1', second]])
    expect(html).toContain('Ask the question')
    expect(html).toContain('href="/alice/pub/commits/branch/master/src/main.ts"')
    expect(await (await page('/alice/pub/commits/branch/master/src/main.ts')).text()).toContain('Ask the question')
    expect(html).toContain('export const question = &quot;six times nine&quot;')
    expect(html.match(/<tr id="L\d+"/g)!.length).toBe(3)
    // Another branch blames its own history; a tag and a commit name one too.
    const feature = await (await page('/alice/pub/blame/branch/feature/src/main.ts')).text()
    expect([...feature.matchAll(/rowspan="\d+"><a href="\/alice\/pub\/commit\/([0-9a-f]+)"/g)].map((m) => m[1])).toEqual([first, changed, second])
    expect((await page(`/alice/pub/blame/commit/${first}/src/main.ts`)).status).toBe(200)
    expect((await page('/alice/pub/blame/tag/v1.0/src/main.ts')).status).toBe(200)
    for (const [path, status, words] of [['bin.dat', 422, 'binary file'], ['big.txt', 422, 'too large to blame'], ['src', 404, ''], ['nope.txt', 404, '']] as const) {
      const refused = await page(`/alice/pub/blame/branch/master/${path}`)
      expect(refused.status).toBe(status)
      expect(await refused.text()).toContain(words)
    }
    expect((await page('/alice/pub/blame/branch/nobranch/src/main.ts')).status).toBe(404)
    expect((await page('/alice/secret/blame/branch/master/src/main.ts')).status).toBe(404)
    expect((await page('/alice/secret/blame/branch/master/src/main.ts', { cookie: await signIn(stranger) })).status).toBe(404)
    const own = await page('/alice/secret/blame/branch/master/src/main.ts', { cookie: await signIn(alice) })
    expect(own.status).toBe(200)
    expect(await own.text()).toContain('six times nine')
  })

  test('a branch\'s history is paged; a path filter keeps the commits touching it; tags and commits name a history too', async () => {
    const first = await (await page('/alice/pub/commits/branch/other')).text()
    expect(first).toContain('Empty step 34')
    expect(first).not.toContain('First files')
    expect(first).toContain('Page 1 of 2')
    const second = await (await page('/alice/pub/commits/branch/other?page=2')).text()
    expect(second).toContain('First files')
    expect(second).toContain(`href="/alice/pub/commit/${await sha('master~1')}"`)
    const filtered = await (await page('/alice/pub/commits/branch/other/src')).text()
    expect(filtered).toContain('Ask the question')
    expect(filtered).not.toContain('Empty step')
    expect(await (await page('/alice/pub/commits/tag/v1.0')).text()).toContain('Ask the question')
    expect((await page(`/alice/pub/commits/commit/${await sha('master')}`)).status).toBe(200)
    expect((await page('/alice/pub/commits')).status).toBe(200)
    expect((await page('/alice/pub/commits/branch/nope')).status).toBe(404)
    expect((await page('/alice/pub/commits/branch/master/never-touched')).status).toBe(404)
  })

  test('a commit: message, author, parents, and its diff with old and new line numbers', async () => {
    const head = await sha('feature')
    const res = await page(`/alice/pub/commit/${head}`)
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('Change the answer')
    expect(html).toContain('&lt;alice@example.com&gt;')
    expect(html).toContain(`href="/alice/pub/commit/${await sha('feature~1')}"`)
    expect(html).toContain('2 changed files with')
    // The changed line: removed at old line 2, added at new line 2.
    // Rows are written as HTML allows (end tags implied): old number, new number, the text.
    expect(html).toContain('<tr class=del><td>2<td><td>-export const answer: number = 42<tr class=add><td><td>2<td>+export const answer: number = 43')
    expect(html).toContain('<tr class=hunk><td colspan=2><td>@@ -0,0 +1 @@<tr class=add><td><td>1<td>+export const extra = true</tbody>')
    // The root commit is compared with the empty tree; its body is shown escaped.
    const root = await (await page(`/alice/pub/commit/${await sha('master~1')}`)).text()
    expect(root).toContain('none (the first commit)')
    expect(root).toContain('With a body that says &lt;b&gt;why&lt;/b&gt;.')
    expectInert(root)
    // The 1 MB line is cut to what a line may show, and the 10 MB file to the page's budget.
    expect(root.length).toBeLessThan(3 * 1024 * 1024)
    const diff = await page(`/alice/pub/commit/${head}.diff`)
    expect(diff.headers.get('content-type')).toContain('text/plain')
    expect(await diff.text()).toContain('+export const answer: number = 43')
    expect((await page('/alice/pub/commit/0123456789abcdef0123456789abcdef01234567')).status).toBe(404)
    expect((await page('/alice/pub/commit/--output=x')).status).toBe(404)
  })

  test('a commit of 5,000 files renders a bounded page saying what was cut, while other pages keep answering', async () => {
    const many = await sha('many')
    const [big, home] = await Promise.all([page(`/alice/pub/commit/${many}`), page('/alice/pub')])
    expect(home.status).toBe(200)
    expect(big.status).toBe(200)
    const html = await big.text()
    expect(html).toContain('More than 1000 changed files')
    expect(html).toContain('Only the first 1000 files are listed.')
    expect(html).toContain('Only the first files are shown with their changes')
    expect(html.match(/<section class="box" id="diff-/g)!.length).toBe(100)
    expect(html.length).toBeLessThan(1024 * 1024)
  })
})

describe('branches, tags, releases', () => {
  test('branches and tags list their refs with links; releases show rendered notes inertly, assets and archives', async () => {
    const branches = await (await page('/alice/pub/branches')).text()
    for (const b of ['master', 'feature', 'other', 'many']) expect(branches).toContain(`href="/alice/pub/src/branch/${b}"`)
    expect(branches).toContain('href="/alice/pub/compare/master...feature"')
    const tags = await (await page('/alice/pub/tags')).text()
    expect(tags).toContain('href="/alice/pub/src/tag/v1.0"')
    expect(tags).toContain('Version 1.0')
    expect(tags).toContain('href="/alice/pub/archive/v1.0.zip"')
    const releases = await (await page('/alice/pub/releases')).text()
    expect(releases).toContain('First release')
    expect(releases).toContain('Notes</h2>')
    expect(releases).toContain('tool.zip')
    expectInert(releases)
    const api = (await s.get('/repos/alice/pub/releases/tags/v1.0')).body
    const one = await page(new URL(api.html_url).pathname)
    expect(one.status).toBe(200)
    const html = await one.text()
    expect(html).toContain(`href="${api.assets[0].browser_download_url}"`)
    expectInert(html)
    expect((await page('/alice/pub/releases/tag/v9')).status).toBe(404)
  })
})

describe('compare and pull requests', () => {
  test('compare: commits and diff; the form only for the signed-in; a POST without its CSRF token changes nothing; with it, a pull request through the service', async () => {
    const anon = await (await page('/alice/pub/compare/master...other')).text()
    expect(anon).toContain('Another change')
    expect(anon).toContain('docs/other.md')
    expect(anon).not.toContain('name="_csrf"')
    const cookie = await signIn(alice)
    const res = await page('/alice/pub/compare/master...other', { cookie })
    const html = await res.text()
    const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(html.slice(html.indexOf('Open a pull request')))![1]!
    const mark = contentMark(s.deps.db)
    const before = await mark()
    const forged = await fetch(s.url + '/alice/pub/compare/master...other', {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ title: 'Forged' }),
      redirect: 'manual',
    })
    expect(forged.status).toBe(403)
    expect(await mark()).toBe(before)
    const anonymous = await fetch(s.url + '/alice/pub/compare/master...other', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ title: 'x', _csrf: csrf }), redirect: 'manual' })
    expect(anonymous.status).toBe(401)
    const made = await fetch(s.url + '/alice/pub/compare/master...other', {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, title: 'Other work', body: 'Please <b>review</b>' }),
      redirect: 'manual',
    })
    expect(made.status).toBe(303)
    const index = Number(/\/alice\/pub\/pulls\/(\d+)$/.exec(made.headers.get('location')!)![1])
    const pull = (await s.get(`/repos/alice/pub/pulls/${index}`)).body
    expect([pull.title, pull.body, pull.head.ref, pull.base.ref, pull.user.login]).toEqual(['Other work', 'Please <b>review</b>', 'other', 'master', 'alice'])
    // The same again: the service's refusal (409: one open pull request per head and base), shown on the page.
    const again = await fetch(s.url + '/alice/pub/compare/master...other', {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, title: 'Twice' }),
      redirect: 'manual',
    })
    expect(again.status).toBe(409)
    expect(await again.text()).toContain('pull request already exists')
    expect((await page('/alice/pub/compare/master...nope')).status).toBe(404)
  })

  test("a pull request's files: its diff, its state, a link to its conversation", async () => {
    const res = await page(`/alice/pub/pulls/${pullIndex}/files`)
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('Change the answer')
    expect(html).toContain(`href="/alice/pub/pulls/${pullIndex}"`)
    expect(html).toContain('+export const answer: number = 43')
    expect(html).toContain('src/extra.ts')
    expect((await page('/alice/pub/pulls/999/files')).status).toBe(404)
  })
})

describe('access', () => {
  test('every code page of a private repository is a 404 page to anonymous visitors and strangers, and opens for its owner', async () => {
    const head = (await s.get('/repos/alice/secret/branches/feature', { token: alice.token })).body.commit.id
    const paths = [
      '/alice/secret/commits/branch/master',
      '/alice/secret/commits',
      `/alice/secret/commit/${head}`,
      `/alice/secret/commit/${head}.diff`,
      '/alice/secret/branches',
      '/alice/secret/tags',
      '/alice/secret/releases',
      '/alice/secret/releases/tag/v1.0',
      '/alice/secret/compare/master...feature',
      '/alice/secret/pulls/1/files',
      '/alice/secret/raw/branch/master/src/main.ts',
      '/alice/secret/src/branch/master/long.ts',
    ]
    const strangerCookie = await signIn(stranger)
    const aliceCookie = await signIn(alice)
    const problems: string[] = []
    for (const path of paths) {
      for (const [who, headers] of [
        ['anonymous', {}],
        ['stranger', { cookie: strangerCookie }],
      ] as const) {
        const res = await page(path, headers)
        const text = await res.text()
        if (res.status !== 404 || text.includes('six times nine') || text.includes('Secret change')) problems.push(`${who} ${path}: ${res.status}`)
      }
      const own = await page(path, { cookie: aliceCookie })
      if (own.status !== 200) problems.push(`alice ${path}: ${own.status}`)
    }
    expect(problems).toEqual([])
  })
})
