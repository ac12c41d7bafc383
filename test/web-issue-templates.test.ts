/**
 * The web's new issue and new pull request forms from a repository's templates (Gitea 1.23's
 * NewIssueChooseTemplate, NewIssue with `?template=`, NewIssuePost's RenderToMarkdown, the compare
 * page's pull request template), over plain HTTP: the chooser, the redirects, a Markdown
 * template's prefills, an issue form's fields and its answers as the issue's body, required
 * answers refused with nothing written, blank issues turned off, and hostile template text inert.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { signInByForm } from './web-session'
import { contentMark } from './db-snapshot'
import { ISSUE_FORM as FORM } from './issue-template-fixtures'

let s: TestServer
let alice: TestUser, bob: TestUser
const cookies: Record<string, string> = {}
const b64 = (text: string) => Buffer.from(text).toString('base64')

const page = (path: string, who?: string, init: RequestInit = {}) =>
  fetch(s.url + path, { ...init, headers: { accept: 'text/html', ...(who ? { cookie: cookies[who]! } : {}), ...(init.headers ?? {}) }, redirect: 'manual' })
const postForm = (path: string, who: string, fields: [string, string][]) =>
  page(path, who, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) })
async function csrfOf(who: string, path: string): Promise<string> {
  const text = await (await page(path, who)).text()
  return /name="_csrf" value="([0-9a-f]+)"/.exec(text)![1]!
}
const token = () => ({ token: alice.token })

/** Creates alice/`name` with `files` on its default branch (one commit through the contents API). */
async function repoWith(name: string, files: Record<string, string>) {
  expect((await s.post('/user/repos', { name, auto_init: true }, token())).status).toBe(201)
  const ops = Object.entries(files).map(([path, text]) => ({ operation: 'create', path, content: b64(text) }))
  if (ops.length) expect((await s.post(`/repos/alice/${name}/contents`, { files: ops, message: 'templates' }, token())).status).toBe(201)
}


const HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>'

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  cookies.alice = await signInByForm(s.url, alice)
  cookies.bob = await signInByForm(s.url, bob)
  await repoWith('tracker', {
    '.gitea/ISSUE_TEMPLATE/bug.md': '---\nname: Bug report\nabout: Something is broken\ntitle: "[bug] "\nlabels: bug, triage\nref: fix-branch\n---\n## What happened\n',
    '.gitea/ISSUE_TEMPLATE/form.yaml': FORM,
    '.gitea/ISSUE_TEMPLATE/evil.yaml': [
      `name: "${HOSTILE}"`,
      `about: "${HOSTILE}"`,
      'body:',
      `  - type: markdown`,
      `    attributes: { value: "${HOSTILE}" }`,
      `  - type: input`,
      `    id: "x\\"><script>alert(3)</script>"`,
      `    attributes: { label: "${HOSTILE}", placeholder: "\\"><script>alert(4)</script>", description: "${HOSTILE}" }`,
      '',
    ].join('\n'),
    '.gitea/ISSUE_TEMPLATE/config.yaml': `contact_links:\n  - name: Forum\n    url: https://forum.example.com\n    about: Ask there\n  - name: "${HOSTILE}"\n    url: "javascript:alert(5)"\n    about: "${HOSTILE}"\n`,
    '.gitea/PULL_REQUEST_TEMPLATE.md': '## Summary\n\nWhat does it change? <script>alert(6)</script>\n',
  })
  for (const name of ['bug', 'triage']) expect((await s.post('/repos/alice/tracker/labels', { name, color: '#ee0701' }, token())).status).toBe(201)
  expect((await s.put('/repos/alice/tracker/collaborators/bob', { permission: 'read' }, token())).status).toBe(204)
  await repoWith('closed', {
    '.github/ISSUE_TEMPLATE/only.md': '---\nname: Only way\nabout: The one template\n---\nbody\n',
    '.github/ISSUE_TEMPLATE/config.yml': 'blank_issues_enabled: false\n',
  })
  await repoWith('plain', {})
})
afterAll(async () => {
  await s.stop()
})

