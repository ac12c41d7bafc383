// runs in one half: postgresql
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { expectAccessible, launchChromium, signedInPage } from './browser-helpers'

/**
 * The creation pages in a real browser (Debian's Chromium, driven by playwright-core): from the
 * new repository page to a new organisation, its settings changed, a repository migrated into it
 * (a refused address shown on the form first), then the organisation deleted once it owns
 * nothing; axe-core on every page visited (no serious or critical violation).
 */

let s: TestServer, alice: TestUser, browser: Browser

beforeAll(async () => {
  ;[s, browser] = await Promise.all([startTestServer({ migrationsAllowLocalNetworks: true }), launchChromium()])
  alice = await s.user('alice')
  expect((await s.post('/user/repos', { name: 'source', auto_init: true }, { token: alice.token })).status).toBe(201)
})
afterAll(async () => {
  await browser?.close()
  await s.stop()
})

test('a new organisation, its settings, a migration into it, its deletion', async () => {
  const page = await signedInPage(browser, s.url, alice)
  await page.goto(s.url + '/repo/create')
  await page.getByRole('link', { name: 'New organisation' }).click()
  await page.waitForURL(/\/org\/create$/)
  await expectAccessible(page)
  await page.getByLabel('Organisation name').fill('acme')
  // What is typed reads as text, not in its label's bold (a helper's walkthrough saw every field bold).
  expect(await page.getByLabel('Organisation name').evaluate((e) => getComputedStyle(e).fontWeight)).toBe('400')
  await page.getByLabel('Visibility').selectOption('limited')
  await page.getByRole('button', { name: 'Create organisation' }).click()
  await page.waitForURL(/\/acme\?done=org-created$/)
  expect(await page.getByRole('status').textContent()).toContain('The organisation was created.')
  expect((await s.get('/orgs/acme', { token: alice.token })).body.visibility).toBe('limited')

  await page.goto(s.url + '/org/acme/members')
  await page.getByRole('link', { name: 'Settings' }).click()
  await page.waitForURL(/\/org\/acme\/settings$/)
  await expectAccessible(page)
  await page.getByLabel('Full name').fill('Acme Inc')
  await page.getByLabel('Website').fill('https://acme.example')
  await page.getByRole('button', { name: 'Update settings' }).click()
  await page.waitForURL(/done=saved/)
  expect((await s.get('/orgs/acme', { token: alice.token })).body.full_name).toBe('Acme Inc')

  await page.goto(s.url + '/repo/create')
  await page.getByRole('link', { name: 'New migration' }).click()
  await page.waitForURL(/\/repo\/migrate$/)
  await expectAccessible(page)
  await page.getByRole('link', { name: 'Migrate from Gitea' }).click()
  await page.waitForURL(/service_type=3$/)
  await expectAccessible(page)
  await page.getByLabel('Clone address').fill('git://127.0.0.1:1/nothing.git')
  await page.getByRole('combobox', { name: /^Owner/ }).selectOption('acme')
  await page.getByLabel('Repository name').fill('copy')
  await page.getByRole('button', { name: 'Migrate repository' }).click()
  expect(await page.getByRole('alert').textContent()).toContain('Migration failed')
  await expectAccessible(page)
  await page.getByLabel('Clone address').fill(`${s.url}/alice/source.git`)
  await page.getByRole('button', { name: 'Migrate repository' }).click()
  await page.waitForURL(/\/acme\/copy\?done=migrated$/)
  expect(await page.getByRole('status').textContent()).toContain('The repository was migrated.')
  expect((await s.get('/repos/acme/copy', { token: alice.token })).body.empty).toBe(false)

  await page.goto(s.url + '/org/acme/settings')
  await page.getByRole('link', { name: 'Delete organisation' }).click()
  await expectAccessible(page)
  await page.getByLabel(/Type the organisation's name/).fill('acme')
  await page.getByRole('button', { name: 'Delete this organisation' }).click()
  expect(await page.getByRole('alert').textContent()).toContain('still owns 1 repository')
  expect((await s.del('/repos/acme/copy', undefined, { token: alice.token })).status).toBe(204)
  await page.getByLabel(/Type the organisation's name/).fill('acme')
  await page.getByRole('button', { name: 'Delete this organisation' }).click()
  await page.waitForURL(/\?done=org-deleted$/)
  expect((await s.get('/orgs/acme', { token: alice.token })).status).toBe(404)
  await page.context().close()
})
