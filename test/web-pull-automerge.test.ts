import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startAutoMerger } from '../src/jobs/auto-merger'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { signInByForm, csrfIn } from './web-session'
import { until } from './webhook-receiver'

/**
 * The pull request page's "Merge when checks succeed" over HTTP (Gitea's merge form fields
 * merge_when_checks_succeed and delete_branch_after_merge, its cancel_auto_merge): scheduled while
 * a required status check is pending, shown in the merge box, cancelled by its scheduler and
 * refused to a reader, scheduled again and merged by the auto-merge job once the check succeeds
 * (its head branch deleted); CSRF. And the timeline rows the pages showed none of: time tracked,
 * the stopwatch, due dates, a scheduled merge, on the page and in the API's timeline.
 */

let s: TestServer
let merger: Awaited<ReturnType<typeof startAutoMerger>> | null = null
let alice: TestUser, bob: TestUser, rita: TestUser
const cookies: Record<string, string> = {}
const csrf: Record<string, string> = {}
const LIMIT_MS = 240_000
const P1 = '/alice/am/pulls/1'

const page = (path: string, who?: string, init: RequestInit = {}) =>
  fetch(s.url + path, { ...init, headers: { accept: 'text/html', ...(who ? { cookie: cookies[who]! } : {}), ...(init.headers ?? {}) }, redirect: 'manual' })
const postForm = (path: string, who: string | undefined, fields: Record<string, string>) =>
  page(path, who, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) })
const post = (path: string, who: string, fields: Record<string, string> = {}) => postForm(path, who, { _csrf: csrf[who]!, ...fields })
const textOf = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ')
const seen = async (path: string, who: string) => textOf(await (await page(path, who)).text())
const token = () => ({ token: alice.token })
const pull = async () => (await s.get('/repos/alice/am/pulls/1', token())).body as { merged: boolean; head: { sha: string }; merged_by?: { login: string } }
const timelineTypes = async (path: string) => ((await s.get(`/repos/alice/am/issues/${path}/timeline`, token())).body as { type: string; body: string }[])
const status = async (state: string) =>
  expect((await s.post(`/repos/alice/am/statuses/${(await pull()).head.sha}`, { state, context: 'ci/build' }, token())).status).toBe(201)

beforeAll(async () => {
  s = await startTestServer()
  merger = await startAutoMerger(s.deps, { pollMs: 10 })
  alice = await s.user('alice')
  bob = await s.user('bob')
  rita = await s.user('rita')
  expect((await s.post('/user/repos', { name: 'am', auto_init: true }, token())).status).toBe(201)
  expect((await s.put('/repos/alice/am/collaborators/bob', { permission: 'write' }, token())).status).toBe(204)
  expect((await s.put('/repos/alice/am/collaborators/rita', { permission: 'read' }, token())).status).toBe(204)
  expect((await s.post('/repos/alice/am/branches', { new_branch_name: 'feature', old_branch_name: 'main' }, token())).status).toBe(201)
  const files = [{ operation: 'create', path: 'f.txt', content: Buffer.from('one\n').toString('base64') }]
  expect((await s.post('/repos/alice/am/contents', { branch: 'feature', files, message: 'feature' }, token())).status).toBe(201)
  expect((await s.post('/repos/alice/am/pulls', { head: 'feature', base: 'main', title: 'Add f' }, token())).status).toBe(201)
  expect((await s.post('/repos/alice/am/branch_protections', { rule_name: 'main', enable_status_check: true, status_check_contexts: ['ci/build'] }, token())).status).toBe(201)
  expect((await s.post('/repos/alice/am/issues', { title: 'Tracked' }, token())).status).toBe(201)
  for (const u of [alice, bob, rita]) {
    cookies[u.name] = await signInByForm(s.url, u)
    csrf[u.name] = csrfIn(await (await page('/', u.name)).text())!
  }
}, LIMIT_MS)

afterAll(async () => {
  await merger?.stop()
  await s?.stop()
})

