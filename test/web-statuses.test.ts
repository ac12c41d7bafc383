import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { signInByForm } from './web-session'

/**
 * Commit statuses (CI checks) on the web pages: posted through the API, shown on the pull
 * request's merge box (each context, its state, description, Details link, the summary, the
 * contexts the base branch's rule requires and whether they block), on the history, a pull
 * request's Commits tab, the commit page and the repository home's latest commit line; a target
 * that is no http(s) address is never a link; user text escaped; a private repository's pages
 * hidden from strangers.
 */

let s: TestServer
let alice: TestUser, stranger: TestUser
let aliceCookie = ''
let mainSha = '', headSha = '', secretSha = ''
let prIndex = 0
const b64 = (text: string) => Buffer.from(text).toString('base64')

const page = async (path: string, cookie?: string) => {
  const res = await fetch(s.url + path, { headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) }, redirect: 'manual' })
  return { status: res.status, html: await res.text() }
}
const status = (repo: string, sha: string, body: Record<string, unknown>) => s.post(`/repos/alice/${repo}/statuses/${sha}`, body, { token: alice.token })

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  stranger = await s.user('stranger')
  const token = { token: alice.token }
  expect((await s.post('/user/repos', { name: 'ci', auto_init: true }, token)).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'secret', auto_init: true, private: true }, token)).status).toBe(201)
  mainSha = (await s.get('/repos/alice/ci/branches/main', token)).body.commit.id
  secretSha = (await s.get('/repos/alice/secret/branches/main', token)).body.commit.id
  expect((await s.post('/repos/alice/ci/contents/feature.txt', { new_branch: 'feature', content: b64('a feature\n'), message: 'Add the feature' }, token)).status).toBe(201)
  headSha = (await s.get('/repos/alice/ci/branches/feature', token)).body.commit.id
  const pr = await s.post('/repos/alice/ci/pulls', { head: 'feature', base: 'main', title: 'Add the feature' }, token)
  expect(pr.status).toBe(201)
  prIndex = pr.body.number
  expect((await s.post('/repos/alice/ci/branch_protections', { rule_name: 'main', enable_status_check: true, status_check_contexts: ['ci/build', 'deploy/*'] }, token)).status).toBe(201)
  expect((await status('ci', headSha, { state: 'success', context: 'ci/build', description: 'Built <b>fine</b>', target_url: 'https://ci.example/build/1' })).status).toBe(201)
  expect((await status('ci', headSha, { state: 'failure', context: 'lint <script>alert(1)</script>', description: '<img src=x onerror=alert(2)>', target_url: 'javascript:alert(3)' })).status).toBe(201)
  expect((await status('ci', mainSha, { state: 'success', context: 'ci/build', target_url: 'https://ci.example/build/0' })).status).toBe(201)
  expect((await status('secret', secretSha, { state: 'error', context: 'ci/hidden' })).status).toBe(201)
  aliceCookie = await signInByForm(s.url, alice)
})
afterAll(async () => {
  await s.stop()
})

