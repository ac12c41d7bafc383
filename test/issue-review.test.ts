import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { comments, labels as labels_, milestones, repositories } from '../src/db/schema'
import { startTrackerWorld, type TrackerWorld } from './issue-fixtures'

let w: TrackerWorld
let repo: { id: number; path: string }
beforeAll(async () => {
  w = await startTrackerWorld()
  repo = await w.repo('review')
})
afterAll(() => w.s.stop())

const milestoneRow = async (id: number) => (await w.s.deps.db.select().from(milestones).where(eq(milestones.id, id)))[0]!
const repoRow = async (id: number) => (await w.s.deps.db.select().from(repositories).where(eq(repositories.id, id)))[0]!

describe('review probes', () => {
  test('over-long titles, names and bodies are 422 and create nothing', async () => {
    const before = (await repoRow(repo.id)).numIssues
    const long = 'x'.repeat(256)
    for (const [path, body] of [
      [`${repo.path}/issues`, { title: long }],
      [`${repo.path}/issues`, { title: 'ok', body: 'y'.repeat(1024 * 1024 + 1) }],
      [`${repo.path}/labels`, { name: long, color: '#aabbcc' }],
      [`${repo.path}/milestones`, { title: long }],
    ] as const) {
      const r = await w.s.post(path, body, { token: w.owner.token })
      expect(r.status).toBe(422)
      expect(r.body.message).toContain('length')
    }
    expect((await repoRow(repo.id)).numIssues).toBe(before)
    const issue = (await w.s.post(`${repo.path}/issues`, { title: 't'.repeat(255) }, { token: w.owner.token })).body
    expect(issue.title).toHaveLength(255)
    const c = await w.s.post(`${repo.path}/issues/${issue.number}/comments`, { body: 'z'.repeat(1024 * 1024 + 1) }, { token: w.owner.token })
    expect(c.status).toBe(422)
    expect((await w.s.get(`${repo.path}/issues/${issue.number}`)).body.comments).toBe(0)
  })

  test('moving milestone and closing in one PATCH counts on the new milestone', async () => {
    const a = (await w.s.post(`${repo.path}/milestones`, { title: 'A' }, { token: w.owner.token })).body
    const b = (await w.s.post(`${repo.path}/milestones`, { title: 'B' }, { token: w.owner.token })).body
    const i = (await w.s.post(`${repo.path}/issues`, { title: 'move', milestone: a.id }, { token: w.owner.token })).body
    const r = await w.s.patch(`${repo.path}/issues/${i.number}`, { milestone: b.id, state: 'closed' }, { token: w.writer.token })
    expect(r.status).toBe(201)
    expect(await milestoneRow(a.id)).toMatchObject({ numIssues: 0, numClosedIssues: 0 })
    expect(await milestoneRow(b.id)).toMatchObject({ numIssues: 1, numClosedIssues: 1 })
    expect(r.body.milestone).toMatchObject({ id: b.id, open_issues: 0, closed_issues: 1 })
  })

  test('an assignee without write access to the repository is refused with 422 (Gitea: CanBeAssigned)', async () => {
    const priv = await w.repo('review-private', { private: true })
    const before = (await repoRow(priv.id)).numIssues
    const r = await w.s.post(`${priv.path}/issues`, { title: 'x', assignees: ['outsider'] }, { token: w.owner.token })
    expect(r.status).toBe(422)
    const byReader = await w.s.post(`${priv.path}/issues`, { title: 'x', assignees: ['reader'] }, { token: w.owner.token })
    expect(byReader.status).toBe(422)
    expect(byReader.body.message).toContain('write access')
    expect((await repoRow(priv.id)).numIssues).toBe(before)
    const i = (await w.s.post(`${priv.path}/issues`, { title: 'y', assignees: ['writer'] }, { token: w.owner.token })).body
    expect(i.assignees.map((u: any) => u.login)).toEqual(['writer'])
    const e = await w.s.patch(`${priv.path}/issues/${i.number}`, { assignees: ['outsider'] }, { token: w.owner.token })
    expect(e.status).toBe(422)
    expect((await w.s.get(`${priv.path}/issues/${i.number}`, { token: w.owner.token })).body.assignees.map((u: any) => u.login)).toEqual(['writer'])
  })

  test('time tracking off: the issue’s times are 404, the repository’s 400', async () => {
    const r = await w.repo('review-notimes')
    const i = (await w.s.post(`${r.path}/issues`, { title: 't' }, { token: w.owner.token })).body
    await w.s.deps.db.update(repositories).set({ enableTimeTracker: false }).where(eq(repositories.id, r.id))
    expect((await w.s.get(`${r.path}/issues/${i.number}/times`, { token: w.owner.token })).status).toBe(404)
    expect((await w.s.get(`${r.path}/times`, { token: w.owner.token })).status).toBe(400)
  })

  test('deleting a timeline event through the comment routes answers 204 and keeps it', async () => {
    const i = (await w.s.post(`${repo.path}/issues`, { title: 'timed' }, { token: w.owner.token })).body
    expect((await w.s.post(`${repo.path}/issues/${i.number}/times`, { time: 60 }, { token: w.owner.token })).status).toBe(200)
    const event = (await w.s.deps.db.select().from(comments).where(eq(comments.issueId, i.id)))[0]!
    expect(event.type).toBeGreaterThan(0)
    expect((await w.s.del(`${repo.path}/issues/comments/${event.id}`, undefined, { token: w.owner.token })).status).toBe(204)
    expect((await w.s.deps.db.select().from(comments).where(eq(comments.id, event.id)))[0]).toBeDefined()
  })

  test('milestones are listed by due date (none last), then by id', async () => {
    const r = await w.repo('review-due')
    const late = (await w.s.post(`${r.path}/milestones`, { title: 'late', due_on: '2040-01-01T00:00:00Z' }, { token: w.owner.token })).body
    const none = (await w.s.post(`${r.path}/milestones`, { title: 'none' }, { token: w.owner.token })).body
    const soon = (await w.s.post(`${r.path}/milestones`, { title: 'soon', due_on: '2030-01-01T00:00:00Z' }, { token: w.owner.token })).body
    const list = await w.s.get(`${r.path}/milestones`)
    expect(list.body.map((m: any) => m.id)).toEqual([soon.id, late.id, none.id])
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

  test('a bad since (or the seed’s string) is 422 on every comment list', async () => {
    const i = (await w.s.post(`${repo.path}/issues`, { title: 'c' }, { token: w.owner.token })).body
    for (const path of [`issues/${i.number}/comments`, `issue/${i.number}/comments`, 'issues/comments'])
      for (const name of ['since', 'string'])
        expect((await w.s.get(`${repo.path}/${path}?${name}=yesterday`)).status).toBe(422)
  })

  test('private repository times are 404 to anonymous callers and outsiders', async () => {
    const r = await w.repo('review-private-times', { private: true })
    const i = (await w.s.post(`${r.path}/issues`, { title: 't' }, { token: w.owner.token })).body
    for (const path of [`issues/${i.number}/times`, 'times', 'times/owner']) {
      expect((await w.s.get(`${r.path}/${path}`)).status).toBe(404)
      expect((await w.s.get(`${r.path}/${path}`, { token: w.outsider.token })).status).toBe(404)
    }
    expect((await w.s.post(`${r.path}/issues/${i.number}/times`, { time: 5 }, { token: w.outsider.token })).status).toBe(404)
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

  test('label counters count closed issues; deleting a label unlinks it', async () => {
    const r = await w.repo('review-labels')
    const l = (await w.s.post(`${r.path}/labels`, { name: 'x', color: '#000000' }, { token: w.owner.token })).body
    const i = (await w.s.post(`${r.path}/issues`, { title: 'a', labels: [l.id], closed: true }, { token: w.owner.token })).body
    expect((await w.s.deps.db.select().from(labels_).where(eq(labels_.id, l.id)))[0]).toMatchObject({ numIssues: 1, numClosedIssues: 1 })
    await w.s.patch(`${r.path}/issues/${i.number}`, { state: 'open' }, { token: w.owner.token })
    expect((await w.s.deps.db.select().from(labels_).where(eq(labels_.id, l.id)))[0]).toMatchObject({ numIssues: 1, numClosedIssues: 0 })
    expect((await w.s.del(`${r.path}/labels/${l.id}`, undefined, { token: w.owner.token })).status).toBe(204)
    // Issue 10 item 8: deleting a missing label is a 404 (was 204).
    expect((await w.s.del(`${r.path}/labels/${l.id}`, undefined, { token: w.owner.token })).status).toBe(404)
    expect((await w.s.get(`${r.path}/issues/${i.number}`)).body.labels).toEqual([])
  })

  test('an issue’s comments: whole list with X-Total-Count, or a page with Link', async () => {
    const i = (await w.s.post(`${repo.path}/issues`, { title: 'talk' }, { token: w.owner.token })).body
    for (const n of [1, 2, 3]) await w.s.post(`${repo.path}/issues/${i.number}/comments`, { body: `c${n}` }, { token: w.reader.token })
    const all = await w.s.get(`${repo.path}/issues/${i.number}/comments`)
    expect(all.body.map((c: any) => c.body)).toEqual(['c1', 'c2', 'c3'])
    expect(all.headers.get('x-total-count')).toBe('3')
    const page = await w.s.get(`${repo.path}/issue/${i.number}/comments?limit=2&page=2`)
    expect(page.body.map((c: any) => c.body)).toEqual(['c3'])
    expect(page.headers.get('link')).toContain('rel="prev"')
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
