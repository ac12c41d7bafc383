// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import type { Browser } from 'playwright-core'
import type { TestServer, TestUser } from './helpers'
import { BROWSER_LIMIT_MS, expectAccessible, signedInPage, startServerAndBrowser, stopServerAndBrowser } from './browser-helpers'
import { users } from '../src/db/schema'

/**
 * The site administrator's user accounts in a real browser (Debian's Chromium through
 * playwright-core): from the list to an account, its edit form refused then saved (a rename and
 * its fields), the view showing it; the cron tasks' page; axe-core on each page.
 */

let s: TestServer
let browser: Browser
let root: TestUser, erin: TestUser

beforeAll(async () => {
  ;({ s, browser } = await startServerAndBrowser())
  root = await s.user('root', { admin: true })
  erin = await s.user('erin')
}, BROWSER_LIMIT_MS)
afterAll(() => stopServerAndBrowser(s, browser))

test('a user edited through the form: a refusal said on it, then the rename and fields saved', async () => {
  const page = await signedInPage(browser, s.url, root)
  await page.goto(s.url + '/-/admin/users?status_filter[is_admin]=false')
  await expectAccessible(page)
  await page.getByRole('link', { name: 'Edit erin' }).click()
  await page.waitForURL((url) => url.pathname === `/-/admin/users/${erin.user.id}/edit`)
  await expectAccessible(page)

  await page.getByLabel('Username').fill('root')
  await page.getByRole('button', { name: 'Update account' }).click()
  expect(await page.getByRole('alert').textContent()).toBe('Username: user already exists [name: root]')
  await expectAccessible(page)

  await page.getByLabel('Username').fill('erin-smith')
  await page.getByLabel('Full name').fill('Erin Smith')
  await page.getByLabel('Location').fill('Oslo')
  await page.getByLabel('Visibility').selectOption('limited')
  await page.getByLabel('May create organisations').uncheck()
  await page.getByRole('button', { name: 'Update account' }).click()
  await page.waitForURL((url) => url.pathname === `/-/admin/users/${erin.user.id}` && url.search === '?done=user-saved')
  expect(await page.getByRole('status').textContent()).toBe('The account was updated.')
  expect(await page.getByRole('heading', { level: 2 }).textContent()).toBe('Account erin-smith')
  await expectAccessible(page)
  const row = (await s.deps.db.select().from(users).where(eq(users.id, erin.user.id)))[0]!
  expect(row).toMatchObject({ name: 'erin-smith', fullName: 'Erin Smith', location: 'Oslo', visibility: 'limited', allowCreateOrganization: false, isActive: true })

  await page.getByRole('navigation', { name: 'Site administration' }).getByRole('link', { name: 'Cron tasks', exact: true }).click()
  await page.waitForURL((url) => url.pathname === '/-/admin/monitor/cron')
  await expectAccessible(page)
  await page.goto(s.url + '/-/admin/users/new')
  await expectAccessible(page)
}, BROWSER_LIMIT_MS)
