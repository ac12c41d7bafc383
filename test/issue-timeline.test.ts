import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { giteaApi, type Api } from 'gitea-js'
import { startTrackerWorld, type TrackerWorld } from './issue-fixtures'
import { empty, fails, ok } from './gitea-calls'

let w: TrackerWorld
let asWriter: Api<unknown>
let asOutsider: Api<unknown>
let anonymous: Api<unknown>
beforeAll(async () => {
  w = await startTrackerWorld()
  await w.repo('story')
  await w.repo('hidden', { private: true })
  asWriter = giteaApi(w.s.url, { token: w.writer.token })
  asOutsider = giteaApi(w.s.url, { token: w.outsider.token })
  anonymous = giteaApi(w.s.url, {})
  const label = await ok(asWriter.repos.issueCreateLabel('owner', 'story', { name: 'bug', color: '#ff0000' }), 201)
  const milestone = await ok(asWriter.repos.issueCreateMilestone('owner', 'story', { title: 'v1' }), 201)
  await ok(asWriter.repos.issueCreateIssue('owner', 'story', { title: 'first title', body: 'the body' }), 201)
  await ok(asWriter.repos.issueCreateComment('owner', 'story', 1, { body: 'a comment' }), 201)
  await ok(asWriter.repos.issueAddLabel('owner', 'story', 1, { labels: [label.id!] }))
  await ok(asWriter.repos.issueEditIssue('owner', 'story', 1, { title: 'second title', milestone: milestone.id, assignees: ['writer'] }), 201)
  await ok(asWriter.repos.issueEditIssue('owner', 'story', 1, { state: 'closed' }), 201)
  await ok(asWriter.repos.issueEditIssue('owner', 'story', 1, { state: 'open' }), 201)
  await empty(asWriter.repos.issueRemoveLabel('owner', 'story', 1, label.id!))
  await ok(asWriter.repos.issueCreateComment('owner', 'story', 1, { body: 'last word' }), 201)
  await w.s.post('/repos/owner/hidden/issues', { title: 'secret' }, { token: w.owner.token })
})
afterAll(() => w.s.stop())

describe('GET /repos/{o}/{r}/issues/{index}/timeline', () => {
  test('comments and the events between them, oldest first, as Gitea TimelineComment records', async () => {
    const items = await ok(anonymous.repos.issueGetCommentsAndTimeline('owner', 'story', 1))
    const types = items.map((i) => i.type)
    expect(types[0]).toBe('comment')
    expect(types.at(-1)).toBe('comment')
    for (const t of ['label', 'change_title', 'milestone', 'assignees', 'close', 'reopen']) expect(types).toContain(t)
    expect(items[0]).toMatchObject({ body: 'a comment', user: { login: 'writer' }, html_url: expect.stringMatching(/\/owner\/story\/issues\/1#issuecomment-\d+$/) })
    expect(items.at(-1)!.body).toBe('last word')
    const title = items.find((i) => i.type === 'change_title')!
    expect(title).toMatchObject({ old_title: 'first title', new_title: 'second title', user: { login: 'writer' } })
    const added = items.find((i) => i.type === 'label' && i.body === '1')!
    expect(added.label).toMatchObject({ name: 'bug', color: 'ff0000' })
    expect(items.find((i) => i.type === 'label' && i.body === '')?.label).toMatchObject({ name: 'bug' })
    expect(items.find((i) => i.type === 'milestone')!.milestone).toMatchObject({ title: 'v1' })
    expect(items.find((i) => i.type === 'assignees')).toMatchObject({ assignee: { login: 'writer' }, removed_assignee: false })
    expect(types.indexOf('close')).toBeLessThan(types.indexOf('reopen'))
    const times = items.map((i) => Date.parse(i.created_at!))
    expect([...times].sort((a, b) => a - b)).toEqual(times)
  })

  test('paged with X-Total-Count; a page past the end is empty', async () => {
    const all = await ok(anonymous.repos.issueGetCommentsAndTimeline('owner', 'story', 1))
    const r = await anonymous.repos.issueGetCommentsAndTimeline('owner', 'story', 1, { page: 2, limit: 2 })
    expect(r.headers.get('x-total-count')).toBe(String(all.length))
    expect(r.data.map((i) => [i.type, i.id])).toEqual(all.slice(2, 4).map((i) => [i.type, i.id]))
    expect(await ok(anonymous.repos.issueGetCommentsAndTimeline('owner', 'story', 1, { page: 1000, limit: 50 }))).toEqual([])
  })

  test('since and before bound the window', async () => {
    const future = new Date(Date.now() + 86_400_000).toISOString()
    expect(await ok(anonymous.repos.issueGetCommentsAndTimeline('owner', 'story', 1, { since: future }))).toEqual([])
    expect(await ok(anonymous.repos.issueGetCommentsAndTimeline('owner', 'story', 1, { before: '2001-01-01T00:00:00Z' }))).toEqual([])
    const r = await w.s.get('/repos/owner/story/issues/1/timeline?since=yesterday')
    expect(r.status).toBe(422)
  })

  test('an unknown issue is 404, a private repository hidden from outsiders, malformed paging 422', async () => {
    await fails(anonymous.repos.issueGetCommentsAndTimeline('owner', 'story', 99), 404)
    await fails(asOutsider.repos.issueGetCommentsAndTimeline('owner', 'hidden', 1), 404)
    expect((await w.s.get('/repos/owner/hidden/issues/1/timeline', { token: w.reader.token })).status).toBe(200)
    expect((await w.s.get('/repos/owner/story/issues/1/timeline?limit=abc')).status).toBe(422)
  })
})
