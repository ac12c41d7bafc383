// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { expectAccessible, launchBrowser, newPage as newBrowserPage, signInPage } from './browser-helpers'

/**
 * The web editor in a real browser (Debian's Chromium, driven by playwright-core), without
 * JavaScript of its own: from a folder to a new file, its edit (previewed first), an edit committed to a new branch
 * and on to the pull request form, files uploaded, a file deleted; axe-core on each form (no
 * serious or critical violation), at desktop and phone width.
 */

let s: TestServer
let alice: TestUser
let browser: Browser
let dir: string

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  expect((await s.post('/user/repos', { name: 'notes', auto_init: true }, { token: alice.token })).status).toBe(201)
  dir = mkdtempSync(join(tmpdir(), 'warren-editor-browser-'))
  writeFileSync(join(dir, 'one.txt'), 'uploaded one\n')
  writeFileSync(join(dir, 'two.txt'), 'uploaded two\n')
  browser = await launchBrowser()
}, 600_000)
afterAll(async () => {
  await browser?.close()
  await s.stop()
  rmSync(dir, { recursive: true, force: true })
})

const newPage = (options: Parameters<Browser['newContext']>[0] = {}) => newBrowserPage(browser, options)
const signIn = (page: Page) => signInPage(page, s.url, alice)

const fileText = async (path: string, ref = 'main') => {
  const res = await s.get(`/repos/alice/notes/contents/${path}?ref=${ref}`, { token: alice.token })
  return res.status === 200 ? Buffer.from(res.body.content, 'base64').toString() : null
}

test('a new file from the home page, its edit, an edit to a new branch and its pull request form', async () => {
  const page = await newPage()
  await signIn(page)
  await page.goto(s.url + '/alice/notes')
  await page.getByRole('link', { name: 'New file' }).click()
  await page.waitForURL(/\/_new\/main$/)
  await expectAccessible(page)
  await page.getByLabel('Path of the file').fill('docs/todo.md')
  await page.getByLabel('Content').fill('# To do\n\n- write\n')
  await page.getByLabel('Commit summary').fill('Start a list')
  await page.getByRole('button', { name: 'Commit changes' }).click()
  await page.waitForURL(/\/src\/branch\/main\/docs\/todo\.md\?done=committed$/)
  expect(await page.getByRole('status').textContent()).toBe('Your changes were committed.')
  expect(await fileText('docs/todo.md')).toBe('# To do\n\n- write\n')
  await expectAccessible(page)

  // Edit it from its view.
  await page.getByRole('link', { name: 'Edit', exact: true }).click()
  await page.waitForURL(/\/_edit\/main\/docs\/todo\.md$/)
  expect(await page.getByLabel('Content').inputValue()).toBe('# To do\n\n- write\n')
  await expectAccessible(page)
  await page.getByLabel('Content').fill('# To do\n\n- write\n- test\n')
  // Preview first: the diff above the form, the text kept; nothing committed yet.
  await page.getByRole('button', { name: 'Preview changes' }).click()
  await page.waitForURL(/\/_preview\/main\/docs\/todo\.md$/)
  expect(await page.getByRole('region', { name: 'Preview of the changes' }).textContent()).toContain('1 additions and 0 deletions')
  expect(await page.getByLabel('Content').inputValue()).toBe('# To do\n\n- write\n- test\n')
  expect(await fileText('docs/todo.md')).toBe('# To do\n\n- write\n')
  await expectAccessible(page)
  await page.getByRole('button', { name: 'Commit changes' }).click()
  await page.waitForURL(/\/src\/branch\/main\/docs\/todo\.md\?done=committed$/)
  expect(await fileText('docs/todo.md')).toBe('# To do\n\n- write\n- test\n')

  // Once more, to a new branch: the comparison, where the pull request is opened.
  await page.getByRole('link', { name: 'Edit', exact: true }).click()
  await page.getByLabel('Content').fill('# To do\n\n- ship\n')
  await page.getByLabel(/Commit to a new branch/).check()
  expect(await page.getByLabel('New branch name').inputValue()).toBe('alice-patch-1')
  await page.getByRole('button', { name: 'Commit changes' }).click()
  await page.waitForURL(/\/compare\/main\.\.\.alice-patch-1$/)
  expect(await fileText('docs/todo.md', 'alice-patch-1')).toBe('# To do\n\n- ship\n')
  expect(await fileText('docs/todo.md')).toBe('# To do\n\n- write\n- test\n')
  await page.getByLabel('Title').fill('Ship it')
  await page.getByRole('button', { name: 'Create pull request' }).click()
  await page.waitForURL(/\/alice\/notes\/pulls\/\d+$/)
  await page.context().close()
})

test('files uploaded into a folder, then one deleted, at phone width', async () => {
  const page = await newPage({ viewport: { width: 390, height: 844 } })
  await signIn(page)
  await page.goto(s.url + '/alice/notes/src/branch/main/docs')
  await page.getByRole('link', { name: 'Upload files' }).click()
  await page.waitForURL(/\/_upload\/main\/docs$/)
  await expectAccessible(page)
  expect(await page.getByLabel('Folder').inputValue()).toBe('docs')
  await page.getByLabel('Files').setInputFiles([join(dir, 'one.txt'), join(dir, 'two.txt')])
  await page.getByRole('button', { name: 'Commit changes' }).click()
  await page.waitForURL(/\/src\/branch\/main\/docs\?done=committed$/)
  expect([await fileText('docs/one.txt'), await fileText('docs/two.txt')]).toEqual(['uploaded one\n', 'uploaded two\n'])

  await page.getByRole('link', { name: 'one.txt' }).click()
  await page.getByRole('link', { name: 'Delete', exact: true }).click()
  await page.waitForURL(/\/_delete\/main\/docs\/one\.txt$/)
  await expectAccessible(page)
  await page.getByRole('button', { name: 'Delete the file' }).click()
  await page.waitForURL(/\/src\/branch\/main\/docs\?done=file-deleted$/)
  expect(await page.getByRole('status').textContent()).toBe('The file was deleted.')
  expect(await fileText('docs/one.txt')).toBeNull()
  // Nothing is wider than the phone's screen.
  await page.goto(s.url + '/alice/notes/_edit/main/docs/two.txt')
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
  expect(overflow).toBeLessThanOrEqual(0)
  await page.context().close()
})
