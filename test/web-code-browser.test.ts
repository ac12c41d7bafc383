// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { expectAccessible, launchBrowser, newPage as newBrowserPage, signInPage } from './browser-helpers'
import { pushCodeFixture } from './web-code-fixture'

/**
 * The code pages in a real browser (Debian's Chromium, driven by playwright-core): from the
 * repository home into a folder, a file and a line range (by mouse and by keyboard); a commit's diff; the compare page
 * opening a pull request through its form; axe-core on each page (no serious or critical
 * violation), at desktop and phone width.
 */

let s: TestServer
let alice: TestUser
let browser: Browser
let sha: (rev: string) => Promise<string>

beforeAll(async () => {
  s = await startTestServer({ markdownTimeoutMs: 120_000 })
  alice = await s.user('alice')
  ;({ sha } = await pushCodeFixture(s, alice, 'demo'))
  expect((await s.post('/repos/alice/demo/releases', { tag_name: 'v1.0', name: 'First', body: 'Notes **here**' }, { token: alice.token })).status).toBe(201)
  browser = await launchBrowser()
}, 600_000)
afterAll(async () => {
  await browser?.close()
  await s.stop()
})

const newPage = (options: Parameters<Browser['newContext']>[0] = {}) => newBrowserPage(browser, options)
const signIn = (page: Page) => signInPage(page, s.url, alice)

