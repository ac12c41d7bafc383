// Assertions ported from Gitea's own integration tests (go-gitea/gitea, tests/integration/) for the
// issue tracker: issues, comments, labels, milestones and tracked times of one repository. Gitea's
// fixtures are rebuilt here through the API; what needs features Warren does not serve (issue search
// across repositories, org labels, single-comment GET, timeline, blocking, deleting times) is left out.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTrackerWorld, type TrackerWorld } from './issue-fixtures'

let w: TrackerWorld
beforeAll(async () => {
  w = await startTrackerWorld()
})
afterAll(() => w.s.stop())

const ids = (list: { id: number }[]) => list.map((x) => x.id)

// From TestAPIListIssues (api_issue_test.go).
describe('Gitea TestAPIListIssues', () => {
  let path: string
  const made: Record<string, { id: number; number: number }> = {}
  beforeAll(async () => {
    path = (await w.repo('list-issues')).path
    const ms: number[] = []
    for (const title of ['milestone1', 'milestone2', 'milestone3', 'milestone4'])
      ms.push((await w.s.post(`${path}/milestones`, { title }, { token: w.owner.token })).body.id)
    const file = async (key: string, token: string, body: Record<string, unknown>) => {
      const r = await w.s.post(`${path}/issues`, { title: key, ...body }, { token })
      expect(r.status).toBe(201)
      made[key] = r.body
    }
    await file('m1', w.owner.token, { milestone: ms[0] })
    await file('m2', w.owner.token, { milestone: ms[1] })
    await file('m3', w.writer.token, { milestone: ms[2], assignees: ['maintainer'] })
    await file('closed', w.reader.token, { closed: true })
    await file('plain', w.owner.token, {})
  })

  test('state=all lists every issue of the repository, and only those', async () => {
    await w.s.post(`/user/repos`, { name: 'other-list' }, { token: w.owner.token })
    await w.s.post(`/repos/owner/other-list/issues`, { title: 'elsewhere' }, { token: w.owner.token })
    const r = await w.s.get(`${path}/issues?state=all`, { token: w.owner.token })
    expect(r.status).toBe(200)
    expect(r.body).toHaveLength(5)
    expect(ids(r.body).sort()).toEqual(Object.values(made).map((i) => i.id).sort())
    expect(r.headers.get('x-total-count')).toBe('5')
  })

  test('milestones filter takes names and ids, ignores unknown ones; newest first', async () => {
    const m1 = (await w.s.get(`${path}/milestones/milestone1`)).body.id
    const m3 = (await w.s.get(`${path}/milestones/milestone3`)).body.id
    const r = await w.s.get(`${path}/issues?state=all&type=all&milestones=ignore,milestone1,${m3},99999`, { token: w.owner.token })
    expect(r.status).toBe(200)
    expect(r.body).toHaveLength(2)
    expect(r.body[0].milestone.id).toBe(m3)
    expect(r.body[1].milestone.id).toBe(m1)
  })

  test('created_by and assigned_by filter by user name', async () => {
    const byReader = await w.s.get(`${path}/issues?state=all&created_by=reader`, { token: w.owner.token })
    expect(byReader.status).toBe(200)
    expect(ids(byReader.body)).toEqual([made.closed!.id])
    const toMaintainer = await w.s.get(`${path}/issues?state=all&assigned_by=maintainer`, { token: w.owner.token })
    expect(toMaintainer.status).toBe(200)
    expect(ids(toMaintainer.body)).toEqual([made.m3!.id])
    // Gitea's getUserIDForFilter: an unknown user is a 404.
    expect((await w.s.get(`${path}/issues?state=all&created_by=no-such-user`)).status).toBe(404)
    expect((await w.s.get(`${path}/issues?state=all&assigned_by=no-such-user`)).status).toBe(404)
  })
})

