// runs in one half: postgresql
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import type { TestServer, TestUser } from './helpers'
import { BROWSER_LIMIT_MS, expectAccessible, signedInPage, startServerAndBrowser, stopServerAndBrowser } from './browser-helpers'

/**
 * The package pages in a real browser (Debian's Chromium, driven by playwright-core): from the
 * profile's Packages tab to a version's page (its installation commands, files and versions), a
 * file downloaded from it, the settings reached from it linking the package to a repository, and
 * the repository's Packages tab listing it. axe-core on every page visited (no serious or
 * critical violation).
 */

let s: TestServer, browser: Browser, alice: TestUser

beforeAll(async () => {
  ;({ s, browser } = await startServerAndBrowser())
  alice = await s.user('alice')
  expect((await s.post('/user/repos', { name: 'proj', auto_init: true }, { token: alice.token })).status).toBe(201)
  for (const [version, file, body] of [['1.0.0', 'tool.bin', 'tool one'], ['1.0.0', 'notes.txt', 'notes'], ['2.0.0', 'tool.bin', 'tool two']]) {
    const res = await fetch(`${s.url}/api/packages/alice/generic/tool/${version}/${file}`, { method: 'PUT', headers: { authorization: `token ${alice.token}` }, body })
    expect(res.status).toBe(201)
  }
}, BROWSER_LIMIT_MS)
afterAll(() => stopServerAndBrowser(s, browser))

test('the Packages tab, a version page, a download, the settings linking a repository, the repository\u2019s Packages tab', async () => {
  const page = await signedInPage(browser, s.url, alice)
  await page.goto(s.url + '/alice')
  await page.getByRole('link', { name: 'Packages', exact: true }).click()
  await page.waitForURL(/\/alice\/-\/packages$/)
  await expectAccessible(page)
  expect(await page.getByRole('list', { name: 'Packages' }).getByRole('listitem').count()).toBe(1)

  await page.getByRole('link', { name: 'tool', exact: true }).click()
  await page.waitForURL(/\/alice\/-\/packages\/generic\/tool\/2\.0\.0$/)
  await page.getByRole('link', { name: '1.0.0', exact: true }).click()
  await page.waitForURL(/\/tool\/1\.0\.0$/)
  expect(await page.getByRole('heading', { level: 2, name: 'tool (1.0.0)' }).count()).toBe(1)
  expect(await page.locator('pre code').textContent()).toContain(`curl -OJ ${s.url}/api/packages/alice/generic/tool/1.0.0/notes.txt`)
  const assets = page.getByRole('table', { name: 'Assets (2)' })
  expect(await assets.getByRole('row').count()).toBe(3)
  await expectAccessible(page)

  const [download] = await Promise.all([page.waitForEvent('download'), assets.getByRole('link', { name: 'notes.txt', exact: true }).click()])
  expect(download.suggestedFilename()).toBe('notes.txt')

  await page.getByRole('link', { name: 'Settings' }).click()
  await page.waitForURL(/\/tool\/1\.0\.0\/settings$/)
  await expectAccessible(page)
  await page.getByRole('combobox', { name: 'Repository', exact: true }).selectOption({ label: 'proj' })
  await page.getByRole('button', { name: 'Link repository' }).click()
  await page.waitForURL(/done=package-linked/)
  expect((await page.getByRole('status').textContent())?.trim()).toBe('The package was linked to the repository.')
  await expectAccessible(page)

  await page.goto(s.url + '/alice/proj')
  await page.getByRole('link', { name: 'Packages', exact: true }).click()
  await page.waitForURL(/\/alice\/proj\/packages$/)
  expect(await page.getByRole('list', { name: 'Packages' }).getByRole('link', { name: 'tool', exact: true }).count()).toBe(1)
  await expectAccessible(page)
  await page.context().close()
}, BROWSER_LIMIT_MS)
