import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { labels, milestones, repositories } from '../src/db/schema'
import { startTrackerWorld, type TrackerWorld } from './issue-fixtures'

let w: TrackerWorld
let repo: { id: number; path: string }
let other: { id: number; path: string }
let priv: { id: number; path: string }
beforeAll(async () => {
  w = await startTrackerWorld()
  repo = await w.repo('plans')
  other = await w.repo('elsewhere')
  priv = await w.repo('closed-doors', { private: true })
})
afterAll(() => w.s.stop())

const labelRow = async (id: number) => (await w.s.deps.db.select().from(labels).where(eq(labels.id, id)))[0]!
const milestoneRow = async (id: number) => (await w.s.deps.db.select().from(milestones).where(eq(milestones.id, id)))[0]!
const repoRow = async (id: number) => (await w.s.deps.db.select().from(repositories).where(eq(repositories.id, id)))[0]!

describe('repository labels', () => {
  test('create (writers), colour validated and normalised', async () => {
    const r = await w.s.post(`${repo.path}/labels`, { name: 'bug', color: '#EE0701', description: 'broken' }, { token: w.writer.token })
    expect(r.status).toBe(201)
    expect(r.body).toEqual({ id: r.body.id, name: 'bug', color: 'ee0701', description: 'broken', url: `${w.s.config.baseUrl}api/v1/repos/owner/plans/labels/${r.body.id}` })
    expect((await labelRow(r.body.id)).color).toBe('#ee0701')
    const noHash = await w.s.post(`${repo.path}/labels`, { name: 'feature', color: '00aa00' }, { token: w.owner.token })
    expect(noHash.body.color).toBe('00aa00')
    const count = (await w.s.deps.db.select().from(labels)).length
    for (const body of [{ name: 'x', color: '#zzzzzz' }, { name: 'x', color: '#12345' }, { name: 'x', color: 'red' }, { name: '', color: '#000000' }, { name: 'x' }])
      expect((await w.s.post(`${repo.path}/labels`, body, { token: w.owner.token })).status).toBe(422)
    expect((await w.s.deps.db.select().from(labels)).length).toBe(count)
    expect((await w.s.post(`${repo.path}/labels`, { name: 'x', color: '#000000' }, { token: w.reader.token })).status).toBe(403)
    expect((await w.s.post(`${repo.path}/labels`, { name: 'x', color: '#000000' }, { token: w.outsider.token })).status).toBe(403)
    expect((await w.s.post(`${repo.path}/labels`, { name: 'x', color: '#000000' })).status).toBe(401)
    expect((await w.s.post(`${priv.path}/labels`, { name: 'x', color: '#000000' }, { token: w.outsider.token })).status).toBe(404)
  })

  test('list (alphabetical, sort, paging), get by id or name', async () => {
    await w.s.post(`${repo.path}/labels`, { name: 'docs', color: '#0000ff' }, { token: w.owner.token })
    const list = await w.s.get(`${repo.path}/labels`)
    expect(list.status).toBe(200)
    expect(list.body.map((l: any) => l.name)).toEqual(['bug', 'docs', 'feature'])
    expect(list.headers.get('x-total-count')).toBe('3')
    const rev = await w.s.get(`${repo.path}/labels?sort=reversealphabetically`)
    expect(rev.body.map((l: any) => l.name)).toEqual(['feature', 'docs', 'bug'])
    const paged = await w.s.get(`${repo.path}/labels?limit=2&page=2`)
    expect(paged.body.map((l: any) => l.name)).toEqual(['feature'])
    expect(paged.headers.get('link')).toContain('rel="first"')
    expect((await w.s.get(`${repo.path}/labels?sort=sideways`)).status).toBe(422)
    const bug = list.body[0]
    expect((await w.s.get(`${repo.path}/labels/${bug.id}`)).body.name).toBe('bug')
    expect((await w.s.get(`${repo.path}/labels/bug`)).body.id).toBe(bug.id)
    expect((await w.s.get(`${repo.path}/labels/999999`)).status).toBe(404)
    expect((await w.s.get(`${other.path}/labels/${bug.id}`)).status).toBe(404)
    expect((await w.s.get(`${priv.path}/labels`)).status).toBe(404)
  })

  test('edit and delete (writers; a second delete is a 404)', async () => {
    const l = (await w.s.post(`${repo.path}/labels`, { name: 'tmp', color: '#111111' }, { token: w.owner.token })).body
    const e = await w.s.patch(`${repo.path}/labels/${l.id}`, { color: 'ABCDEF' }, { token: w.writer.token })
    expect(e.status).toBe(200)
    expect(e.body).toMatchObject({ name: 'tmp', color: 'abcdef' })
    expect((await w.s.patch(`${repo.path}/labels/${l.id}`, { color: 'nope' }, { token: w.writer.token })).status).toBe(422)
    expect((await w.s.patch(`${repo.path}/labels/${l.id}`, { name: 'x' }, { token: w.reader.token })).status).toBe(403)
    expect((await w.s.patch(`${repo.path}/labels/999999`, { name: 'x' }, { token: w.writer.token })).status).toBe(404)
    expect(await labelRow(l.id)).toMatchObject({ name: 'tmp', color: '#abcdef' })
    expect((await w.s.del(`${repo.path}/labels/${l.id}`, undefined, { token: w.reader.token })).status).toBe(403)
    expect((await w.s.del(`${repo.path}/labels/${l.id}`, undefined, { token: w.writer.token })).status).toBe(204)
    // Deleting a missing label is a 404 (was 204, "idempotent").
    expect((await w.s.del(`${repo.path}/labels/${l.id}`, undefined, { token: w.writer.token })).status).toBe(404)
    expect((await w.s.get(`${repo.path}/labels/${l.id}`)).status).toBe(404)
  })
})

