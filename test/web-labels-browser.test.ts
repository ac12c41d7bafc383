// runs in one half: postgresql
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import type { TestServer, TestUser } from './helpers'
import { BROWSER_LIMIT_MS, expectAccessible, signedInPage, startServerAndBrowser, stopServerAndBrowser } from './browser-helpers'

/**
 * Labels and milestones in a real browser (Debian's Chromium, driven by playwright-core): a label
 * made, edited and deleted through the labels page, a milestone made through its form, closed and
 * reopened; each change seen through the API; axe-core on every page visited (no serious or
 * critical violation).
 */

let s: TestServer
let alice: TestUser
let browser: Browser

beforeAll(async () => {
  ;({ s, browser } = await startServerAndBrowser())
  alice = await s.user('alice')
  expect((await s.post('/user/repos', { name: 'demo', auto_init: true }, { token: alice.token })).status).toBe(201)
}, BROWSER_LIMIT_MS)
afterAll(() => stopServerAndBrowser(s, browser))

const signedIn = (user: TestUser): Promise<Page> => signedInPage(browser, s.url, user)

test('labels: from the issue list to the labels page; make one, edit it, delete it', async () => {
  const page = await signedIn(alice)
  await page.goto(s.url + '/alice/demo/issues')
  await page.getByRole('link', { name: 'Labels' }).click()
  await page.waitForURL(/\/alice\/demo\/labels$/)
  await expectAccessible(page)
  const form = page.locator('form[action="/alice/demo/labels/new"]')
  await form.getByLabel('Name').fill('needs-triage')
  await form.getByLabel('Description').fill('Not looked at yet')
  await page.getByRole('button', { name: 'Create label' }).click()
  await page.waitForURL(/done=label-added/)
  expect(await page.getByRole('status').textContent()).toBe('The label was created.')
  await expectAccessible(page)
  const made = (await s.get('/repos/alice/demo/labels', { token: alice.token })).body
  expect(made.map((l: any) => [l.name, l.color, l.description])).toEqual([['needs-triage', '1d76db', 'Not looked at yet']])

  await page.getByText('Edit needs-triage').click()
  const edit = page.locator('form[aria-label="Edit label needs-triage"]')
  await edit.getByLabel('Name').fill('triage')
  await edit.getByRole('button', { name: 'Save label' }).click()
  await page.waitForURL(/done=saved/)
  expect((await s.get('/repos/alice/demo/labels', { token: alice.token })).body.map((l: any) => l.name)).toEqual(['triage'])
  await page.getByRole('button', { name: 'Delete triage' }).click()
  await page.waitForURL(/done=label-deleted/)
  expect((await s.get('/repos/alice/demo/labels', { token: alice.token })).body).toEqual([])
}, BROWSER_LIMIT_MS)

test('milestones: make one through its form, see it in the list, close and reopen it', async () => {
  const page = await signedIn(alice)
  await page.goto(s.url + '/alice/demo/milestones')
  await expectAccessible(page)
  await page.getByRole('link', { name: 'New milestone' }).click()
  await page.waitForURL(/\/milestones\/new$/)
  await expectAccessible(page)
  await page.getByLabel('Title').fill('First release')
  await page.getByLabel('Due date (optional)').fill('2031-06-30')
  await page.getByLabel('Description').fill('Ship **it**')
  await page.getByRole('button', { name: 'Create milestone' }).click()
  await page.waitForURL(/\/milestones\?done=milestone-added$/)
  await expectAccessible(page)
  expect(await page.locator('article[aria-label="First release"] .markdown strong').textContent()).toBe('it')
  const [m] = (await s.get('/repos/alice/demo/milestones', { token: alice.token })).body
  expect([m.title, m.due_on, m.description]).toEqual(['First release', '2031-06-30T23:59:59Z', 'Ship **it**'])

  await page.getByRole('button', { name: 'Close First release' }).click()
  await page.waitForURL(/state=closed/)
  expect((await s.get(`/repos/alice/demo/milestones/${m.id}`, { token: alice.token })).body.state).toBe('closed')
  await page.getByRole('button', { name: 'Reopen First release' }).click()
  await page.waitForURL(/state=open/)
  expect((await s.get(`/repos/alice/demo/milestones/${m.id}`, { token: alice.token })).body.state).toBe('open')
}, BROWSER_LIMIT_MS)

test("an organisation's labels: from its settings, a label made through the form; axe on the page", async () => {
  expect((await s.post('/orgs', { username: 'labelled' }, { token: alice.token })).status).toBe(201)
  const page = await signedIn(alice)
  await page.goto(s.url + '/org/labelled/settings')
  await page.getByRole('link', { name: 'Labels' }).click()
  await page.waitForURL(/\/org\/labelled\/settings\/labels$/)
  await expectAccessible(page)
  const form = page.locator('form[action="/org/labelled/settings/labels/new"]')
  await form.getByLabel('Name').fill('shared')
  await page.getByRole('button', { name: 'Create label' }).click()
  await page.waitForURL(/done=label-added/)
  await expectAccessible(page)
  expect((await s.get('/orgs/labelled/labels', { token: alice.token })).body.map((l: any) => l.name)).toEqual(['shared'])
}, BROWSER_LIMIT_MS)