// From TestAPICreateIssue and TestAPICreateIssueParallel (api_issue_test.go).
describe('Gitea TestAPICreateIssue', () => {
  test('201 with body, title and assignee; the repository counts one more open issue', async () => {
    const { path } = await w.repo('create-issue')
    const before = (await w.s.get(path)).body
    const r = await w.s.post(`${path}/issues?state=all`, { body: 'apiTestBody', title: 'apiTestTitle', assignee: 'owner' }, { token: w.owner.token })
    expect(r.status).toBe(201)
    expect(r.body.body).toBe('apiTestBody')
    expect(r.body.title).toBe('apiTestTitle')
    expect(r.body.assignee.login).toBe('owner')
    const got = await w.s.get(`${path}/issues/${r.body.number}`)
    expect(got.body).toMatchObject({ body: 'apiTestBody', title: 'apiTestTitle', assignee: { id: w.owner.user.id } })
    const after = (await w.s.get(path)).body
    expect(after.open_issues_count).toBe(before.open_issues_count + 1)
  })

  test('ten issues filed at once all land, each with its own number', async () => {
    const { path } = await w.repo('parallel-issues')
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        w.s.post(`${path}/issues`, { body: `apiTestBody${i}`, title: `apiTestTitle${i}`, assignee: 'owner' }, { token: w.owner.token }),
      ),
    )
    for (const [i, r] of answers.entries()) {
      expect(r.status).toBe(201)
      expect(r.body).toMatchObject({ title: `apiTestTitle${i}`, body: `apiTestBody${i}` })
    }
    expect(new Set(answers.map((r) => r.body.number)).size).toBe(10)
    const list = await w.s.get(`${path}/issues?state=all&limit=50`)
    expect(list.body).toHaveLength(10)
    expect((await w.s.get(path)).body.open_issues_count).toBe(10)
  })
})

// From TestAPIEditIssue (api_issue_test.go).
describe('Gitea TestAPIEditIssue', () => {
  test('state, unset_due_date, milestone, body and title in one PATCH: 201 and stored', async () => {
    const { path } = await w.repo('edit-issue')
    const ms = (await w.s.post(`${path}/milestones`, { title: 'v4' }, { token: w.owner.token })).body.id
    const made = await w.s.post(`${path}/issues`, { title: 'old', due_date: '2002-04-20T13:20:00Z' }, { token: w.owner.token })
    expect(made.body.due_date).toBe('2002-04-20T13:20:00Z')
    const closedBefore = (await w.s.get(path)).body.open_issues_count
    const r = await w.s.patch(
      `${path}/issues/${made.body.number}`,
      { state: 'closed', unset_due_date: true, milestone: ms, body: 'new content!', title: 'new title from api set' },
      { token: w.owner.token },
    )
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ state: 'closed', milestone: { id: ms }, body: 'new content!', due_date: null, title: 'new title from api set' })
    const stored = await w.s.get(`${path}/issues/${made.body.number}`)
    expect(stored.body).toMatchObject({ state: 'closed', milestone: { id: ms }, body: 'new content!', due_date: null, title: 'new title from api set' })
    expect((await w.s.get(path)).body.open_issues_count).toBe(closedBefore - 1)
    expect((await w.s.get(`${path}/milestones/${ms}`)).body).toMatchObject({ open_issues: 0, closed_issues: 1 })
  })
})

