// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import type { TestServer, TestUser } from './helpers'
import { BROWSER_LIMIT_MS, expectAccessible, signedInPage, startServerAndBrowser, stopServerAndBrowser } from './browser-helpers'
import { notifyRound } from '../src/notify/consumer'

/**
 * The issue tracker's pages in a real browser (Debian's Chromium, driven by playwright-core):
 * filing an issue and commenting through the forms (seen through the API), closing and reopening,
 * editing its title and the comment in their folded forms,
 * a line comment from a pull request's files page, a merge blocked by branch protection saying
 * which rule, merging with the button, notifications;
 * axe-core on every page visited (no serious or critical violation).
 */

let s: TestServer
let alice: TestUser, bob: TestUser
let browser: Browser
const b64 = (text: string) => Buffer.from(text).toString('base64')

beforeAll(async () => {
  ;({ s, browser } = await startServerAndBrowser())
  alice = await s.user('alice')
  bob = await s.user('bob')
  const token = { token: alice.token }
  expect((await s.post('/user/repos', { name: 'demo', auto_init: true, description: 'A demo' }, token)).status).toBe(201)
  expect((await s.post('/repos/alice/demo/labels', { name: 'bug', color: '#d73a4a' }, token)).status).toBe(201)
  expect((await s.post('/repos/alice/demo/branches', { new_branch_name: 'feature', old_branch_name: 'main' }, token)).status).toBe(201)
  const files = [{ operation: 'create', path: 'feature.txt', content: b64('one\ntwo\n') }]
  expect((await s.post('/repos/alice/demo/contents', { branch: 'feature', files, message: 'feature' }, token)).status).toBe(201)
  expect((await s.post('/repos/alice/demo/pulls', { head: 'feature', base: 'main', title: 'Add the feature', body: 'It adds **a file**.' }, token)).status).toBe(201)
  expect((await s.post('/repos/alice/demo/issues', { title: 'Ping bob', body: 'hello @bob' }, token)).status).toBe(201)
}, BROWSER_LIMIT_MS)
afterAll(() => stopServerAndBrowser(s, browser))

const signedIn = (user: TestUser): Promise<Page> => signedInPage(browser, s.url, user)

