import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { comments, issues } from '../src/db/schema'
import { startTrackerWorld, type TrackerWorld } from './issue-fixtures'

let w: TrackerWorld
let repo: { id: number; path: string }
let priv: { id: number; path: string }
beforeAll(async () => {
  w = await startTrackerWorld()
  repo = await w.repo('talk')
  priv = await w.repo('hush', { private: true })
  await w.s.post(`${repo.path}/issues`, { title: 'one' }, { token: w.owner.token })
  await w.s.post(`${repo.path}/issues`, { title: 'two' }, { token: w.owner.token })
  await w.s.post(`${priv.path}/issues`, { title: 'hidden' }, { token: w.owner.token })
})
afterAll(() => w.s.stop())

const numComments = async (index: number) =>
  (await w.s.deps.db
    .select()
    .from(issues))
    .find((i) => i.repoId === repo.id && i.index === index)!.numComments
const comment = (index: number, body: string, token: string) => w.s.post(`${repo.path}/issues/${index}/comments`, { body }, { token })

describe('comments', () => {
  test('anyone who can read comments; the record and the count', async () => {
    const r = await comment(1, 'Looks good', w.outsider.token)
    expect(r.status).toBe(201)
    const base = w.s.config.baseUrl
    expect(r.body).toMatchObject({
      body: 'Looks good',
      issue_url: `${base}owner/talk/issues/1`,
      pull_request_url: '',
      html_url: `${base}owner/talk/issues/1#issuecomment-${r.body.id}`,
      original_author: '',
    })
    expect(r.body.user.login).toBe('outsider')
    expect((await w.s.get(`${repo.path}/issues/1`)).body.comments).toBe(1)
    expect((await comment(1, 'x', '')).status).toBe(401)
    expect((await w.s.post(`${repo.path}/issues/1/comments`, { body: 'anon' })).status).toBe(401)
  })

  test('bad comments: 422 for an empty body, 404 for an unknown issue; nothing stored', async () => {
    const before = await numComments(1)
    expect((await comment(1, '', w.owner.token)).status).toBe(422)
    expect((await comment(1, '  ', w.owner.token)).status).toBe(422)
    expect((await w.s.post(`${repo.path}/issues/1/comments`, {}, { token: w.owner.token })).status).toBe(422)
    expect((await comment(99, 'x', w.owner.token)).status).toBe(404)
    expect(await numComments(1)).toBe(before)
  })

  test('private repository: comments are 404 to outsiders, open to collaborators', async () => {
    expect((await w.s.post(`${priv.path}/issues/1/comments`, { body: 'x' }, { token: w.outsider.token })).status).toBe(404)
    expect((await w.s.get(`${priv.path}/issues/1/comments`, { token: w.outsider.token })).status).toBe(404)
    expect((await w.s.get(`${priv.path}/issues/comments`)).status).toBe(404)
    expect((await w.s.post(`${priv.path}/issues/1/comments`, { body: 'ok' }, { token: w.reader.token })).status).toBe(201)
    expect((await w.s.get(`${priv.path}/issues/1/comments`, { token: w.reader.token })).body).toHaveLength(1)
  })

  test('issue comments under both spellings, oldest first, with since / string', async () => {
    await comment(2, 'first', w.owner.token)
    await comment(2, 'second', w.writer.token)
    const old = (await w.s.deps.db.select().from(comments)).find((c) => c.content === 'first')!
    await w.s.deps.db.update(comments).set({ createdUnix: 1_500_000_000, updatedUnix: 1_500_000_000 }).where(eq(comments.id, old.id))
    for (const path of [`${repo.path}/issues/2/comments`, `${repo.path}/issue/2/comments`]) {
      const all = await w.s.get(path)
      expect(all.status).toBe(200)
      expect(all.body.map((c: any) => c.body)).toEqual(['first', 'second'])
      const since = await w.s.get(`${path}?since=2020-01-01T00:00:00Z`)
      expect(since.body.map((c: any) => c.body)).toEqual(['second'])
      const seedName = await w.s.get(`${path}?string=2020-01-01T00:00:00Z`)
      expect(seedName.body.map((c: any) => c.body)).toEqual(['second'])
      expect((await w.s.get(`${path}?since=yesterday`)).status).toBe(422)
    }
    expect((await w.s.get(`${repo.path}/issues/77/comments`)).status).toBe(404)
  })

  test('all comments of a repository, with since and paging', async () => {
    const all = await w.s.get(`${repo.path}/issues/comments`)
    expect(all.status).toBe(200)
    expect(all.body.map((c: any) => c.body)).toEqual(['first', 'Looks good', 'second'])
    expect(all.headers.get('x-total-count')).toBe('3')
    const since = await w.s.get(`${repo.path}/issues/comments?string=2020-01-01T00:00:00Z`)
    expect(since.body.map((c: any) => c.body)).toEqual(['Looks good', 'second'])
    const page = await w.s.get(`${repo.path}/issues/comments?limit=2&page=2`)
    expect(page.body.map((c: any) => c.body)).toEqual(['second'])
    expect(page.headers.get('link')).toContain('rel="prev"')
  })

  test('edit: the author or a repository admin, under Gitea’s, the seed’s and the long path', async () => {
    const c = (await comment(1, 'typo', w.reader.token)).body
    const paths = [`${repo.path}/issues/comments/${c.id}`, `${repo.path}/comments/${c.id}`, `${repo.path}/issues/1/comments/${c.id}`]
    for (const [i, path] of paths.entries()) {
      const byAuthor = await w.s.patch(path, { body: `fixed ${i}` }, { token: w.reader.token })
      expect(byAuthor.status).toBe(200)
      expect(byAuthor.body.body).toBe(`fixed ${i}`)
      expect((await w.s.patch(path, { body: 'nope' }, { token: w.writer.token })).status).toBe(403)
      expect((await w.s.patch(path, { body: 'nope' }, { token: w.outsider.token })).status).toBe(403)
      expect((await w.s.patch(path, { body: 'nope' })).status).toBe(401)
      expect((await w.s.patch(path, { body: `admin ${i}` }, { token: w.admin.token })).status).toBe(200)
      expect((await w.s.patch(path, { body: '' }, { token: w.admin.token })).status).toBe(422)
    }
    const stored = (await w.s.deps.db.select().from(comments).where(eq(comments.id, c.id)))[0]!
    expect(stored.content).toBe('admin 2')
    expect((await w.s.patch(`${repo.path}/issues/comments/999999`, { body: 'x' }, { token: w.owner.token })).status).toBe(404)
    // The long path checks that the comment is on that issue.
    expect((await w.s.patch(`${repo.path}/issues/2/comments/${c.id}`, { body: 'x' }, { token: w.owner.token })).status).toBe(404)
    // A comment of another repository is not reachable through this one.
    const elsewhere = (await w.s.post(`${priv.path}/issues/1/comments`, { body: 'private' }, { token: w.owner.token })).body
    expect((await w.s.patch(`${repo.path}/issues/comments/${elsewhere.id}`, { body: 'x' }, { token: w.owner.token })).status).toBe(404)
  })

  test('delete under all three paths keeps the count right; others get 403', async () => {
    const made = []
    for (let i = 0; i < 3; i++) made.push((await comment(1, `bye ${i}`, w.reader.token)).body)
    const before = await numComments(1)
    const paths = [`${repo.path}/issues/comments/${made[0].id}`, `${repo.path}/comments/${made[1].id}`, `${repo.path}/issues/1/comments/${made[2].id}`]
    for (const path of paths) {
      expect((await w.s.del(path, undefined, { token: w.writer.token })).status).toBe(403)
      expect((await w.s.del(path)).status).toBe(401)
    }
    expect((await w.s.del(paths[0]!, undefined, { token: w.reader.token })).status).toBe(204)
    expect((await w.s.del(paths[1]!, undefined, { token: w.admin.token })).status).toBe(204)
    expect((await w.s.del(paths[2]!, undefined, { token: w.owner.token })).status).toBe(204)
    expect(await numComments(1)).toBe(before - 3)
    expect((await w.s.get(`${repo.path}/issues/1`)).body.comments).toBe(before - 3)
    expect((await w.s.del(paths[0]!, undefined, { token: w.owner.token })).status).toBe(404)
  })

  test('one comment by id (Gitea’s GetIssueComment): its record to readers; 404 elsewhere, unknown or hidden; 204 for a timeline event', async () => {
    const c = (await comment(1, 'read me', w.reader.token)).body
    const one = await w.s.get(`${repo.path}/issues/comments/${c.id}`)
    expect(one.status).toBe(200)
    expect(one.body).toEqual((await w.s.get(`${repo.path}/issues/1/comments`)).body.find((x: any) => x.id === c.id))
    expect(one.body).toMatchObject({ id: c.id, body: 'read me', user: { login: 'reader' } })
    // The record answered at creation (made from what the creation knows, convert/issue.ts newCommentToApi) is the one read back, as its poster sees it.
    expect((await w.s.get(`${repo.path}/issues/comments/${c.id}`, { token: w.reader.token })).body).toEqual(c)
    expect((await w.s.get(`${repo.path}/issues/comments/999999`)).status).toBe(404)
    expect((await w.s.get(`${repo.path}/issues/comments/abc`)).status).toBeGreaterThanOrEqual(400)
    const hidden = (await w.s.post(`${priv.path}/issues/1/comments`, { body: 'private' }, { token: w.owner.token })).body
    expect((await w.s.get(`${repo.path}/issues/comments/${hidden.id}`)).status).toBe(404)
    expect((await w.s.get(`${priv.path}/issues/comments/${hidden.id}`, { token: w.outsider.token })).status).toBe(404)
    expect((await w.s.get(`${priv.path}/issues/comments/${hidden.id}`, { token: w.owner.token })).body.body).toBe('private')
    const i = (await w.s.post(`${repo.path}/issues`, { title: 'timed one' }, { token: w.owner.token })).body
    expect((await w.s.post(`${repo.path}/issues/${i.number}/times`, { time: 5 }, { token: w.owner.token })).status).toBe(200)
    const event = (await w.s.deps.db.select().from(comments).where(eq(comments.issueId, i.id)))[0]!
    expect(event.type).toBeGreaterThan(0)
    expect((await w.s.get(`${repo.path}/issues/comments/${event.id}`)).status).toBe(204)
  })

  test('timeline events are not listed and cannot be edited', async () => {
    const t = await w.s.post(`${repo.path}/issues/2/times`, { time: 30 }, { token: w.owner.token })
    expect(t.status).toBe(200)
    const event = (await w.s.deps.db.select().from(comments)).find((c) => c.type !== 0)!
    expect(event).toBeDefined()
    const listed = await w.s.get(`${repo.path}/issues/2/comments`)
    expect(listed.body.every((c: any) => c.id !== event.id)).toBe(true)
    const edit = await w.s.patch(`${repo.path}/issues/comments/${event.id}`, { body: 'x' }, { token: w.owner.token })
    expect(edit.status).toBe(204)
    expect((await w.s.deps.db.select().from(comments).where(eq(comments.id, event.id)))[0]!.content).toBe(event.content)
  })

  test('deleting a timeline event through the comment routes answers 204 and keeps it', async () => {
    const i = (await w.s.post(`${repo.path}/issues`, { title: 'timed' }, { token: w.owner.token })).body
    expect((await w.s.post(`${repo.path}/issues/${i.number}/times`, { time: 60 }, { token: w.owner.token })).status).toBe(200)
    const event = (await w.s.deps.db.select().from(comments).where(eq(comments.issueId, i.id)))[0]!
    expect(event.type).toBeGreaterThan(0)
    expect((await w.s.del(`${repo.path}/issues/comments/${event.id}`, undefined, { token: w.owner.token })).status).toBe(204)
    expect((await w.s.deps.db.select().from(comments).where(eq(comments.id, event.id)))[0]).toBeDefined()
  })

  test('a bad since (or the seed’s string) is 422 on every comment list', async () => {
    const i = (await w.s.post(`${repo.path}/issues`, { title: 'c' }, { token: w.owner.token })).body
    for (const path of [`issues/${i.number}/comments`, `issue/${i.number}/comments`, 'issues/comments'])
      for (const name of ['since', 'string'])
        expect((await w.s.get(`${repo.path}/${path}?${name}=yesterday`)).status).toBe(422)
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
})
