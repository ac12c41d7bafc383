// runs in one half: sqlite
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { giteaApi } from 'gitea-js'
import { startTestServer, type TestServer } from './helpers'

let s: TestServer
beforeAll(async () => {
  s = await startTestServer()
})
afterAll(() => s.stop())

const render = async (body: unknown) => {
  const r = await s.post('/markdown', body)
  expect(r.status).toBe(200)
  expect(r.headers.get('content-type')).toBe('text/html; charset=UTF-8')
  return r.text
}
const raw = (text: string, contentType?: string) =>
  s.request('POST', '/markdown/raw', { raw: text, headers: contentType ? { 'content-type': contentType } : {} })

describe('POST /markdown', () => {
  test('renders ordinary markup: headings with ids, emphasis, lists, tables, code, task lists', async () => {
    const html = await render({
      Text: '# Title\n\n## Title\n\nSome *em* and **strong** and ~~gone~~.\n\n1. one\n2. two\n\n- [x] done\n- [ ] todo\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\n\n```ts\nconst x = 1 < 2\n```\n\n> quote\n\n`inline`',
    })
    expect(html).toContain('<h1 id="user-content-title">Title</h1>')
    expect(html).toContain('<h2 id="user-content-title-1">Title</h2>')
    expect(html).toContain('<em>em</em>')
    expect(html).toContain('<strong>strong</strong>')
    expect(html).toContain('<del>gone</del>')
    expect(html).toContain('<ol>')
    expect(html).toContain('<input type="checkbox" checked disabled />')
    expect(html).toContain('<input type="checkbox" disabled />')
    expect(html).toContain('<th align="center">b</th>')
    expect(html).toContain('<td>1</td>')
    expect(html).toContain('<pre><code class="language-ts">const x = 1 &lt; 2\n</code></pre>')
    expect(html).toContain('<blockquote>')
    expect(html).toContain('<code>inline</code>')
  })

  test('lower-case keys work like the documented capitalised ones', async () => {
    expect(await render({ text: '**b**' })).toBe('<p><strong>b</strong></p>\n')
    expect(await render({ Text: '**b**' })).toBe('<p><strong>b</strong></p>\n')
  })

  test('gfm mode with a context links #123 and @user, not inside code or links', async () => {
    const base = s.config.baseUrl
    const html = await render({
      Text: 'Fixes #12, thanks @bob. Not a#3, `#4`, [see #5](https://x.example/) or bob@example.com.\n\n```\n#6 @carol\n```',
      Mode: 'gfm',
      Context: 'owner/repo',
    })
    expect(html).toContain(`<a href="${base}owner/repo/issues/12" class="ref-issue">#12</a>`)
    expect(html).toContain(`<a href="${base}bob" class="mention">@bob</a>`)
    expect(html).toContain('a#3')
    expect(html).toContain('<code>#4</code>')
    expect(html).toContain('<a href="https://x.example/">see #5</a>')
    expect(html).toContain('<a href="mailto:bob@example.com">bob@example.com</a>')
    expect(html).toContain('#6 @carol')
    expect(html).not.toContain('issues/3')
    expect(html).not.toContain('issues/4')
    expect(html).not.toContain('issues/5')
    expect(html).not.toContain('issues/6')
    expect(html).not.toContain(`${base}carol`)
  })

  test('a full URL as context; relative links and images are resolved; wiki links', async () => {
    const html = await render({ mode: 'gfm', context: 'https://other.example/o/r/', text: 'See #7 and [doc](docs/a.md) ![pic](img/p.png) [top](#top)' })
    expect(html).toContain('<a href="https://other.example/o/r/issues/7" class="ref-issue">#7</a>')
    expect(html).toContain('<a href="https://other.example/o/r/src/branch/master/docs/a.md">doc</a>')
    expect(html).toContain('<img src="https://other.example/o/r/raw/branch/master/img/p.png" alt="pic" />')
    expect(html).toContain('<a href="#top">top</a>')
    const wiki = await render({ Mode: 'gfm', Context: 'o/r', Wiki: true, Text: '[Home](Home)' })
    expect(wiki).toContain(`<a href="${s.config.baseUrl}o/r/wiki/Home">Home</a>`)
  })

  test('plain mode (and gfm without context) leaves #123 alone', async () => {
    expect(await render({ Text: 'issue #12', Mode: 'markdown', Context: 'o/r' })).toBe('<p>issue #12</p>\n')
    expect(await render({ Text: 'issue #12', Mode: 'gfm' })).toBe('<p>issue #12</p>\n')
    expect(await render({ Text: 'issue #12' })).toBe('<p>issue #12</p>\n')
  })

  test('empty text answers 200 with an empty body', async () => {
    expect(await render({ Text: '' })).toBe('')
    expect(await render({})).toBe('')
    const none = await s.request('POST', '/markdown')
    expect(none.status).toBe(200)
    expect(none.text).toBe('')
  })

  test('XSS: scripts, event handlers, javascript: and data: URLs, raw attributes are removed', async () => {
    const cases = [
      '<script>alert(1)</script>',
      '<img src="x.png" onerror="alert(1)">',
      '<a href="javascript:alert(1)">a</a>',
      '<a href="JaVaScRiPt:alert(1)">b</a>',
      '<a href="  javascript:alert(1)">c</a>',
      '<a href="&#106;avascript:alert(1)">d</a>',
      '[e](javascript:alert%281%29)',
      '[f](<javascript:alert(1)>)',
      '![g](data:image/svg+xml;base64,PHN2Zz4=)',
      '<iframe src="https://evil.example"></iframe>',
      '<style>body{display:none}</style>',
      '<div onclick="alert(1)" style="position:fixed">h</div>',
      '<svg onload="alert(1)"><circle/></svg>',
      '<object data="x.swf"></object><embed src="x.swf">',
      '<form action="https://evil.example"><input type="text" name="q"><button>go</button></form>',
      '<a href="https://ok.example" onmouseover="alert(1)" target="_blank">i</a>',
      '<img src="vbscript:msgbox(1)">',
      '<math><mi xlink:href="javascript:alert(1)">x</mi></math>',
      '<meta http-equiv="refresh" content="0;url=https://evil.example">',
      '<base href="https://evil.example/">',
      '<input type="checkbox" onclick="alert(1)" checked>',
    ]
    for (const text of cases) {
      for (const mode of ['gfm', 'markdown']) {
        const html = (await render({ Text: text, Mode: mode, Context: 'o/r' })).toLowerCase()
        expect(html).not.toContain('<script')
        expect(html).not.toContain('javascript:')
        expect(html).not.toContain('vbscript:')
        expect(html).not.toContain('data:')
        expect(html).not.toMatch(/\son[a-z]+=/)
        expect(html).not.toContain('<iframe')
        expect(html).not.toContain('<style')
        expect(html).not.toContain('style=')
        expect(html).not.toContain('<svg')
        expect(html).not.toContain('<object')
        expect(html).not.toContain('<embed')
        expect(html).not.toContain('<form')
        expect(html).not.toContain('<meta')
        expect(html).not.toContain('<base')
        expect(html).not.toContain('target=')
        expect(html).not.toContain('type="text"')
      }
    }
    // safe content of those cases survives
    expect(await render({ Text: '<a href="https://ok.example" onmouseover="alert(1)">i</a>' })).toBe('<p><a href="https://ok.example">i</a></p>\n')
    expect(await render({ Text: '<input type="checkbox" onclick="alert(1)" checked>' })).toContain('<input type="checkbox" checked disabled />')
  })

  test('bad input: wrong types, wrong shape, malformed JSON, over-long text → 4xx error shape', async () => {
    for (const body of [{ Text: 5 }, { text: ['a'] }, { Mode: true }, { Wiki: 'yes' }, { Text: 'x'.repeat(1024 * 1024 + 1) }, ['# a'], 'just a string']) {
      const r = await s.post('/markdown', body)
      expect(r.status).toBe(422)
      expect(r.body).toMatchObject({ message: expect.any(String), url: `${s.config.baseUrl}api/swagger` })
    }
    const bad = await s.request('POST', '/markdown', { raw: '{"Text": ', headers: { 'content-type': 'application/json' } })
    expect(bad.status).toBe(400)
    expect(bad.body.message).toBeString()
  })
})

