// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import type { TestServer, TestUser } from './helpers'
import { BROWSER_LIMIT_MS, expectAccessible, signedInPage, startServerAndBrowser, stopServerAndBrowser } from './browser-helpers'

/**
 * A project board in a real browser (Debian's Chromium, driven by playwright-core), without
 * JavaScript of ours: a project made from the basic kanban template through the Projects tab, an
 * issue put on it from its sidebar, its card moved to another column by the card's own form;
 * axe-core on every page visited (no serious or critical violation).
 */

let s: TestServer
let alice: TestUser
let browser: Browser

beforeAll(async () => {
  ;({ s, browser } = await startServerAndBrowser())
  alice = await s.user('alice')
  expect((await s.post('/user/repos', { name: 'demo', auto_init: true }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/repos/alice/demo/issues', { title: 'Write the docs' }, { token: alice.token })).status).toBe(201)
}, BROWSER_LIMIT_MS)
afterAll(() => stopServerAndBrowser(s, browser))

test('a board: made from a template, an issue put on it from the sidebar, its card moved by its form', async () => {
  const page = await signedInPage(browser, s.url, alice)
  await page.goto(s.url + '/alice/demo')
  await page.getByRole('link', { name: 'Projects' }).first().click()
  await page.waitForURL(/\/alice\/demo\/projects$/)
  await expectAccessible(page)
  await page.getByRole('link', { name: 'New project' }).click()
  await page.waitForURL(/\/projects\/new$/)
  await expectAccessible(page)
  await page.getByLabel('Title').fill('Release 1')
  await page.getByLabel('Template').selectOption({ label: 'Basic Kanban (Backlog, To Do, In Progress, Done)' })
  await page.getByRole('button', { name: 'Create project' }).click()
  await page.waitForURL(/\/projects\/\d+$/)
  const board = page.url()
  await expectAccessible(page)
  expect(await page.getByRole('heading', { level: 3 }).allTextContents()).toEqual(['Backlog', 'To Do', 'In Progress', 'Done', 'New column'])

  await page.goto(s.url + '/alice/demo/issues/1')
  await page.locator('summary', { hasText: 'Set project' }).click()
  await page.locator('form[action="/alice/demo/issues/projects"] select').selectOption({ label: 'Release 1' })
  await page.getByRole('button', { name: 'Set project' }).click()
  await page.waitForURL(/\/issues\/1$/)
  expect(await page.getByText('added this to the Release 1 project').count()).toBe(1)
  await expectAccessible(page)

  await page.goto(board)
  const backlog = page.getByRole('list', { name: 'Cards in Backlog' })
  expect(await backlog.getByRole('link').allTextContents()).toEqual(['Write the docs #1'])
  await page.getByRole('form', { name: 'Move #1' }).getByRole('combobox').selectOption({ label: 'In Progress' })
  await page.getByRole('form', { name: 'Move #1' }).getByRole('button', { name: 'Move' }).click()
  await page.waitForURL(board)
  expect(await page.getByRole('list', { name: 'Cards in In Progress' }).getByRole('link').allTextContents()).toEqual(['Write the docs #1'])
  expect(await page.getByRole('list', { name: 'Cards in Backlog' }).getByRole('link').count()).toBe(0)
  await expectAccessible(page)
  await page.getByRole('link', { name: 'Write the docs #1' }).click()
  await page.waitForURL(/\/issues\/1$/)
  expect(await page.getByText('moved this to In Progress in Release 1').count()).toBe(1)
}, BROWSER_LIMIT_MS)
