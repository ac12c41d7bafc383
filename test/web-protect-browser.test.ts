// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { expectAccessible, launchChromium, signedInPage } from './browser-helpers'

/**
 * The branch and tag protection settings in a real browser (Chromium through playwright-core):
 * from the settings menu to a new branch rule, its edit and deletion, then a protected tag rule;
 * axe-core on every page visited (no serious or critical violation).
 */

let s: TestServer
let alice: TestUser
let browser: Browser

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  expect((await s.post('/user/repos', { name: 'guarded', auto_init: true }, { token: alice.token })).status).toBe(201)
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await s.stop()
})

test('protect a branch and a tag pattern through the settings pages', async () => {
  const page = await signedInPage(browser, s.url, alice)
  await page.goto(s.url + '/alice/guarded/settings')
  await page.getByRole('navigation', { name: 'Repository settings' }).getByRole('link', { name: 'Branches' }).click()
  await page.waitForURL(s.url + '/alice/guarded/settings/branches')
  expect(await page.getByText('No branch is protected.').count()).toBe(1)
  await expectAccessible(page)

  await page.getByRole('link', { name: 'Add a protection rule' }).click()
  await page.waitForURL(s.url + '/alice/guarded/settings/branches/edit')
  await expectAccessible(page)
  await page.getByLabel('Protected branch name pattern').fill('main')
  await page.getByLabel('Allowlisted push: only the users and teams listed may push').check()
  await page.getByLabel('Users allowed to push').fill('alice')
  await page.getByLabel('Required approvals', { exact: true }).fill('1')
  await page.getByLabel('Block merge on rejected reviews').check()
  await page.getByRole('button', { name: 'Create rule' }).click()
  await page.waitForURL(s.url + '/alice/guarded/settings/branches?done=branch-rule-saved')
  expect(await page.getByRole('status').textContent()).toContain('The branch protection rule was saved.')
  await expectAccessible(page)
  const [rule] = (await s.get('/repos/alice/guarded/branch_protections', { token: alice.token })).body
  expect(rule).toMatchObject({ rule_name: 'main', enable_push_whitelist: true, push_whitelist_usernames: ['alice'], required_approvals: 1, block_on_rejected_reviews: true })

  // A refusal is shown on the form, what was typed kept.
  await page.getByRole('link', { name: 'main' }).click()
  await page.getByLabel('Users allowed to push').fill('alice, nobody-at-all')
  await page.getByRole('button', { name: 'Save rule' }).click()
  expect(await page.getByRole('alert').textContent()).toContain('user does not exist [name: nobody-at-all]')
  expect(await page.getByLabel('Users allowed to push').inputValue()).toBe('alice, nobody-at-all')
  await expectAccessible(page)
  await page.getByLabel('Users allowed to push').fill('')
  await page.getByLabel('Enable push: anyone with write access may push (not force-push)').check()
  await page.getByRole('button', { name: 'Save rule' }).click()
  await page.waitForURL(s.url + '/alice/guarded/settings/branches?done=branch-rule-saved')
  expect((await s.get('/repos/alice/guarded/branch_protections/main', { token: alice.token })).body).toMatchObject({ enable_push: true, enable_push_whitelist: false })

  await page.getByRole('button', { name: 'Delete rule main' }).click()
  await page.waitForURL(s.url + '/alice/guarded/settings/branches?done=branch-rule-deleted')
  expect((await s.get('/repos/alice/guarded/branch_protections', { token: alice.token })).body).toEqual([])

  // Tags.
  await page.getByRole('navigation', { name: 'Repository settings' }).getByRole('link', { name: 'Tags' }).click()
  await page.waitForURL(s.url + '/alice/guarded/settings/tags')
  await expectAccessible(page)
  await page.getByLabel('Protected tag name pattern').fill('v*')
  await page.getByLabel('Users allowed to create and delete these tags').fill('alice')
  await page.getByRole('button', { name: 'Add rule' }).click()
  await page.waitForURL(s.url + '/alice/guarded/settings/tags?done=tag-rule-added')
  expect(await page.getByRole('status').textContent()).toContain('The tag protection rule was added.')
  await expectAccessible(page)
  await page.getByRole('link', { name: 'v*' }).click()
  await expectAccessible(page)
  await page.getByLabel('Protected tag name pattern').fill('release-*')
  await page.getByRole('button', { name: 'Save rule' }).click()
  await page.waitForURL(s.url + '/alice/guarded/settings/tags?done=tag-rule-saved')
  expect((await s.get('/repos/alice/guarded/tag_protections', { token: alice.token })).body).toMatchObject([{ name_pattern: 'release-*', whitelist_usernames: ['alice'] }])
  await page.getByRole('button', { name: 'Delete rule release-*' }).click()
  await page.waitForURL(s.url + '/alice/guarded/settings/tags?done=tag-rule-deleted')
  expect((await s.get('/repos/alice/guarded/tag_protections', { token: alice.token })).body).toEqual([])
})
