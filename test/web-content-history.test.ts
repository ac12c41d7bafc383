import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'
import { lineDiff } from '../src/lib/line-diff'
import { and, desc, eq, isNull } from 'drizzle-orm'
import { issueContentHistory } from '../src/db/schema'

/**
 * Gitea's content history: every edit of an issue's description or of a comment keeps the text
 * (the first edit the original too, by its poster), the issue page marks an edited text and
 * links its history, which shows each version by whom and when with its lines removed and added;
 * for the issue's readers only.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, carol: TestUser
const { page, signIn } = webVisitors(() => s.url, async () => '')
const versions = (html: string) => [...html.matchAll(/aria-label="Version of [^"]*">\s*<header>[^]*?<\/header>/g)].length

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  expect((await s.post('/user/repos', { name: 'app', auto_init: true }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'hidden', private: true, auto_init: true }, { token: alice.token })).status).toBe(201)
  expect((await s.put('/repos/alice/app/collaborators/bob', { permission: 'write' }, { token: alice.token })).status).toBe(204)
})
afterAll(() => s.stop())

test('lines compared: kept, removed, added, in order; too long a comparison is refused, not worked through', () => {
  expect(lineDiff('a\nb\nc', 'a\nB\nc\nd')).toEqual([
    { op: ' ', text: 'a' },
    { op: '+', text: 'B' },
    { op: '-', text: 'b' },
    { op: ' ', text: 'c' },
    { op: '+', text: 'd' },
  ])
  expect(lineDiff('same', 'same')).toEqual([{ op: ' ', text: 'same' }])
  const many = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join('\n')
  expect(lineDiff(many(1000, 'x'), many(1000, 'y'))).toBeNull()
  expect(lineDiff(`${many(5000, 'x')}\nend`, `${many(5000, 'x')}\nEND`)).toHaveLength(5002)
})

test("a description edited twice: marked edited on the issue page; its history shows the original by its poster, then each edit by its editor, newest first", async () => {
  expect((await s.post('/repos/alice/app/issues', { title: 'Crash', body: 'It crashes.\nOn start.' }, { token: alice.token })).status).toBe(201)
  expect(await (await page('/alice/app/issues/1')).text()).not.toContain('/alice/app/issues/1/content-history')
  expect((await s.patch('/repos/alice/app/issues/1', { body: 'It crashes.\nOn start, always.' }, { token: bob.token })).status).toBe(201)
  expect((await s.patch('/repos/alice/app/issues/1', { body: 'It crashes.\nOn start, always.\n<script>x</script>' }, { token: alice.token })).status).toBe(201)
  // A title change alone keeps no version.
  expect((await s.patch('/repos/alice/app/issues/1', { title: 'Crash at start' }, { token: alice.token })).status).toBe(201)
  const issuePage = await (await page('/alice/app/issues/1')).text()
  expect(issuePage).toContain('href="/alice/app/issues/1/content-history"')
  expect(issuePage).toContain('Edited 2 times')

  const history = await (await page('/alice/app/issues/1/content-history')).text()
  expect(history).toContain('3 versions, newest first.')
  expect(versions(history)).toBe(3)
  const order = ['href="/alice"', 'href="/bob"', 'href="/alice"']
  const headers = [...history.matchAll(/<header>([^]*?)<\/header>/g)].map((m) => m[1]!).filter((h) => / (wrote|edited) /.test(h))
  expect(headers.map((h) => order.find((o) => h.includes(o)) ?? '')).toEqual(order)
  expect(headers.map((h) => (h.includes(' wrote ') ? 'wrote' : 'edited'))).toEqual(['edited', 'edited', 'wrote'])
  // Bob's edit: the line he changed, removed and added.
  expect(history).toContain('<span class="del">- On start.</span>')
  expect(history).toContain('<span class="add">+ On start, always.</span>')
  expect(history).not.toContain('<script>x')
  expect(history).toContain('&lt;script&gt;x&lt;/script&gt;')
})

test("a comment's history at ?comment_id=, a pull request's under /issues; unknown comments and hidden repositories are 404", async () => {
  const made = await s.post('/repos/alice/app/issues/1/comments', { body: 'first words' }, { token: bob.token })
  expect(made.status).toBe(201)
  const id = made.body.id
  expect((await s.patch(`/repos/alice/app/issues/comments/${id}`, { body: 'second words' }, { token: bob.token })).status).toBe(200)
  expect(await (await page('/alice/app/issues/1')).text()).toContain(`href="/alice/app/issues/1/content-history?comment_id=${id}"`)
  const history = await (await page(`/alice/app/issues/1/content-history?comment_id=${id}`)).text()
  expect(versions(history)).toBe(2)
  expect(history).toContain('<span class="del">- first words</span>')
  expect(history).toContain('<span class="add">+ second words</span>')
  // The description's own history is apart from its comments'.
  expect(versions(await (await page('/alice/app/issues/1/content-history')).text())).toBe(3)

  expect((await page('/alice/app/issues/1/content-history?comment_id=999999')).status).toBe(404)
  expect((await page('/alice/app/issues/1/content-history?comment_id=abc')).status).toBe(404)
  expect((await page('/alice/app/issues/99/content-history')).status).toBe(404)
  expect((await s.post('/repos/alice/hidden/issues', { title: 'private', body: 'a' }, { token: alice.token })).status).toBe(201)
  expect((await s.patch('/repos/alice/hidden/issues/1', { body: 'b' }, { token: alice.token })).status).toBe(201)
  expect((await page('/alice/hidden/issues/1/content-history', await signIn(carol))).status).toBe(404)
  expect(versions(await (await page('/alice/hidden/issues/1/content-history', await signIn(alice))).text())).toBe(2)
  // A pull request's description: its history under /issues, as Gitea addresses it.
  expect((await s.post('/repos/alice/app/contents/f.txt', { content: Buffer.from('f\n').toString('base64'), message: 'f', new_branch: 'feature' }, { token: alice.token })).status).toBe(201)
  const pull = await s.post('/repos/alice/app/pulls', { head: 'feature', base: 'main', title: 'Feature', body: 'draft text' }, { token: alice.token })
  expect(pull.status).toBe(201)
  expect((await s.patch(`/repos/alice/app/pulls/${pull.body.number}`, { body: 'final text' }, { token: alice.token })).status).toBe(201)
  expect(await (await page(`/alice/app/pulls/${pull.body.number}`)).text()).toContain(`href="/alice/app/issues/${pull.body.number}/content-history"`)
  const pullHistory = await (await page(`/alice/app/issues/${pull.body.number}/content-history`)).text()
  expect(pullHistory).toContain('<span class="add">+ final text</span>')
  expect(pullHistory).toContain(`href="/alice/app/pulls/${pull.body.number}"`)
  // A comment's deletion takes its history with it.
  expect((await s.del(`/repos/alice/app/issues/comments/${id}`, undefined, { token: bob.token })).status).toBe(204)
  expect((await page(`/alice/app/issues/1/content-history?comment_id=${id}`)).status).toBe(404)
})

test("a version's text taken out of the history: by the tracker's writers or the text's posters, never the newest; the version still counted", async () => {
  const { submit } = webVisitors(() => s.url, async () => '')
  const path = '/alice/app/issues/1/content-history'
  const idsOf = (html: string) => [...html.matchAll(/name="history_id" value="(\d+)"/g)].map((m) => m[1]!)
  // Readers who posted nothing here see no button and may not.
  const asCarol = await (await page(path, await signIn(carol))).text()
  expect(idsOf(asCarol)).toEqual([])
  const asBob = await (await page(path, await signIn(bob))).text()
  // Three versions: the newest has no button.
  const ids = idsOf(asBob)
  expect(ids).toHaveLength(2)
  const original = ids[ids.length - 1]!
  expect((await submit(carol, `${path}/soft-delete`, { history_id: original }, { from: path })).status).toBe(403)
  const deleted = await submit(bob, `${path}/soft-delete`, { history_id: original }, { from: path })
  expect([deleted.status, deleted.location]).toEqual([303, `${path}?done=version-deleted`])
  const after = await (await page(path)).text()
  expect(after).toContain('This version&#39;s text was deleted from the history.')
  expect(after).not.toContain('On start.</pre>')
  expect(after).toContain('3 versions, newest first.')
  // The newest is the text itself (422); an unknown version is 404.
  const issueId = (await s.get('/repos/alice/app/issues/1', { token: alice.token })).body.id
  const latestOfDescription = (
    await s.deps.db
      .select({ id: issueContentHistory.id })
      .from(issueContentHistory)
      .where(and(eq(issueContentHistory.issueId, issueId), isNull(issueContentHistory.commentId)))
      .orderBy(desc(issueContentHistory.editedUnix), desc(issueContentHistory.id))
      .limit(1)
  )[0]!.id
  expect((await submit(bob, `${path}/soft-delete`, { history_id: String(latestOfDescription) }, { from: path })).status).toBe(422)
  expect((await submit(bob, `${path}/soft-delete`, { history_id: '999999' }, { from: path })).status).toBe(404)

  // A comment's poster who only reads the repository takes an old version of it out.
  const made = await s.post('/repos/alice/app/issues/1/comments', { body: 'my phone is 555-0100' }, { token: carol.token })
  expect(made.status).toBe(201)
  expect((await s.patch(`/repos/alice/app/issues/comments/${made.body.id}`, { body: 'my phone is (removed)' }, { token: alice.token })).status).toBe(200)
  const commentPath = `${path}?comment_id=${made.body.id}`
  const carolIds = idsOf(await (await page(commentPath, await signIn(carol))).text())
  expect(carolIds).toHaveLength(1)
  expect((await submit(carol, `${path}/soft-delete`, { comment_id: String(made.body.id), history_id: carolIds[0]! }, { from: commentPath })).status).toBe(303)
  expect(await (await page(commentPath)).text()).not.toContain('555-0100')
})
