// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { expectAccessible, launchChromium, signedInPage } from './browser-helpers'

/** An organisation's webhook pages in Chromium: the list, the add form filled in, the hook's page; axe-core on each. */

let s: TestServer
let olga: TestUser
let browser: Browser

beforeAll(async () => {
  s = await startTestServer()
  olga = await s.user('olga')
  expect((await s.post('/orgs', { username: 'hooked' }, { token: olga.token })).status).toBe(201)
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await s.stop()
})

test("an organisation's owner adds a webhook through the form and finds it listed", async () => {
  const page = await signedInPage(browser, s.url, olga)
  await page.goto(s.url + '/org/hooked/settings')
  await page.getByRole('link', { name: 'Webhooks' }).click()
  await expectAccessible(page)
  await page.getByRole('link', { name: 'Add webhook' }).click()
  await expectAccessible(page)
  await page.getByLabel('Target URL').fill('https://example.com/browser')
  await page.getByLabel('All events').check()
  await page.getByRole('button', { name: 'Add webhook' }).click()
  await page.waitForURL(/\/org\/hooked\/settings\/hooks\/\d+\?done=hook-added$/)
  await expectAccessible(page)
  expect(await page.getByLabel('Target URL').inputValue()).toBe('https://example.com/browser')
  const hooks = (await s.get('/orgs/hooked/hooks', { token: olga.token })).body
  expect(hooks[0].config.url).toBe('https://example.com/browser')
  await page.getByRole('link', { name: 'Webhooks' }).click()
  await expect(page.getByRole('link', { name: 'https://example.com/browser' }).count()).resolves.toBe(1)
})
