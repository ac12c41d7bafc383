import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { milestones, repositories } from '../src/db/schema'
import { startTrackerWorld, type TrackerWorld } from './issue-fixtures'

/** Editing an issue (PATCH and its companions): who may change what, the counters that follow, bad input. */

let w: TrackerWorld
beforeAll(async () => {
  w = await startTrackerWorld()
})
afterAll(() => w.s.stop())

const milestoneRow = async (id: number) => (await w.s.deps.db.select().from(milestones).where(eq(milestones.id, id)))[0]!

describe('editing issues', () => {
  let repo: { id: number; path: string }
  beforeAll(async () => {
    repo = await w.repo('editing')
  })
  const newIssue = async (token: string, extra: object = {}) =>
    (await w.s.post(`${repo.path}/issues`, { title: 'To edit', ...extra }, { token })).body

  test('PATCH answers 201; closing sets closed_at and counters, reopening clears them', async () => {
    const ms = (await w.s.post(`${repo.path}/milestones`, { title: 'm' }, { token: w.owner.token })).body
    const label = (await w.s.post(`${repo.path}/labels`, { name: 'l', color: '#123456' }, { token: w.owner.token })).body
    const issue = await newIssue(w.owner.token, { milestone: ms.id, labels: [label.id] })
    expect((await w.s.get(repo.path)).body.open_issues_count).toBe(1)
    const closed = await w.s.patch(`${repo.path}/issues/${issue.number}`, { state: 'closed' }, { token: w.writer.token })
    expect(closed.status).toBe(201)
    expect(closed.body.state).toBe('closed')
    expect(closed.body.closed_at).toMatch(/Z$/)
    expect(closed.body.milestone).toMatchObject({ open_issues: 0, closed_issues: 1 })
    expect((await w.s.get(repo.path)).body.open_issues_count).toBe(0)
    const reopened = await w.s.patch(`${repo.path}/issues/${issue.number}`, { state: 'open' }, { token: w.writer.token })
    expect(reopened.body.state).toBe('open')
    expect(reopened.body.closed_at).toBeNull()
    expect(reopened.body.milestone).toMatchObject({ open_issues: 1, closed_issues: 0 })
    expect((await w.s.get(repo.path)).body.open_issues_count).toBe(1)
  })

  test('title, body, assignees, milestone and deadline by a writer', async () => {
    const ms = (await w.s.post(`${repo.path}/milestones`, { title: 'later' }, { token: w.owner.token })).body
    const issue = await newIssue(w.reader.token)
    const r = await w.s.patch(
      `${repo.path}/issues/${issue.number}`,
      { title: 'Renamed', body: 'new body', assignees: ['writer'], milestone: ms.id, due_date: '2032-01-01T00:00:00Z' },
      { token: w.writer.token },
    )
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ title: 'Renamed', body: 'new body', due_date: '2032-01-01T00:00:00Z' })
    expect(r.body.assignees.map((u: any) => u.login)).toEqual(['writer'])
    expect(r.body.milestone.id).toBe(ms.id)
    const cleared = await w.s.patch(`${repo.path}/issues/${issue.number}`, { assignee: '', milestone: 0, unset_due_date: true }, { token: w.writer.token })
    expect(cleared.body).toMatchObject({ assignee: null, assignees: [], milestone: null, due_date: null, title: 'Renamed' })
  })

  test('the poster may edit their own issue; readers may not edit others’; anonymous 401', async () => {
    const mine = await newIssue(w.reader.token)
    const own = await w.s.patch(`${repo.path}/issues/${mine.number}`, { title: 'Mine, edited', state: 'closed' }, { token: w.reader.token })
    expect(own.status).toBe(201)
    expect(own.body).toMatchObject({ title: 'Mine, edited', state: 'closed' })
    const theirs = await newIssue(w.owner.token)
    const denied = await w.s.patch(`${repo.path}/issues/${theirs.number}`, { title: 'hijack' }, { token: w.reader.token })
    expect(denied.status).toBe(403)
    expect((await w.s.patch(`${repo.path}/issues/${theirs.number}`, { title: 'anon' })).status).toBe(401)
    expect((await w.s.get(`${repo.path}/issues/${theirs.number}`)).body.title).toBe('To edit')
    // A poster without write access cannot assign or schedule: silently ignored, as Gitea.
    const sneaky = await w.s.patch(`${repo.path}/issues/${mine.number}`, { assignees: ['reader'] }, { token: w.reader.token })
    expect(sneaky.body.assignees).toEqual([])
  })

  test("an issue's ref (Gitea's branch or tag of the issue): set at creation, changed by its poster or a writer, shown in its timeline; not a reader's to change on another's issue", async () => {
    const issue = await newIssue(w.reader.token, { ref: 'refs/heads/main' })
    expect(issue.ref).toBe('refs/heads/main')
    expect((await w.s.get(`${repo.path}/issues/${issue.number}`)).body.ref).toBe('refs/heads/main')
    const changed = await w.s.patch(`${repo.path}/issues/${issue.number}`, { ref: 'v1.0' }, { token: w.reader.token })
    expect(changed.status).toBe(201)
    expect(changed.body.ref).toBe('v1.0')
    // Go clients send null for what they leave out: the ref stays.
    expect((await w.s.patch(`${repo.path}/issues/${issue.number}`, { ref: null, title: 'Still v1.0' }, { token: w.reader.token })).body.ref).toBe('v1.0')
    const other = await newIssue(w.writer.token, { ref: 'main' })
    expect((await w.s.patch(`${repo.path}/issues/${other.number}`, { ref: 'x' }, { token: w.reader.token })).status).toBe(403)
    expect((await w.s.get(`${repo.path}/issues/${other.number}`)).body.ref).toBe('main')
    expect((await w.s.post(`${repo.path}/issues`, { title: 'long ref', ref: 'r'.repeat(256) }, { token: w.reader.token })).status).toBe(422)
    const page = await fetch(`${w.s.url}/owner/editing/issues/${issue.number}`)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('changed the reference from <code>refs/heads/main</code> to <code>v1.0</code>')
  })

  test('bad edits answer 4xx and change nothing', async () => {
    const issue = await newIssue(w.owner.token)
    for (const body of [{ state: 'maybe' }, { assignee: 'ghost' }, { milestone: 424242 }, { due_date: 'soon' }, { title: 7 }]) {
      const r = await w.s.patch(`${repo.path}/issues/${issue.number}`, { title: 'should not stick', ...body }, { token: w.owner.token })
      expect(r.status).toBe(422)
    }
    const now = (await w.s.get(`${repo.path}/issues/${issue.number}`)).body
    expect(now).toMatchObject({ title: 'To edit', state: 'open', milestone: null, assignees: [] })
    expect((await w.s.patch(`${repo.path}/issues/9999`, { title: 'x' }, { token: w.owner.token })).status).toBe(404)
  })

  test('POST …/deadline sets and clears the deadline (writers only)', async () => {
    const issue = await newIssue(w.owner.token)
    const set = await w.s.post(`${repo.path}/issues/${issue.number}/deadline`, { due_date: '2033-03-03T00:00:00Z' }, { token: w.writer.token })
    expect(set.status).toBe(201)
    expect(set.body).toEqual({ due_date: '2033-03-03T00:00:00Z' })
    expect((await w.s.get(`${repo.path}/issues/${issue.number}`)).body.due_date).toBe('2033-03-03T00:00:00Z')
    const clear = await w.s.post(`${repo.path}/issues/${issue.number}/deadline`, { due_date: null }, { token: w.writer.token })
    expect(clear.body).toEqual({ due_date: null })
    expect((await w.s.post(`${repo.path}/issues/${issue.number}/deadline`, { due_date: '2033-03-03T00:00:00Z' }, { token: w.reader.token })).status).toBe(403)
    expect((await w.s.post(`${repo.path}/issues/${issue.number}/deadline`, { due_date: 'bad' }, { token: w.writer.token })).status).toBe(422)
  })

  test('a repository with its issue tracker off answers 404 on issue routes', async () => {
    const off = await w.repo('no-issues')
    await w.s.post(`${off.path}/issues`, { title: 'before' }, { token: w.owner.token })
    await w.s.deps.db.update(repositories).set({ hasIssues: false }).where(eq(repositories.id, off.id))
    expect((await w.s.get(`${off.path}/issues`)).status).toBe(404)
    expect((await w.s.get(`${off.path}/issues/1`)).status).toBe(404)
    expect((await w.s.post(`${off.path}/issues`, { title: 'x' }, { token: w.owner.token })).status).toBe(404)
    // Labels serve pull requests too: 404 only once both are off (the pipeline's issuesOrPulls).
    expect((await w.s.get(`${off.path}/labels`)).status).toBe(200)
    await w.s.deps.db.update(repositories).set({ hasPullRequests: false }).where(eq(repositories.id, off.id))
    expect((await w.s.get(`${off.path}/labels`)).status).toBe(404)
  })

  test('repository open_issues_count follows creation, closing, reopening', async () => {
    const r = await w.repo('review-count')
    const count = async () => (await w.s.get(r.path)).body.open_issues_count
    const a = (await w.s.post(`${r.path}/issues`, { title: 'a' }, { token: w.reader.token })).body
    await w.s.post(`${r.path}/issues`, { title: 'b', closed: true }, { token: w.owner.token })
    expect(await count()).toBe(1)
    await w.s.patch(`${r.path}/issues/${a.number}`, { state: 'closed' }, { token: w.reader.token })
    expect(await count()).toBe(0)
    await w.s.patch(`${r.path}/issues/${a.number}`, { state: 'open' }, { token: w.reader.token })
    expect(await count()).toBe(1)
  })

  test('reader creating with labels/milestone/assignees: dropped; reader editing own issue: title/body/state only', async () => {
    const label = (await w.s.post(`${repo.path}/labels`, { name: 'rv', color: '#112233' }, { token: w.owner.token })).body
    const ms = (await w.s.post(`${repo.path}/milestones`, { title: 'rv' }, { token: w.owner.token })).body
    const i = (await w.s.post(`${repo.path}/issues`, { title: 'mine', labels: [label.id], milestone: ms.id, assignees: ['writer'] }, { token: w.reader.token })).body
    expect(i).toMatchObject({ labels: [], milestone: null, assignees: [] })
    const e = await w.s.patch(`${repo.path}/issues/${i.number}`, { title: 'mine2', body: 'b', state: 'closed', milestone: ms.id, assignees: ['writer'] }, { token: w.reader.token })
    expect(e.status).toBe(201)
    expect(e.body).toMatchObject({ title: 'mine2', body: 'b', state: 'closed', milestone: null, assignees: [] })
    expect(await milestoneRow(ms.id)).toMatchObject({ numIssues: 0, numClosedIssues: 0 })
  })

  test('non-numeric ids in paths never answer 500', async () => {
    const i = (await w.s.post(`${repo.path}/issues`, { title: 'odd' }, { token: w.owner.token })).body
    const statuses = [
      (await w.s.del(`${repo.path}/issues/${i.number}/labels/abc`, undefined, { token: w.owner.token })).status,
      (await w.s.del(`${repo.path}/issue/${i.number}/labels/99999999999999999999`, undefined, { token: w.owner.token })).status,
      (await w.s.del(`${repo.path}/milestones/abc`, undefined, { token: w.owner.token })).status,
      (await w.s.patch(`${repo.path}/milestones/abc`, { title: 'x' }, { token: w.owner.token })).status,
      (await w.s.del(`${repo.path}/comments/abc`, undefined, { token: w.owner.token })).status,
      (await w.s.patch(`${repo.path}/issues/comments/abc`, { body: 'x' }, { token: w.owner.token })).status,
      (await w.s.post(`${repo.path}/issues/abc/times`, { time: 5 }, { token: w.owner.token })).status,
      (await w.s.put(`${repo.path}/issues/abc/labels`, { labels: [] }, { token: w.owner.token })).status,
    ]
    for (const st of statuses) expect(st === 204 || st === 404 || st === 422).toBe(true)
  })
})
