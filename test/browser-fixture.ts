import { expect } from 'bun:test'
import { chromium, type Browser, type Page } from 'playwright-core'
import AxeBuilder from '@axe-core/playwright'
import type { TestUser } from './helpers'

/** What the real-browser tests share: Debian's Chromium through playwright-core, axe-core's check, signing in by the form. */

/** A browser test's own limit: the machine may be very busy; this catches a hang, it times nothing. */
export const BROWSER_LIMIT_MS = 480_000

/** Debian's Chromium, headless, as every browser test starts it. */
export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  })

/** axe-core finds no serious or critical violation on the page as it is now. */
export async function expectAccessible(page: Page) {
  const result = await new AxeBuilder({ page }).analyze()
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${page.url()}: ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join('; ')})`)
  expect(bad).toEqual([])
}

/** A new browser context signed in as `user` through the sign-in form of the server at `baseUrl`, on its home page. */
export async function signedInPage(browser: Browser, baseUrl: string, user: TestUser): Promise<Page> {
  const page = await (await browser.newContext()).newPage()
  await page.goto(baseUrl + '/user/login')
  await page.getByLabel('Username or e-mail address').fill(user.name)
  await page.getByLabel('Password').fill(user.password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(baseUrl + '/')
  return page
}
