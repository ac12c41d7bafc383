// runs in one half: postgresql
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { expectAccessible, launchChromium, signedInPage } from './browser-helpers'

/**
 * The blocked users pages in a real browser (Debian's Chromium, driven by playwright-core), with
 * JavaScript off as well as on: blocking by name with a note, a refused name shown on the form,
 * the note changed from the list, unblocking; an organisation's page for its owner; axe-core on
 * every page visited with JavaScript on (no serious or critical violation).
 */

let s: TestServer, alice: TestUser, browser: Browser

beforeAll(async () => {
  ;[s, browser] = await Promise.all([startTestServer(), launchChromium()])
  ;[alice] = await Promise.all([s.user('alice'), s.user('bob')])
  expect((await s.post('/orgs', { username: 'acme' }, { token: alice.token })).status).toBe(201)
})
afterAll(async () => {
  await browser?.close()
  await s.stop()
})

const blockedByAlice = async () => ((await s.get('/user/blocks', { token: alice.token })).body as { login: string }[]).map((u) => u.login)

for (const javaScriptEnabled of [false, true])
  test(`block, note and unblock from the settings, JavaScript ${javaScriptEnabled ? 'on' : 'off'}`, async () => {
    const page = await signedInPage(browser, s.url, alice, { javaScriptEnabled })
    // axe-core runs as a script in the page: with JavaScript off it cannot; the same pages are checked with it on.
    const accessible = (p: Page) => (javaScriptEnabled ? expectAccessible(p) : Promise.resolve())
    await page.goto(s.url + '/user/settings')
    await page.getByRole('link', { name: 'Blocked users' }).click()
    await page.waitForURL(/\/user\/settings\/blocked_users$/)
    await accessible(page)
    expect(await page.getByRole('cell', { name: 'Nobody is blocked.' }).count()).toBe(1)

    // An unknown name: refused on the form, with the reason, and what was typed kept.
    await page.getByLabel('Username').fill('nobody')
    await page.getByLabel('Note (optional)').fill('who?')
    await page.getByRole('button', { name: 'Block user' }).click()
    expect(await page.getByRole('alert').textContent()).toContain('Could not block the user: user does not exist [name: nobody]')
    expect(await page.getByLabel('Username').inputValue()).toBe('nobody')
    await accessible(page)

    await page.getByLabel('Username').fill('bob')
    await page.getByLabel('Note (optional)').fill('spam in issues')
    await page.getByRole('button', { name: 'Block user' }).click()
    await page.waitForURL(/done=blocked/)
    expect((await page.getByRole('status').textContent())?.trim()).toBe('The user was blocked.')
    expect(await page.getByRole('cell', { name: 'spam in issues' }).count()).toBe(1)
    expect(await blockedByAlice()).toEqual(['bob'])
    await accessible(page)

    await page.getByText('Edit the note on bob').click()
    await page.getByLabel('Note on bob').fill('spam, twice')
    await page.getByRole('button', { name: 'Save note' }).click()
    await page.waitForURL(/done=note-saved/)
    expect(await page.getByRole('cell', { name: 'spam, twice' }).count()).toBe(1)

    await page.getByRole('button', { name: 'Unblock bob' }).click()
    await page.waitForURL(/done=unblocked/)
    expect(await page.getByRole('cell', { name: 'Nobody is blocked.' }).count()).toBe(1)
    expect(await blockedByAlice()).toEqual([])
    await page.context().close()
  })

test("an organisation's blocked users, for its owner", async () => {
  const page = await signedInPage(browser, s.url, alice)
  await page.goto(s.url + '/org/acme/members')
  await page.getByRole('link', { name: 'Settings' }).click()
  await page.getByRole('link', { name: 'Blocked users' }).click()
  await page.waitForURL(/\/org\/acme\/settings\/blocked_users$/)
  await expectAccessible(page)
  await page.getByLabel('Username').fill('bob')
  await page.getByRole('button', { name: 'Block user' }).click()
  await page.waitForURL(/done=blocked/)
  expect(await page.getByRole('link', { name: 'bob' }).count()).toBe(1)
  expect((await s.get('/orgs/acme/blocks/bob', { token: alice.token })).status).toBe(204)
  await expectAccessible(page)
  await page.getByRole('button', { name: 'Unblock bob' }).click()
  await page.waitForURL(/done=unblocked/)
  expect((await s.get('/orgs/acme/blocks/bob', { token: alice.token })).status).toBe(404)
  await page.context().close()
})
