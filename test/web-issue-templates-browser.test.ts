// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import type { TestServer, TestUser } from './helpers'
import { ISSUE_FORM as FORM } from './issue-template-fixtures'
import { BROWSER_LIMIT_MS, expectAccessible, signedInPage, startServerAndBrowser, stopServerAndBrowser } from './browser-helpers'

/**
 * The template chooser and an issue form in a real browser (Debian's Chromium, driven by
 * playwright-core): from the list's New issue button to the chooser, Get started, the form's
 * fields filled and sent, the issue's body seen through the API; axe-core on both pages.
 */

let s: TestServer
let alice: TestUser
let browser: Browser
const b64 = (text: string) => Buffer.from(text).toString('base64')


beforeAll(async () => {
  ;({ s, browser } = await startServerAndBrowser())
  alice = await s.user('alice')
  const token = { token: alice.token }
  expect((await s.post('/user/repos', { name: 'demo', auto_init: true }, token)).status).toBe(201)
  const files = [
    { operation: 'create', path: '.gitea/ISSUE_TEMPLATE/form.yaml', content: b64(FORM) },
    { operation: 'create', path: '.gitea/ISSUE_TEMPLATE/config.yaml', content: b64('contact_links:\n  - name: Forum\n    url: https://forum.example.com\n    about: Ask there\n') },
  ]
  expect((await s.post('/repos/alice/demo/contents', { files, message: 'templates' }, token)).status).toBe(201)
}, BROWSER_LIMIT_MS)
afterAll(() => stopServerAndBrowser(s, browser))

test('choose a template, fill its form, file the issue', async () => {
  const page = await signedInPage(browser, s.url, alice)
  await page.goto(s.url + '/alice/demo/issues')
  await page.getByRole('link', { name: 'New issue' }).click()
  await page.waitForURL(/\/issues\/new\/choose$/)
  await expectAccessible(page)
  await page.getByRole('link', { name: 'Get started: Bug form' }).click()
  await page.waitForURL(/\/issues\/new\?template=/)
  await expectAccessible(page)
  await page.getByLabel('Title').fill('From the form')
  await page.getByLabel('Version').fill('2.0')
  await page.getByLabel('System').selectOption({ label: 'macOS' })
  await page.getByLabel('Logs').fill('trace')
  await page.getByLabel('I searched first').check()
  await page.getByRole('button', { name: 'Create issue' }).click()
  await page.waitForURL(/\/alice\/demo\/issues\/\d+$/)
  const index = Number(/\/issues\/(\d+)$/.exec(page.url())![1])
  const filed = (await s.get(`/repos/alice/demo/issues/${index}`, { token: alice.token })).body
  expect(filed.body).toBe('### Version\n\n2.0\n\n### Logs\n\n```shell\ntrace\n```\n\n### System\n\nmacOS\n\n### Terms\n\n- [x] I searched first\n- [ ] I can help\n\n')
}, BROWSER_LIMIT_MS)
