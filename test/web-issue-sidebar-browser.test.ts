// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import type { TestServer, TestUser } from './helpers'
import { BROWSER_LIMIT_MS, expectAccessible, signedInPage, startServerAndBrowser, stopServerAndBrowser } from './browser-helpers'

/**
 * The issue sidebar in a real browser: the due date set through its folded form (no script
 * needed), seen through the API and on the page; axe-core on the page before and after.
 */

let s: TestServer
let alice: TestUser
let browser: Browser

beforeAll(async () => {
  ;({ s, browser } = await startServerAndBrowser())
  alice = await s.user('alice')
  expect((await s.post('/user/repos', { name: 'demo', auto_init: true }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/repos/alice/demo/issues', { title: 'Due soon' }, { token: alice.token })).status).toBe(201)
}, BROWSER_LIMIT_MS)
afterAll(() => stopServerAndBrowser(s, browser))

test('due date: set from the sidebar, shown there and through the API', async () => {
  const page = await signedInPage(browser, s.url, alice)
  await page.goto(s.url + '/alice/demo/issues/1')
  await expectAccessible(page)
  await page.getByText('Set due date').click()
  await page.getByLabel('Due date').fill('2031-05-06')
  await page.getByRole('button', { name: 'Save due date' }).click()
  await page.waitForURL(/\/alice\/demo\/issues\/1$/)
  expect((await s.get('/repos/alice/demo/issues/1', { token: alice.token })).body.due_date).toStartWith('2031-05-06')
  expect(await page.locator('aside time[datetime="2031-05-06"]').count()).toBe(1)
  await expectAccessible(page)
}, BROWSER_LIMIT_MS)
