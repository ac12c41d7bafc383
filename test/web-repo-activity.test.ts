import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { signInByForm } from './web-session'
import { issues } from '../src/db/schema'
import { codeActivity } from '../src/git/code-activity'
import { refAnswerHits } from '../src/git/ref-answers'
import { recordStatements } from './query-counter'
import { DEFAULT_GIT_LIMITS } from '../src/git/run'
import { gitOk, sh, tempDir } from './git-fixture'

/**
 * The repository's Activity page (Gitea's `/{o}/{r}/activity` and `/activity/{period}`): the
 * counts and lists of a week's pull requests, issues, unresolved conversations and releases, the
 * code summary from git; a quiet period's zeros; a bad period; a private repository; units off;
 * titles escaped.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, stranger: TestUser
const cookies: Record<string, string> = {}

const b64 = (text: string) => Buffer.from(text).toString('base64')
const textOf = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').replace(/ ([.,])/g, '$1')
const page = async (path: string, who?: string) => {
  const res = await fetch(s.url + path, { headers: { accept: 'text/html', ...(who ? { cookie: cookies[who]! } : {}) }, redirect: 'manual' })
  return { status: res.status, html: await res.text() }
}
const DAY = 86_400
const expectAll = (text: string, pieces: string[]) => {
  for (const piece of pieces) expect(text).toContain(piece)
}

beforeAll(async () => {
  s = await startTestServer()
  ;[alice, bob, stranger] = [await s.user('alice'), await s.user('bob'), await s.user('stranger')]
  const token = { token: alice.token }
  for (const [name, priv] of [['pub', false], ['secret', true], ['quiet', false], ['bare', false]] as const)
    expect((await s.post('/user/repos', { name, private: priv, default_branch: 'main' }, token)).status).toBe(201)
  const write = async (repo: string, body: Record<string, unknown>) => expect((await s.post(`/repos/alice/${repo}/contents`, body, token)).status).toBe(201)
  // The default branch: two commits by two authors, three files, five lines added.
  await write('pub', { branch: 'main', message: 'first', files: [{ operation: 'create', path: 'a.txt', content: b64('1\n2\n3\n') }, { operation: 'create', path: 'b.txt', content: b64('x\n') }] })
  await write('pub', { branch: 'main', message: 'second', author: { name: 'Bob', email: 'bob@example.com' }, files: [{ operation: 'create', path: 'c.txt', content: b64('y\n') }] })
  // Issues: one closed, one open, one filed long ago but updated now (an unresolved conversation).
  expect((await s.post('/repos/alice/pub/issues', { title: 'Closed <b>bug</b>' }, token)).status).toBe(201)
  expect((await s.patch('/repos/alice/pub/issues/1', { state: 'closed' }, token)).status).toBe(201)
  expect((await s.post('/repos/alice/pub/issues', { title: 'Still open' }, { token: bob.token })).status).toBe(201)
  // A merged pull request and an open one, each from its own branch.
  await write('pub', { branch: 'main', new_branch: 'feature', message: 'feature', files: [{ operation: 'create', path: 'f.txt', content: b64('f\n') }] })
  const merged = await s.post('/repos/alice/pub/pulls', { head: 'feature', base: 'main', title: 'Feature <i>x</i>' }, token)
  expect(merged.body.number).toBe(3)
  expect((await s.post('/repos/alice/pub/pulls/3/merge', { Do: 'merge' }, token)).status).toBe(200)
  await write('pub', { branch: 'main', new_branch: 'wip', message: 'wip', files: [{ operation: 'create', path: 'w.txt', content: b64('w\n') }] })
  expect((await s.post('/repos/alice/pub/pulls', { head: 'wip', base: 'main', title: 'Proposed thing' }, token)).body.number).toBe(4)
  expect((await s.post('/repos/alice/pub/issues', { title: 'Old <conversation>' }, token)).status).toBe(201)
  const now = Math.floor(Date.now() / 1000)
  await s.deps.db.update(issues).set({ createdUnix: now - 40 * DAY }).where(eq(issues.title, 'Old <conversation>'))
  // A release, and a draft nobody sees here.
  expect((await s.post('/repos/alice/pub/releases', { tag_name: 'v1.0', name: 'First <release>', target_commitish: 'main' }, token)).status).toBe(201)
  expect((await s.post('/repos/alice/pub/releases', { tag_name: 'v2.0', name: 'Draft one', target_commitish: 'main', draft: true }, token)).status).toBe(201)
  // A quiet repository: one commit and one issue, both two months old.
  const old = new Date((now - 60 * DAY) * 1000).toISOString()
  await write('quiet', { branch: 'main', message: 'old', dates: { author: old, committer: old }, files: [{ operation: 'create', path: 'q.txt', content: b64('q\nq\n') }] })
  expect((await s.post('/repos/alice/quiet/issues', { title: 'Quiet issue' }, token)).status).toBe(201)
  await s.deps.db.update(issues).set({ createdUnix: now - 60 * DAY, updatedUnix: now - 60 * DAY }).where(eq(issues.title, 'Quiet issue'))
  expect((await s.post('/repos/alice/secret/issues', { title: 'Secret issue' }, token)).status).toBe(201)
  // More issues than a list shows (50).
  for (let i = 1; i <= 51; i++) expect((await s.post('/repos/alice/bare/issues', { title: `Many ${i}` }, token)).status).toBe(201)
  for (const u of [alice, stranger]) cookies[u.name] = await signInByForm(s.url, u)
}, 120_000)
afterAll(() => s.stop())

describe('the activity page', () => {
  test("a week's counts and lists, the code summary, titles escaped, drafts left out", async () => {
    const { status, html } = await page('/alice/pub/activity')
    expect(status).toBe(200)
    const text = textOf(html)
    expectAll(text, ['2 active pull requests', '1 merged pull request ', '1 proposed pull request ', '3 active issues', '1 closed issue ', '2 new issues'])
    // Merges are left out; the default branch by its first parents; every branch's commits counted once.
    expect(text).toContain('2 authors have pushed 2 commits to main and 4 commits to all branches. On main, 3 files have changed and there have been 5 additions and 0 deletions.')
    expect(text).toContain('1 pull request merged by 1 user')
    expect(text).toContain('2 issues created by 2 users')
    expect(text).toContain('1 unresolved conversation')
    expect(text).toContain('1 release published by 1 user')
    expectAll(html, [
      '<a href="/alice/pub/pulls/3">#3 Feature &lt;i&gt;x&lt;/i&gt;</a>',
      '<a href="/alice/pub/pulls/4">#4 Proposed thing</a>',
      '<a href="/alice/pub/issues/1">#1 Closed &lt;b&gt;bug&lt;/b&gt;</a>',
      '<a href="/alice/pub/issues/2">#2 Still open</a>',
      '<a href="/alice/pub/issues/5">#5 Old &lt;conversation&gt;</a>',
      '<a href="/alice/pub/releases/tag/v1.0">First &lt;release&gt;</a>',
      '<a href="/alice/pub/activity" aria-current="page">1 week</a>',
      '<a href="/alice/pub/activity/monthly">1 month</a>',
    ])
    expect(html).not.toContain('<b>bug')
    expect(html).not.toContain('Draft one')
    // Every repository page links to it.
    expect((await page('/alice/pub')).html).toContain('<a href="/alice/pub/activity">Activity</a>')
  })

  test('another period: the old issue is new there, not unresolved; a quiet period shows zeros; a bad period is a 404', async () => {
    const quarter = textOf((await page('/alice/pub/activity/quarterly')).html)
    expect(quarter).toContain('3 issues created by 2 users')
    expect(quarter).toContain('0 unresolved conversations')
    const quiet = await page('/alice/quiet/activity/daily')
    expect(quiet.status).toBe(200)
    const text = textOf(quiet.html)
    expectAll(text, ['0 merged pull requests', '0 proposed pull requests', '0 closed issues', '0 new issues', 'No commits were pushed in this period.', 'No issue was created in this period.', 'No release was published in this period.'])
    expect(textOf((await page('/alice/quiet/activity/yearly')).html)).toContain('1 author has pushed 1 commit to main and 1 commit to all branches. On main, 1 file has changed and there have been 2 additions and 0 deletions.')
    // An empty repository has no code to summarise; a long list shows its first 50 (the oldest first, as Gitea) and says how many more.
    const bare = await page('/alice/bare/activity')
    expectAll(textOf(bare.html), ['No commits were pushed in this period.', '51 issues created by 1 user', 'and 1 more not listed'])
    expect(bare.html.match(/href="\/alice\/bare\/issues\/\d+"/g)).toHaveLength(50)
    expect(bare.html).toContain('#50 Many 50</a>')
    expect(bare.html).not.toContain('#51 Many 51</a>')
    for (const bad of ['/alice/pub/activity/fortnightly', '/alice/pub/activity/WEEKLY', '/alice/pub/activity/weekly/more']) expect((await page(bad)).status).toBe(404)
    expect((await page('/alice/pub/activity/weekly')).status).toBe(200)
  })

  test('a private repository is a 404 to strangers and visitors, shown to its owner', async () => {
    expect((await page('/alice/secret/activity')).status).toBe(404)
    expect((await page('/alice/secret/activity', 'stranger')).status).toBe(404)
    const own = await page('/alice/secret/activity', 'alice')
    expect(own.status).toBe(200)
    expect(own.html).toContain('#1 Secret issue')
  })

  test('units turned off leave their sections out', async () => {
    expect((await s.patch('/repos/alice/pub', { has_issues: false, has_pull_requests: false, has_releases: false }, { token: alice.token })).status).toBe(200)
    const { status, html } = await page('/alice/pub/activity')
    expect(status).toBe(200)
    for (const id of ['merged-pull-requests', 'proposed-pull-requests', 'closed-issues', 'new-issues', 'unresolved-conversations', 'published-releases']) expect(html).not.toContain(`id="${id}"`)
    for (const title of ['Feature', 'Closed &lt;b&gt;', 'First &lt;release']) expect(html).not.toContain(title)
    expect(textOf(html)).toContain('2 authors have pushed 2 commits to main')
    // Only the pull requests on: their sections, and the unresolved conversations among them alone.
    expect((await s.patch('/repos/alice/pub', { has_pull_requests: true }, { token: alice.token })).status).toBe(200)
    const pulls = await page('/alice/pub/activity')
    expect(pulls.html).toContain('id="merged-pull-requests"')
    expect(pulls.html).not.toContain('id="closed-issues"')
    expect(textOf(pulls.html)).toContain('0 unresolved conversations')
  })

  test('kept while nothing changes; an issue filed and a commit pushed are shown at once', async () => {
    // The period starts at a whole minute: its first asks are made within one minute (not in its last
    // 10 seconds), or the second would begin another period, read afresh.
    const second = new Date().getSeconds()
    if (second >= 50) await Bun.sleep((61 - second) * 1000)
    const quiet = async () => textOf((await page('/alice/quiet/activity/daily')).html)
    expect(await quiet()).toContain('No commits were pushed in this period.')
    // Asked again: the lists kept while the database is unchanged (no query of issues or releases), the code summary under the refs (no git).
    const hits = refAnswerHits()
    const listQueries: string[] = []
    recordStatements(s.deps.db, (sql) => /from "(issues|releases)"/i.test(sql) && listQueries.push(sql))
    expectAll(await quiet(), ['No commits were pushed in this period.', '0 new issues'])
    expect(refAnswerHits()).toBe(hits + 1)
    expect(listQueries).toEqual([])
    expect((await s.post('/repos/alice/quiet/issues', { title: 'Fresh issue' }, { token: alice.token })).status).toBe(201)
    expectAll(await quiet(), ['1 new issue ', 'No commits were pushed in this period.'])
    // (read again after the write, as the recorder sees)
    expect(listQueries.length).toBeGreaterThan(0)
    const pushed = await s.post('/repos/alice/quiet/contents', { branch: 'main', message: 'fresh', files: [{ operation: 'create', path: 'fresh.txt', content: b64('1\n') }] }, { token: alice.token })
    expect(pushed.status).toBe(201)
    expect(await quiet()).toContain('1 author has pushed 1 commit to main and 1 commit to all branches.')
  })
})

describe('the code summary from git', () => {
  test('distinct authors and paths (any bytes in a name), binary files counted without lines; cut at its bounds and said so', async () => {
    const dir = tempDir('warren-activity-')
    await gitOk(dir, 'init', '-q', '-b', 'main')
    const commit = async (name: string, email: string, files: Record<string, string>) => {
      for (const [path, content] of Object.entries(files)) await Bun.write(`${dir}/${path}`, content)
      await gitOk(dir, 'add', '-A')
      expect((await sh(['git', 'commit', '-q', '-m', name], dir, { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email })).code).toBe(0)
    }
    await commit('A', 'a@example.com', { 'one.txt': '1\n2\n', 'tab\tand\nnewline.txt': 'x\n' })
    await commit('B', 'B@example.com', { 'one.txt': '1\n3\n', 'bin.dat': '\0\x01' })
    await commit('B again', 'b@EXAMPLE.com', { 'two.txt': 'y\n' })
    const repo = { gitDir: `${dir}/.git`, limits: DEFAULT_GIT_LIMITS }
    expect(await codeActivity(repo, 'main', 0)).toEqual({ commits: 3, commitsAllBranches: 3, authors: 2, files: 4, additions: 5, deletions: 1, partial: false })
    expect(await codeActivity(repo, 'main', 0, { commits: 2, files: 100 })).toMatchObject({ commits: 2, commitsAllBranches: 3, partial: true })
    expect(await codeActivity(repo, 'main', 0, { commits: 100, files: 1 })).toMatchObject({ files: 1, partial: true })
    expect(await codeActivity(repo, 'none', 0)).toMatchObject({ commits: 0, files: 0, partial: false })
    expect(await codeActivity(repo, 'main', Math.floor(Date.now() / 1000) + 3600)).toMatchObject({ commits: 0, commitsAllBranches: 0 })
  })
})