describe('the template chooser', () => {
  test("lists the templates with their Get started links, the contact links, and the blank issue", async () => {
    const r = await page('/alice/tracker/issues/new/choose', 'alice')
    expect(r.status).toBe(200)
    const html = await r.text()
    expect(html).toContain('Bug report')
    expect(html).toContain('Something is broken')
    expect(html).toContain('href="/alice/tracker/issues/new?template=.gitea%2FISSUE_TEMPLATE%2Fbug.md"')
    expect(html).toContain('href="/alice/tracker/issues/new?template=.gitea%2FISSUE_TEMPLATE%2Fform.yaml"')
    expect(html).toContain('href="https://forum.example.com"')
    expect(html).toContain('Ask there')
    expect(html).toContain('href="/alice/tracker/issues/new">Open a blank issue')
    // The list's New issue button goes through the chooser.
    expect(await (await page('/alice/tracker/issues', 'alice')).text()).toContain('href="/alice/tracker/issues/new/choose"')
  })

  test('a repository without templates or contact links goes to the blank form; /issues/new stays the blank form while blank issues are on', async () => {
    const r = await page('/alice/plain/issues/new/choose', 'alice')
    expect(r.status).toBe(303)
    expect(r.headers.get('location')).toBe('/alice/plain/issues/new')
    const blank = await page('/alice/tracker/issues/new', 'alice')
    expect(blank.status).toBe(200)
    expect(await blank.text()).not.toContain('template-file')
    // Anonymous visitors are sent to sign in.
    expect((await page('/alice/tracker/issues/new/choose')).status).toBe(303)
    expect((await page('/alice/tracker/issues/new/choose')).headers.get('location')).toContain('/user/login')
  })

  test('blank issues turned off: no blank link, and /issues/new without a template goes to the chooser', async () => {
    const html = await (await page('/alice/closed/issues/new/choose', 'alice')).text()
    expect(html).toContain('Only way')
    expect(html).not.toContain('Open a blank issue')
    const r = await page('/alice/closed/issues/new', 'alice')
    expect(r.status).toBe(303)
    expect(r.headers.get('location')).toBe('/alice/closed/issues/new/choose')
    expect((await page('/alice/closed/issues/new?template=.github%2FISSUE_TEMPLATE%2Fonly.md', 'alice')).status).toBe(200)
  })
})