describe('commit statuses on the web pages', () => {
  test("the pull request's merge box: each check, the summary, required ones marked, hostile targets and text inert", async () => {
    const { status: code, html } = await page(`/alice/ci/pulls/${prIndex}`)
    expect(code).toBe(200)
    expect(html).toContain('Some checks failed')
    expect(html).toContain('<strong>ci/build</strong>')
    expect(html).toContain('Built &lt;b&gt;fine&lt;/b&gt;')
    expect(html).toContain('href="https://ci.example/build/1"')
    expect(html).toContain('>Details</a>')
    // The hostile check: its context and description escaped, its javascript: target shown as text, never a link.
    expect(html).not.toContain('<script>alert(1)')
    expect(html).not.toContain('<img src=x')
    expect(html).toContain('lint &lt;script&gt;alert(1)&lt;/script&gt;')
    expect(html).not.toMatch(/href="\s*javascript:/i)
    expect(html).toContain('(javascript:alert(3))')
    // ci/build is required and reported; deploy/* is required and has no status yet: the required checks block.
    const checks = html.slice(html.indexOf('aria-label="Checks"'))
    expect(checks).toMatch(/<strong>ci\/build<\/strong>.*?<span class="label">Required<\/span>/s)
    expect(checks).toMatch(/Expected<\/span> <strong>deploy\/\*<\/strong>/)
    expect(html).toContain('Required checks must succeed before this pull request can be merged.')
    // The writer sees the merge gate's own reason.
    const mine = await page(`/alice/ci/pulls/${prIndex}`, aliceCookie)
    expect(mine.html).toContain('Not all required status checks successful')
  })

  test('once every required check succeeds they no longer block; the summary follows the combined state', async () => {
    expect((await status('ci', headSha, { state: 'pending', context: 'deploy/staging', description: 'deploying' })).status).toBe(201)
    let html = (await page(`/alice/ci/pulls/${prIndex}`)).html
    expect(html).toContain('Required checks must succeed')
    expect((await status('ci', headSha, { state: 'success', context: 'deploy/staging' })).status).toBe(201)
    expect((await status('ci', headSha, { state: 'success', context: 'lint <script>alert(1)</script>' })).status).toBe(201)
    html = (await page(`/alice/ci/pulls/${prIndex}`)).html
    expect(html).toContain('All checks were successful')
    expect(html).not.toContain('Required checks must succeed')
    expect(html).not.toContain('Expected</span>')
    expect((await page(`/alice/ci/pulls/${prIndex}`, aliceCookie)).html).not.toContain('Not all required status checks successful')
    expect((await status('ci', headSha, { state: 'pending', context: 'ci/extra' })).status).toBe(201)
    expect((await page(`/alice/ci/pulls/${prIndex}`)).html).toContain('Some checks are pending')
  })

  test("commit lists, the commit page, the home's latest commit and the branch list: the combined state with its words", async () => {
    const history = await page('/alice/ci/commits/branch/main')
    expect(history.status).toBe(200)
    expect(history.html).toContain(`href="/alice/ci/commit/${mainSha}#checks"`)
    expect(history.html).toContain('aria-label="Checks: All checks were successful: ci/build success"')
    const tab = await page(`/alice/ci/pulls/${prIndex}/commits`)
    expect(tab.status).toBe(200)
    expect(tab.html).toContain(`href="/alice/ci/commit/${headSha}#checks"`)
    expect(tab.html).toContain('class="check-mark check-pending"')
    const commit = await page(`/alice/ci/commit/${headSha}`)
    expect(commit.status).toBe(200)
    expect(commit.html).toContain('id="checks"')
    expect(commit.html).toContain('Some checks are pending')
    expect(commit.html).toContain('<strong>deploy/staging</strong>')
    expect(commit.html).toContain('lint &lt;script&gt;')
    expect(commit.html).not.toContain('<script>alert(1)')
    const home = await page('/alice/ci')
    expect(home.status).toBe(200)
    expect(home.html).toContain('class="box notice latest-commit"')
    expect(home.html).toContain('aria-label="Checks: All checks were successful: ci/build success"')
    // The branch list: each branch's head commit's state.
    const branches = await page('/alice/ci/branches')
    expect(branches.status).toBe(200)
    expect(branches.html).toContain(`href="/alice/ci/commit/${mainSha}#checks"`)
    expect(branches.html).toContain(`href="/alice/ci/commit/${headSha}#checks"`)
    expect(branches.html).toContain('class="check-mark check-pending"')
  })

  test("a private repository's checks are its readers' alone", async () => {
    const strangerCookie = await signInByForm(s.url, stranger)
    for (const path of ['/alice/secret', `/alice/secret/commit/${secretSha}`, '/alice/secret/commits/branch/main']) {
      expect((await page(path)).status).toBe(404)
      expect((await page(path, strangerCookie)).status).toBe(404)
    }
    const own = await page(`/alice/secret/commit/${secretSha}`, aliceCookie)
    expect(own.status).toBe(200)
    expect(own.html).toContain('<strong>ci/hidden</strong>')
    expect(own.html).toContain('Some checks reported errors')
    expect((await page('/alice/secret', aliceCookie)).html).toContain('class="check-mark check-error"')
  })
})