describe('labels of an issue', () => {
  let ids: Record<string, number>
  let foreign: number
  beforeAll(async () => {
    const list = (await w.s.get(`${repo.path}/labels`)).body
    ids = Object.fromEntries(list.map((l: any) => [l.name, l.id]))
    foreign = (await w.s.post(`${other.path}/labels`, { name: 'bug', color: '#000000' }, { token: w.owner.token })).body.id
    await w.s.post(`${repo.path}/issues`, { title: 'labelled' }, { token: w.reader.token })
    await w.s.post(`${repo.path}/issues`, { title: 'labelled too' }, { token: w.reader.token })
  })

  for (const spelling of ['issues', 'issue']) {
    test(`add, replace, remove one, clear under /${spelling}/{index}/labels`, async () => {
      const base = `${repo.path}/${spelling}/1/labels`
      const add = await w.s.post(base, { labels: [ids.bug] }, { token: w.writer.token })
      expect(add.status).toBe(200)
      expect(add.body.map((l: any) => l.name)).toEqual(['bug'])
      const more = await w.s.post(base, { labels: [ids.docs, ids.bug] }, { token: w.writer.token })
      expect(more.body.map((l: any) => l.name)).toEqual(['bug', 'docs'])
      expect((await labelRow(ids.bug!)).numIssues).toBe(1)
      expect((await w.s.get(base)).body.map((l: any) => l.name)).toEqual(['bug', 'docs'])
      const replaced = await w.s.put(base, { labels: [ids.feature] }, { token: w.writer.token })
      expect(replaced.status).toBe(200)
      expect(replaced.body.map((l: any) => l.name)).toEqual(['feature'])
      expect((await labelRow(ids.bug!)).numIssues).toBe(0)
      expect((await labelRow(ids.feature!)).numIssues).toBe(1)
      await w.s.post(base, { labels: [ids.bug] }, { token: w.writer.token })
      expect((await w.s.del(`${base}/${ids.feature}`, undefined, { token: w.writer.token })).status).toBe(204)
      expect((await w.s.get(base)).body.map((l: any) => l.name)).toEqual(['bug'])
      expect((await w.s.del(base, undefined, { token: w.writer.token })).status).toBe(204)
      expect((await w.s.get(base)).body).toEqual([])
      expect((await labelRow(ids.bug!)).numIssues).toBe(0)
      expect((await labelRow(ids.feature!)).numIssues).toBe(0)
    })

    test(`permissions and bad input under /${spelling}/{index}/labels change nothing`, async () => {
      const base = `${repo.path}/${spelling}/2/labels`
      await w.s.put(base, { labels: [ids.docs] }, { token: w.owner.token })
      expect((await w.s.post(base, { labels: [ids.bug] }, { token: w.reader.token })).status).toBe(403)
      expect((await w.s.put(base, { labels: [ids.bug] }, { token: w.reader.token })).status).toBe(403)
      expect((await w.s.del(base, undefined, { token: w.reader.token })).status).toBe(403)
      expect((await w.s.del(`${base}/${ids.docs}`, undefined, { token: w.reader.token })).status).toBe(403)
      expect((await w.s.post(base, { labels: [ids.bug] })).status).toBe(401)
      expect((await w.s.post(base, { labels: [foreign] }, { token: w.owner.token })).status).toBe(422)
      expect((await w.s.put(base, { labels: [ids.bug, foreign] }, { token: w.owner.token })).status).toBe(422)
      expect((await w.s.put(base, { labels: ['x'] }, { token: w.owner.token })).status).toBe(422)
      expect((await w.s.del(`${base}/${foreign}`, undefined, { token: w.owner.token })).status).toBe(422)
      expect((await w.s.post(`${repo.path}/${spelling}/99/labels`, { labels: [ids.bug] }, { token: w.owner.token })).status).toBe(404)
      expect((await w.s.get(`${repo.path}/${spelling}/99/labels`)).status).toBe(404)
      expect((await w.s.get(base)).body.map((l: any) => l.name)).toEqual(['docs'])
      expect((await w.s.get(base, { token: w.outsider.token })).status).toBe(200)
      expect((await w.s.get(`${priv.path}/${spelling}/1/labels`, { token: w.outsider.token })).status).toBe(404)
    })
  }

  test('label counters follow closing and reopening; the issue list shows labels', async () => {
    await w.s.put(`${repo.path}/issues/1/labels`, { labels: [ids.bug] }, { token: w.owner.token })
    await w.s.patch(`${repo.path}/issues/1`, { state: 'closed' }, { token: w.owner.token })
    expect(await labelRow(ids.bug!)).toMatchObject({ numIssues: 1, numClosedIssues: 1 })
    await w.s.patch(`${repo.path}/issues/1`, { state: 'open' }, { token: w.owner.token })
    expect(await labelRow(ids.bug!)).toMatchObject({ numIssues: 1, numClosedIssues: 0 })
    const most = await w.s.get(`${repo.path}/labels?sort=mostissues`)
    expect(most.body[0].name).toBe('bug')
  })

  test('label counters count closed issues; deleting a label unlinks it', async () => {
    const r = await w.repo('review-labels')
    const l = (await w.s.post(`${r.path}/labels`, { name: 'x', color: '#000000' }, { token: w.owner.token })).body
    const i = (await w.s.post(`${r.path}/issues`, { title: 'a', labels: [l.id], closed: true }, { token: w.owner.token })).body
    expect((await w.s.deps.db.select().from(labels).where(eq(labels.id, l.id)))[0]).toMatchObject({ numIssues: 1, numClosedIssues: 1 })
    await w.s.patch(`${r.path}/issues/${i.number}`, { state: 'open' }, { token: w.owner.token })
    expect((await w.s.deps.db.select().from(labels).where(eq(labels.id, l.id)))[0]).toMatchObject({ numIssues: 1, numClosedIssues: 0 })
    expect((await w.s.del(`${r.path}/labels/${l.id}`, undefined, { token: w.owner.token })).status).toBe(204)
    // Deleting a missing label is a 404, as in Gitea.
    expect((await w.s.del(`${r.path}/labels/${l.id}`, undefined, { token: w.owner.token })).status).toBe(404)
    expect((await w.s.get(`${r.path}/issues/${i.number}`)).body.labels).toEqual([])
  })
})