describe('POST /markdown/raw', () => {
  test('renders a text/plain body in plain mode', async () => {
    const r = await raw('# Raw\n\nissue #12 and @bob', 'text/plain')
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('text/html; charset=UTF-8')
    expect(r.text).toBe('<h1 id="user-content-raw">Raw</h1>\n<p>issue #12 and @bob</p>\n')
  })

  test('reads the body as text whatever the content type (JSON-looking or not, none at all)', async () => {
    expect((await raw('{"Text": "*x*"}', 'application/json')).text).toBe('<p>{"Text": "<em>x</em>"}</p>\n')
    expect((await raw('# not json {', 'application/json')).status).toBe(200)
    expect((await raw('**b**')).text).toBe('<p><strong>b</strong></p>\n')
    expect((await raw('a=b&c', 'application/x-www-form-urlencoded')).text).toBe('<p>a=b&amp;c</p>\n')
  })

  test('empty body answers 200 empty; XSS is removed; over-long text is 422', async () => {
    const empty = await raw('', 'text/plain')
    expect(empty.status).toBe(200)
    expect(empty.text).toBe('')
    const xss = await raw('<script>alert(1)</script><img src="a.png" onerror="alert(1)">[x](javascript:alert%281%29)', 'text/plain')
    expect(xss.status).toBe(200)
    expect(xss.text).not.toContain('<script')
    expect(xss.text).not.toContain('onerror')
    expect(xss.text).not.toMatch(/href="javascript/i)
    expect(xss.text).toContain('<img src="a.png" />')
    const link = await raw('[x](javascript:alert%281%29) <a href="javascript:alert(1)">y</a>', 'text/plain')
    expect(link.text).toBe('<p><a>x</a> <a>y</a></p>\n')
    const long = await raw('x'.repeat(1024 * 1024 + 1), 'text/plain')
    expect(long.status).toBe(422)
    expect(long.body.url).toBe(`${s.config.baseUrl}api/swagger`)
  })
})

describe('POST /markup', () => {
  test('gitea-js renderMarkup: plain markdown, gfm/comment/file/wiki modes against the context, the same renderer as /markdown', async () => {
    const api = giteaApi(s.url, {})
    const base = s.config.baseUrl
    const text = async (r: Promise<{ status: number; data: string }>) => {
      const res = await r
      expect(res.status).toBe(200)
      return res.data
    }
    const plain = await text(api.markup.renderMarkup({ Text: '# T\n\nsee #3' }, { format: 'text' }))
    expect(plain).toBe(await render({ Text: '# T\n\nsee #3' }))
    expect(plain).not.toContain('issues/3')
    for (const Mode of ['gfm', 'comment', 'file']) {
      const html = await text(api.markup.renderMarkup({ Text: 'Fixes #12 [doc](doc.md)', Mode, Context: 'owner/repo', FilePath: 'README.md' }, { format: 'text' }))
      expect(html).toContain(`<a href="${base}owner/repo/issues/12" class="ref-issue">#12</a>`)
      expect(html).toBe(await render({ Text: 'Fixes #12 [doc](doc.md)', Mode: 'gfm', Context: 'owner/repo' }))
    }
    const wiki = await text(api.markup.renderMarkup({ Text: '[page](Other)', Mode: 'wiki', Context: 'owner/repo' }, { format: 'text' }))
    expect(wiki).toContain(`${base}owner/repo/wiki/Other`)
    expect(await text(api.markup.renderMarkup({ Text: '[page](Other)', Wiki: true, Context: 'owner/repo' }, { format: 'text' }))).toBe(wiki)
  })

  test('an unknown mode is 422; empty text is empty; too long is 422; a null body is an empty option', async () => {
    const bad = await s.post('/markup', { Text: 'x', Mode: 'asciidoc' })
    expect(bad.status).toBe(422)
    expect(bad.body.message).toBe('Unknown mode: asciidoc')
    const empty = await s.post('/markup', { Mode: 'gfm' })
    expect(empty.status).toBe(200)
    expect(empty.text).toBe('')
    expect((await s.post('/markup', null)).status).toBe(200)
    const long = await s.post('/markup', { Text: 'x'.repeat(1024 * 1024 + 1) })
    expect(long.status).toBe(422)
    expect((await s.post('/markup', { Text: 'x', FilePath: 'a'.repeat(5000) })).status).toBe(422)
  })
})
