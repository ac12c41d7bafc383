import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { csrfIn, signInByForm } from './web-session'
import { contentMark } from './db-snapshot'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { git } from './git-fixture'

/**
 * Comparing across forks on the web, in Gitea's forms: `/{o}/{r}/compare/{base}...{owner}:{branch}`
 * and `...{owner}/{repo}:{branch}` show the fork's commits and diff against the base and the pull
 * request form, whose POST opens the pull request through the pulls service (seen through the
 * API, head in the fork); a fork the visitor may not read, an unknown owner, repository or branch
 * are 404s; the API's comparison takes `owner:branch` too. The fork's objects are read beside the
 * base's and never copied into it: a private fork's commits, compared once by its owner, stay
 * unreadable by id through the base for everyone else; a GET writes no object into the base
 * (nothing to bound, nothing half-done if killed); comparisons at once agree; an owner name with a
 * NUL character is a 404 (PostgreSQL cannot be asked for it), not a 500. A fork's pull request
 * lists its commits, and is updated from its base by whoever may push to the fork's branch.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, carol: TestUser
let main = ''
let mark: () => Promise<string>
const cookies: Record<string, string> = {}
const b64 = (text: string) => Buffer.from(text).toString('base64')
const baseDir = () => join(s.deps.config.dataDir, 'repositories', 'alice', 'up.git')

const page = (path: string, who?: string, init: RequestInit = {}) =>
  fetch(s.url + path, { ...init, headers: { accept: 'text/html', ...(who ? { cookie: cookies[who]! } : {}), ...(init.headers ?? {}) }, redirect: 'manual' })

const postForm = (path: string, who: string, fields: Record<string, string>) =>
  page(path, who, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) })

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  const repo = await s.post('/user/repos', { name: 'up', auto_init: true }, { token: alice.token })
  expect(repo.status).toBe(201)
  main = repo.body.default_branch
  // bob and carol fork it; each makes a branch with a change of their own.
  for (const u of [bob, carol]) {
    expect((await s.post('/repos/alice/up/forks', {}, { token: u.token })).status).toBe(202)
    expect((await s.post(`/repos/${u.name}/up/branches`, { new_branch_name: 'fix', old_branch_name: main }, { token: u.token })).status).toBe(201)
    const files = [{ operation: 'create', path: `${u.name}-fix.txt`, content: b64(`fixed by ${u.name}\n`) }]
    expect((await s.post(`/repos/${u.name}/up/contents`, { branch: 'fix', files, message: `${u.name} fixes it` }, { token: u.token })).status).toBe(201)
  }
  // carol's fork is private: only carol (and alice? no: only its owner) may read it.
  expect((await s.patch('/repos/carol/up', { private: true }, { token: carol.token })).status).toBe(200)
  for (const u of [alice, bob, carol]) cookies[u.name] = await signInByForm(s.url, u)
})
afterAll(() => s.stop())

test("owner:branch and owner/repo:branch: the fork's commits and diff against the base, and the pull request form", async () => {
  for (const head of ['bob:fix', 'bob/up:fix', 'BOB:fix']) {
    const res = await page(`/alice/up/compare/${main}...${head}`, 'bob')
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('bob fixes it')
    expect(html).toContain('bob-fix.txt')
    expect(html).toContain('fixed by bob')
    // The head links to the fork's branch; the form posts back to the same comparison.
    expect(html).toContain('href="/bob/up/src/branch/fix"')
    expect(html).toContain('Open a pull request')
    expect(html).toMatch(new RegExp(`action="/alice/up/compare/${main}\\.\\.\\.[^"]*fix"`))
  }
  // Anonymous visitors see the comparison of a public fork, and are asked to sign in for the form.
  const anon = await page(`/alice/up/compare/${main}...bob:fix`)
  expect(anon.status).toBe(200)
  const anonHtml = await anon.text()
  expect(anonHtml).toContain('bob-fix.txt')
  expect(anonHtml).not.toContain('Open a pull request')
})

test('a fork the visitor may not read, an unknown owner, repository or branch: 404', async () => {
  expect((await page(`/alice/up/compare/${main}...carol:fix`, 'carol')).status).toBe(200)
  for (const who of ['bob', undefined]) expect((await page(`/alice/up/compare/${main}...carol:fix`, who)).status).toBe(404)
  for (const head of ['nobody:fix', 'bob/other:fix', 'bob:nope', 'alice/up/x:fix', ':fix'])
    expect((await page(`/alice/up/compare/${main}...${encodeURIComponent(head)}`, 'bob')).status).toBe(404)
})

test("the form's POST opens the pull request from the fork through the pulls service; without its CSRF token nothing changes", async () => {
  const path = `/alice/up/compare/${main}...bob:fix`
  const before = await mark()
  expect((await postForm(path, 'bob', { title: 'Forged' })).status).toBe(403)
  expect(await mark()).toBe(before)
  const csrf = csrfIn(await (await page(path, 'bob')).text())!
  const made = await postForm(path, 'bob', { _csrf: csrf, title: 'Fix from my fork', body: 'Please take it' })
  expect(made.status).toBe(303)
  expect(made.headers.get('location')).toBe('/alice/up/pulls/1')
  const pull = (await s.get('/repos/alice/up/pulls/1', { token: alice.token })).body
  expect(pull).toMatchObject({ title: 'Fix from my fork', body: 'Please take it', head: { ref: 'fix', repo: { full_name: 'bob/up' } }, base: { ref: main, repo: { full_name: 'alice/up' } } })
  const files = (await s.get('/repos/alice/up/pulls/1/files', { token: alice.token })).body
  expect(files.map((f: any) => f.filename)).toEqual(['bob-fix.txt'])
  // The same form again: the service's refusal (one open pull request per head and base) on the form.
  const again = await postForm(path, 'bob', { _csrf: csrf, title: 'Twice' })
  expect(again.status).toBe(409)
  const html = await again.text()
  expect(html).toContain('role="alert"')
  expect(html).toContain('pull request already exists')
  // Someone who may not write to the fork is refused by the service, on the form.
  const carolCsrf = csrfIn(await (await page(path, 'carol')).text())!
  const refused = await postForm(`/alice/up/compare/${main}...bob/up:fix`, 'carol', { _csrf: carolCsrf, title: 'Not mine' })
  expect(refused.status).toBe(404)
  expect((await s.get('/repos/alice/up/pulls', { token: alice.token })).body).toHaveLength(1)
})

test("the API's comparison takes a fork's owner:branch too", async () => {
  const res = await s.get(`/repos/alice/up/compare/${main}...carol:fix`, { token: carol.token })
  expect(res.status).toBe(200)
  expect(res.body.total_commits).toBe(1)
  expect(res.body.commits[0].commit.message).toContain('carol fixes it')
  expect((await s.get(`/repos/alice/up/compare/${main}...carol:fix`, { token: bob.token })).status).toBe(404)
})

test("a private fork's commits, compared by its owner through the base, stay unreadable through the base for others", async () => {
  const api = await s.get(`/repos/alice/up/compare/${main}...carol:fix`, { token: carol.token })
  expect(api.status).toBe(200)
  const sha = api.body.commits[0].sha as string
  const web = await page(`/alice/up/compare/${main}...carol:fix`, 'carol')
  expect(web.status).toBe(200)
  expect(await web.text()).toContain('fixed by carol')
  // The base's folder holds none of carol's objects.
  expect((await git(baseDir(), 'cat-file', '-e', sha)).code).not.toBe(0)
  for (const path of [`/repos/alice/up/git/commits/${sha}`, `/repos/alice/up/raw/carol-fix.txt?ref=${sha}`, `/repos/alice/up/compare/${main}...${sha}`, `/repos/alice/up/git/commits/${sha}?token=`]) {
    for (const token of [bob.token, alice.token]) expect([path, (await s.get(path, { token })).status]).toEqual([path, 404])
  }
  expect((await page(`/alice/up/commit/${sha}`, 'bob')).status).toBe(404)
  expect((await page(`/alice/up/compare/${main}...${sha}`, 'bob')).status).toBe(404)
  // Still carol's to compare, and still hidden from bob by name.
  expect((await s.get(`/repos/alice/up/compare/${main}...carol:fix`, { token: carol.token })).body.total_commits).toBe(1)
  expect((await s.get(`/repos/alice/up/compare/${main}...carol:fix`, { token: bob.token })).status).toBe(404)
})

test('a comparison with a public fork writes nothing into the base; comparisons at once agree', async () => {
  // A branch of bob's that no pull request brought into the base.
  expect((await s.post('/repos/bob/up/branches', { new_branch_name: 'more', old_branch_name: main }, { token: bob.token })).status).toBe(201)
  const files = [{ operation: 'create', path: 'more.txt', content: b64('more from bob\n') }]
  expect((await s.post('/repos/bob/up/contents', { branch: 'more', files, message: 'bob adds more' }, { token: bob.token })).status).toBe(201)
  const objects = () => readdirSync(join(baseDir(), 'objects'), { recursive: true }).map(String).sort().join('\n')
  const before = objects()
  const runs = await Promise.all([bob, alice, carol, bob].map((u) => s.get(`/repos/alice/up/compare/${main}...bob:more`, { token: u.token })))
  for (const r of runs) {
    expect(r.status).toBe(200)
    expect(r.body.total_commits).toBe(1)
    expect(r.body.files.map((f: any) => f.filename)).toEqual(['more.txt'])
  }
  const html = await (await page(`/alice/up/compare/${main}...bob/up:more`)).text()
  expect(html).toContain('more from bob')
  // Its commits link to the fork's pages, which show them.
  const sha = runs[0]!.body.commits[0].sha as string
  expect(html).toContain(`href="/bob/up/commit/${sha}"`)
  expect((await page(`/bob/up/commit/${sha}`)).status).toBe(200)
  expect(objects()).toBe(before)
  expect((await git(baseDir(), 'cat-file', '-e', runs[0]!.body.commits[0].sha)).code).not.toBe(0)
})

test('an owner or branch name with a NUL character, or odd and long names: 404, never a 500', async () => {
  for (const head of ['evil%00:fix', 'b%00ob/up:fix', 'bob/u%00p:fix', 'bob:fi%00x', `bob:${'x'.repeat(3000)}`, 'bob:', 'bob:-x', 'bob:..', 'bob:fix%0a', '%ZZ']) {
    const api = await s.get(`/repos/alice/up/compare/${main}...${head}`, { token: bob.token })
    expect([head.slice(0, 20), api.status]).toEqual([head.slice(0, 20), 404])
    expect(api.body).toEqual({ message: expect.any(String), url: expect.any(String) })
    expect([head.slice(0, 20), (await page(`/alice/up/compare/${main}...${head}`, 'bob')).status]).toEqual([head.slice(0, 20), 404])
  }
})

test("a fork's pull request: its Commits tab; behind its base, updated by merge by the fork's owner through the service (the fork's branch moves), not offered to the base's owner", async () => {
  const url = '/alice/up/pulls/1'
  const commits = await (await page(`${url}/commits`, 'alice')).text()
  expect(commits).toContain('bob fixes it')
  const listed = (await s.get('/repos/alice/up/pulls/1/commits', { token: alice.token })).body
  expect(commits).toContain(`href="/alice/up/commit/${listed[0].sha}"`)
  const files = [{ operation: 'create', path: 'base-later.txt', content: b64('later\n') }]
  expect((await s.post('/repos/alice/up/contents', { branch: main, files, message: 'base moves on' }, { token: alice.token })).status).toBe(201)
  const bobs = await (await page(url, 'bob')).text()
  expect(bobs).toContain('This branch is out-of-date with the base branch: 1 commit behind.')
  expect(bobs).toContain(`action="${url}/update?style=merge"`)
  // The base's owner may not push to bob's fork (no maintainer edits allowed): no buttons, and refused.
  const alices = await (await page(url, 'alice')).text()
  expect(alices).toContain('1 commit behind')
  expect(alices).not.toContain(`${url}/update`)
  const head = (await s.get('/repos/bob/up/branches/fix', { token: bob.token })).body.commit.id
  expect((await postForm(`${url}/update`, 'alice', { _csrf: csrfIn(alices)! })).status).toBe(403)
  expect((await s.get('/repos/bob/up/branches/fix', { token: bob.token })).body.commit.id).toBe(head)
  const done = await postForm(`${url}/update?style=merge`, 'bob', { _csrf: csrfIn(bobs)! })
  expect([done.status, done.headers.get('location')]).toEqual([303, `${url}?done=branch-updated`])
  const merged = (await s.get('/repos/bob/up/branches/fix', { token: bob.token })).body.commit.id
  const parents = (await s.get(`/repos/bob/up/git/commits/${merged}`, { token: bob.token })).body.parents.map((p: { sha: string }) => p.sha)
  expect(parents[0]).toBe(head)
  expect(parents[1]).toBe((await s.get(`/repos/alice/up/branches/${main}`, { token: alice.token })).body.commit.id)
  // The page drawn right after (before any check records the new head) offers to merge the branch as it is now: a merge of the old head was refused as moved (409).
  const after = await (await page(url, 'alice')).text()
  expect(after).toContain(`name="head_commit_id" value="${merged}"`)
  // A merge of the old head is refused on the pull request's own page, saying why (it was a bare error page).
  const stale = await postForm(`${url}/merge`, 'alice', { _csrf: csrfIn(after)!, do: 'merge', head_commit_id: head })
  expect(stale.status).toBe(409)
  const refusedPage = await stale.text()
  expect(refusedPage).toContain('role="alert"')
  expect(refusedPage).toContain(`action="${url}/merge"`)
})
