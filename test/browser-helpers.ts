import { expect } from 'bun:test'
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core'
import AxeBuilder from '@axe-core/playwright'
import type { TestUser } from './helpers'

/** Debian's Chromium, headless, as the browser tests drive it (through playwright-core). */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  })

/** axe-core on the page as it is: no serious or critical violation. */
export async function expectAccessible(page: Page): Promise<void> {
  const result = await new AxeBuilder({ page }).analyze()
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${page.url()}: ${v.id}: ${v.help}`)
  expect(bad).toEqual([])
}

/** A new browser context signed in as `user` through the sign-in form, on the home page. */
export async function signedInPage(browser: Browser, baseUrl: string, user: TestUser, options: BrowserContextOptions = {}): Promise<Page> {
  const page = await (await browser.newContext(options)).newPage()
  await page.goto(baseUrl + '/user/login')
  await page.getByLabel('Username or e-mail address').fill(user.name)
  await page.getByLabel('Password').fill(user.password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(baseUrl + '/')
  return page
}
