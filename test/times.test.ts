import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { collaborations, comments, repositories, trackedTimes } from '../src/db/schema'
import { startTrackerWorld, type TrackerWorld } from './issue-fixtures'
import { addCollaborator } from './access-fixtures'

let w: TrackerWorld
let repo: { id: number; path: string }
let priv: { id: number; path: string }
beforeAll(async () => {
  w = await startTrackerWorld()
  repo = await w.repo('hours')
  priv = await w.repo('quiet-hours', { private: true })
  await w.s.post(`${repo.path}/issues`, { title: 'by reader' }, { token: w.reader.token })
  // Only writers can be assigned (Gitea's CanBeAssigned): the outsider is assigned while a
  // writer, then loses that access; as an assignee they may still track time.
  await addCollaborator(w.s, repo.id, w.outsider, 2)
  await w.s.post(`${repo.path}/issues`, { title: 'assigned', assignees: ['outsider'] }, { token: w.owner.token })
  await w.s.deps.db.delete(collaborations).where(and(eq(collaborations.repoId, repo.id), eq(collaborations.userId, w.outsider.user.id)))
  await w.s.post(`${priv.path}/issues`, { title: 'private work' }, { token: w.owner.token })
})
afterAll(() => w.s.stop())

const timeCount = async () => (await w.s.deps.db.select().from(trackedTimes)).length
const setRepo = async (id: number, set: Partial<typeof repositories.$inferSelect>) =>
  await w.s.deps.db.update(repositories).set(set).where(eq(repositories.id, id))

describe('tracked time', () => {
  test('a writer adds time: 200 TrackedTime and a "time added" event', async () => {
    const r = await w.s.post(`${repo.path}/issues/1/times`, { time: 3600 }, { token: w.writer.token })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ time: 3600, user_id: w.writer.user.id, user_name: 'writer', issue_id: expect.any(Number) })
    expect(r.body.created).toMatch(/Z$/)
    const events = (await w.s.deps.db.select().from(comments)).filter((c) => c.type !== 0)
    expect(events).toHaveLength(1)
    expect(events[0]!.posterId).toBe(w.writer.user.id)
    expect((await w.s.get(`${repo.path}/issues/1`)).body.comments).toBe(0)
  })

  test('only contributors (writers, the poster, assignees) may add time when the repository says so', async () => {
    expect((await w.s.post(`${repo.path}/issues/1/times`, { time: 60 }, { token: w.reader.token })).status).toBe(200) // poster
    expect((await w.s.post(`${repo.path}/issues/2/times`, { time: 60 }, { token: w.outsider.token })).status).toBe(200) // assignee
    const before = await timeCount()
    expect((await w.s.post(`${repo.path}/issues/2/times`, { time: 60 }, { token: w.reader.token })).status).toBe(403)
    expect((await w.s.post(`${repo.path}/issues/1/times`, { time: 60 }, { token: w.outsider.token })).status).toBe(403)
    expect((await w.s.post(`${repo.path}/issues/1/times`, { time: 60 })).status).toBe(401)
    expect((await w.s.post(`${priv.path}/issues/1/times`, { time: 60 }, { token: w.outsider.token })).status).toBe(404)
    expect(await timeCount()).toBe(before)
    await setRepo(repo.id, { allowOnlyContributorsToTrackTime: false })
    expect((await w.s.post(`${repo.path}/issues/2/times`, { time: 60 }, { token: w.reader.token })).status).toBe(200)
    await setRepo(repo.id, { allowOnlyContributorsToTrackTime: true })
  })

  test('non-positive or malformed time: 400/422, nothing recorded', async () => {
    const before = await timeCount()
    expect((await w.s.post(`${repo.path}/issues/1/times`, { time: 0 }, { token: w.owner.token })).status).toBe(400)
    expect((await w.s.post(`${repo.path}/issues/1/times`, { time: -5 }, { token: w.owner.token })).status).toBe(400)
    expect((await w.s.post(`${repo.path}/issues/1/times`, { time: 'lots' }, { token: w.owner.token })).status).toBe(422)
    expect((await w.s.post(`${repo.path}/issues/1/times`, {}, { token: w.owner.token })).status).toBe(422)
    expect((await w.s.post(`${repo.path}/issues/1/times`, { time: 5, created: 'today' }, { token: w.owner.token })).status).toBe(422)
    expect((await w.s.post(`${repo.path}/issues/99/times`, { time: 5 }, { token: w.owner.token })).status).toBe(404)
    expect((await w.s.post(`${repo.path}/issues/1/times`, { time: 5, user_name: 'owner' }, { token: w.writer.token })).status).toBe(403)
    expect(await timeCount()).toBe(before)
  })

  test('lists: the issue’s, the repository’s, one user’s in the repository, the caller’s own', async () => {
    const issue = await w.s.get(`${repo.path}/issues/1/times`)
    expect(issue.status).toBe(200)
    expect(issue.body.map((t: any) => [t.user_name, t.time])).toEqual([
      ['writer', 3600],
      ['reader', 60],
    ])
    const all = await w.s.get(`${repo.path}/times`)
    expect(all.body).toHaveLength(4)
    expect(all.headers.get('x-total-count')).toBe('4')
    const paged = await w.s.get(`${repo.path}/times?limit=3&page=2`)
    expect(paged.body).toHaveLength(1)
    expect(paged.headers.get('link')).toContain('rel="prev"')
    const readers = await w.s.get(`${repo.path}/times/reader`)
    expect(readers.body.map((t: any) => t.time)).toEqual([60, 60])
    expect(readers.body.every((t: any) => t.user_id === w.reader.user.id)).toBe(true)
    expect((await w.s.get(`${repo.path}/times/nobody-at-all`)).status).toBe(404)
    await w.s.post(`${priv.path}/issues/1/times`, { time: 900 }, { token: w.writer.token })
    const mine = await w.s.get('/user/times', { token: w.writer.token })
    expect(mine.status).toBe(200)
    expect(mine.body.map((t: any) => t.time)).toEqual([3600, 900])
    expect((await w.s.get('/user/times')).status).toBe(401)
    expect((await w.s.get(`${priv.path}/times`, { token: w.outsider.token })).status).toBe(404)
    expect((await w.s.get(`${priv.path}/issues/1/times`)).status).toBe(404)
    expect((await w.s.get(`${repo.path}/issues/99/times`)).status).toBe(404)
  })

  test('time tracking disabled: 400 "time tracking disabled" with Message too', async () => {
    await setRepo(repo.id, { enableTimeTracker: false })
    const before = await timeCount()
    for (const r of [
      await w.s.post(`${repo.path}/issues/1/times`, { time: 60 }, { token: w.owner.token }),
      await w.s.get(`${repo.path}/times`),
      await w.s.get(`${repo.path}/times/writer`),
    ]) {
      expect(r.status).toBe(400)
      expect(r.body).toMatchObject({ message: 'time tracking disabled', Message: 'time tracking disabled' })
    }
    expect(await timeCount()).toBe(before)
    // The issue's own list answers 404 (Gitea's ListTrackedTimes).
    expect((await w.s.get(`${repo.path}/issues/1/times`)).status).toBe(404)
    await setRepo(repo.id, { enableTimeTracker: true })
  })

  test('time tracking off: the issue’s times are 404, the repository’s 400', async () => {
    const r = await w.repo('review-notimes')
    const i = (await w.s.post(`${r.path}/issues`, { title: 't' }, { token: w.owner.token })).body
    await w.s.deps.db.update(repositories).set({ enableTimeTracker: false }).where(eq(repositories.id, r.id))
    expect((await w.s.get(`${r.path}/issues/${i.number}/times`, { token: w.owner.token })).status).toBe(404)
    expect((await w.s.get(`${r.path}/times`, { token: w.owner.token })).status).toBe(400)
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
})