describe('milestones', () => {
  test('create (writers), get, list by state, bad input', async () => {
    const r = await w.s.post(`${repo.path}/milestones`, { title: 'v1.0', description: 'first', due_on: '2030-06-01T12:00:00Z' }, { token: w.writer.token })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ title: 'v1.0', description: 'first', state: 'open', open_issues: 0, closed_issues: 0, closed_at: null, due_on: '2030-06-01T12:00:00Z' })
    const nodue = await w.s.post(`${repo.path}/milestones`, { title: 'someday' }, { token: w.owner.token })
    expect(nodue.body.due_on).toBeNull()
    const done = await w.s.post(`${repo.path}/milestones`, { title: 'v0.9', state: 'closed' }, { token: w.owner.token })
    expect(done.body.state).toBe('closed')
    expect(done.body.closed_at).not.toBeNull()
    expect(await repoRow(repo.id)).toMatchObject({ numMilestones: 3, numClosedMilestones: 1 })
    const count = (await w.s.deps.db.select().from(milestones)).length
    for (const body of [{ title: '' }, {}, { title: 'x', due_on: 'June' }, { title: 'x', state: 'done' }])
      expect((await w.s.post(`${repo.path}/milestones`, body, { token: w.owner.token })).status).toBe(422)
    expect((await w.s.deps.db.select().from(milestones)).length).toBe(count)
    expect((await w.s.post(`${repo.path}/milestones`, { title: 'x' }, { token: w.reader.token })).status).toBe(403)
    expect((await w.s.post(`${repo.path}/milestones`, { title: 'x' })).status).toBe(401)
    expect((await w.s.get(`${repo.path}/milestones/${r.body.id}`)).body.title).toBe('v1.0')
    expect((await w.s.get(`${repo.path}/milestones/999999`)).status).toBe(404)
    expect((await w.s.get(`${repo.path}/milestones/first`)).status).toBe(404)
    // By title too, as Gitea 1.17+ (a number is tried as an id first).
    expect((await w.s.get(`${repo.path}/milestones/v1.0`)).body.id).toBe(r.body.id)
    expect((await w.s.get(`${other.path}/milestones/${r.body.id}`)).status).toBe(404)
    expect((await w.s.get(`${repo.path}/milestones`)).body.map((m: any) => m.title)).toEqual(['v1.0', 'someday'])
    expect((await w.s.get(`${repo.path}/milestones?state=closed`)).body.map((m: any) => m.title)).toEqual(['v0.9'])
    const all = await w.s.get(`${repo.path}/milestones?state=all`)
    expect(all.body).toHaveLength(3)
    expect(all.headers.get('x-total-count')).toBe('3')
    const paged = await w.s.get(`${repo.path}/milestones?state=all&limit=1&page=2`)
    expect(paged.body.map((m: any) => m.title)).toEqual(['someday'])
    expect(paged.headers.get('link')).toContain('rel="next"')
    expect((await w.s.get(`${repo.path}/milestones?state=maybe`)).status).toBe(422)
    expect((await w.s.get(`${priv.path}/milestones`, { token: w.outsider.token })).status).toBe(404)
  })

  test('open_issues and closed_issues follow issues as they move', async () => {
    const a = (await w.s.post(`${repo.path}/milestones`, { title: 'A' }, { token: w.owner.token })).body
    const b = (await w.s.post(`${repo.path}/milestones`, { title: 'B' }, { token: w.owner.token })).body
    const i1 = (await w.s.post(`${repo.path}/issues`, { title: 'm1', milestone: a.id }, { token: w.owner.token })).body
    const i2 = (await w.s.post(`${repo.path}/issues`, { title: 'm2', milestone: a.id, closed: true }, { token: w.owner.token })).body
    expect((await w.s.get(`${repo.path}/milestones/${a.id}`)).body).toMatchObject({ open_issues: 1, closed_issues: 1 })
    await w.s.patch(`${repo.path}/issues/${i1.number}`, { milestone: b.id }, { token: w.writer.token })
    expect(await milestoneRow(a.id)).toMatchObject({ numIssues: 1, numClosedIssues: 1 })
    expect(await milestoneRow(b.id)).toMatchObject({ numIssues: 1, numClosedIssues: 0 })
    await w.s.patch(`${repo.path}/issues/${i2.number}`, { state: 'open' }, { token: w.writer.token })
    expect((await w.s.get(`${repo.path}/milestones/${a.id}`)).body).toMatchObject({ open_issues: 1, closed_issues: 0 })
    await w.s.patch(`${repo.path}/issues/${i1.number}`, { state: 'closed' }, { token: w.writer.token })
    expect((await w.s.get(`${repo.path}/milestones/${b.id}`)).body).toMatchObject({ open_issues: 0, closed_issues: 1 })
    await w.s.patch(`${repo.path}/issues/${i1.number}`, { milestone: 0 }, { token: w.writer.token })
    expect(await milestoneRow(b.id)).toMatchObject({ numIssues: 0, numClosedIssues: 0 })
  })

  test('edit (state applied, bad values 422) and delete (a second one is a 404; issues lose the milestone)', async () => {
    const m = (await w.s.post(`${repo.path}/milestones`, { title: 'Edit me' }, { token: w.owner.token })).body
    const issue = (await w.s.post(`${repo.path}/issues`, { title: 'scheduled', milestone: m.id }, { token: w.owner.token })).body
    const e = await w.s.patch(`${repo.path}/milestones/${m.id}`, { title: 'Edited', state: 'closed', due_on: '2031-01-01T00:00:00Z' }, { token: w.writer.token })
    expect(e.status).toBe(200)
    expect(e.body).toMatchObject({ title: 'Edited', state: 'closed', due_on: '2031-01-01T00:00:00Z' })
    expect(e.body.closed_at).not.toBeNull()
    const reopened = await w.s.patch(`${repo.path}/milestones/${m.id}`, { state: 'open' }, { token: w.writer.token })
    expect(reopened.body).toMatchObject({ title: 'Edited', state: 'open', closed_at: null })
    expect((await w.s.patch(`${repo.path}/milestones/${m.id}`, { state: 'archived', title: 'no' }, { token: w.writer.token })).status).toBe(422)
    expect((await w.s.patch(`${repo.path}/milestones/${m.id}`, { title: 'no' }, { token: w.reader.token })).status).toBe(403)
    expect((await w.s.patch(`${repo.path}/milestones/999999`, { title: 'no' }, { token: w.writer.token })).status).toBe(404)
    expect((await milestoneRow(m.id)).name).toBe('Edited')
    // By title as well as by id (Gitea 1.17+).
    expect((await w.s.patch(`${repo.path}/milestones/Edited`, { description: 'by title' }, { token: w.writer.token })).body.id).toBe(m.id)
    expect((await milestoneRow(m.id)).content).toBe('by title')
    const before = (await repoRow(repo.id)).numMilestones
    expect((await w.s.del(`${repo.path}/milestones/${m.id}`, undefined, { token: w.reader.token })).status).toBe(403)
    expect((await w.s.del(`${repo.path}/milestones/Edited`, undefined, { token: w.writer.token })).status).toBe(204)
    expect((await w.s.deps.db.select().from(milestones).where(eq(milestones.id, m.id)))[0]).toBeUndefined()
    // Deleting a missing milestone is a 404 (was 204, "idempotent").
    expect((await w.s.del(`${repo.path}/milestones/${m.id}`, undefined, { token: w.writer.token })).status).toBe(404)
    expect((await repoRow(repo.id)).numMilestones).toBe(before - 1)
    expect((await w.s.get(`${repo.path}/issues/${issue.number}`)).body.milestone).toBeNull()
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

  test('milestones are listed by due date (none last), then by id', async () => {
    const r = await w.repo('review-due')
    const late = (await w.s.post(`${r.path}/milestones`, { title: 'late', due_on: '2040-01-01T00:00:00Z' }, { token: w.owner.token })).body
    const none = (await w.s.post(`${r.path}/milestones`, { title: 'none' }, { token: w.owner.token })).body
    const soon = (await w.s.post(`${r.path}/milestones`, { title: 'soon', due_on: '2030-01-01T00:00:00Z' }, { token: w.owner.token })).body
    const list = await w.s.get(`${r.path}/milestones`)
    expect(list.body.map((m: any) => m.id)).toEqual([soon.id, late.id, none.id])
  })
})

