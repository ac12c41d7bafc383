// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { expectAccessible, launchChromium } from './browser-helpers'

/**
 * The web pages in a real browser (Debian's Chromium, driven by playwright-core): browsing from
 * the home page to a line of a file, signing in (a wrong password first) and out, and axe-core on
 * every page visited (no serious or critical violation).
 */

let s: TestServer
let alice: TestUser
let browser: Browser
const b64 = (text: string) => Buffer.from(text).toString('base64')

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  const token = { token: alice.token }
  expect((await s.post('/user/repos', { name: 'demo', auto_init: true, description: 'A demo' }, token)).status).toBe(201)
  const lines = Array.from({ length: 30 }, (_, i) => `export const v${i + 1} = ${i + 1}`).join('\n')
  expect((await s.post('/repos/alice/demo/contents', { files: [{ operation: 'create', path: 'lib/values.ts', content: b64(lines) }], message: 'add' }, token)).status).toBe(201)
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await s.stop()
})

test('home → profile → repository → folder → file → line anchor, each page accessible', async () => {
  const page = await (await browser.newContext()).newPage()
  await page.goto(s.url + '/')
  await expectAccessible(page)
  await page.goto(s.url + '/alice')
  await expectAccessible(page)
  // The profile's tabs: its activity, then back to its repositories.
  const tabs = page.getByRole('navigation', { name: 'Profile' })
  await tabs.getByRole('link', { name: 'Activity' }).click()
  await page.waitForURL(/\/alice\?tab=activity$/)
  expect(await page.getByRole('list', { name: 'Activity' }).getByRole('link', { name: 'alice/demo' }).count()).toBeGreaterThan(0)
  await expectAccessible(page)
  await tabs.getByRole('link', { name: 'Repositories' }).click()
  await page.waitForURL(/\/alice$/)
  await page.getByRole('link', { name: 'alice/demo' }).click()
  await page.waitForURL(/\/alice\/demo$/)
  expect(await page.locator('h1').first().textContent()).toContain('demo')
  await expectAccessible(page)
  await page.getByRole('link', { name: 'lib', exact: true }).click()
  await page.waitForURL(/\/src\/branch\/main\/lib$/)
  await expectAccessible(page)
  await page.getByRole('link', { name: 'values.ts' }).click()
  await page.waitForURL(/values\.ts$/)
  await expectAccessible(page)
  // The number of line 12 (drawn in its left margin) marks it.
  await page.locator('#L12').click({ position: { x: 8, y: 4 } })
  await page.waitForURL(/#L12$/)
  expect(await page.locator('li:target').textContent()).toBe('export const v12 = 12')
  await page.context().close()
})

test('sign in (a wrong password first), see your repositories, sign out', async () => {
  const page = await (await browser.newContext()).newPage()
  await page.goto(s.url + '/')
  await page.getByRole('link', { name: 'Sign in' }).first().click()
  await page.waitForURL(/\/user\/login/)
  await expectAccessible(page)
  await page.getByLabel('Username or e-mail address').fill('alice')
  await page.getByLabel('Password').fill('not the password')
  await page.getByRole('button', { name: 'Sign in' }).click()
  expect((await page.getByRole('alert').textContent())?.trim()).toBe('Wrong username or password.')
  await page.getByLabel('Password').fill(alice.password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(s.url + '/')
  expect(await page.getByRole('heading', { name: 'Your repositories' }).count()).toBe(1)
  await expectAccessible(page)
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.waitForURL(s.url + '/')
  expect(await page.getByRole('link', { name: 'Sign in' }).count()).toBeGreaterThan(0)
  await page.context().close()
})