// From TestAPIListRepoComments, TestAPIListIssueComments (api_comment_test.go).
describe('Gitea TestAPIListRepoComments / TestAPIListIssueComments', () => {
  let path: string
  const c: number[] = []
  beforeAll(async () => {
    path = (await w.repo('comments')).path
    await w.s.post(`${path}/issues`, { title: 'one' }, { token: w.owner.token })
    await w.s.post(`${path}/issues`, { title: 'two' }, { token: w.owner.token })
    c.push((await w.s.post(`${path}/issues/1/comments`, { body: 'first' }, { token: w.owner.token })).body.id)
    c.push((await w.s.post(`${path}/issues/1/comments`, { body: 'second' }, { token: w.reader.token })).body.id)
    c.push((await w.s.post(`${path}/issues/2/comments`, { body: 'third' }, { token: w.writer.token })).body.id)
    // A comment elsewhere must not show.
    const other = await w.repo('comments-elsewhere')
    await w.s.post(`${other.path}/issues`, { title: 'x' }, { token: w.owner.token })
    await w.s.post(`${other.path}/issues/1/comments`, { body: 'not here' }, { token: w.owner.token })
  })

  test("the repository's comments, oldest first, anonymous read of a public repository", async () => {
    const r = await w.s.get(`${path}/issues/comments`)
    expect(r.status).toBe(200)
    expect(ids(r.body)).toEqual(c)
    expect(r.body.map((x: { body: string }) => x.body)).toEqual(['first', 'second', 'third'])
  })

  test('since keeps the comments updated at or after it', async () => {
    const far = await w.s.get(`${path}/issues/comments?since=2100-01-01T00:00:00Z`)
    expect(far.status).toBe(200)
    expect(far.body).toEqual([])
    const old = await w.s.get(`${path}/issues/comments?since=2000-01-01T00:00:12%2B00:00`)
    expect(ids(old.body)).toEqual(c)
    expect((await w.s.get(`${path}/issues/comments?since=yesterday`)).status).toBe(422)
  })

  test('before keeps the comments updated at or before it (Gitea 1.12+); with since, a window', async () => {
    const old = await w.s.get(`${path}/issues/comments?before=2000-01-01T00:00:11%2B00:00`)
    expect(old.status).toBe(200)
    expect(old.body).toEqual([])
    const future = await w.s.get(`${path}/issues/comments?before=2100-01-01T00:00:00Z&since=2000-01-01T00:00:00Z`)
    expect(ids(future.body)).toEqual(c)
    expect(ids((await w.s.get(`${path}/issues/1/comments?before=2100-01-01T00:00:00Z`)).body)).toEqual(c.slice(0, 2))
    expect((await w.s.get(`${path}/issues/1/comments?before=2000-01-01T00:00:00Z`)).body).toEqual([])
    expect((await w.s.get(`${path}/issues/comments?before=-1`)).status).toBe(422)
  })

  test('page and limit: X-Total-Count of all, the page asked for, Link to the next and previous', async () => {
    const first = await w.s.get(`${path}/issues/comments?page=1&limit=1`)
    expect(first.status).toBe(200)
    expect(ids(first.body)).toEqual([c[0]])
    expect(first.headers.get('x-total-count')).toBe('3')
    expect(first.headers.get('link')).toContain('rel="next"')
    const second = await w.s.get(`${path}/issues/1/comments?page=2&limit=1`, { token: w.owner.token })
    expect(ids(second.body)).toEqual([c[1]])
    expect(second.headers.get('x-total-count')).toBe('2')
    expect(second.headers.get('link')).toContain('rel="prev"')
  })

  test("an issue's comments: only its own plain comments", async () => {
    const r = await w.s.get(`${path}/issues/1/comments`, { token: w.owner.token })
    expect(r.status).toBe(200)
    expect(ids(r.body)).toEqual(c.slice(0, 2))
    expect((await w.s.get(`${path}/issues/99/comments`)).status).toBe(404)
  })
})

