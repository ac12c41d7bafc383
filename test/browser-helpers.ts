import { expect } from 'bun:test'
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core'
import axe from 'axe-core'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/** What every browser test shares: Debian's Chromium, a page, the axe-core check, signing in through the form. */

/** Debian's Chromium, headless, as the browser tests drive it (through playwright-core). */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  })

/** A browser test's own limit for its set-up: the machine may be very busy; this catches a hang, it times nothing. */
export const BROWSER_LIMIT_MS = 480_000

/** A browser test file's test server (startTestServer's `overrides`) and Chromium, started at once. */
export async function startServerAndBrowser(overrides: Parameters<typeof startTestServer>[0] = {}): Promise<{ s: TestServer; browser: Browser }> {
  const [s, browser] = await Promise.all([startTestServer(overrides), launchChromium()])
  return { s, browser }
}

/** Closes what startServerAndBrowser started (either may be missing when the start failed). */
export async function stopServerAndBrowser(s: TestServer | undefined, browser: Browser | undefined): Promise<void> {
  await browser?.close()
  await s?.stop()
}

/** launchChromium under the name the code pages' tests use. */
export const launchBrowser = launchChromium

/** A page in a new context whose waits fail within a minute, naming what they waited for. */
export async function newPage(browser: Browser, options: BrowserContextOptions = {}): Promise<Page> {
  const page = await (await browser.newContext(options)).newPage()
  page.setDefaultTimeout(60_000)
  return page
}

/**
 * axe-core on the page as it is (but the elements `exclude` selects): no serious or critical
 * violation (each named with up to three of its nodes). axe runs in the page itself (`axe.run`),
 * put there once per document: @axe-core/playwright's `analyze` put it there again at every check
 * and opened a blank page to gather each result, three to six times the check's own cost (our
 * pages have no frames for it to gather from).
 */
export async function expectAccessible(page: Page, exclude?: string): Promise<void> {
  if (!(await page.evaluate('typeof window.axe?.run === "function"'))) await page.evaluate(axe.source)
  const result = await page.evaluate(
    (exclude) => (window as unknown as { axe: typeof axe }).axe.run(exclude ? { exclude: [exclude] } : document, { resultTypes: ['violations'] }),
    exclude,
  )
  const bad = result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${page.url()}: ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')})`)
  expect(bad).toEqual([])
}

/** Fills the sign-in form the page shows with `user`'s name and password (not yet sent). */
export async function fillSignIn(page: Page, user: Pick<TestUser, 'name' | 'password'>): Promise<void> {
  await page.getByLabel('Username or e-mail address').fill(user.name)
  await page.getByLabel('Password').fill(user.password)
}

/** Signs `user` in through the sign-in form of the server at `baseUrl` on `page`, landing on the home page. */
export async function signInPage(page: Page, baseUrl: string, user: Pick<TestUser, 'name' | 'password'>): Promise<void> {
  await page.goto(baseUrl + '/user/login')
  await fillSignIn(page, user)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(baseUrl + '/')
}

/** A new browser context signed in as `user` through the sign-in form, on the home page. */
export async function signedInPage(browser: Browser, baseUrl: string, user: Pick<TestUser, 'name' | 'password'>, options: BrowserContextOptions = {}): Promise<Page> {
  const page = await (await browser.newContext(options)).newPage()
  await signInPage(page, baseUrl, user)
  return page
}