describe('deleting tracked time', () => {
  test('one record: its own user only (403 for others, repository admins too), 404 when not of the issue', async () => {
    const r = await w.repo('undo-hours')
    await w.s.post(`${r.path}/issues`, { title: 'one' }, { token: w.owner.token })
    await w.s.post(`${r.path}/issues`, { title: 'two' }, { token: w.owner.token })
    const mine = (await w.s.post(`${r.path}/issues/1/times`, { time: 90 }, { token: w.writer.token })).body
    const theirs = (await w.s.post(`${r.path}/issues/1/times`, { time: 30 }, { token: w.owner.token })).body
    expect((await w.s.del(`${r.path}/issues/1/times/${theirs.id}`, undefined, { token: w.writer.token })).status).toBe(403)
    expect((await w.s.del(`${r.path}/issues/1/times/${mine.id}`, undefined, { token: w.owner.token })).status).toBe(403)
    expect((await w.s.del(`${r.path}/issues/2/times/${mine.id}`, undefined, { token: w.writer.token })).status).toBe(404)
    expect((await w.s.del(`${r.path}/issues/1/times/999999`, undefined, { token: w.writer.token })).status).toBe(404)
    expect((await w.s.del(`${r.path}/issues/1/times/${mine.id}`)).status).toBe(401)
    expect((await w.s.del(`${r.path}/issues/1/times/${mine.id}`, undefined, { token: w.writer.token })).status).toBe(204)
    const left = (await w.s.get(`${r.path}/issues/1/times`, { token: w.owner.token })).body as { id: number }[]
    expect(left.map((t) => t.id)).toEqual([theirs.id])
    const timeline = (await w.s.get(`${r.path}/issues/1/timeline`)).body as { type: string; body: string; user: { login: string } }[]
    expect(timeline.find((e) => e.type === 'delete_time_manual')).toMatchObject({ body: '- 0:01:30', user: { login: 'writer' } })
  })

  test("reset: the caller's own times on the issue go, others' stay; readers of a contributors-only tracker 403; tracking off 400", async () => {
    const r = await w.repo('reset-hours')
    await w.s.post(`${r.path}/issues`, { title: 'one' }, { token: w.owner.token })
    for (const time of [60, 120]) await w.s.post(`${r.path}/issues/1/times`, { time }, { token: w.writer.token })
    await w.s.post(`${r.path}/issues/1/times`, { time: 5 }, { token: w.owner.token })
    expect((await w.s.del(`${r.path}/issues/1/times`, undefined, { token: w.reader.token })).status).toBe(403)
    expect((await w.s.del(`${r.path}/issues/1/times`, undefined, { token: w.writer.token })).status).toBe(204)
    const left = (await w.s.get(`${r.path}/issues/1/times`, { token: w.owner.token })).body as { user_name: string }[]
    expect(left.map((t) => t.user_name)).toEqual(['owner'])
    expect((await w.s.del(`${r.path}/issues/9/times`, undefined, { token: w.writer.token })).status).toBe(404)
    await setRepo(r.id, { enableTimeTracker: false })
    expect((await w.s.del(`${r.path}/issues/1/times`, undefined, { token: w.owner.token })).status).toBe(400)
    expect((await w.s.get(`${r.path}/issues/1/times`, { token: w.owner.token })).status).toBe(404)
  })
})
