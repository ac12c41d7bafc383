// runs in one half: postgresql
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { expectAccessible, launchChromium, signedInPage } from './browser-helpers'

/**
 * The release form with its attachments, the notification pages' subscriptions and watching tabs
 * and a profile README in a real browser (Debian's Chromium, driven by playwright-core): a file
 * attached through the form's file input, and axe-core on each page (no serious or critical violation).
 */

let s: TestServer, alice: TestUser, browser: Browser

beforeAll(async () => {
  ;[s, browser] = await Promise.all([startTestServer(), launchChromium()])
  alice = await s.user('alice')
  const asAlice = { token: alice.token }
  expect((await s.post('/user/repos', { name: 'proj', auto_init: true }, asAlice)).status).toBe(201)
  expect((await s.post('/repos/alice/proj/issues', { title: 'Followed issue' }, asAlice)).status).toBe(201)
  expect((await s.post('/user/repos', { name: '.profile' }, asAlice)).status).toBe(201)
  const readme = Buffer.from('# About Alice\n\nShe writes *code*.').toString('base64')
  expect((await s.post('/repos/alice/.profile/contents/README.md', { content: readme }, asAlice)).status).toBe(201)
})
afterAll(async () => {
  await browser?.close()
  await s.stop()
})

test('release attachments, subscriptions, watching and the profile README, accessible', async () => {
  const page = await signedInPage(browser, s.url, alice, { javaScriptEnabled: true })
  await page.goto(s.url + '/alice/proj/releases/new')
  await page.getByLabel('Tag name').fill('v1')
  await page.getByLabel('Title').fill('First')
  await page.getByLabel(/Attach files/).setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('release notes file') })
  await page.getByRole('button', { name: 'Publish release' }).click()
  await page.waitForURL(/\/alice\/proj\/releases\?done=release-published$/)
  await page.goto(s.url + '/alice/proj/releases/edit/v1')
  expect(await page.getByLabel('Name of notes.txt (18 bytes)').inputValue()).toBe('notes.txt')
  await expectAccessible(page)

  await page.goto(s.url + '/notifications')
  await page.getByRole('link', { name: 'Subscriptions' }).click()
  await page.waitForURL(/\/notifications\/subscriptions$/)
  expect(await page.getByRole('link', { name: 'Followed issue' }).count()).toBe(1)
  await expectAccessible(page)
  await page.getByRole('link', { name: 'Watching' }).click()
  await page.waitForURL(/\/notifications\/watching$/)
  expect(await page.getByRole('link', { name: 'alice/proj' }).count()).toBe(1)
  await expectAccessible(page)

  await page.goto(s.url + '/alice')
  expect(await page.getByRole('region', { name: 'Profile README' }).getByRole('heading', { name: 'About Alice' }).count()).toBe(1)
  await expectAccessible(page)
}, 120_000)
