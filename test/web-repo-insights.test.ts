import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { emailAddresses } from '../src/db/schema'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { signInByForm } from './web-session'
import { statsWithin, weekOf } from '../src/git/contributor-stats'
import { DEFAULT_GIT_LIMITS } from '../src/git/run'
import { statementRecorder } from './query-counter'

/**
 * The repository insights (Gitea 1.23's contributors graph): the Contributors, Code frequency and
 * Recent commits pages and their `/data` answers, from the default branch's history, merges left
 * out; an account's addresses together, an unknown address alone; weeks by their Sunday; a push
 * read incrementally giving what a whole read gives; the bound on commits read; private and empty
 * repositories.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, stranger: TestUser
const cookies: Record<string, string> = {}
const b64 = (text: string) => Buffer.from(text).toString('base64')
const textOf = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').replace(/ ([.,:])/g, '$1')
const page = async (path: string, who?: string) => {
  const res = await fetch(s.url + path, { headers: { accept: 'text/html', ...(who ? { cookie: cookies[who]! } : {}) }, redirect: 'manual' })
  return { status: res.status, html: await res.text() }
}
/** A `/data` answer once made (202 while it is being made). */
async function data(path: string, who?: string): Promise<{ status: number; body: any }> {
  for (let i = 0; i < 600; i++) {
    const res = await fetch(s.url + path, { headers: who ? { cookie: cookies[who]! } : {} })
    if (res.status !== 202) return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? await res.json() : await res.text() }
    expect(await res.text()).toBe('')
    await Bun.sleep(100)
  }
  throw new Error(`${path} stayed 202`)
}
/** A week's key in Gitea's data: its Sunday's unix milliseconds. */
const weekMs = (date: string) => weekOf(date)! * 86_400_000
const at = (date: string) => `${date}T12:00:00Z`

beforeAll(async () => {
  s = await startTestServer()
  ;[alice, bob, stranger] = [await s.user('alice'), await s.user('bob'), await s.user('stranger')]
  const token = { token: alice.token }
  // A second address of alice's, activated: her commits by it are hers too.
  expect((await s.post('/user/emails', { emails: ['alice.other@example.com'] }, token)).status).toBe(201)
  await s.deps.db.update(emailAddresses).set({ isActivated: true }).where(eq(emailAddresses.lowerEmail, 'alice.other@example.com'))
  for (const [name, priv] of [['pub', false], ['secret', true], ['empty', false]] as const)
    expect((await s.post('/user/repos', { name, private: priv, default_branch: 'main' }, token)).status).toBe(201)
  const write = async (repo: string, body: Record<string, unknown>) => expect((await s.post(`/repos/alice/${repo}/contents`, body, token)).status).toBe(201)
  const commit = (message: string, date: string, author: { name: string; email: string }, files: { operation: string; path: string; content?: string; sha?: string }[], branch: Record<string, string> = { branch: 'main' }) =>
    write('pub', { ...branch, message, author, dates: { author: at(date), committer: at(date) }, files })
  const shaOf = async (path: string, ref = 'main') => (await s.get(`/repos/alice/pub/contents/${path}?ref=${ref}`, token)).body.sha as string
  // 2026-01-07 and -08 are in the week of Sunday 2026-01-04; 2026-02-20 in that of 2026-02-15.
  await commit('a', '2026-01-07', { name: 'Alice', email: 'alice@example.com' }, [{ operation: 'create', path: 'a.txt', content: b64('1\n2\n3\n') }])
  await commit('c', '2026-01-08', { name: 'Bobby', email: 'BOB@example.com' }, [{ operation: 'create', path: 'c.txt', content: b64('c\n') }])
  await commit('edit', '2026-02-20', { name: 'Carol Outsider', email: 'Carol@Elsewhere.org' }, [{ operation: 'update', path: 'a.txt', content: b64('1\n2\nthree\n'), sha: await shaOf('a.txt') }])
  await commit('d', '2026-02-21', { name: 'Alice A.', email: 'alice.other@example.com' }, [{ operation: 'create', path: 'd.txt', content: b64('d\nd\n') }, { operation: 'delete', path: 'c.txt', sha: await shaOf('c.txt') }])
  // A pull request merged: its commit counts, the merge commit does not.
  await commit('f', '2026-03-03', { name: 'Alice', email: 'alice@example.com' }, [{ operation: 'create', path: 'f.txt', content: b64('f\n') }], { branch: 'main', new_branch: 'feature' })
  expect((await s.post('/repos/alice/pub/pulls', { head: 'feature', base: 'main', title: 'F' }, token)).status).toBe(201)
  expect((await s.post('/repos/alice/pub/pulls/1/merge', { Do: 'merge' }, token)).status).toBe(200)
  await write('secret', { branch: 'main', message: 's', files: [{ operation: 'create', path: 's.txt', content: b64('s\n') }] })
  for (const u of [alice, stranger]) cookies[u.name] = await signInByForm(s.url, u)
}, 120_000)
afterAll(() => s.stop())