describe('deleting a missing label or milestone', () => {
  let tracker: { id: number; path: string }
  let otherRepo: { id: number; path: string }
  let otherLabel = 0
  let otherMilestone = 0
  beforeAll(async () => {
    tracker = await w.repo('tracker')
    otherRepo = await w.repo('other')
    otherLabel = (await w.s.post(`${otherRepo.path}/labels`, { name: 'elsewhere', color: '#00ff00' }, { token: w.owner.token })).body.id
    otherMilestone = (await w.s.post(`${otherRepo.path}/milestones`, { title: 'elsewhere' }, { token: w.owner.token })).body.id
  })

  test('label: 404 for an unknown id, a non-numeric one, one of another repository, and a second delete', async () => {
    for (const id of ['999999', 'abc', String(otherLabel)]) {
      const res = await w.s.del(`${tracker.path}/labels/${id}`, undefined, { token: w.owner.token })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ message: "The target couldn't be found.", url: expect.any(String) })
    }
    expect((await w.s.get(`${otherRepo.path}/labels/${otherLabel}`)).status).toBe(200)
    const own = (await w.s.post(`${tracker.path}/labels`, { name: 'mine', color: '#0000ff' }, { token: w.owner.token })).body.id
    expect((await w.s.del(`${tracker.path}/labels/${own}`, undefined, { token: w.owner.token })).status).toBe(204)
    expect((await w.s.del(`${tracker.path}/labels/${own}`, undefined, { token: w.owner.token })).status).toBe(404)
  })

  test('milestone: 404 for an unknown id or title, one of another repository, and a second delete', async () => {
    for (const id of ['999999', 'no-such-title', String(otherMilestone)]) {
      const res = await w.s.del(`${tracker.path}/milestones/${id}`, undefined, { token: w.owner.token })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ message: "The target couldn't be found.", url: expect.any(String) })
    }
    expect((await w.s.get(`${otherRepo.path}/milestones/${otherMilestone}`)).status).toBe(200)
    const own = (await w.s.post(`${tracker.path}/milestones`, { title: 'mine' }, { token: w.owner.token })).body.id
    expect((await w.s.del(`${tracker.path}/milestones/${own}`, undefined, { token: w.owner.token })).status).toBe(204)
    expect((await w.s.del(`${tracker.path}/milestones/${own}`, undefined, { token: w.owner.token })).status).toBe(404)
  })
})
