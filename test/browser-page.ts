import { expect } from 'bun:test'
import { chromium, type Browser, type Page } from 'playwright-core'
import AxeBuilder from '@axe-core/playwright'
import type { TestUser } from './helpers'

/** What the browser tests of the code pages share: a page, the axe-core check, signing in through the form. */

/** Debian's Chromium, headless, as every browser test runs it. */
export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  })

/** A page whose waits fail within a minute, naming what they waited for. */
export async function newPage(browser: Browser, options: Parameters<Browser['newContext']>[0] = {}): Promise<Page> {
  const page = await (await browser.newContext(options)).newPage()
  page.setDefaultTimeout(60_000)
  return page
}

/** No serious or critical axe-core violation on the page as it is. */
export async function expectAccessible(page: Page) {
  const result = await new AxeBuilder({ page }).analyze()
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${page.url()}: ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')})`)
  expect(bad).toEqual([])
}

/** Signs `user` in through the sign-in form of the server at `baseUrl`, landing on the home page. */
export async function signInPage(page: Page, baseUrl: string, user: Pick<TestUser, 'name' | 'password'>) {
  await page.goto(baseUrl + '/user/login')
  await page.getByLabel('Username or e-mail address').fill(user.name)
  await page.getByLabel('Password').fill(user.password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(baseUrl + '/')
}
