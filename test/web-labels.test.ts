import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'
import { contentMark } from './db-snapshot'

/**
 * The label and milestone pages over plain HTTP: who sees them and who may change them (the API's
 * rule: readers of the issues see, writers change), what each form did (read back through the
 * API), refusals shown on the page (nothing changed), and forms without their CSRF token refused.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, carol: TestUser
let mark: () => Promise<string>
const { page, signIn, submit } = webVisitors(() => s.url, async () => '')

const labelsOf = async () => ((await s.get('/repos/alice/tracker/labels', { token: alice.token })).body as any[]).map((l) => [l.name, l.color, l.description])
const milestonesOf = async (state = 'all') =>
  ((await s.get(`/repos/alice/tracker/milestones?state=${state}`, { token: alice.token })).body as any[]).map((m) => [m.title, m.state, m.due_on, m.description])

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  expect((await s.post('/user/repos', { name: 'tracker', auto_init: true }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'hidden', private: true }, { token: alice.token })).status).toBe(201)
  // bob writes to tracker, carol only reads it (a public repository).
  expect((await s.put('/repos/alice/tracker/collaborators/bob', { permission: 'write' }, { token: alice.token })).status).toBe(204)
})
afterAll(async () => {
  await s.stop()
})

describe('labels', () => {
  test('writers create, edit and delete labels; the page lists them with their open issues, linked to the filtered list', async () => {
    const made = await submit(bob, '/alice/tracker/labels/new', { title: 'bug', color: '#D73A4A', description: 'Something is broken' })
    expect(made.status).toBe(303)
    expect(made.location).toBe('/alice/tracker/labels?done=label-added')
    expect(await labelsOf()).toEqual([['bug', 'd73a4a', 'Something is broken']])
    const id = (await s.get('/repos/alice/tracker/labels', { token: alice.token })).body[0].id
    expect((await s.post('/repos/alice/tracker/issues', { title: 'crash', labels: [id] }, { token: alice.token })).status).toBe(201)

    const html = await (await page('/alice/tracker/labels?done=label-added', await signIn(carol))).text()
    expect(html).toContain('The label was created.')
    expect(html).toContain('1 open issues')
    expect(html).toContain(`/alice/tracker/issues?labels=${id}&amp;state=open`)
    // A reader sees no forms.
    expect(html).not.toContain('action="/alice/tracker/labels/new"')
    const writer = await (await page('/alice/tracker/labels', await signIn(bob))).text()
    expect(writer).toContain('action="/alice/tracker/labels/new"')
    expect(writer).toContain('action="/alice/tracker/labels/edit"')

    expect((await submit(bob, '/alice/tracker/labels/edit', { id: String(id), title: 'defect', color: '#00aabb', description: '' })).status).toBe(303)
    expect(await labelsOf()).toEqual([['defect', '00aabb', '']])
    expect((await submit(bob, '/alice/tracker/labels/delete', { id: String(id) })).location).toBe('/alice/tracker/labels?done=label-deleted')
    expect(await labelsOf()).toEqual([])
  })

  test('bad input is shown on the page with the service\'s message and changes nothing; readers and strangers may not change', async () => {
    const before = await mark()
    const bad = await submit(bob, '/alice/tracker/labels/new', { title: 'x', color: 'purple', description: '' })
    expect(bad.status).toBe(422)
    expect(bad.html).toContain('must be a colour like #00aabb')
    expect((await submit(bob, '/alice/tracker/labels/new', { title: '', color: '#00aabb' })).status).toBe(422)
    expect((await submit(bob, '/alice/tracker/labels/edit', { id: '999999', title: 'y', color: '#00aabb' })).status).toBe(404)
    expect((await submit(bob, '/alice/tracker/labels/edit', { id: 'abc', title: 'y', color: '#00aabb' })).status).toBe(404)
    expect((await submit(bob, '/alice/tracker/labels/delete', { id: '99999999999999999999' })).status).toBe(404)
    expect((await submit(carol, '/alice/tracker/labels/new', { title: 'nope', color: '#00aabb' })).status).toBe(403)
    expect((await submit(carol, '/alice/hidden/labels/new', { title: 'nope', color: '#00aabb' })).status).toBe(404)
    // Without the CSRF token, or with another's: refused, nothing changed.
    expect((await submit(bob, '/alice/tracker/labels/new', { title: 'csrf', color: '#00aabb' }, { csrf: null })).status).toBe(403)
    expect((await submit(bob, '/alice/tracker/labels/new', { title: 'csrf', color: '#00aabb' }, { csrf: 'f'.repeat(64) })).status).toBe(403)
    expect(await mark()).toBe(before)
    // A hidden repository's pages are 404 to those who may not see it.
    expect((await page('/alice/hidden/labels', await signIn(carol))).status).toBe(404)
    expect((await page('/alice/hidden/milestones')).status).toBe(404)
  })

  test('a repository without labels offers a label set; it adds the set\'s labels, and an unknown set is refused', async () => {
    const html = await (await page('/alice/tracker/labels', await signIn(bob))).text()
    expect(html).toContain('action="/alice/tracker/labels/initialize"')
    expect(html).toContain('<option value="Default">Default</option>')
    expect((await submit(bob, '/alice/tracker/labels/initialize', { template_name: 'No such set' })).status).toBe(422)
    expect(await labelsOf()).toEqual([])
    expect((await submit(bob, '/alice/tracker/labels/initialize', { template_name: 'Default' })).location).toBe('/alice/tracker/labels?done=labels-initialized')
    const names = (await labelsOf()).map((l) => l[0])
    const template = ((await s.get('/label/templates/Default')).body as any[]).map((l) => l.name)
    expect(names.sort()).toEqual([...template].sort())
    // With labels, the set is no longer offered.
    expect(await (await page('/alice/tracker/labels', await signIn(bob))).text()).not.toContain('/labels/initialize')
  })
})

describe("an organisation's labels", () => {
  const orgLabels = async () => ((await s.get('/orgs/acme/labels', { token: alice.token })).body as any[]).map((l) => [l.name, l.color, l.description])
  const PAGE = '/org/acme/settings/labels'

  test("its owners manage them in the organisation's settings; its repositories' pages list them, marked, not editable there", async () => {
    expect((await s.post('/orgs', { username: 'acme' }, { token: alice.token })).status).toBe(201)
    expect((await s.post('/orgs/acme/repos', { name: 'app' }, { token: alice.token })).status).toBe(201)
    const settings = await (await page('/org/acme/settings', await signIn(alice))).text()
    expect(settings).toContain(`href="${PAGE}"`)
    const empty = await (await page(PAGE, await signIn(alice))).text()
    expect(empty).toContain('This organisation has no labels yet.')
    expect(empty).toContain(`action="${PAGE}/initialize"`)

    const made = await submit(alice, `${PAGE}/new`, { title: 'team-wide', color: '#112233', description: 'For every repository' }, { from: PAGE })
    expect(made.location).toBe(`${PAGE}?done=label-added`)
    expect(await orgLabels()).toEqual([['team-wide', '112233', 'For every repository']])
    const id = (await s.get('/orgs/acme/labels', { token: alice.token })).body[0].id
    expect((await submit(alice, `${PAGE}/edit`, { id: String(id), title: 'org-wide', color: '#445566', description: '' }, { from: PAGE })).status).toBe(303)
    expect(await orgLabels()).toEqual([['org-wide', '445566', '']])
    // A repository of the organisation shows it, marked, without its forms.
    const repoPage = await (await page('/acme/app/labels', await signIn(alice))).text()
    expect(repoPage).toContain('org-wide')
    expect(repoPage).toContain('(organisation label)')
    expect(repoPage).not.toContain(`value="${id}"`)
    // A label set, then a deletion.
    expect((await submit(alice, `${PAGE}/initialize`, { template_name: 'No such set' }, { from: PAGE })).status).toBe(422)
    expect((await submit(alice, `${PAGE}/delete`, { id: String(id) }, { from: PAGE })).location).toBe(`${PAGE}?done=label-deleted`)
    expect((await submit(alice, `${PAGE}/initialize`, { template_name: 'Default' }, { from: PAGE })).location).toBe(`${PAGE}?done=labels-initialized`)
    const template = ((await s.get('/label/templates/Default')).body as any[]).map((l) => l.name)
    expect((await orgLabels()).map((l) => l[0]).sort()).toEqual([...template].sort())
  })

  test('others may not; bad input changes nothing', async () => {
    const before = await mark()
    expect((await page(PAGE, await signIn(carol))).status).toBe(403)
    expect((await submit(carol, `${PAGE}/new`, { title: 'nope', color: '#00aabb' })).status).toBe(403)
    expect((await submit(alice, `${PAGE}/new`, { title: 'x', color: 'purple' }, { from: PAGE })).status).toBe(422)
    expect((await submit(alice, `${PAGE}/new`, { title: 'csrf', color: '#00aabb' }, { csrf: null })).status).toBe(403)
    expect(await mark()).toBe(before)
    expect((await page('/org/nobody/settings/labels', await signIn(alice))).status).toBe(404)
  })
})

describe('milestones', () => {
  test('writers create, edit, close, reopen and delete milestones; the page shows due date, progress and the open and closed tabs', async () => {
    const form = await page('/alice/tracker/milestones/new', await signIn(bob))
    expect(form.status).toBe(200)
    const made = await submit(bob, '/alice/tracker/milestones/new', { title: 'v1.0', content: 'The **first** one', deadline: '2030-01-31' })
    expect(made.location).toBe('/alice/tracker/milestones?done=milestone-added')
    expect(await milestonesOf()).toEqual([['v1.0', 'open', '2030-01-31T23:59:59Z', 'The **first** one']])
    const id = (await s.get('/repos/alice/tracker/milestones', { token: alice.token })).body[0].id
    const one = (await s.post('/repos/alice/tracker/issues', { title: 'one', milestone: id }, { token: alice.token })).body
    await s.post('/repos/alice/tracker/issues', { title: 'two', milestone: id }, { token: alice.token })
    await s.patch(`/repos/alice/tracker/issues/${one.number}`, { state: 'closed' }, { token: alice.token })

    const html = await (await page('/alice/tracker/milestones', await signIn(carol))).text()
    expect(html).toContain('50% · 1 open · 1 closed')
    expect(html).toContain('<strong>first</strong>')
    expect(html).toContain('1 open')
    expect(html).not.toContain('/milestones/new')
    // Its page is its issues: the issue list filtered by it.
    const issues = await page(`/alice/tracker/milestone/${id}`)
    expect(issues.status).toBe(303)
    expect(issues.headers.get('location')).toBe(`/alice/tracker/issues?milestone=${id}&state=open`)
    expect((await page(`/alice/tracker/milestone/999999`)).status).toBe(404)

    expect((await page(`/alice/tracker/milestones/${id}/edit`, await signIn(bob))).status).toBe(200)
    expect((await submit(bob, `/alice/tracker/milestones/${id}/edit`, { title: 'v1.0.0', content: 'Renamed', deadline: '' })).status).toBe(303)
    expect(await milestonesOf()).toEqual([['v1.0.0', 'open', null, 'Renamed']])
    expect((await submit(bob, `/alice/tracker/milestones/${id}/close`, {})).location).toBe('/alice/tracker/milestones?state=closed&done=milestone-closed')
    expect(await milestonesOf('closed')).toEqual([['v1.0.0', 'closed', null, 'Renamed']])
    expect(await (await page('/alice/tracker/milestones?state=closed')).text()).toContain('v1.0.0')
    expect((await submit(bob, `/alice/tracker/milestones/${id}/open`, {})).status).toBe(303)
    expect(await milestonesOf('open')).toEqual([['v1.0.0', 'open', null, 'Renamed']])
    expect((await submit(bob, '/alice/tracker/milestones/delete', { id: String(id) })).location).toBe('/alice/tracker/milestones?done=milestone-deleted')
    expect(await milestonesOf()).toEqual([])
  })

  test('bad input comes back on the form with what was typed; readers may not change; unknown actions and ids are 404', async () => {
    const before = await mark()
    const bad = await submit(bob, '/alice/tracker/milestones/new', { title: 'soon', content: 'kept text', deadline: '2030-02-31' })
    expect(bad.status).toBe(422)
    expect(bad.html).toContain('kept text')
    expect((await submit(bob, '/alice/tracker/milestones/new', { title: '   ', content: '' })).status).toBe(422)
    // A day the month lacks is refused by the API too (as Go's time parsing), never rolled over into the next month.
    expect((await s.post('/repos/alice/tracker/milestones', { title: 'feb', due_on: '2030-02-31T00:00:00Z' }, { token: alice.token })).status).toBe(422)
    expect((await submit(carol, '/alice/tracker/milestones/new', { title: 'nope' })).status).toBe(403)
    expect((await page('/alice/tracker/milestones/new', await signIn(carol))).status).toBe(403)
    expect((await submit(bob, '/alice/tracker/milestones/1/reopen-all', {})).status).toBe(404)
    expect((await submit(bob, '/alice/tracker/milestones/abc/close', {})).status).toBe(404)
    expect((await submit(bob, '/alice/tracker/milestones/delete', { id: '12345' })).status).toBe(404)
    expect((await submit(bob, '/alice/tracker/milestones/new', { title: 'csrf' }, { csrf: null })).status).toBe(403)
    expect(await mark()).toBe(before)
  })
})

test('the issue list links to Labels and Milestones', async () => {
  const html = await (await page('/alice/tracker/issues')).text()
  expect(html).toContain('href="/alice/tracker/labels"')
  expect(html).toContain('href="/alice/tracker/milestones"')
})

test('the pages and the API follow issues or pull requests (Gitea: either unit serves them); with both off they are 404', async () => {
  expect((await s.post('/user/repos', { name: 'pullsonly', auto_init: true }, { token: alice.token })).status).toBe(201)
  expect((await s.patch('/repos/alice/pullsonly', { has_issues: false }, { token: alice.token })).status).toBe(200)
  expect((await page('/alice/pullsonly/labels')).status).toBe(200)
  expect((await page('/alice/pullsonly/milestones')).status).toBe(200)
  expect((await submit(alice, '/alice/pullsonly/labels/new', { title: 'review', color: '#00aabb', description: '' })).status).toBe(303)
  // The API under the same rule: issues off, pull requests on.
  const api = '/repos/alice/pullsonly'
  const label = await s.post(`${api}/labels`, { name: 'ready', color: '#00aa00' }, { token: alice.token })
  expect(label.status).toBe(201)
  expect(((await s.get(`${api}/labels`)).body as any[]).map((l) => l.name)).toEqual(['ready', 'review'])
  expect((await s.patch(`${api}/labels/${label.body.id}`, { description: 'merge me' }, { token: alice.token })).status).toBe(200)
  const milestone = await s.post(`${api}/milestones`, { title: 'v1' }, { token: alice.token })
  expect(milestone.status).toBe(201)
  expect((await s.get(`${api}/milestones/${milestone.body.id}`)).status).toBe(200)
  expect((await s.patch(`${api}/milestones/${milestone.body.id}`, { state: 'closed' }, { token: alice.token })).status).toBe(200)

  expect((await s.patch(api, { has_pull_requests: false }, { token: alice.token })).status).toBe(200)
  const before = await mark()
  expect((await page('/alice/pullsonly/labels')).status).toBe(404)
  expect((await page('/alice/pullsonly/milestones')).status).toBe(404)
  expect((await submit(alice, '/alice/pullsonly/labels/new', { title: 'other', color: '#00aabb', description: '' })).status).toBe(404)
  // Both off: the API answers 404 too, to the owner, and changes nothing.
  expect((await s.get(`${api}/labels`, { token: alice.token })).status).toBe(404)
  expect((await s.get(`${api}/labels/${label.body.id}`, { token: alice.token })).status).toBe(404)
  expect((await s.post(`${api}/labels`, { name: 'other', color: '#00aa00' }, { token: alice.token })).status).toBe(404)
  expect((await s.del(`${api}/labels/${label.body.id}`, undefined, { token: alice.token })).status).toBe(404)
  expect((await s.get(`${api}/milestones`, { token: alice.token })).status).toBe(404)
  expect((await s.post(`${api}/milestones`, { title: 'v2' }, { token: alice.token })).status).toBe(404)
  expect((await s.del(`${api}/milestones/${milestone.body.id}`, undefined, { token: alice.token })).status).toBe(404)
  expect(await mark()).toBe(before)
})
