// runs in one half: postgresql
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { expectAccessible, launchChromium, signedInPage as signedInAs } from './browser-helpers'

/**
 * The settings and creation pages in a real browser (Debian's Chromium, driven by
 * playwright-core): creating a repository through its form, adding an SSH key, creating a token
 * and using it on the API, deleting a repository with the typed confirmation; axe-core on every
 * page visited (no serious or critical violation).
 */

let s: TestServer
let alice: TestUser
let browser: Browser
let keyDir: string

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  expect((await s.post('/orgs', { username: 'acme' }, { token: alice.token })).status).toBe(201)
  keyDir = mkdtempSync(join(tmpdir(), 'warren-websettings-browser-'))
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  rmSync(keyDir, { recursive: true, force: true })
  await s.stop()
})

const signedInPage = (): Promise<Page> => signedInAs(browser, s.url, alice)

test('create a repository through the form, star it, then delete it with the typed confirmation', async () => {
  const page = await signedInPage()
  await page.goto(s.url + '/repo/create')
  await expectAccessible(page)
  await page.getByLabel('Repository name').fill('from-browser')
  await page.getByLabel('Description').fill('Made in Chromium')
  await page.getByRole('button', { name: 'Create repository' }).click()
  await page.waitForURL(/\/alice\/from-browser$/)
  expect((await s.get('/repos/alice/from-browser', { token: alice.token })).body.description).toBe('Made in Chromium')
  await expectAccessible(page)
  await page.getByRole('button', { name: 'Star' }).click()
  await page.waitForURL(/\/alice\/from-browser$/)
  expect((await s.get('/user/starred/alice/from-browser', { token: alice.token })).status).toBe(204)
  await page.getByRole('link', { name: 'Settings' }).click()
  await page.waitForURL(/\/settings$/)
  await expectAccessible(page)
  for (const sub of ['collaboration', 'hooks', 'keys']) {
    await page.goto(`${s.url}/alice/from-browser/settings/${sub}`)
    await expectAccessible(page)
  }
  await page.goto(`${s.url}/alice/from-browser/settings`)
  // A wrong name first: refused, with the reason.
  await page.getByLabel('to confirm').fill('from-browser')
  await page.getByRole('button', { name: 'Delete this repository' }).click()
  expect(await page.getByRole('alert').textContent()).toContain('alice/from-browser')
  await page.getByLabel('to confirm').fill('alice/from-browser')
  await page.getByRole('button', { name: 'Delete this repository' }).click()
  await page.waitForURL(/\/alice$/)
  expect((await s.get('/repos/alice/from-browser', { token: alice.token })).status).toBe(404)
  await page.context().close()
})

test('add an SSH key; create a token, shown once, that works on the API', async () => {
  const gen = Bun.spawnSync(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'browser@test', '-f', join(keyDir, 'id')])
  expect(gen.exitCode).toBe(0)
  const key = readFileSync(join(keyDir, 'id.pub'), 'utf8').trim()
  const page = await signedInPage()
  await page.goto(s.url + '/user/settings/keys')
  await expectAccessible(page)
  await page.getByLabel('Title (SSH keys)').fill('laptop')
  await page.getByLabel('Key', { exact: true }).fill(key)
  await page.getByRole('button', { name: 'Add key' }).click()
  await page.waitForURL(/done=key-added/)
  expect((await page.getByRole('status').textContent())?.trim()).toBe('The key was added.')
  expect((await s.get('/user/keys', { token: alice.token })).body.map((k: any) => k.title)).toEqual(['laptop'])

  await page.goto(s.url + '/user/settings/applications')
  await expectAccessible(page)
  await page.getByLabel('Token name').fill('from-browser')
  await page.locator('select[name="scope_repository"]').selectOption('write')
  await page.locator('select[name="scope_user"]').selectOption('write')
  await page.getByRole('button', { name: 'Generate token' }).click()
  const secret = (await page.locator('[data-token]').textContent())!.trim()
  expect(secret).toMatch(/^[0-9a-f]{40}$/)
  await expectAccessible(page)
  expect((await s.get('/user', { token: secret })).body.login).toBe('alice')
  expect((await s.post('/user/repos', { name: 'by-token' }, { token: secret })).status).toBe(201)
  // Creating a repository needs both categories at write (as Gitea's scope groups).
  // Shown once: the list afterwards has its name, not the secret.
  await page.goto(s.url + '/user/settings/applications')
  expect(await page.content()).not.toContain(secret)
  expect(await page.getByRole('cell', { name: 'from-browser', exact: true }).count()).toBe(1)

  for (const path of ['/user/settings', '/user/settings/account', '/user/settings/organization', '/user/settings/repos', '/explore/repos', '/explore/users', '/explore/organizations', '/org/acme/members', '/org/acme/teams']) {
    await page.goto(s.url + path)
    await expectAccessible(page)
  }
  await page.context().close()
})
