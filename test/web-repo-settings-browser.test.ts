// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import type { TestServer, TestUser } from './helpers'
import { expectAccessible, signedInPage, startServerAndBrowser, stopServerAndBrowser } from './browser-helpers'

/**
 * The repository options page in a real browser (Debian's Chromium, playwright-core): a push
 * mirror added through its form, a transfer offered through the danger zone and accepted from the
 * recipient's banner on the repository's home, the teams of an organisation's repository; axe-core
 * on every page visited (no serious or critical violation).
 */

let s: TestServer
let browser: Browser
let alice: TestUser, carol: TestUser

beforeAll(async () => {
  ;({ s, browser } = await startServerAndBrowser({ migrationsAllowLocalNetworks: true }))
  alice = await s.user('alice')
  carol = await s.user('carol')
  expect((await s.post('/user/repos', { name: 'gift', auto_init: true }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'target' }, { token: carol.token })).status).toBe(201)
  expect((await s.post('/orgs', { username: 'acme' }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/orgs/acme/repos', { name: 'shared' }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/orgs/acme/teams', { name: 'devs', permission: 'write', units: ['repo.code'] }, { token: alice.token })).status).toBe(201)
})
afterAll(() => stopServerAndBrowser(s, browser))

test('a push mirror added, a transfer offered then accepted from the banner, a team given the repository', async () => {
  const page = await signedInPage(browser, s.url, alice)
  await page.goto(`${s.url}/alice/gift/settings`)
  await expectAccessible(page)
  await page.getByLabel('Remote address (http, https or git)').fill(`${s.url}/carol/target.git`)
  await page.getByLabel('Username', { exact: true }).fill(carol.name)
  await page.getByLabel('Password or token', { exact: true }).fill(carol.password)
  await page.getByRole('button', { name: 'Add push mirror' }).click()
  await page.waitForURL(/done=push-mirror-added/)
  expect(await page.getByRole('table', { name: 'Push mirrors' }).textContent()).toContain('/carol/target.git')
  expect(await page.content()).not.toContain(carol.password)
  await expectAccessible(page)

  const transfer = page.getByRole('form', { name: 'Transfer ownership' })
  await transfer.getByLabel('New owner').fill('carol')
  await transfer.getByLabel('typed again').fill('gift')
  await transfer.getByRole('button', { name: 'Transfer ownership' }).click()
  await page.waitForURL(/done=transfer-started/)
  expect(await page.getByRole('status').textContent()).toContain('must accept')
  await expectAccessible(page)

  const recipient = await signedInPage(browser, s.url, carol)
  await recipient.goto(`${s.url}/alice/gift`)
  await expectAccessible(recipient)
  await recipient.getByRole('button', { name: 'Accept transfer' }).click()
  await recipient.waitForURL(/\/carol\/gift\?done=transfer-accepted$/)
  expect((await s.get('/repos/carol/gift', { token: carol.token })).body.owner.login).toBe('carol')

  await page.goto(`${s.url}/acme/shared/settings/collaboration`)
  await expectAccessible(page)
  await page.getByLabel('Team name').fill('devs')
  await page.getByRole('button', { name: 'Add team' }).click()
  await page.waitForURL(/done=team-added/)
  expect(await page.getByRole('table', { name: 'Teams' }).textContent()).toContain('devs')
  await expectAccessible(page)
  await page.context().close()
  await recipient.context().close()
})