// From TestAPICreateComment, TestAPIEditComment, TestAPIDeleteComment (api_comment_test.go).
describe('Gitea TestAPICreateComment / TestAPIEditComment / TestAPIDeleteComment', () => {
  let path: string
  let otherPath: string
  beforeAll(async () => {
    path = (await w.repo('comment-edits')).path
    await w.s.post(`${path}/issues`, { title: 'talk' }, { token: w.owner.token })
    // "repository 4": a repository of another owner, whose owner may write there, not here.
    otherPath = '/repos/outsider/theirs'
    await w.s.post('/user/repos', { name: 'theirs' }, { token: w.outsider.token })
  })

  test('create: 201 with the body, stored on the issue', async () => {
    const r = await w.s.post(`${path}/issues/1/comments`, { body: 'Comment body' }, { token: w.owner.token })
    expect(r.status).toBe(201)
    expect(r.body.body).toBe('Comment body')
    const list = await w.s.get(`${path}/issues/1/comments`)
    expect(list.body.find((x: { id: number }) => x.id === r.body.id)?.body).toBe('Comment body')
    expect((await w.s.get(`${path}/issues/1`)).body.comments).toBe(1)
  })

  test("edit: a comment id of another repository is 404 there; 200 with the new body here", async () => {
    const made = await w.s.post(`${path}/issues/1/comments`, { body: 'to edit' }, { token: w.owner.token })
    const wrong = await w.s.patch(`${otherPath}/issues/comments/${made.body.id}`, { body: 'This is the new comment body' }, { token: w.outsider.token })
    expect(wrong.status).toBe(404)
    const r = await w.s.patch(`${path}/issues/comments/${made.body.id}`, { body: 'This is the new comment body' }, { token: w.owner.token })
    expect(r.status).toBe(200)
    expect(r.body.id).toBe(made.body.id)
    expect(r.body.body).toBe('This is the new comment body')
    const list = await w.s.get(`${path}/issues/1/comments`)
    expect(list.body.find((x: { id: number }) => x.id === made.body.id)?.body).toBe('This is the new comment body')
  })

  test('delete: a comment id of another repository is 404 there; 204 here, then gone', async () => {
    const made = await w.s.post(`${path}/issues/1/comments`, { body: 'to delete' }, { token: w.owner.token })
    expect((await w.s.del(`${otherPath}/issues/comments/${made.body.id}`, undefined, { token: w.outsider.token })).status).toBe(404)
    expect((await w.s.del(`${path}/issues/comments/${made.body.id}`, undefined, { token: w.owner.token })).status).toBe(204)
    const list = await w.s.get(`${path}/issues/1/comments`)
    expect(ids(list.body)).not.toContain(made.body.id)
    expect((await w.s.del(`${path}/issues/comments/${made.body.id}`, undefined, { token: w.owner.token })).status).toBe(404)
  })
})

// From TestAPIModifyLabels, TestAPIAddIssueLabels, TestAPIReplaceIssueLabels (api_issue_label_test.go).
describe('Gitea TestAPIModifyLabels / TestAPIAddIssueLabels / TestAPIReplaceIssueLabels', () => {
  test('create (with or without #), reject a bad colour, list, get, edit, delete', async () => {
    const { path } = await w.repo('labels')
    const a = await w.s.post(`${path}/labels`, { name: 'TestL 1', color: 'abcdef', description: 'test label' }, { token: w.owner.token })
    expect(a.status).toBe(201)
    expect(a.body).toMatchObject({ name: 'TestL 1', color: 'abcdef', description: 'test label' })
    const b = await w.s.post(`${path}/labels`, { name: 'TestL 2', color: '#123456', description: 'jet another test label' }, { token: w.owner.token })
    expect(b.status).toBe(201)
    expect(b.body.color).toBe('123456')
    expect((await w.s.post(`${path}/labels`, { name: 'WrongTestL', color: '#12345g' }, { token: w.owner.token })).status).toBe(422)

    const list = await w.s.get(`${path}/labels`, { token: w.owner.token })
    expect(list.status).toBe(200)
    expect(list.body).toHaveLength(2)

    const one = await w.s.get(`${path}/labels/${a.body.id}`, { token: w.owner.token })
    expect(one.status).toBe(200)
    expect(one.body.color).toBe('abcdef')

    const edited = await w.s.patch(`${path}/labels/${a.body.id}`, { name: 'LabelNewName', color: '09876a' }, { token: w.owner.token })
    expect(edited.status).toBe(200)
    expect(edited.body).toMatchObject({ name: 'LabelNewName', color: '09876a' })
    expect((await w.s.patch(`${path}/labels/${a.body.id}`, { color: '09g76a' }, { token: w.owner.token })).status).toBe(422)
    expect((await w.s.get(`${path}/labels/${a.body.id}`)).body.color).toBe('09876a')

    expect((await w.s.del(`${path}/labels/${a.body.id}`, undefined, { token: w.owner.token })).status).toBe(204)
    expect((await w.s.get(`${path}/labels`)).body).toHaveLength(1)
  })

  test('POST adds labels and answers the full set; PUT replaces it with exactly the ones given', async () => {
    const { path } = await w.repo('issue-labels')
    const l1 = (await w.s.post(`${path}/labels`, { name: 'label1', color: '#ee0701' }, { token: w.owner.token })).body.id
    const l2 = (await w.s.post(`${path}/labels`, { name: 'label2', color: '#00aabb' }, { token: w.owner.token })).body.id
    await w.s.post(`${path}/issues`, { title: 'labelled', labels: [l1] }, { token: w.owner.token })
    const added = await w.s.post(`${path}/issues/1/labels`, { labels: [l1, l2] }, { token: w.owner.token })
    expect(added.status).toBe(200)
    expect(ids(added.body).sort()).toEqual([l1, l2].sort())
    expect(ids((await w.s.get(`${path}/issues/1/labels`)).body).sort()).toEqual([l1, l2].sort())

    const replaced = await w.s.put(`${path}/issues/1/labels`, { labels: [l1] }, { token: w.owner.token })
    expect(replaced.status).toBe(200)
    expect(ids(replaced.body)).toEqual([l1])
    expect(ids((await w.s.get(`${path}/issues/1/labels`)).body)).toEqual([l1])
  })
})

