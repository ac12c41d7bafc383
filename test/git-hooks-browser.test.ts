// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { expectAccessible, launchChromium, signedInPage } from './browser-helpers'
import { repoPath } from '../src/git/run'

/** The Git hooks pages in Chromium: from the repository's settings to a hook's page, its program saved by the form; axe-core on each. */

let s: TestServer
let root: TestUser
let browser: Browser

beforeAll(async () => {
  s = await startTestServer({ disableGitHooks: false })
  root = await s.user('root', { admin: true })
  expect((await s.post('/user/repos', { name: 'hooked', auto_init: true }, { token: root.token })).status).toBe(201)
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await s.stop()
})

test('a site administrator writes a post-receive hook through the settings', async () => {
  const page = await signedInPage(browser, s.url, root)
  await page.goto(s.url + '/root/hooked/settings')
  await page.getByRole('link', { name: 'Git hooks' }).click()
  await expectAccessible(page)
  await page.getByRole('link', { name: 'post-receive' }).click()
  await expectAccessible(page)
  await page.getByLabel('Program (leave it empty to remove the hook)').fill('#!/bin/sh\necho "deployed"\n')
  await page.getByRole('button', { name: 'Update hook' }).click()
  await page.waitForURL(/\/root\/hooked\/settings\/hooks\/git\/post-receive\?done=saved$/)
  await expectAccessible(page)
  expect(await page.getByLabel('Program (leave it empty to remove the hook)').inputValue()).toBe('#!/bin/sh\necho "deployed"\n')
  expect(readFileSync(join(repoPath(s.deps.config.dataDir, 'root', 'hooked'), 'hooks', 'post-receive.d', 'post-receive'), 'utf8')).toBe('#!/bin/sh\necho "deployed"\n')
  await page.getByRole('link', { name: 'Git hooks' }).click()
  expect(await page.getByRole('table', { name: 'Git hooks' }).innerText()).toContain('post-receive\tactive')
})