describe('a Markdown template', () => {
  test('prefills the title, body, ref, and for a writer its labels; a reader sees no labels', async () => {
    const html = await (await page('/alice/tracker/issues/new?template=.gitea%2FISSUE_TEMPLATE%2Fbug.md', 'alice')).text()
    expect(html).toContain('name="title" required maxlength="255" value="[bug] "')
    expect(html).toMatch(/<textarea name="content"[^>]*>## What happened\n<\/textarea>/)
    expect(html).toContain('name="ref" value="refs/heads/fix-branch"')
    const labels = await (await s.get('/repos/alice/tracker/labels', token())).body
    for (const l of labels as { id: number; name: string }[]) expect(html).toMatch(new RegExp(`value="${l.id}" checked>`))
    const reader = await (await page('/alice/tracker/issues/new?template=.gitea%2FISSUE_TEMPLATE%2Fbug.md', 'bob')).text()
    expect(reader).toContain('value="[bug] "')
    expect(reader).not.toContain('name="label_ids"')
    // A path outside the template folders is not read.
    const outside = await (await page('/alice/tracker/issues/new?template=README.md', 'alice')).text()
    expect(outside).not.toContain('template-file')
  })

  test('posting it files the issue with the ref and labels', async () => {
    const csrf = await csrfOf('alice', '/alice/tracker/issues/new')
    const labels = (await s.get('/repos/alice/tracker/labels', token())).body as { id: number }[]
    const r = await postForm('/alice/tracker/issues/new', 'alice', [
      ['_csrf', csrf],
      ['template-file', '.gitea/ISSUE_TEMPLATE/bug.md'],
      ['ref', 'refs/heads/fix-branch'],
      ['title', '[bug] it broke'],
      ['content', '## What happened\nIt broke.'],
      ...labels.map((l) => ['label_ids', String(l.id)] as [string, string]),
    ])
    expect(r.status).toBe(303)
    const index = Number(r.headers.get('location')!.split('/').pop())
    const issue = (await s.get(`/repos/alice/tracker/issues/${index}`, token())).body
    expect(issue).toMatchObject({ title: '[bug] it broke', body: '## What happened\nIt broke.', ref: 'refs/heads/fix-branch' })
    expect(issue.labels.map((l: { name: string }) => l.name).sort()).toEqual(['bug', 'triage'])
  })
})

describe('an issue form', () => {
  const formPath = '/alice/tracker/issues/new?template=.gitea%2FISSUE_TEMPLATE%2Fform.yaml'

  test('renders its fields with their labels, descriptions, placeholders and required marks', async () => {
    const html = await (await page(formPath, 'alice')).text()
    expect(html).toContain('Thanks for taking the time!')
    expect(html).toMatch(/<input id="field-version" name="form-field-version"[^>]*required placeholder="1.2.3"/)
    expect(html).toContain('Which version')
    expect(html).toContain('name="form-field-logs"')
    expect(html).toMatch(/<select id="field-os" name="form-field-os"[^>]*multiple>/)
    expect(html).toContain('<option value="1">macOS</option>')
    expect(html).toMatch(/name="form-field-terms-0" required> I searched first/)
    expect(html).toContain('name="form-field-terms-1"')
    expect(html).toContain('name="template-file" value=".gitea/ISSUE_TEMPLATE/form.yaml"')
    expect(html).not.toContain('name="content"')
  })

  test("its answers become the issue's body, Gitea's way", async () => {
    const csrf = await csrfOf('alice', formPath)
    const r = await postForm('/alice/tracker/issues/new', 'alice', [
      ['_csrf', csrf],
      ['template-file', '.gitea/ISSUE_TEMPLATE/form.yaml'],
      ['title', '[form] crash'],
      ['form-field-version', ' 1.2.3 '],
      ['form-field-logs', 'panic: ```\nline'],
      ['form-field-os', '0'],
      ['form-field-os', '2'],
      ['form-field-terms-0', 'on'],
    ])
    expect(r.status).toBe(303)
    const index = Number(r.headers.get('location')!.split('/').pop())
    const issue = (await s.get(`/repos/alice/tracker/issues/${index}`, token())).body
    expect(issue.body).toBe(
      [
        '### Version',
        '',
        '1.2.3',
        '',
        '### Logs',
        '',
        '```shell',
        'panic: ```',
        'line',
        '```',
        '',
        '### System',
        '',
        'Linux, Windows',
        '',
        '### Terms',
        '',
        '- [x] I searched first',
        '- [ ] I can help',
        '',
        '',
      ].join('\n'),
    )
  })

  test('a required answer missing is refused with a 422 on the form, which keeps the answers; nothing is written', async () => {
    const csrf = await csrfOf('alice', formPath)
    const mark = contentMark(s.deps.db)
    const before = await mark()
    const missing = await postForm('/alice/tracker/issues/new', 'alice', [
      ['_csrf', csrf],
      ['template-file', '.gitea/ISSUE_TEMPLATE/form.yaml'],
      ['title', '[form] no version'],
      ['form-field-version', '   '],
      ['form-field-logs', 'kept text'],
      ['form-field-terms-0', 'on'],
    ])
    expect(missing.status).toBe(422)
    const html = await missing.text()
    expect(html).toContain('&quot;Version&quot; needs an answer.')
    expect(html).toContain('kept text')
    expect(html).toContain('value="[form] no version"')
    const unticked = await postForm('/alice/tracker/issues/new', 'alice', [
      ['_csrf', csrf],
      ['template-file', '.gitea/ISSUE_TEMPLATE/form.yaml'],
      ['title', '[form] unticked'],
      ['form-field-version', '1'],
    ])
    expect(unticked.status).toBe(422)
    expect(await unticked.text()).toContain('I searched first')
    expect(await mark()).toBe(before)
  })
})

describe('hostile template text', () => {
  test('is escaped on the chooser and the form; a javascript: contact link is no link', async () => {
    const chooser = await (await page('/alice/tracker/issues/new/choose', 'alice')).text()
    const form = await (await page('/alice/tracker/issues/new?template=.gitea%2FISSUE_TEMPLATE%2Fevil.yaml', 'alice')).text()
    for (const html of [chooser, form]) {
      expect(html).not.toContain('<script>alert')
      expect(html).not.toContain('<img src=x')
      expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    }
    expect(chooser).not.toContain('href="javascript:')
    expect(form).not.toContain('"><script>')
  })
})

describe('the pull request template', () => {
  test("prefills a new pull request's description on the compare page, escaped", async () => {
    expect((await s.post('/repos/alice/tracker/branches', { new_branch_name: 'topic', old_branch_name: 'main' }, token())).status).toBe(201)
    const files = [{ operation: 'create', path: 'topic.txt', content: b64('topic\n') }]
    expect((await s.post('/repos/alice/tracker/contents', { branch: 'topic', files, message: 'topic' }, token())).status).toBe(201)
    const html = await (await page('/alice/tracker/compare/main...topic', 'alice')).text()
    expect(html).toMatch(/<textarea name="body"[^>]*>## Summary\n\nWhat does it change\? &lt;script&gt;alert\(6\)&lt;\/script&gt;\n<\/textarea>/)
    // Without a template the description starts empty.
    await repoWith('notpl', {})
    expect((await s.post('/repos/alice/notpl/branches', { new_branch_name: 'topic', old_branch_name: 'main' }, token())).status).toBe(201)
    expect((await s.post('/repos/alice/notpl/contents', { branch: 'topic', files, message: 'topic' }, token())).status).toBe(201)
    expect(await (await page('/alice/notpl/compare/main...topic', 'alice')).text()).toMatch(/<textarea name="body"[^>]*><\/textarea>/)
  })
})