// From TestAPIIssuesMilestone (api_issue_milestone_test.go).
describe('Gitea TestAPIIssuesMilestone', () => {
  test('close by PATCH, create closed, list all, get by title, filter by name, delete', async () => {
    const { path } = await w.repo('milestones')
    const m1 = (await w.s.post(`${path}/milestones`, { title: 'milestone1' }, { token: w.owner.token })).body
    await w.s.post(`${path}/milestones`, { title: 'milestone2' }, { token: w.owner.token })
    await w.s.post(`${path}/milestones`, { title: 'milestone3', due_on: '2030-01-01T00:00:00Z' }, { token: w.owner.token })
    await w.s.post(`${path}/issues`, { title: 'in m1', milestone: m1.id }, { token: w.owner.token })
    expect((await w.s.get(`${path}/milestones/${m1.id}`)).body).toMatchObject({ open_issues: 1, state: 'open' })

    const closed = await w.s.patch(`${path}/milestones/${m1.id}`, { state: 'closed' }, { token: w.owner.token })
    expect(closed.status).toBe(200)
    expect(closed.body.state).toBe('closed')
    const again = await w.s.get(`${path}/milestones/${m1.id}`, { token: w.owner.token })
    expect(again.status).toBe(200)
    expect(again.body.state).toBe('closed')

    const wow = await w.s.post(`${path}/milestones`, { title: 'wow', description: 'closed one', state: 'closed' }, { token: w.owner.token })
    expect(wow.status).toBe(201)
    expect(wow.body.title).toBe('wow')
    expect(wow.body.state).toBe('closed')
    expect(wow.body.due_on).toBeNull()

    const all = await w.s.get(`${path}/milestones?state=all`, { token: w.owner.token })
    expect(all.status).toBe(200)
    expect(all.body).toHaveLength(4)
    const third = all.body[2]
    const byTitle = await w.s.get(`${path}/milestones/${encodeURIComponent(third.title)}`, { token: w.owner.token })
    expect(byTitle.status).toBe(200)
    expect(byTitle.body).toEqual(third)

    const named = await w.s.get(`${path}/milestones?state=all&name=milestone2`, { token: w.owner.token })
    expect(named.status).toBe(200)
    expect(named.body.map((m: { title: string }) => m.title)).toEqual(['milestone2'])

    expect((await w.s.del(`${path}/milestones/${wow.body.id}`, undefined, { token: w.owner.token })).status).toBe(204)
    expect((await w.s.get(`${path}/milestones?state=all`)).body).toHaveLength(3)
  })
})