describe('the contributors data (Gitea’s /activity/contributors/data)', () => {
  test('the total and each contributor by key, with their weeks by Sunday; merges left out; an account’s addresses together', async () => {
    const { status, body } = await data('/alice/pub/activity/contributors/data')
    expect(status).toBe(200)
    expect(Object.keys(body).sort()).toEqual(['alice@example.com', 'bob@example.com', 'carol@elsewhere.org', 'total'])
    expect(body.total).toEqual({
      name: 'Total',
      login: '',
      avatar_link: '',
      home_link: '',
      total_commits: 5,
      weeks: {
        [weekMs('2026-01-04')]: { week: weekMs('2026-01-04'), additions: 4, deletions: 0, commits: 2 },
        [weekMs('2026-02-15')]: { week: weekMs('2026-02-15'), additions: 3, deletions: 2, commits: 2 },
        [weekMs('2026-03-01')]: { week: weekMs('2026-03-01'), additions: 1, deletions: 0, commits: 1 },
      },
    })
    expect(weekMs('2026-01-04')).toBe(Date.UTC(2026, 0, 4))
    const a = body['alice@example.com']
    expect([a.name, a.login, a.home_link, a.total_commits]).toEqual(['alice', 'alice', '/alice', 3])
    expect(a.avatar_link).toMatch(/^https?:\/\//)
    expect(a.weeks[weekMs('2026-02-15')]).toEqual({ week: weekMs('2026-02-15'), additions: 2, deletions: 1, commits: 1 })
    expect(body['bob@example.com']).toMatchObject({ login: 'bob', home_link: '/bob', total_commits: 1 })
    expect(body['carol@elsewhere.org']).toMatchObject({ name: 'Carol Outsider', login: '', home_link: '', total_commits: 1 })
    expect(body['carol@elsewhere.org'].weeks).toEqual({ [weekMs('2026-02-15')]: { week: weekMs('2026-02-15'), additions: 1, deletions: 1, commits: 1 } })
  })

  test('code frequency and recent commits answer the total’s weeks', async () => {
    const contributors = (await data('/alice/pub/activity/contributors/data')).body
    for (const path of ['code-frequency', 'recent-commits']) {
      const { status, body } = await data(`/alice/pub/activity/${path}/data`)
      expect(status).toBe(200)
      expect(body).toEqual(contributors.total.weeks)
    }
  })

  test('a private repository is a 404 to others, an empty one to everyone', async () => {
    expect((await data('/alice/secret/activity/contributors/data', 'stranger')).status).toBe(404)
    expect((await data('/alice/secret/activity/contributors/data', 'alice')).status).toBe(200)
    for (const path of ['contributors', 'code-frequency/data', 'recent-commits']) expect((await page(`/alice/empty/activity/${path}`, 'alice')).status).toBe(404)
    expect((await page('/alice/secret/activity/code-frequency', 'stranger')).status).toBe(404)
  })
})

describe('the pages', () => {
  test('Contributors: ranked by commits, or by the type asked; a chart of the whole history and one per contributor', async () => {
    const { status, html } = await page('/alice/pub/activity/contributors')
    expect(status).toBe(200)
    const text = textOf(html)
    expect(text).toContain('5 commits by 3 contributors to main, merges excluded: 8 additions and 2 deletions')
    expect(text.indexOf('#1 alice')).toBeGreaterThan(-1)
    expect(text).toContain('3 commits · 6++ · 1--')
    expect(html).toContain('<a class="user" href="/alice">alice</a>')
    expect(html).toContain('<title>week of 2026-01-04: 2 commits</title>')
    expect(html).toContain('<title>week of 2026-03-01: 1 commit</title>')
    expect(html).toContain('aria-label="commits a week by Carol Outsider"')
    // By deletions: carol's and alice's one each, then bob's none; ties by commits.
    const byDeletions = textOf((await page('/alice/pub/activity/contributors?type=deletions')).html)
    expect(byDeletions.indexOf('#1 alice')).toBeGreaterThan(-1)
    expect(byDeletions.indexOf('#2 Carol Outsider')).toBeGreaterThan(-1)
    expect(byDeletions.indexOf('#3 bob')).toBeGreaterThan(-1)
    expect((await page('/alice/pub/activity/contributors?type=lines')).status).toBe(422)
    // The activity page leads to it.
    expect((await page('/alice/pub/activity')).html).toContain('href="/alice/pub/activity/contributors"')
  })

  test('Code frequency: additions and deletions a week; Recent commits: the last 52 weeks', async () => {
    const frequency = await page('/alice/pub/activity/code-frequency')
    expect(frequency.status).toBe(200)
    expect(textOf(frequency.html)).toContain('8 additions and 2 deletions in all')
    expect(frequency.html).toContain('<title>week of 2026-02-15: 2 deletions</title>')
    const recent = await page('/alice/pub/activity/recent-commits')
    expect(recent.status).toBe(200)
    const to = weekOf(new Date().toISOString().slice(0, 10))!
    const inYear = ['2026-01-04', '2026-02-15', '2026-03-01'].filter((d) => weekOf(d)! > to - 52 * 7)
    const expected = inYear.reduce((n, d) => n + ({ '2026-01-04': 2, '2026-02-15': 2, '2026-03-01': 1 } as Record<string, number>)[d]!, 0)
    expect(textOf(recent.html)).toContain(`${expected} commit${expected === 1 ? '' : 's'} to the default branch in the last 52 weeks`)
  })
})

describe('what is kept', () => {
  test('the contributors converted once while the accounts are unchanged: a second /data or page asks the database nothing of addresses; a new address is seen', async () => {
    const sent = statementRecorder(s.deps.db)
    await data('/alice/pub/activity/contributors/data')
    const again = await sent.during(async () => {
      expect((await data('/alice/pub/activity/contributors/data')).status).toBe(200)
      expect((await page('/alice/pub/activity/contributors')).status).toBe(200)
    })
    expect(again.filter((text) => text.includes('email_address'))).toEqual([])
    // An account made with the unknown address (activated): the contributor is now that account.
    const other = await s.user('carol', { email: 'carol@elsewhere.org' })
    const { body } = await data('/alice/pub/activity/contributors/data')
    expect(body['carol@elsewhere.org']).toMatchObject({ login: other.name, home_link: `/${other.name}` })
  })
})

describe('how the stats are read', () => {
  const repo = () => ({ gitDir: join(s.dataDir, 'repositories', 'alice', 'pub.git'), limits: DEFAULT_GIT_LIMITS })
  const head = async () => (await s.get('/repos/alice/pub/branches/main', { token: alice.token })).body.commit.id as string

  test('a push is read from the last result on, giving what a whole read gives', async () => {
    await data('/alice/pub/activity/contributors/data')
    const write = await s.post('/repos/alice/pub/contents/b.txt', { message: 'b', author: { name: 'Bob', email: 'bob@example.com' }, dates: { author: at('2026-03-10'), committer: at('2026-03-10') }, content: b64('b\nb\n') }, { token: alice.token })
    expect(write.status).toBe(201)
    const { body } = await data('/alice/pub/activity/contributors/data')
    expect(body.total.total_commits).toBe(6)
    expect(body['bob@example.com'].total_commits).toBe(2)
    // A whole read of the same commit (another bound is another key): the same numbers.
    const whole = (await statsWithin(repo(), await head(), 60_000, 1000))!
    expect(whole.partial).toBe(false)
    expect(whole.total.commits).toBe(6)
    expect(body.total.weeks[weekMs('2026-03-08')]).toEqual({ week: weekMs('2026-03-08'), additions: 2, deletions: 0, commits: 1 })
    const fromWhole: Record<string, number[]> = {}
    for (let i = 0; i < whole.total.weeks.length; i += 4) fromWhole[String(whole.total.weeks[i]! * 86_400_000)] = [whole.total.weeks[i + 1]!, whole.total.weeks[i + 2]!, whole.total.weeks[i + 3]!]
    expect(Object.fromEntries(Object.entries(body.total.weeks as Record<string, any>).map(([k, w]) => [k, [w.additions, w.deletions, w.commits]]))).toEqual(fromWhole)
  })

  test('past the bound, the newest commits only, marked partial', async () => {
    const cut = (await statsWithin(repo(), await head(), 60_000, 2))!
    expect(cut.partial).toBe(true)
    expect(cut.total.commits).toBe(2)
    // The newest two: bob's of 2026-03-10 and alice's of 2026-03-03 (the merge not counted).
    expect(cut.authors.map((a) => [a.email, a.commits]).sort()).toEqual([
      ['alice@example.com', 1],
      ['bob@example.com', 1],
    ])
  })

  test('a caller not waiting gets null at once, the generation going on', async () => {
    const commit = await head()
    expect(await statsWithin(repo(), commit, 0, 999)).toBeNull()
    expect((await statsWithin(repo(), commit, 60_000, 999))!.total.commits).toBe(6)
  })
})

describe("the repository's one menu", () => {
  test('every repository page has the same menu: code, issues and pull requests with their open counts, commits, wiki...; a fork says what it was forked from', async () => {
    const menuOf = (html: string) => /<nav class="code-nav" aria-label="Repository pages">([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? ''
    const same = (menu: string) => menu.replace(/ aria-current="page"/g, '')
    const home = menuOf((await page('/alice/pub')).html)
    for (const href of ['/alice/pub/issues', '/alice/pub/pulls', '/alice/pub/activity', '/alice/pub/branches']) expect(home).toContain(`href="${href}"`)
    expect(home).toContain('Issues 0')
    // The tracker's pages and the others: the same menu (the issue pages had another), only the current tab marked.
    for (const path of ['/alice/pub/issues', '/alice/pub/pulls', '/alice/pub/pulls/1', '/alice/pub/labels', '/alice/pub/activity/contributors', '/alice/pub/branches'])
      expect(same(menuOf((await page(path)).html))).toBe(same(home))
    const issues = await page('/alice/pub/issues')
    expect(menuOf(issues.html)).toContain('<a href="/alice/pub/issues" aria-current="page">Issues 0</a>')
    expect(menuOf(issues.html)).toContain('Commits')
    expect(issues.html).toContain('<a href="/alice/pub/milestones">Milestones</a>')
    const fork = await s.post('/repos/alice/pub/forks', { name: 'pub-fork' }, { token: stranger.token })
    expect(fork.status).toBe(202)
    expect(textOf((await page('/stranger/pub-fork')).html)).toContain('forked from alice/pub')
  })
})

describe('the site header', () => {
  test('Explore for everyone; for a signed-in visitor a New menu (repository, migration, organisation); Register only where sign-up is on', async () => {
    const header = (html: string) => /<header class="site-header">([\s\S]*?)<\/header>/.exec(html)?.[1] ?? ''
    const anonymous = header((await page('/alice/pub')).html)
    expect(anonymous).toContain('<a href="/explore/repos">Explore</a>')
    expect(anonymous).not.toContain('/user/sign_up')
    const signedIn = header((await page('/alice/pub', 'alice')).html)
    for (const [href, text] of [['/repo/create', 'New repository'], ['/repo/migrate', 'New migration'], ['/org/create', 'New organisation'], ['/explore/repos', 'Explore']])
      expect(signedIn).toContain(`<a href="${href}">${text}</a>`)
  })
})
