import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { signInByForm, csrfIn } from './web-session'

/**
 * The sidebar's due date, time tracking, dependencies and pin of an issue's page, over HTTP: each
 * form's change seen through the API, its refusals to a reader, a writer or a stranger, CSRF, bad
 * input changing nothing, and the timeline's entries.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, rita: TestUser, stranger: TestUser
const cookies: Record<string, string> = {}
const LIMIT_MS = 240_000

const page = (path: string, who?: string, init: RequestInit = {}) =>
  fetch(s.url + path, { ...init, headers: { accept: 'text/html', ...(who ? { cookie: cookies[who]! } : {}), ...(init.headers ?? {}) }, redirect: 'manual' })
const postForm = (path: string, who: string | undefined, fields: Record<string, string>) =>
  page(path, who, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) })
const textOf = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ')
const csrf: Record<string, string> = {}
const I1 = '/alice/side/issues/1'

/** Posts a sidebar form as `who` with their CSRF token. */
const post = (path: string, who: string, fields: Record<string, string> = {}) => postForm(path, who, { _csrf: csrf[who]!, ...fields })
const issue = async (n = 1) => (await s.get(`/repos/alice/side/issues/${n}`, { token: alice.token })).body

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  rita = await s.user('rita')
  stranger = await s.user('stranger')
  const token = { token: alice.token }
  for (const name of ['side', 'hidden']) expect((await s.post('/user/repos', { name, auto_init: true, private: true }, token)).status).toBe(201)
  expect((await s.put('/repos/alice/side/collaborators/bob', { permission: 'write' }, token)).status).toBe(204)
  expect((await s.put('/repos/alice/side/collaborators/rita', { permission: 'read' }, token)).status).toBe(204)
  for (const title of ['First', 'Second', 'Third']) expect((await s.post('/repos/alice/side/issues', { title }, token)).status).toBe(201)
  expect((await s.post('/repos/alice/hidden/issues', { title: 'Secret blocker' }, token)).status).toBe(201)
  expect((await s.post('/repos/alice/side/branches', { new_branch_name: 'feature', old_branch_name: 'main' }, token)).status).toBe(201)
  const files = [{ operation: 'create', path: 'f.txt', content: Buffer.from('one\n').toString('base64') }]
  expect((await s.post('/repos/alice/side/contents', { branch: 'feature', files, message: 'feature' }, token)).status).toBe(201)
  expect((await s.post('/repos/alice/side/pulls', { head: 'feature', base: 'main', title: 'Add f' }, token)).status).toBe(201)
  for (const u of [alice, bob, rita, stranger]) {
    cookies[u.name] = await signInByForm(s.url, u)
    csrf[u.name] = csrfIn(await (await page('/', u.name)).text())!
  }
}, LIMIT_MS)

afterAll(async () => {
  await s?.stop()
})