test('file an issue and comment through the forms, close and reopen it; the API sees each', async () => {
  const page = await signedIn(alice)
  await page.goto(s.url + '/alice/demo/issues')
  await expectAccessible(page)
  await page.getByRole('link', { name: 'New issue' }).click()
  await page.waitForURL(/\/issues\/new$/)
  await expectAccessible(page)
  await page.getByLabel('Title').fill('Broken in the browser')
  await page.getByLabel('Description').fill('Steps:\n\n1. open\n2. **see**')
  await page.getByLabel('bug').check()
  await page.getByRole('button', { name: 'Create issue' }).click()
  await page.waitForURL(/\/alice\/demo\/issues\/\d+$/)
  const index = Number(/\/issues\/(\d+)$/.exec(page.url())![1])
  expect(await page.locator('.conversation-head h1').textContent()).toContain('Broken in the browser')
  expect(await page.locator('#issue-body strong').textContent()).toBe('see')
  await expectAccessible(page)
  const filed = (await s.get(`/repos/alice/demo/issues/${index}`, { token: alice.token })).body
  expect([filed.title, filed.body, filed.labels.map((l: any) => l.name)]).toEqual(['Broken in the browser', 'Steps:\n\n1. open\n2. **see**', ['bug']])

  await page.getByLabel('Comment', { exact: true }).fill('A comment with `code`')
  await page.getByRole('button', { name: 'Comment', exact: true }).click()
  await page.waitForURL(/#issuecomment-\d+$/)
  expect(await page.locator('article.comment code').last().textContent()).toBe('code')
  const comments = (await s.get(`/repos/alice/demo/issues/${index}/comments`, { token: alice.token })).body
  expect(comments.map((c: any) => [c.user.login, c.body])).toEqual([['alice', 'A comment with `code`']])

  await page.getByLabel('Comment', { exact: true }).fill('Fixed now')
  await page.getByRole('button', { name: 'Close with comment' }).click()
  await page.waitForURL(/#issuecomment-\d+$/)
  expect((await s.get(`/repos/alice/demo/issues/${index}`, { token: alice.token })).body.state).toBe('closed')
  expect(await page.locator('.conversation-head .state').textContent()).toBe('Closed')
  expect(await page.getByText('alice closed this').count()).toBe(1)
  await page.getByRole('button', { name: 'Reopen' }).click()
  await page.waitForURL(new RegExp(`/issues/${index}$`))
  expect((await s.get(`/repos/alice/demo/issues/${index}`, { token: alice.token })).body.state).toBe('open')
  expect(await page.locator('.conversation-head .state').textContent()).toBe('Open')
  await expectAccessible(page)

  // The folded edit forms work without script: the title, then the comment's text.
  await page.getByText('Edit title').click()
  await expectAccessible(page)
  await page.getByLabel('Title').fill('Broken, renamed in the browser')
  await page.getByRole('button', { name: 'Save title' }).click()
  // The same address again: wait for the new title (the page's timeline says who changed it).
  await page.getByText('alice changed the title from').waitFor()
  expect(await page.locator('.conversation-head h1').textContent()).toContain('Broken, renamed in the browser')
  await page.locator(`#issuecomment-${comments[0].id} summary`, { hasText: 'Edit' }).click()
  await page.locator(`#issuecomment-${comments[0].id} textarea`).fill('An edited comment')
  await page.locator(`#issuecomment-${comments[0].id}`).getByRole('button', { name: 'Save' }).click()
  await page.waitForURL(new RegExp(`#issuecomment-${comments[0].id}$`))
  expect((await s.get(`/repos/alice/demo/issues/${index}`, { token: alice.token })).body.title).toBe('Broken, renamed in the browser')
  expect((await s.get(`/repos/alice/demo/issues/comments/${comments[0].id}`, { token: alice.token })).body.body).toBe('An edited comment')

  // The list shows it with its label; the closed tab is empty again.
  await page.goto(s.url + '/alice/demo/issues')
  expect(await page.getByRole('link', { name: 'Broken, renamed in the browser' }).count()).toBe(1)
  await page.getByRole('link', { name: /Closed/ }).click()
  expect(await page.getByRole('link', { name: 'Broken, renamed in the browser' }).count()).toBe(0)
  await page.context().close()
}, BROWSER_LIMIT_MS)

test('a merge blocked by branch protection says which rule; once allowed, the button merges', async () => {
  expect((await s.post('/repos/alice/demo/branch_protections', { rule_name: 'main', required_approvals: 1, block_admin_merge_override: true }, { token: alice.token })).status).toBe(201)
  const page = await signedIn(alice)
  await page.goto(s.url + '/alice/demo/pulls')
  await expectAccessible(page)
  await page.getByRole('link', { name: 'Add the feature' }).click()
  await page.waitForURL(/\/alice\/demo\/pulls\/\d+$/)
  await expectAccessible(page)
  expect(await page.locator('.blocked').textContent()).toContain('Does not have enough approvals')
  // What the rule waits for can come: the form offers only to merge once it has (Gitea's auto merge).
  expect(await page.getByLabel('Merge when checks succeed').isChecked()).toBe(true)

  // Bob, a writer, approves through the review form.
  expect((await s.put('/repos/alice/demo/collaborators/bob', { permission: 'write' }, { token: alice.token })).status).toBe(204)
  const reviewer = await signedIn(bob)
  // First a comment on a line, from the files page: the line's number opens the form under it.
  await reviewer.goto(page.url() + '/files')
  await expectAccessible(reviewer)
  await reviewer.getByRole('link', { name: 'Comment on line 2' }).click()
  await reviewer.waitForURL(/\?comment=1-R2#line-form$/)
  await reviewer.getByLabel('Comment on feature.txt, line 2').fill('Is *two* right?')
  await expectAccessible(reviewer)
  await reviewer.getByRole('button', { name: 'Comment', exact: true }).click()
  await reviewer.waitForURL(/\/files#issuecomment-\d+$/)
  expect(await reviewer.locator('tr.notes .line-comment').textContent()).toContain('Is two right?')
  await expectAccessible(reviewer)
  await reviewer.goto(page.url())
  await reviewer.getByLabel('Review comment').fill('Looks good')
  await reviewer.getByLabel('Approve').check()
  await reviewer.getByRole('button', { name: 'Submit review' }).click()
  await reviewer.waitForURL(/#pullrequestreview-\d+$/)
  expect(await reviewer.getByText('approved these changes').count()).toBe(1)
  await expectAccessible(reviewer)
  await reviewer.context().close()

  await page.reload()
  expect(await page.locator('.blocked').count()).toBe(0)
  await page.getByLabel('Merge style').selectOption('merge')
  await page.getByRole('button', { name: 'Merge pull request' }).click()
  await page.waitForLoadState()
  expect(await page.locator('.merge-box').textContent()).toContain('merged this pull request')
  const index = Number(/\/pulls\/(\d+)$/.exec(page.url())![1])
  const merged = (await s.get(`/repos/alice/demo/pulls/${index}`, { token: alice.token })).body
  expect([merged.merged, merged.merged_by.login, merged.state]).toEqual([true, 'alice', 'closed'])
  await expectAccessible(page)
  // The head branch, left behind, is deleted from the same page.
  await page.getByRole('button', { name: 'Delete branch' }).click()
  await page.waitForLoadState()
  expect(await page.getByRole('button', { name: 'Delete branch' }).count()).toBe(0)
  expect((await s.get(`/repos/alice/demo/branches/${merged.head.ref}`, { token: alice.token })).status).toBe(404)
  // And restored there, at the pull request's head commit.
  await page.getByRole('button', { name: 'Restore branch' }).click()
  await page.waitForLoadState()
  expect(await page.getByRole('status').filter({ hasText: 'The branch was restored.' }).count()).toBe(1)
  expect((await s.get(`/repos/alice/demo/branches/${merged.head.ref}`, { token: alice.token })).body.commit.id).toBe(merged.head.sha)
  await expectAccessible(page)
  await page.context().close()
}, BROWSER_LIMIT_MS)

test('notifications: the unread thread links to its issue, and is marked read with its button', async () => {
  while ((await notifyRound(s.deps)) > 0) {}
  const page = await signedIn(bob)
  await page.goto(s.url + '/notifications')
  await expectAccessible(page)
  await page.getByRole('button', { name: 'Mark read: Ping bob' }).click()
  await page.waitForURL(s.url + '/notifications')
  expect(await page.getByRole('link', { name: 'Ping bob' }).count()).toBe(0)
  await page.getByRole('link', { name: 'Read', exact: true }).click()
  await page.getByRole('link', { name: 'Ping bob' }).click()
  await page.waitForURL(/\/alice\/demo\/issues\/\d+$/)
  expect(await page.locator('.conversation-head h1').textContent()).toContain('Ping bob')
  const threads = (await s.get('/notifications?all=true', { token: bob.token })).body
  expect(threads.find((t: any) => t.subject.title === 'Ping bob').unread).toBe(false)
  await page.context().close()
}, BROWSER_LIMIT_MS)
