import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'
import { contentMark } from './db-snapshot'

/**
 * The webhook pages of an organisation (`/org/{org}/settings/hooks`), of a user
 * (`/user/settings/hooks`) and of the site (`/-/admin/hooks`, system and default hooks) over plain
 * HTTP: who may see them, each form's change read back through the API, refusals without the
 * CSRF token and of bad input.
 */

let s: TestServer
let owner: TestUser, member: TestUser, root: TestUser
let mark: () => Promise<string>
const { page, signIn, submit, expectCsrfRefused } = webVisitors(() => s.url, () => mark())
const fields = (url: string, extra: Record<string, string | string[]> = {}) => ({ url, content_type: 'json', events_mode: 'push_only', active: 'on', branch_filter: '*', ...extra })

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  root = await s.user('root', { admin: true })
  owner = await s.user('olga')
  member = await s.user('mick')
  expect((await s.post('/orgs', { username: 'hooked' }, { token: owner.token })).status).toBe(201)
  expect((await s.put('/orgs/hooked/members/mick', undefined, { token: owner.token })).status).toBeLessThan(500)
})
afterAll(() => s.stop())

describe('organisation webhooks', () => {
  const b = '/org/hooked/settings/hooks'
  test("only the organisation's owners see its pages; the menu links them", async () => {
    expect((await page(b)).status).toBe(303)
    expect((await page(b, await signIn(member))).status).toBe(403)
    const res = await page(b, await signIn(owner))
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain(`href="${b}" aria-current="page"`)
    expect(html).toContain(`href="${b}/gitea/new"`)
    expect((await page(`${b}/gitea/new`, await signIn(owner))).status).toBe(200)
    const refused = await submit(member, `${b}/gitea/new`, fields('https://example.com/x'), { from: '/' })
    expect(refused.status).toBe(403)
  })

  test('added, edited and deleted through the forms, as /orgs/{org}/hooks sees it', async () => {
    await expectCsrfRefused(owner, `${b}/gitea/new`, fields('https://example.com/org'))
    const bad = await submit(owner, `${b}/gitea/new`, fields('ftp://example.com/org'), { from: `${b}/gitea/new` })
    expect(bad.status).toBe(422)
    expect(bad.html).toContain('role="alert"')
    const made = await submit(owner, `${b}/gitea/new`, fields('https://example.com/org'), { from: `${b}/gitea/new` })
    expect(made.status).toBe(303)
    const hooks = (await s.get('/orgs/hooked/hooks', { token: owner.token })).body
    expect(hooks.map((h: { config: { url: string } }) => h.config.url)).toEqual(['https://example.com/org'])
    const id = hooks[0].id
    expect(made.location).toBe(`${b}/${id}?done=hook-added`)
    const shown = await (await page(`${b}/${id}`, await signIn(owner))).text()
    expect(shown).toContain('No deliveries yet.')
    expect(shown).toContain('Delete webhook')

    // Gitea's `package` event is one of the choices (an owner's packages are announced to its hooks).
    expect(shown).toContain('name="events" value="package"')
    const edited = await submit(owner, `${b}/${id}`, fields('https://example.com/org2', { events_mode: 'choose_events', events: ['push', 'create', 'package'] }), { from: `${b}/${id}` })
    expect(edited.location).toBe(`${b}/${id}?done=saved`)
    const after = (await s.get(`/orgs/hooked/hooks/${id}`, { token: owner.token })).body
    expect(after.config.url).toBe('https://example.com/org2')
    expect([...after.events].sort()).toEqual(['create', 'package', 'push'])

    expect((await page(`${b}/999999`, await signIn(owner))).status).toBe(404)
    expect((await page(`${b}/nope`, await signIn(owner))).status).toBe(404)
    await expectCsrfRefused(owner, `${b}/delete`, { id: String(id) })
    const gone = await submit(owner, `${b}/delete`, { id: String(id) }, { from: b })
    expect(gone.location).toBe(`${b}?done=hook-deleted`)
    expect((await s.get('/orgs/hooked/hooks', { token: owner.token })).body).toEqual([])
  })
})

describe("a user's webhooks", () => {
  const b = '/user/settings/hooks'
  test('the signed-in user adds, sees and deletes their own; another user cannot reach them', async () => {
    expect((await page(b)).status).toBe(303)
    const made = await submit(owner, `${b}/gitea/new`, fields('https://example.com/mine'), { from: `${b}/gitea/new` })
    expect(made.status).toBe(303)
    const hooks = (await s.get('/user/hooks', { token: owner.token })).body
    expect(hooks.length).toBe(1)
    const id = hooks[0].id
    expect(await (await page(b, await signIn(owner))).text()).toContain('https://example.com/mine')
    expect(await (await page(b, await signIn(member))).text()).not.toContain('https://example.com/mine')
    expect((await page(`${b}/${id}`, await signIn(member))).status).toBe(404)
    const other = await submit(member, `${b}/delete`, { id: String(id) }, { from: b })
    expect(other.status).toBe(404)
    await submit(owner, `${b}/delete`, { id: String(id) }, { from: b })
    expect((await s.get('/user/hooks', { token: owner.token })).body).toEqual([])
  })
})

describe("the site's system and default webhooks", () => {
  test('site administrators only; a system and a default hook added by their pages, listed apart', async () => {
    expect((await page('/-/admin/hooks', await signIn(owner))).status).toBe(403)
    expect((await submit(owner, '/-/admin/system-hooks/gitea/new', fields('https://example.com/sys'), { from: '/' })).status).toBe(403)
    const sys = await submit(root, '/-/admin/system-hooks/gitea/new', fields('https://example.com/sys'), { from: '/-/admin/system-hooks/gitea/new' })
    expect(sys.status).toBe(303)
    const def = await submit(root, '/-/admin/default-hooks/gitea/new', fields('https://example.com/def'), { from: '/-/admin/default-hooks/gitea/new' })
    expect(def.status).toBe(303)
    const hooks = (await s.get('/admin/hooks', { token: root.token })).body as { id: number; config: { url: string; is_system_webhook?: string } }[]
    const byUrl = Object.fromEntries(hooks.map((h) => [h.config.url, h]))
    expect(Object.keys(byUrl).sort()).toEqual(['https://example.com/def', 'https://example.com/sys'])
    const html = await (await page('/-/admin/hooks', await signIn(root))).text()
    const system = html.indexOf('System webhooks')
    const defaults = html.indexOf('Default webhooks')
    expect(system).toBeGreaterThan(0)
    expect(html.indexOf('https://example.com/sys')).toBeGreaterThan(system)
    expect(html.indexOf('https://example.com/sys')).toBeLessThan(defaults)
    expect(html.indexOf('https://example.com/def')).toBeGreaterThan(defaults)
    const sysId = byUrl['https://example.com/sys']!.id
    expect(await (await page(`/-/admin/hooks/${sysId}`, await signIn(root))).text()).toContain('A system webhook')
    await submit(root, '/-/admin/hooks/delete', { id: String(sysId) }, { from: '/-/admin/hooks' })
    expect(((await s.get('/admin/hooks', { token: root.token })).body as unknown[]).length).toBe(1)
  })
})