// From TestAPIGetTrackedTimes and TestAPIAddTrackedTimes (api_issue_tracked_time_test.go).
describe('Gitea TestAPIGetTrackedTimes / TestAPIAddTrackedTimes', () => {
  let path: string
  let issueId: number
  beforeAll(async () => {
    path = (await w.repo('times')).path
    issueId = (await w.s.post(`${path}/issues`, { title: 'timed' }, { token: w.owner.token })).body.id
  })

  test("an issue's times: id, issue_id, created, time and user_name; since/before narrow them", async () => {
    const add = (token: string, time: number, created: string) => w.s.post(`${path}/issues/1/times`, { time, created }, { token })
    const t1 = (await add(w.owner.token, 10, '2000-01-01T00:00:01Z')).body
    const t2 = (await add(w.writer.token, 20, '2000-01-01T00:00:05Z')).body
    const t3 = (await add(w.owner.token, 30, '2000-01-01T00:00:11Z')).body
    const t4 = (await add(w.owner.token, 40, '2000-01-01T00:00:20Z')).body
    const r = await w.s.get(`${path}/issues/1/times`, { token: w.owner.token })
    expect(r.status).toBe(200)
    expect(ids(r.body)).toEqual([t1.id, t2.id, t3.id, t4.id])
    for (const [i, want] of [t1, t2, t3, t4].entries()) {
      expect(r.body[i]).toMatchObject({ issue_id: issueId, time: want.time, created: want.created })
    }
    expect(r.body[1].user_name).toBe('writer')
    expect(r.body[0].user_name).toBe('owner')

    const filtered = await w.s.get(`${path}/issues/1/times?since=2000-01-01T00%3A00%3A02%2B00%3A00&before=2000-01-01T00%3A00%3A12%2B00%3A00`, {
      token: w.owner.token,
    })
    expect(filtered.status).toBe(200)
    expect(ids(filtered.body)).toEqual([t2.id, t3.id])
  })

  test('a repository admin records time for another user at a given moment', async () => {
    const admin = await w.s.user('site-admin', { admin: true })
    const r = await w.s.post(`${path}/issues/1/times`, { time: 33, user_name: 'writer', created: new Date(947688818 * 1000).toISOString() }, { token: admin.token })
    expect(r.status).toBe(200)
    expect(r.body.time).toBe(33)
    expect(r.body.user_id).toBe(w.writer.user.id)
    expect(Date.parse(r.body.created) / 1000).toBe(947688818)
  })
})

// From TestUpdateIssueDeadline (issue_test.go, the web form; here its API twin POST …/deadline).
describe('Gitea TestUpdateIssueDeadline (API form)', () => {
  test('a writer sets the deadline (201 {due_date}), the issue shows it; null removes it; a reader may not', async () => {
    const { path } = await w.repo('deadline')
    const made = await w.s.post(`${path}/issues`, { title: 'due', due_date: '2002-04-20T00:00:00Z' }, { token: w.owner.token })
    expect(made.body.due_date.slice(0, 10)).toBe('2002-04-20')
    const set = await w.s.post(`${path}/issues/1/deadline`, { due_date: '2022-04-06T00:00:00Z' }, { token: w.writer.token })
    expect(set.status).toBe(201)
    expect(set.body.due_date.slice(0, 10)).toBe('2022-04-06')
    expect((await w.s.get(`${path}/issues/1`)).body.due_date.slice(0, 10)).toBe('2022-04-06')
    expect((await w.s.post(`${path}/issues/1/deadline`, { due_date: '2030-01-01T00:00:00Z' }, { token: w.reader.token })).status).toBe(403)
    expect((await w.s.post(`${path}/issues/99/deadline`, { due_date: null }, { token: w.writer.token })).status).toBe(404)
    const cleared = await w.s.post(`${path}/issues/1/deadline`, { due_date: null }, { token: w.writer.token })
    expect(cleared.status).toBe(201)
    expect(cleared.body.due_date).toBeNull()
    expect((await w.s.get(`${path}/issues/1`)).body.due_date).toBeNull()
  })
})
