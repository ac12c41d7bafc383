// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { expectAccessible, launchChromium, signedInPage } from './browser-helpers'
import { jobBoardOf } from '../src/lib/job-board'

/**
 * The site administration in a real browser (Debian's Chromium, driven by playwright-core): the
 * dashboard, a background job run from it, and a repository deleted from the repositories list
 * through its confirmation form; axe-core on every page of the menu (no serious or critical violation).
 */

let s: TestServer
let root: TestUser
let browser: Browser
let ran = 0
/** A browser test's own limit: the machine may be very busy; this catches a hang, it times nothing. */
const LIMIT_MS = 480_000

beforeAll(async () => {
  s = await startTestServer()
  root = await s.user('root', { admin: true })
  expect((await s.post('/user/repos', { name: 'doomed' }, { token: root.token })).status).toBe(201)
  jobBoardOf(s.deps).register('browser_test_job', { schedule: '@every 1h', everyMs: null, runNow: () => void ran++ })
  browser = await launchChromium()
}, LIMIT_MS)
afterAll(async () => {
  await browser?.close()
  await s.stop()
})

test('the dashboard runs a job; a repository is deleted from the list after its name is typed', async () => {
  const page = await signedInPage(browser, s.url, root)
  await page.goto(s.url + '/-/admin')
  await expectAccessible(page)
  expect(await page.getByRole('table', { name: 'Site counts' }).getByRole('row', { name: /Repositories/ }).textContent()).toBe('Repositories1')
  await page.getByRole('button', { name: 'Run browser_test_job now' }).click()
  await page.waitForURL(/\/-\/admin\?done=job-started$/)
  expect(await page.getByRole('status').textContent()).toContain('The job was started')
  expect(ran).toBe(1)

  await page.getByRole('link', { name: 'Repositories', exact: true }).click()
  await page.waitForURL(/\/-\/admin\/repos$/)
  await expectAccessible(page)
  await page.getByRole('link', { name: 'Delete root/doomed' }).click()
  await page.waitForURL(/\/-\/admin\/repos\/delete\?id=\d+$/)
  await expectAccessible(page)
  const confirm = page.getByLabel("Type the repository's full name, root/doomed, to confirm")
  await confirm.fill('root/wrong')
  await page.getByRole('button', { name: 'Delete this repository' }).click()
  expect(await page.getByRole('alert').textContent()).toContain("Type the repository's full name, root/doomed, to delete it.")
  await expectAccessible(page)
  expect((await s.get('/repos/root/doomed', { token: root.token })).status).toBe(200)
  await confirm.fill('root/doomed')
  await page.getByRole('button', { name: 'Delete this repository' }).click()
  await page.waitForURL(/\/-\/admin\/repos\?done=repo-deleted$/)
  expect(await page.getByRole('status').textContent()).toBe('The repository was deleted.')
  expect((await s.get('/repos/root/doomed', { token: root.token })).status).toBe(404)

  // The other pages of the menu pass the same accessibility check.
  const menu: [string, string][] = [
    ['User accounts', '/-/admin/users'],
    ['Organisations', '/-/admin/orgs'],
    ['Unadopted repositories', '/-/admin/repos/unadopted'],
    ['E-mail addresses', '/-/admin/emails'],
    ['Configuration', '/-/admin/config'],
  ]
  for (const [name, path] of menu) {
    await page.getByRole('navigation', { name: 'Site administration' }).getByRole('link', { name, exact: true }).click()
    await page.waitForURL((url) => url.pathname === path)
    expect(await page.getByRole('heading', { level: 2 }).textContent()).toBe(name)
    await expectAccessible(page)
  }
}, LIMIT_MS)
