// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { expectAccessible, launchChromium, signedInPage } from './browser-helpers'

/**
 * The release forms, the fork form and the header's lists in a real browser (Debian's Chromium,
 * driven by playwright-core), with JavaScript off as well as on: a release made from the list's
 * button, refused then published, edited, deleted after its confirmation; a fork made from the
 * header's button; the stars and forks lists reached from the header's counts. axe-core on every
 * page visited with JavaScript on (no serious or critical violation).
 */

let s: TestServer, alice: TestUser, bob: TestUser, browser: Browser

beforeAll(async () => {
  ;[s, browser] = await Promise.all([startTestServer(), launchChromium()])
  ;[alice, bob] = await Promise.all([s.user('alice'), s.user('bob')])
  expect((await s.post('/user/repos', { name: 'proj', auto_init: true, description: 'The project' }, { token: alice.token })).status).toBe(201)
})
afterAll(async () => {
  await browser?.close()
  await s.stop()
})

const tagsOf = async () => ((await s.get('/repos/alice/proj/releases', { token: alice.token })).body as { tag_name: string }[]).map((r) => r.tag_name)

for (const javaScriptEnabled of [false, true])
  test(`new, edit and delete a release, JavaScript ${javaScriptEnabled ? 'on' : 'off'}`, async () => {
    const page = await signedInPage(browser, s.url, alice, { javaScriptEnabled })
    const accessible = (p: Page) => (javaScriptEnabled ? expectAccessible(p) : Promise.resolve())
    const tag = javaScriptEnabled ? 'v2.0' : 'v1.0'
    await page.goto(s.url + '/alice/proj/releases')
    await page.getByRole('link', { name: 'New release' }).click()
    await page.waitForURL(/\/releases\/new$/)
    await accessible(page)

    // A tag name git refuses: the form again, with the reason and what was typed.
    await page.getByLabel(/^Tag name/).fill('bad..name')
    await page.getByLabel('Title').fill('The release')
    await page.getByLabel('Notes (markdown)').fill('Some *notes*')
    await page.getByRole('button', { name: 'Publish release' }).click()
    expect(await page.getByRole('alert').textContent()).toContain('bad..name')
    expect(await page.getByLabel('Notes (markdown)').inputValue()).toBe('Some *notes*')
    await accessible(page)

    await page.getByLabel(/^Tag name/).fill(tag)
    await page.getByLabel(/^This is a pre-release/).check()
    await page.getByRole('button', { name: 'Publish release' }).click()
    await page.waitForURL(/done=release-published/)
    expect((await page.getByRole('status').textContent())?.trim()).toBe('The release was published.')
    expect(await page.getByRole('article', { name: 'The release' }).getByText('Pre-release').count()).toBe(1)
    expect(await tagsOf()).toContain(tag)
    await accessible(page)

    await page.getByRole('link', { name: `Edit release ${tag}` }).click()
    await page.waitForURL(new RegExp(`/releases/edit/${tag}$`))
    await accessible(page)
    await page.getByLabel('Title').fill('The release, renamed')
    await page.getByRole('button', { name: 'Update release' }).click()
    await page.waitForURL(/done=release-saved/)
    expect(await page.getByRole('article', { name: 'The release, renamed' }).count()).toBe(1)

    await page.getByRole('link', { name: `Edit release ${tag}` }).click()
    await page.getByLabel(`Yes, delete release ${tag}`).check()
    await page.getByRole('button', { name: 'Delete release' }).click()
    await page.waitForURL(/done=release-deleted/)
    expect(await tagsOf()).not.toContain(tag)
    await accessible(page)
    await page.context().close()
  })

test('fork from the header, then the forks and stars lists from its counts', async () => {
  const page = await signedInPage(browser, s.url, bob)
  await page.goto(s.url + '/alice/proj')
  await page.getByRole('button', { name: 'Star', exact: true }).click()
  await page.getByRole('button', { name: 'Unstar' }).waitFor()
  await page.getByRole('link', { name: 'Fork', exact: true }).click()
  await page.waitForURL(/\/alice\/proj\/fork$/)
  await expectAccessible(page)
  expect(await page.getByLabel('Repository name').inputValue()).toBe('proj')
  await page.getByLabel('Repository name').fill('bobs-proj')
  await page.getByRole('button', { name: 'Fork repository' }).click()
  await page.waitForURL(s.url + '/bob/bobs-proj')
  expect((await s.get('/repos/bob/bobs-proj', { token: bob.token })).body).toMatchObject({ fork: true, description: 'The project' })

  await page.goto(s.url + '/alice/proj')
  await page.getByRole('link', { name: '1 forks' }).click()
  await page.waitForURL(/\/alice\/proj\/forks$/)
  await expectAccessible(page)
  expect(await page.getByRole('link', { name: 'bob/bobs-proj' }).count()).toBe(1)
  await page.goto(s.url + '/alice/proj')
  await page.getByRole('link', { name: '1 stars' }).click()
  await page.waitForURL(/\/alice\/proj\/stars$/)
  await expectAccessible(page)
  expect(await page.getByRole('list', { name: 'Stargazers' }).getByRole('link', { name: 'bob' }).count()).toBe(1)
  await page.context().close()
})