describe('merge when checks succeed', () => {
  test('scheduled through the form while a required check is pending, shown, cancelled by its scheduler (not a reader), scheduled again and merged on success, its branch deleted', async () => {
    await status('pending')
    const form = await (await page(P1, 'bob')).text()
    expect(form).toMatch(/name="merge_when_checks_succeed" value="true" checked/)
    expect(form).toContain('name="delete_branch_after_merge"')
    const fields = { do: 'merge', merge_when_checks_succeed: 'true', delete_branch_after_merge: 'true' }
    // No CSRF token, or a reader: refused, nothing scheduled.
    expect((await postForm(`${P1}/merge`, 'bob', fields)).status).toBe(403)
    expect((await post(`${P1}/merge`, 'rita', fields)).status).toBe(403)
    // Without the switch the pending check refuses the merge (the API's 405).
    expect((await post(`${P1}/merge`, 'bob', { do: 'merge' })).status).toBe(405)
    expect(await seen(P1, 'bob')).not.toContain('scheduled this pull request')

    const scheduled = await post(`${P1}/merge`, 'bob', fields)
    expect(scheduled.status).toBe(303)
    expect(scheduled.headers.get('location')).toBe(`${P1}?done=merge-scheduled`)
    expect(await seen(`${P1}?done=merge-scheduled`, 'bob')).toContain('The merge is scheduled')
    expect((await pull()).merged).toBe(false)
    const forRita = await seen(P1, 'rita')
    expect(forRita).toContain('bob scheduled this pull request to merge (Create merge commit) when all checks succeed')
    expect(forRita).not.toContain('Cancel auto merge')
    expect(await seen(P1, 'bob')).toContain('Cancel auto merge')
    expect(await seen(P1, 'alice')).toContain('Cancel auto merge')
    // Scheduled twice: the API's 409.
    expect((await post(`${P1}/merge`, 'alice', fields)).status).toBe(409)

    // Cancelling: a reader is refused, no CSRF token is refused; the scheduler cancels.
    expect((await post(`${P1}/cancel_auto_merge`, 'rita')).status).toBe(403)
    expect((await postForm(`${P1}/cancel_auto_merge`, 'bob', {})).status).toBe(403)
    const cancelled = await post(`${P1}/cancel_auto_merge`, 'bob')
    expect(cancelled.status).toBe(303)
    expect(cancelled.headers.get('location')).toBe(`${P1}?done=merge-unscheduled`)
    expect((await post(`${P1}/cancel_auto_merge`, 'bob')).status).toBe(404)
    const after = await seen(P1, 'rita')
    expect(after).not.toContain('Cancel auto merge')
    expect(after).toContain('bob scheduled this pull request to merge when all checks succeed')
    expect(after).toContain('bob cancelled auto merging this pull request when all checks succeed')
    expect((await timelineTypes('1')).map((e) => e.type)).toEqual(expect.arrayContaining(['pull_scheduled_merge', 'pull_cancel_scheduled_merge']))

    // Scheduled again; the check's success merges it as its scheduler, and the head branch goes.
    expect((await post(`${P1}/merge`, 'bob', fields)).status).toBe(303)
    await merger!.drained()
    expect((await pull()).merged).toBe(false)
    await status('success')
    await until(async () => (await pull()).merged, 'the scheduled merge')
    expect((await pull()).merged_by?.login).toBe('bob')
    await until(async () => (await s.get('/repos/alice/am/branches/feature', token())).status === 404, 'the head branch deleted')
    // The branch goes, then its timeline row is written.
    const merged = await until(async () => {
      const text = await seen(P1, 'rita')
      return text.includes('deleted branch feature') && text
    }, 'the deleted branch on the timeline')
    expect(merged).not.toContain('Cancel auto merge')
  }, LIMIT_MS)

  test('a pull request ready now is merged by the form at once', async () => {
    expect((await s.post('/repos/alice/am/branches', { new_branch_name: 'ready', old_branch_name: 'main' }, token())).status).toBe(201)
    const files = [{ operation: 'create', path: 'r.txt', content: Buffer.from('r\n').toString('base64') }]
    const commit = await s.post('/repos/alice/am/contents', { branch: 'ready', files, message: 'ready' }, token())
    expect(commit.status).toBe(201)
    const created = await s.post('/repos/alice/am/pulls', { head: 'ready', base: 'main', title: 'Ready' }, token())
    const n = (created.body as { number: number }).number
    const head = ((await s.get(`/repos/alice/am/pulls/${n}`, token())).body as { head: { sha: string } }).head.sha
    expect((await s.post(`/repos/alice/am/statuses/${head}`, { state: 'success', context: 'ci/build' }, token())).status).toBe(201)
    const r = await post(`/alice/am/pulls/${n}/merge`, 'bob', { do: 'merge', merge_when_checks_succeed: 'true' })
    expect(r.status).toBe(303)
    expect(r.headers.get('location')).toBe(`/alice/am/pulls/${n}`)
    expect(((await s.get(`/repos/alice/am/pulls/${n}`, token())).body as { merged: boolean }).merged).toBe(true)
    // Not asked to: the head branch stays.
    expect((await s.get('/repos/alice/am/branches/ready', token())).status).toBe(200)
  }, LIMIT_MS)
})

describe('timeline rows', () => {
  test('time tracked, the stopwatch and due dates are on the page and in the API timeline', async () => {
    const I = '/alice/am/issues/2'
    expect((await post(`${I}/times/stopwatch/toggle`, 'bob')).status).toBe(303)
    expect((await post(`${I}/times/stopwatch/cancel`, 'bob')).status).toBe(303)
    expect((await post(`${I}/times/stopwatch/toggle`, 'bob')).status).toBe(303)
    expect((await post(`${I}/times/stopwatch/toggle`, 'bob')).status).toBe(303)
    expect((await post(`${I}/times/add`, 'bob', { hours: '1', minutes: '5' })).status).toBe(303)
    expect((await post(`${I}/deadline`, 'bob', { deadline: '2020-01-02' })).status).toBe(303)
    // The same day again changes nothing (no row); the API's PATCH deadline changes it.
    expect((await post(`${I}/deadline`, 'bob', { deadline: '2020-01-02' })).status).toBe(303)
    expect((await s.post('/repos/alice/am/issues/2/deadline', { due_date: '2020-03-04T00:00:00Z' }, token())).status).toBe(201)
    expect((await post(`${I}/deadline`, 'bob', { deadline: '' })).status).toBe(303)

    const text = await seen(I, 'rita')
    for (const words of [
      'bob started working',
      'bob cancelled time tracking',
      'bob stopped working, spent',
      'bob added spent time 1 hour 5 minutes',
      'bob added the due date 2020-01-02',
      'alice modified the due date to 2020-03-04 from 2020-01-02',
      'bob removed the due date 2020-03-04',
    ])
      expect(text).toContain(words)
    const entries = await timelineTypes('2')
    expect(entries.map((e) => e.type)).toEqual(['start_tracking', 'cancel_tracking', 'start_tracking', 'stop_tracking', 'add_time_manual', 'added_deadline', 'modified_deadline', 'removed_deadline'])
    expect(entries.slice(4).map((e) => e.body)).toEqual(['3900', '2020-01-02', '2020-03-04|2020-01-02', '2020-03-04'])
  }, LIMIT_MS)
})
