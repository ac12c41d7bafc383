import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import { signInByForm } from './web-session'

/**
 * The code search page (`/{o}/{r}/search`, Gitea's git grep search): lines found with their
 * numbers and links, in any case, the text searched literally, binary files left out, HTML in
 * files escaped, paged by files; the refusals (a long or broken text, a private repository).
 */

let s: TestServer
let alice: TestUser, stranger: TestUser

const page = (path: string, cookie?: string) => fetch(s.url + path, { headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) }, redirect: 'manual' })
const html = async (path: string, cookie?: string) => {
  const res = await page(path, cookie)
  return { status: res.status, text: await res.text() }
}
/** The paths of the files a results page lists. */
const filesIn = (text: string) => [...text.matchAll(/<div class="box code-result"><header><strong>([^<]*)<\/strong>/g)].map((m) => m[1])

async function pushRepo(name: string, files: Record<string, string | Buffer>, priv = false) {
  expect((await s.post('/user/repos', { name, private: priv, default_branch: 'main' }, { token: alice.token })).status).toBe(201)
  const dir = tempDir('warren-grep-')
  await gitOk(dir, 'init', '-q', '-b', 'main')
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), content)
  }
  await gitOk(dir, 'add', '-A')
  await gitOk(dir, 'commit', '-q', '-m', 'Files to search')
  await gitOk(dir, 'push', '-q', remoteUrl(s.url, `alice/${name}.git`, alice.name, alice.password), 'main')
}

const FILES: Record<string, string | Buffer> = {
  'src/app.ts': 'import x from "y"\nexport const Hello = "World"\n// say hello\nconst three = 3\nconst four = 4\nconst five = 5\nconsole.log("HELLO there")\n',
  'docs/notes.md': '# Notes\n\n<script>alert("hello")</script>\n',
  'bin.dat': Buffer.from([0, 1, 2, 104, 101, 108, 108, 111, 0, 255]),
  'regex.txt': 'a.c literally\n1\n2\n3\nabc is not it\n4\n5\n6\nprice.*[0-9]+ (a|b)\n',
  'dir with space/file #1.txt': 'hello from a path that needs encoding\n',
}
for (let i = 0; i < 12; i++) FILES[`many/f${String(i).padStart(2, '0')}.txt`] = `pagetoken ${i}\n`
// More files than a search reads (50), and a line longer than it keeps (500 bytes).
for (let i = 0; i < 55; i++) FILES[`lots/f${String(i).padStart(2, '0')}.txt`] = `overflow ${i}\n`
FILES['repeats.txt'] = 'again\n'.repeat(60)
FILES['minified.js'] = `var needle=1;${'x=1;'.repeat(1000)}var tail=2\n`

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  stranger = await s.user('stranger')
  await pushRepo('pub', FILES)
  await pushRepo('secret', { 'a.txt': 'hidden hello\n' }, true)
  expect((await s.post('/user/repos', { name: 'empty' }, { token: alice.token })).status).toBe(201)
}, 120_000)
afterAll(() => s.stop())

