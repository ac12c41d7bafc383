// runs in one half: postgresql
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import type { TestServer, TestUser } from './helpers'
import { BROWSER_LIMIT_MS, expectAccessible, signedInPage, startServerAndBrowser, stopServerAndBrowser } from './browser-helpers'

/**
 * Commit statuses in a real browser: a pull request's merge box with its checks (a required one
 * failing, a Details link), the history's combined state icon named by its words; axe-core on
 * each page (no serious or critical violation).
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
  expect((await s.post('/repos/alice/demo/contents/feature.txt', { new_branch: 'feature', content: b64('one\n'), message: 'feature' }, token)).status).toBe(201)
  expect((await s.post('/repos/alice/demo/pulls', { head: 'feature', base: 'main', title: 'Add the feature' }, token)).status).toBe(201)
  expect((await s.post('/repos/alice/demo/branch_protections', { rule_name: 'main', enable_status_check: true, status_check_contexts: ['ci/build'] }, token)).status).toBe(201)
  const head = (await s.get('/repos/alice/demo/branches/feature', token)).body.commit.id
  expect((await s.post(`/repos/alice/demo/statuses/${head}`, { state: 'failure', context: 'ci/build', description: 'tests failed', target_url: 'https://ci.example/1' }, token)).status).toBe(201)
  expect((await s.post(`/repos/alice/demo/statuses/${head}`, { state: 'success', context: 'lint', target_url: 'javascript:alert(1)' }, token)).status).toBe(201)
}, BROWSER_LIMIT_MS)
afterAll(() => stopServerAndBrowser(s, browser))

test('the merge box lists the checks, the history names each commit’s state; both accessible', async () => {
  const page = await signedInPage(browser, s.url, alice)
  await page.goto(s.url + '/alice/demo/pulls/1')
  const checks = page.getByRole('region', { name: 'Checks' })
  expect(await checks.textContent()).toContain('Some checks failed')
  expect(await checks.getByRole('link', { name: 'Details' }).count()).toBe(1)
  expect(await checks.getByRole('link', { name: 'Details' }).getAttribute('href')).toBe('https://ci.example/1')
  expect(await page.getByText('Required', { exact: true }).count()).toBe(1)
  expect(await page.getByText('Not all required status checks successful').count()).toBe(1)
  await expectAccessible(page)
  await page.goto(s.url + '/alice/demo/pulls/1/commits')
  const icon = page.getByRole('link', { name: /^Checks: Some checks failed/ })
  expect(await icon.count()).toBe(1)
  await expectAccessible(page)
  await icon.click()
  await page.waitForURL(/\/commit\/[0-9a-f]+#checks$/)
  await expectAccessible(page)
}, BROWSER_LIMIT_MS)
