// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import type { TestServer, TestUser } from './helpers'
import { BROWSER_LIMIT_MS, expectAccessible, newPage, startServerAndBrowser, stopServerAndBrowser } from './browser-helpers'
import { pushGraphFixture } from './web-graph-fixture'

/**
 * The commit graph and the commit search in a real browser (Debian's Chromium, driven by
 * playwright-core): the lanes' SVG drawn beside the rows, each dot on its row; the options form
 * (monochrome, one branch) without a script; a short id to its commit; the history's search box;
 * axe-core on each page, at desktop and phone width.
 */

let s: TestServer
let browser: Browser
let alice: TestUser

beforeAll(async () => {
  ;({ s, browser } = await startServerAndBrowser())
  alice = await s.user('alice')
  await pushGraphFixture(s, alice, 'demo')
}, BROWSER_LIMIT_MS)
afterAll(() => stopServerAndBrowser(s, browser))

test('the graph renders: dots on their rows, lines between them; the options form; a row to its commit', async () => {
  const page = await newPage(browser)
  await page.goto(s.url + '/alice/demo/commits/branch/master')
  await page.getByRole('link', { name: 'Commit graph' }).click()
  await page.waitForURL(/\/alice\/demo\/graph$/)
  const svg = page.locator('svg.graph-lanes')
  await expect(svg.isVisible()).resolves.toBe(true)
  expect(await page.locator('svg.graph-lanes circle').count()).toBe(100)
  expect(await page.locator('svg.graph-lanes path').count()).toBeGreaterThan(0)
  // Each dot is drawn level with its row (the list's rows are as high as the drawing's).
  const rows = page.locator('ol.graph-rows > li')
  for (const i of [0, 50, 99]) {
    const dot = (await page.locator('svg.graph-lanes circle').nth(i).boundingBox())!
    const row = (await rows.nth(i).boundingBox())!
    expect(Math.abs(dot.y + dot.height / 2 - (row.y + row.height / 2))).toBeLessThan(2)
  }
  // A coloured lane: its stroke is not the monochrome one.
  const stroke = () => page.locator('svg.graph-lanes path').first().evaluate((p) => getComputedStyle(p).stroke)
  const coloured = await stroke()
  expect(coloured).not.toBe('none')
  await expectAccessible(page)
  // The options form, no script: monochrome, then only the feature branch.
  await page.getByLabel('Colours').selectOption('monochrome')
  await page.getByRole('button', { name: 'Show' }).click()
  await page.waitForURL(/mode=monochrome/)
  expect(await stroke()).toBe('rgb(89, 99, 110)')
  await page.getByText('Branches: all').click()
  await page.getByLabel('feature', { exact: true }).check()
  await page.getByRole('button', { name: 'Show' }).click()
  await page.waitForURL(/branch=feature/)
  expect(await rows.count()).toBe(4)
  expect(await page.locator('svg.graph-lanes circle').count()).toBe(4)
  await expectAccessible(page)
  // A row's short id opens its commit.
  await rows.first().locator('a.sha').click()
  await page.waitForURL(/\/alice\/demo\/commit\/[0-9a-f]{40}$/)
  expect(await page.locator('h2.commit-subject').textContent()).toBe('Feature more')
})

test('the history search box finds commits; the graph at phone width, axe clean', async () => {
  const page = await newPage(browser)
  await page.goto(s.url + '/alice/demo/commits/branch/master')
  await page.getByRole('searchbox', { name: 'Search commits' }).fill('feature')
  await page.getByRole('search', { name: 'Commits' }).getByRole('button', { name: 'Search' }).click()
  await page.waitForURL(/\/commits\/branch\/master\/search\?q=feature/)
  expect(await page.locator('ol.commits > li > a').allTextContents()).toEqual(['Merge feature', 'Feature more', 'Feature work'])
  await expectAccessible(page)
  const phone = await newPage(browser, { viewport: { width: 375, height: 700 } })
  await phone.goto(s.url + '/alice/demo/graph?page=2')
  expect(await phone.locator('svg.graph-lanes circle').count()).toBe(27)
  await expectAccessible(phone)
})