test('home → folder → file → a line, then a range by shift-click; the history; a commit and its diff', async () => {
  const page = await newPage()
  await page.goto(s.url + '/alice/demo')
  await page.getByRole('link', { name: 'src', exact: true }).click()
  await page.waitForURL(/\/src\/branch\/master\/src$/)
  await page.getByRole('link', { name: 'main.ts' }).click()
  await page.waitForURL(/main\.ts$/)
  await expectAccessible(page)
  // A click on a line's number (drawn in the line's left margin) marks the line, a shift-click a range.
  await page.locator('#L1').click({ position: { x: 8, y: 4 } })
  await page.waitForURL(/#L1$/)
  expect(await page.locator('li:target').textContent()).toBe('// entry')
  await page.locator('#L3').click({ position: { x: 8, y: 4 }, modifiers: ['Shift'] })
  await page.waitForURL(/#L1-L3$/)
  expect(await page.locator('ol.lines > li.selected').count()).toBe(3)
  // A click on the text itself marks nothing.
  await page.locator('#L2').click({ position: { x: 200, y: 4 } })
  expect(page.url()).toMatch(/#L1-L3$/)
  // The numbers are reachable by keyboard: one tab stop after the code's region, moved by the
  // arrow keys; Enter follows it to the line, Shift+Enter marks the range from the line before.
  await page.mouse.move(0, 0)
  await page.goto(s.url + '/alice/demo/src/branch/master/src/main.ts')
  await page.locator('div.code').focus()
  await page.keyboard.press('Tab')
  expect(await page.evaluate(() => [document.activeElement?.getAttribute('aria-label'), document.activeElement?.getAttribute('href')])).toEqual(['Line 1', '#L1'])
  await page.keyboard.press('ArrowDown')
  await page.keyboard.press('ArrowDown')
  expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Line 3')
  await page.keyboard.press('Enter')
  await page.waitForURL(/#L3$/)
  expect(await page.locator('li:target').textContent()).toBe('export const question = "six times nine"')
  await page.keyboard.press('Home')
  await page.keyboard.press('Shift+Enter')
  await page.waitForURL(/#L1-L3$/)
  expect(await page.locator('ol.lines > li.selected').count()).toBe(3)
  // Still one link in the whole file, its name the line's number only (the line's text unchanged).
  expect(await page.locator('ol.lines a').count()).toBe(1)
  expect(await page.getByRole('link', { name: 'Line 1', exact: true }).count()).toBe(1)
  // Under the mouse (the link no longer focused), a number is the link (copied or opened as any link).
  await page.locator('div.code').focus()
  await page.locator('#L2').hover({ position: { x: 8, y: 4 } })
  expect(await page.locator('#L2 > a.ln').getAttribute('href')).toBe('#L2')
  // The long file: one link among its 2,000 lines, axe clean with it.
  await page.goto(s.url + '/alice/demo/src/branch/master/long.ts#L1500')
  expect(await page.locator('ol.lines a').count()).toBe(1)
  expect(await page.locator('#L1500 > a.ln').getAttribute('href')).toBe('#L1500')
  await page.locator('#L1500 > a.ln').focus()
  await page.keyboard.press('End')
  await page.keyboard.press('Enter')
  await page.waitForURL(/#L2000$/)
  // Axe over the page but the lines past the 100th (the same markup 1,900 times more, where axe
  // spent half a minute on a quiet machine): the code region is scrolled and checked whole.
  await expectAccessible(page, 'ol.lines > li:nth-child(n+101)')
  // A shared range link highlights its rows on load.
  await page.goto(s.url + '/alice/demo/src/tag/v1.0/src/main.ts#L2-L3')
  await page.locator('ol.lines > li.selected').nth(1).waitFor()
  expect(await page.locator('ol.lines > li.selected').nth(0).textContent()).toBe('export const answer: number = 42')
  // The history, then a commit.
  await page.getByRole('navigation', { name: 'Repository pages' }).getByRole('link', { name: 'Commits' }).click()
  await page.waitForURL(/\/commits\/branch\/master$/)
  await expectAccessible(page)
  await page.getByRole('link', { name: 'Ask the question' }).click()
  await page.waitForURL(new RegExp(`/commit/${await sha('master')}$`))
  expect(await page.locator('tr.add td').nth(2).textContent()).toBe('+export const question = "six times nine"')
  await expectAccessible(page)
  for (const path of ['/alice/demo/branches', '/alice/demo/tags', '/alice/demo/releases']) {
    await page.goto(s.url + path)
    await expectAccessible(page)
  }
  await page.context().close()
  // Axe over seven pages and a long file: ~15 s on a quiet machine, past a minute on a busy one.
}, 360_000)

test('the compare page opens a pull request through its form, then the pull request\'s files', async () => {
  const page = await newPage({ viewport: { width: 390, height: 844 } })
  const context = page.context()
  await signIn(page)
  await page.goto(s.url + '/alice/demo/branches')
  await page.getByRole('link', { name: 'Compare' }).first().click()
  await page.waitForURL(/\/compare\/master\.\.\./)
  await expectAccessible(page)
  await page.getByLabel('Title').fill('Browser pull request')
  await page.getByLabel('Description').fill('Opened from the *compare* page')
  await page.getByRole('button', { name: 'Create pull request' }).click()
  await page.waitForURL(/\/alice\/demo\/pulls\/\d+$/)
  const index = Number(/pulls\/(\d+)$/.exec(page.url())![1])
  const pull = (await s.get(`/repos/alice/demo/pulls/${index}`)).body
  expect([pull.title, pull.body, pull.base.ref]).toEqual(['Browser pull request', 'Opened from the *compare* page', 'master'])
  await page.goto(`${s.url}/alice/demo/pulls/${index}/files`)
  expect(await page.getByRole('heading', { name: /Browser pull request/ }).count()).toBe(1)
  await expectAccessible(page)
  // Nothing is wider than the phone's screen but the code, which scrolls in its own box.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
  expect(overflow).toBeLessThanOrEqual(0)
  await context.close()
})

test('a branch made from the switcher, then renamed, deleted and restored from the branches page; axe on the forms', async () => {
  const page = await newBrowserPage(browser)
  await signIn(page)
  // A folder's page (the home's README carries an image of the fixture's without a text).
  await page.goto(s.url + '/alice/demo/src/branch/master/src')
  await page.locator('details.branches > summary').click()
  await page.getByText('New branch or tag from here').click()
  await expectAccessible(page)
  await page.getByLabel(/Name of the new branch or tag/).fill('from-switcher')
  await page.getByRole('button', { name: 'Create', exact: true }).click()
  await page.waitForURL(/\/src\/branch\/from-switcher\/src\?done=branch-created$/)
  expect(await page.getByRole('status').textContent()).toBe('The branch was created.')

  await page.goto(s.url + '/alice/demo/branches')
  const row = page.locator('li', { has: page.getByRole('link', { name: 'from-switcher', exact: true }) })
  await row.getByText('Rename', { exact: true }).click()
  await expectAccessible(page)
  await row.getByLabel('New name of branch from-switcher').fill('renamed')
  await row.getByRole('button', { name: 'Rename branch' }).click()
  await page.waitForURL(/\/branches\?done=branch-renamed$/)
  const renamed = page.locator('li', { has: page.getByRole('link', { name: 'renamed', exact: true }) })
  await renamed.getByText('Delete', { exact: true }).click()
  await renamed.getByRole('button', { name: 'Delete branch renamed' }).click()
  await page.waitForURL(/\/branches\?deleted=\d+&done=branch-deleted$/)
  await expectAccessible(page)
  await page.getByRole('button', { name: 'Restore branch renamed' }).click()
  await page.waitForURL(/\/branches\?done=branch-restored$/)
  expect((await s.get('/repos/alice/demo/branches/renamed', { token: alice.token })).status).toBe(200)
  await page.context().close()
})

test('the code search: from the repository header\'s box to the results, and from a line\'s number to the line; axe at phone and desktop width', async () => {
  for (const viewport of [{ width: 390, height: 844 }, { width: 1280, height: 800 }]) {
    const page = await newPage({ viewport })
    await page.goto(s.url + '/alice/demo')
    await page.getByRole('searchbox', { name: "Search this repository's code" }).fill('QUESTION')
    await page.getByRole('searchbox', { name: "Search this repository's code" }).press('Enter')
    await page.waitForURL(/\/alice\/demo\/search\?q=QUESTION$/)
    expect(await page.locator('mark').allTextContents()).toEqual(['question'])
    await expectAccessible(page)
    // Nothing is wider than the screen but the code, which scrolls in its own box.
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0)
    await page.getByRole('link', { name: '3', exact: true }).click()
    await page.waitForURL(/\/src\/branch\/master\/src\/main\.ts#L3$/)
    expect(await page.locator('li:target').textContent()).toBe('export const question = "six times nine"')
    await page.context().close()
  }
})

test('"Go to file": from the home page\'s link to a file through the finder\'s box; axe on the finder', async () => {
  const page = await newPage()
  await page.goto(s.url + '/alice/demo')
  await page.getByRole('link', { name: 'Go to file' }).click()
  await page.waitForURL(/\/alice\/demo\/find\/branch\/master$/)
  await expectAccessible(page)
  await page.getByLabel('Find a file in master').fill('main')
  await page.getByRole('button', { name: 'Find' }).click()
  await page.waitForURL(/\?q=main$/)
  await page.getByRole('list', { name: 'Files found' }).getByRole('link', { name: 'src/main.ts' }).click()
  await page.waitForURL(/\/alice\/demo\/src\/branch\/master\/src\/main\.ts$/)
  await page.context().close()
}, 120_000)