describe('issue sidebar', () => {
  test('due date: a writer sets it (overdue shown), a bad day or a missing CSRF token changes nothing; readers and strangers refused', async () => {
    expect((await post(`${I1}/deadline`, 'rita', { deadline: '2020-01-02' })).status).toBe(403)
    expect((await post(`${I1}/deadline`, 'stranger', { deadline: '2020-01-02' })).status).toBe(404)
    expect((await postForm(`${I1}/deadline`, 'bob', { deadline: '2020-01-02' })).status).toBe(403)
    expect((await post(`${I1}/deadline`, 'bob', { deadline: '2020-02-30' })).status).toBe(422)
    expect((await post(`${I1}/deadline`, 'bob', { deadline: 'tomorrow' })).status).toBe(422)
    expect((await issue()).due_date).toBeNull()
    // Rita sees no form; Bob does.
    expect(await (await page(I1, 'rita')).text()).not.toContain(`${I1}/deadline`)
    expect(await (await page(I1, 'bob')).text()).toContain(`${I1}/deadline`)
    const set = await post(`${I1}/deadline`, 'bob', { deadline: '2020-01-02' })
    expect(set.status).toBe(303)
    expect(set.headers.get('location')).toBe(I1)
    expect((await issue()).due_date).toStartWith('2020-01-02')
    const seen = textOf(await (await page(I1, 'rita')).text())
    expect(seen).toContain('2020-01-02')
    expect(seen).toContain('(overdue)')
    expect((await post(`${I1}/deadline`, 'bob', { deadline: '' })).status).toBe(303)
    expect((await issue()).due_date).toBeNull()
    // The pull request address takes only pull requests.
    expect((await post('/alice/side/pulls/1/deadline', 'bob', { deadline: '2020-01-02' })).status).toBe(404)
  })

  test('time tracking: the stopwatch (writers), time added, the total; refusals and bad input change nothing', async () => {
    const times = async () => (await s.get('/repos/alice/side/issues/2/times', { token: alice.token })).body as { time: number }[]
    const I2 = '/alice/side/issues/2'
    // Only contributors track time here (the default): Rita neither posted nor is assigned.
    expect((await post(`${I2}/times/add`, 'rita', { hours: '1', minutes: '0' })).status).toBe(403)
    expect((await post(`${I2}/times/stopwatch/toggle`, 'rita')).status).toBe(403)
    expect((await post(`${I2}/times/add`, 'stranger', { hours: '1' })).status).toBe(404)
    expect((await postForm(`${I2}/times/add`, 'bob', { hours: '1' })).status).toBe(403)
    expect((await post(`${I2}/times/add`, 'bob', { hours: 'x' })).status).toBe(422)
    expect((await post(`${I2}/times/add`, 'bob', { hours: '0', minutes: '0' })).status).toBe(422)
    expect((await post(`${I2}/times/stopwatch/cancel`, 'bob')).status).toBe(409)
    expect(await times()).toHaveLength(0)
    expect(await (await page(I2, 'rita')).text()).not.toContain('/times/')

    expect((await post(`${I2}/times/stopwatch/toggle`, 'bob')).status).toBe(303)
    const running = textOf(await (await page(I2, 'bob')).text())
    expect(running).toContain('Your stopwatch is running')
    expect(textOf(await (await page(I2, 'alice')).text())).not.toContain('Your stopwatch is running')
    expect((await post(`${I2}/times/stopwatch/cancel`, 'bob')).status).toBe(303)
    expect(await times()).toHaveLength(0)
    expect((await post(`${I2}/times/stopwatch/toggle`, 'bob')).status).toBe(303)
    expect((await post(`${I2}/times/stopwatch/toggle`, 'bob')).status).toBe(303)
    expect(await times()).toHaveLength(1)
    expect((await post(`${I2}/times/add`, 'bob', { hours: '1', minutes: '5' })).status).toBe(303)
    const listed = await times()
    expect(listed).toHaveLength(2)
    expect(listed[1]!.time).toBe(3900)
    expect(textOf(await (await page(I2, 'rita')).text())).toContain('Total time spent: 1 hour 5 minutes')

    // With the time tracker off: no section, and the forms refused.
    expect((await s.patch('/repos/alice/side', { internal_tracker: { enable_time_tracker: false, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true } }, { token: alice.token })).status).toBe(200)
    expect(textOf(await (await page(I2, 'bob')).text())).not.toContain('Time tracking')
    expect((await post(`${I2}/times/add`, 'bob', { hours: '1' })).status).toBe(400)
    expect((await s.patch('/repos/alice/side', { internal_tracker: { enable_time_tracker: true, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true } }, { token: alice.token })).status).toBe(200)
    expect(await times()).toHaveLength(2)
  })

  test('dependencies: added by #number or id, listed both ways, removed; cross-repository ones only for who may see them', async () => {
    const deps = async (n: number) => ((await s.get(`/repos/alice/side/issues/${n}/dependencies`, { token: alice.token })).body as { number: number }[]).map((i) => i.number)
    expect((await post(`${I1}/dependency/add`, 'rita', { newDependency: '#2' })).status).toBe(403)
    expect((await post(`${I1}/dependency/add`, 'stranger', { newDependency: '#2' })).status).toBe(404)
    expect((await postForm(`${I1}/dependency/add`, 'bob', { newDependency: '#2' })).status).toBe(403)
    expect((await post(`${I1}/dependency/add`, 'bob', { newDependency: 'two' })).status).toBe(400)
    expect((await post(`${I1}/dependency/add`, 'bob', { newDependency: '#1' })).status).toBe(422)
    expect((await post(`${I1}/dependency/add`, 'bob', { newDependency: '#99' })).status).toBe(404)
    expect(await deps(1)).toEqual([])

    expect((await post(`${I1}/dependency/add`, 'bob', { newDependency: '#2' })).status).toBe(303)
    const third = await issue(3)
    expect((await post(`${I1}/dependency/add`, 'bob', { newDependency: String(third.id) })).status).toBe(303)
    expect(await deps(1)).toEqual([2, 3])
    expect(textOf(await (await page(I1, 'rita')).text())).toMatch(/Depends on #2 Second #3 Third/)
    const blocked = textOf(await (await page('/alice/side/issues/2', 'rita')).text())
    expect(blocked).toMatch(/Blocks #1 First/)
    expect(blocked).toContain('bob added a dependency #1')

    // The hidden repository's issue: Bob cannot name it; Alice can, and only she sees it listed.
    expect((await post(`${I1}/dependency/add`, 'bob', { newDependency: 'alice/hidden#1' })).status).toBe(404)
    expect((await post(`${I1}/dependency/add`, 'alice', { newDependency: 'alice/hidden#1' })).status).toBe(303)
    expect(textOf(await (await page(I1, 'alice')).text())).toContain('alice/hidden#1 Secret blocker')
    expect(textOf(await (await page(I1, 'bob')).text())).not.toContain('Secret blocker')

    const second = await issue(2)
    expect((await post(`${I1}/dependency/delete`, 'rita', { removeDependencyID: String(second.id), dependencyType: 'blockedBy' })).status).toBe(403)
    expect((await post(`${I1}/dependency/delete`, 'bob', { removeDependencyID: String(second.id), dependencyType: 'sideways' })).status).toBe(400)
    expect((await post(`${I1}/dependency/delete`, 'bob', { removeDependencyID: 'x', dependencyType: 'blockedBy' })).status).toBe(400)
    expect((await post(`${I1}/dependency/delete`, 'bob', { removeDependencyID: String(second.id), dependencyType: 'blocking' })).status).toBe(404)
    expect(await deps(1)).toEqual([2, 3, 1])
    expect((await post(`${I1}/dependency/delete`, 'bob', { removeDependencyID: String(second.id), dependencyType: 'blockedBy' })).status).toBe(303)
    expect(await deps(1)).toEqual([3, 1])
    // From the blocker's side: issue 3 blocks issue 1.
    const first = await issue(1)
    expect((await post('/alice/side/issues/3/dependency/delete', 'bob', { removeDependencyID: String(first.id), dependencyType: 'blocking' })).status).toBe(303)
    expect(await deps(1)).toEqual([1])
    expect(textOf(await (await page(I1, 'rita')).text())).toContain('bob removed a dependency #2')
  })

  test('pin: repository admins pin and unpin (pinned atop the list, in the timeline); writers and readers refused', async () => {
    const pinned = async () => ((await s.get('/repos/alice/side/issues/pinned', { token: alice.token })).body as { number: number }[]).map((i) => i.number)
    expect((await post('/alice/side/issues/3/pin', 'bob')).status).toBe(403)
    expect((await post('/alice/side/issues/3/pin', 'rita')).status).toBe(403)
    expect((await post('/alice/side/issues/3/pin', 'stranger')).status).toBe(404)
    expect((await postForm('/alice/side/issues/3/pin', 'alice', {})).status).toBe(403)
    expect(await (await page('/alice/side/issues/3', 'bob')).text()).not.toContain('/issues/3/pin')
    expect(await pinned()).toEqual([])
    expect((await post('/alice/side/issues/3/pin', 'alice')).status).toBe(303)
    expect(await pinned()).toEqual([3])
    const list = await (await page('/alice/side/issues', 'rita')).text()
    expect(list).toContain('aria-label="Pinned issues"')
    expect(textOf(await (await page('/alice/side/issues/3', 'rita')).text())).toContain('alice pinned this')
    expect((await post('/alice/side/issues/3/pin', 'alice')).status).toBe(303)
    expect(await pinned()).toEqual([])
    expect(await (await page('/alice/side/issues', 'rita')).text()).not.toContain('aria-label="Pinned issues"')
  })

  test('work in progress: the poster or a writer toggles the WIP prefix through the title form; readers see no toggle', async () => {
    const P4 = '/alice/side/pulls/4'
    const title = async () => (await s.get('/repos/alice/side/pulls/4', { token: alice.token })).body.title
    expect(await (await page(P4, 'rita')).text()).not.toContain('Mark as work in progress')
    const shown = await (await page(P4, 'bob')).text()
    expect(shown).toContain('Mark as work in progress')
    expect(shown).toContain('name="title" value="WIP: Add f"')
    expect((await post(`${P4}/title`, 'rita', { title: 'WIP: Add f' })).status).toBe(403)
    expect((await post(`${P4}/title`, 'bob', { title: 'WIP: Add f' })).status).toBe(303)
    expect(await title()).toBe('WIP: Add f')
    expect((await s.get('/repos/alice/side/pulls/4', { token: alice.token })).body.draft).toBe(true)
    const again = await (await page(P4, 'bob')).text()
    expect(again).toContain('Remove the WIP prefix')
    expect(again).toContain('name="title" value="Add f"')
    expect((await post(`${P4}/title`, 'bob', { title: 'Add f' })).status).toBe(303)
    expect(await title()).toBe('Add f')
  })
})