describe('code search', () => {
  test('finds lines in any case, numbered, each a link to its line in the file; the words marked; binary files left out; the box in the repository header', async () => {
    const { status, text } = await html('/alice/pub/search?q=hello')
    expect(status).toBe(200)
    expect(filesIn(text)).toEqual(['dir with space/file #1.txt', 'docs/notes.md', 'src/app.ts'])
    expect(text).toContain('3 files matching “<strong>hello</strong>”')
    for (const piece of [
      // Each line's number links to it on the default branch; a matching line's words are marked, in any case.
      '<a href="/alice/pub/src/branch/main/src/app.ts#L2">2</a>',
      'export const <mark>Hello</mark> = &quot;World&quot;',
      '// say <mark>hello</mark>',
      'console.log(&quot;<mark>HELLO</mark> there&quot;)',
      // A line of context around each match, a gap where lines are skipped.
      '<a href="/alice/pub/src/branch/main/src/app.ts#L4">4</a>',
      '<tr class="gap">',
      // The file's path encoded in its links.
      'href="/alice/pub/src/branch/main/dir%20with%20space/file%20%231.txt#L1"',
    ])
      expect(text).toContain(piece)
    expect(text).not.toContain('#L5"')
    expect(text).not.toContain('bin.dat')
    // HTML in a file is text on the page.
    expect(text).toContain('&lt;script&gt;alert(&quot;<mark>hello</mark>&quot;)&lt;/script&gt;')
    expect(text).not.toContain('<script>alert')
    // Every repository page has the search box (a GET form); the search page has its own form instead.
    const home = await (await page('/alice/pub')).text()
    expect(home).toContain('<form class="row code-search" method="get" action="/alice/pub/search" role="search"')
    expect(text.match(/action="\/alice\/pub\/search"/g)).toHaveLength(1)
    expect(text).toContain('value="hello"')
  })

  test('the text is searched literally: regular expression characters are themselves; fuzzy finds any word, exact the whole text', async () => {
    const dot = await html('/alice/pub/search?q=a.c&fuzzy=false')
    expect(filesIn(dot.text)).toEqual(['regex.txt'])
    expect(dot.text).toContain('<mark>a.c</mark> literally')
    expect(dot.text).not.toContain('abc is not it')
    const meta = await html(`/alice/pub/search?q=${encodeURIComponent('price.*[0-9]+ (a|b)')}&fuzzy=false`)
    expect(meta.text).toContain('<mark>price.*[0-9]+ (a|b)</mark>')
    expect(meta.text).toContain('<a href="/alice/pub/src/branch/main/regex.txt#L9">9</a>')
    expect(meta.text).toContain('<option value="false" selected>')
    // Fuzzy (the default): any of the words.
    const fuzzy = await html('/alice/pub/search?q=zebra+pagetoken')
    expect(filesIn(fuzzy.text)).toHaveLength(10)
    const exact = await html('/alice/pub/search?q=zebra+pagetoken&fuzzy=false')
    expect(filesIn(exact.text)).toEqual([])
    expect(exact.text).toContain('No results: nothing in this repository&#39;s code matches “zebra pagetoken”.')
  })

  test('paged by files, ten a page; nothing found says so', async () => {
    const first = await html('/alice/pub/search?q=PAGETOKEN')
    expect(first.text).toContain('12 files matching')
    expect(filesIn(first.text)).toEqual(Array.from({ length: 10 }, (_, i) => `many/f${String(i).padStart(2, '0')}.txt`))
    expect(first.text).toContain('href="/alice/pub/search?q=PAGETOKEN&amp;page=2" rel="next"')
    const second = await html('/alice/pub/search?q=PAGETOKEN&page=2')
    expect(filesIn(second.text)).toEqual(['many/f10.txt', 'many/f11.txt'])
    const none = await html('/alice/pub/search?q=nothing-here-at-all')
    expect(none.status).toBe(200)
    expect(filesIn(none.text)).toEqual([])
    expect(none.text).toContain('No results')
    // Past the files a search reads: the first 50, said to be; a long line cut, said to be.
    const lots = await html('/alice/pub/search?q=overflow&page=5')
    expect(lots.text).toContain('50 files (at least) matching')
    expect(lots.text).toContain('More files match than are listed here: only the first 50 are.')
    expect(filesIn(lots.text)).toEqual(Array.from({ length: 10 }, (_, i) => `lots/f${40 + i}.txt`))
    expect((await html('/alice/pub/search?q=overflow&page=6')).text).not.toContain('code-result')
    const cut = await html('/alice/pub/search?q=NEEDLE')
    expect(cut.text).toContain(`var <mark>needle</mark>=1;${'x=1;'.repeat(121)}x=1<span class="muted" title="The line goes on">…</span>`)
    expect(cut.text).not.toContain('tail')
    const repeats = await html('/alice/pub/search?q=again')
    expect(repeats.text.match(/<tr class="hit">/g)).toHaveLength(50)
    expect(repeats.text).toContain('Only the first 50 matching lines of this file are shown.')
    expect(cut.text).not.toContain('Only the first')
    // No text: the form alone.
    const blank = await html('/alice/pub/search?q=+')
    expect(blank.status).toBe(200)
    expect(blank.text).not.toContain('aria-label="Results"')
  })

  test('refused: a text too long or holding line breaks (422 with the reason); a private repository is a 404 to others; an empty repository says so', async () => {
    const long = await html(`/alice/pub/search?q=${'x'.repeat(201)}`)
    expect(long.status).toBe(422)
    expect(long.text).toContain('The search text is too long: at most 200 characters.')
    expect(long.text).not.toContain('aria-label="Results"')
    expect((await html(`/alice/pub/search?q=${'x'.repeat(200)}`)).status).toBe(200)
    const broken = await html('/alice/pub/search?q=a%0Ab')
    expect(broken.status).toBe(422)
    expect(broken.text).toContain('may not hold control characters or line breaks')
    expect((await html('/alice/pub/search?q=' + 'x'.repeat(5000))).status).toBe(422)

    expect((await html('/alice/secret/search?q=hello')).status).toBe(404)
    const strangerPage = await html('/alice/secret/search?q=hello', await signInByForm(s.url, stranger))
    expect(strangerPage.status).toBe(404)
    expect(strangerPage.text).not.toContain('hidden hello')
    const own = await html('/alice/secret/search?q=hello', await signInByForm(s.url, alice))
    expect(own.status).toBe(200)
    expect(own.text).toContain('hidden <mark>hello</mark>')

    const empty = await html('/alice/empty/search?q=hello')
    expect(empty.status).toBe(200)
    expect(empty.text).toContain('This repository is empty: there is no code to search yet.')
  })
})
