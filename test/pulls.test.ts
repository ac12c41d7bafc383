import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { eventsOfRepo } from '../src/events/outbox'
import { repoPath } from '../src/git/run'
import { startPullChecker } from '../src/jobs/pull-checker'
import { contentMark } from './db-snapshot'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import { commitOn, forkWithBranch, pushedRepo } from './pull-fixtures'

let s: TestServer
let alice: TestUser
let bob: TestUser
let reader: TestUser
let checker: ReturnType<typeof startPullChecker>
const dirs: string[] = []
const tok = (u: TestUser) => ({ token: u.token })

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  reader = await s.user('reader')
  checker = startPullChecker(s.deps)
})
afterAll(async () => {
  await checker.stop()
  await s.stop()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

describe('pull requests: open, mergeability, head refs', () => {
  test('a branch pushed and proposed is mergeable; the PR is an issue of the shared index; refs/pull/N/head fetches', async () => {
    const repo = await pushedRepo(s, alice, 'proj', dirs)
    expect((await s.post('/repos/alice/proj/issues', { title: 'an issue first' }, tok(alice))).body.number).toBe(1)
    const head = await commitOn(repo.dir, 'feature', { 'b.txt': 'bee\n' }, 'add b', 'main')
    await gitOk(repo.dir, 'push', '-q', 'origin', 'feature')
    const r = await s.post('/repos/alice/proj/pulls', { head: 'feature', base: 'main', title: 'Add b', body: 'please' }, tok(alice))
    expect(r.status).toBe(201)
    const main = await gitOk(repo.dir, 'rev-parse', 'main')
    expect(r.body).toMatchObject({
      number: 2,
      title: 'Add b',
      body: 'please',
      state: 'open',
      mergeable: true,
      merged: false,
      merged_at: null,
      merge_commit_sha: null,
      merged_by: null,
      conflicted_files: [],
      merge_base: main,
      html_url: `${s.url}/alice/proj/pulls/2`,
      diff_url: `${s.url}/alice/proj/pulls/2.diff`,
      head: { label: 'feature', ref: 'feature', sha: head, repo_id: repo.id },
      base: { label: 'main', ref: 'main', sha: main, repo_id: repo.id },
    })
    expect(r.body.user.login).toBe('alice')
    // The caller's own access to the branch repositories, as Gitea's records carry it (alice owns it).
    expect(r.body.base.repo).toMatchObject({ full_name: 'alice/proj', permissions: { admin: true, push: true, pull: true } })
    // The issue side: pull_request set, in issue lists, told apart by type.
    const issue = await s.get('/repos/alice/proj/issues/2', tok(alice))
    expect(issue.body.pull_request).toEqual({ merged: false, merged_at: null, draft: false, html_url: `${s.url}/alice/proj/pulls/2` })
    expect(issue.body.html_url).toBe(`${s.url}/alice/proj/pulls/2`)
    expect((await s.get('/repos/alice/proj/issues?type=pulls')).body.map((i: any) => i.number)).toEqual([2])
    expect((await s.get('/repos/alice/proj/issues?type=issues')).body.map((i: any) => i.number)).toEqual([1])
    expect((await s.get('/repos/alice/proj/issues')).body.map((i: any) => i.number)).toEqual([2, 1])
    const repoRecord = (await s.get('/repos/alice/proj')).body
    expect(repoRecord).toMatchObject({ open_pr_counter: 1, open_issues_count: 1 })
    // The PR list and the single record agree.
    const list = await s.get('/repos/alice/proj/pulls')
    expect(list.status).toBe(200)
    expect(list.headers.get('x-total-count')).toBe('1')
    expect(list.body).toEqual([(await s.get('/repos/alice/proj/pulls/2')).body])
    expect((await s.get('/repos/alice/proj/pulls/1')).status).toBe(404)
    expect((await s.get('/repos/alice/proj/pulls/2/merge')).status).toBe(404)
    // refs/pull/2/head is in the base repository, and a clone fetches it.
    const clone = tempDir()
    dirs.push(clone)
    await gitOk(clone, 'init', '-q')
    await gitOk(clone, 'fetch', '-q', remoteUrl(s.url, 'alice/proj.git'), 'pull/2/head')
    expect(await gitOk(clone, 'rev-parse', 'FETCH_HEAD')).toBe(head)
    // The event: pull.opened on the issue, no issue.opened.
    const kinds = (await eventsOfRepo(s.deps.db, repo.id, 0, 500)).filter((e) => e.payload.index === 2)
    expect(kinds.map((e) => e.kind)).toEqual(['pull.opened'])
  })

  test('a conflict makes it unmergeable with its files; pushes re-check in the background and record synchronized', async () => {
    const repo = await pushedRepo(s, alice, 'clash', dirs)
    await commitOn(repo.dir, 'topic', { 'a.txt': 'topic\n', 'c.txt': 'c\n' }, 'topic edits a', 'main')
    await gitOk(repo.dir, 'push', '-q', 'origin', 'topic')
    const pr = await s.post('/repos/alice/clash/pulls', { head: 'topic', base: 'main', title: 'Topic' }, tok(alice))
    expect(pr.body.mergeable).toBe(true)
    // The base moves to a conflicting change: the push queues a check; the job runs it.
    await commitOn(repo.dir, 'main', { 'a.txt': 'main changed\n' }, 'main edits a')
    await gitOk(repo.dir, 'push', '-q', 'origin', 'main')
    await checker.drain()
    let got = (await s.get('/repos/alice/clash/pulls/1')).body
    expect(got).toMatchObject({ mergeable: false, conflicted_files: ['a.txt'] })
    expect(got.base.sha).toBe(await gitOk(repo.dir, 'rev-parse', 'main'))
    // The head moves (the conflict resolved): synchronized, with before and after, by the pusher.
    const before = got.head.sha
    await gitOk(repo.dir, 'checkout', '-q', 'topic')
    await gitOk(repo.dir, 'merge', '-q', '-X', 'theirs', '-m', 'merge main', 'main')
    const after = await gitOk(repo.dir, 'rev-parse', 'HEAD')
    const last = (await eventsOfRepo(s.deps.db, repo.id, 0, 500)).at(-1)!.id
    await gitOk(repo.dir, 'push', '-q', 'origin', 'topic')
    await checker.drain()
    got = (await s.get('/repos/alice/clash/pulls/1')).body
    expect(got).toMatchObject({ mergeable: true, conflicted_files: [], head: { sha: after } })
    const synced = (await eventsOfRepo(s.deps.db, repo.id, last, 500)).filter((e) => e.kind === 'pull.synchronized')
    expect(synced).toHaveLength(1)
    expect(synced[0]).toMatchObject({ actorId: alice.user.id, payload: { index: 1, before, after } })
    const clone = tempDir()
    dirs.push(clone)
    await gitOk(clone, 'init', '-q')
    await gitOk(clone, 'fetch', '-q', remoteUrl(s.url, 'alice/clash.git'), 'pull/1/head')
    expect(await gitOk(clone, 'rev-parse', 'FETCH_HEAD')).toBe(after)
  })

  test("a fork's branch proposed to the parent (owner:branch): head ref fetched into the parent", async () => {
    await pushedRepo(s, alice, 'up', dirs)
    const { dir: w, head } = await forkWithBranch(s, alice, 'up', bob, 'fix', dirs)
    // bob may read alice/up; he writes to his fork.
    const r = await s.post('/repos/alice/up/pulls', { head: 'bob:fix', base: 'main', title: 'Fix from a fork' }, tok(bob))
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ mergeable: true, head: { ref: 'fix', sha: head, repo: { full_name: 'bob/up', fork: true } } })
    expect(r.body.head.repo.parent).toMatchObject({ full_name: 'alice/up' })
    expect(await gitOk(repoPath(s.dataDir, 'alice', 'up'), 'rev-parse', 'refs/pull/1/head')).toBe(head)
    // A push to the fork's branch re-checks the parent's pull request.
    const next = await commitOn(w, 'fix', { 'fix.txt': 'fixed again\n' }, 'bob again')
    await gitOk(w, 'push', '-q', 'origin', 'fix')
    await checker.drain()
    expect((await s.get('/repos/alice/up/pulls/1')).body.head.sha).toBe(next)
    expect(await gitOk(repoPath(s.dataDir, 'alice', 'up'), 'rev-parse', 'refs/pull/1/head')).toBe(next)
    // A second open pull request of the same head and base: 409, nothing stored.
    const mark = contentMark(s.deps.db)
    const before = await mark()
    const dup = await s.post('/repos/alice/up/pulls', { head: 'bob:fix', base: 'main', title: 'again' }, tok(bob))
    expect(dup.status).toBe(409)
    expect(dup.body.message).toContain('#1')
    expect(await mark()).toBe(before)
  })

  test('bad input: unknown branches, head equal to base, unknown fork owner, no write on head, anonymous — clear 4xx, nothing stored', async () => {
    const repo = await pushedRepo(s, alice, 'strict', dirs)
    await commitOn(repo.dir, 'side', { 's.txt': 's\n' }, 'side', 'main')
    await gitOk(repo.dir, 'push', '-q', 'origin', 'side')
    expect((await s.put('/repos/alice/strict/collaborators/reader', { permission: 'read' }, tok(alice))).status).toBe(204)
    const mark = contentMark(s.deps.db)
    const before = await mark()
    const tries: [unknown, number, TestUser | null][] = [
      [{ head: 'nope', base: 'main', title: 't' }, 404, alice],
      [{ head: 'side', base: 'nope', title: 't' }, 404, alice],
      [{ head: 'main', base: 'main', title: 't' }, 422, alice],
      [{ head: 'alice:main', base: 'main', title: 't' }, 422, alice],
      [{ head: 'ghost:side', base: 'main', title: 't' }, 404, alice],
      [{ head: 'bob:side', base: 'main', title: 't' }, 404, alice],
      [{ head: '--upload-pack=x', base: 'main', title: 't' }, 404, alice],
      [{ head: 'side', base: 'main', title: '' }, 422, alice],
      [{ head: 'side', base: 'main', title: 't' }, 404, reader],
      [{ head: 'side', base: 'main', title: 't' }, 401, null],
      [{ head: 'side', base: 'main' }, 422, alice],
    ]
    for (const [body, status, who] of tries) {
      const r = await s.post('/repos/alice/strict/pulls', body, who ? tok(who) : {})
      expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), status])
      expect(typeof r.body.message).toBe('string')
    }
    expect(await mark()).toBe(before)
    expect((await s.get('/repos/alice/strict/pulls?state=all')).body).toEqual([])
  })

  test('list filters and sorts, edit (201) with labels, base, state; merged state is kept', async () => {
    const repo = await pushedRepo(s, alice, 'lists', dirs)
    for (const b of ['b1', 'b2', 'b3']) {
      await commitOn(repo.dir, b, { [`${b}.txt`]: b }, b, 'main')
      await gitOk(repo.dir, 'push', '-q', 'origin', b)
    }
    await commitOn(repo.dir, 'dev', { 'dev.txt': 'dev' }, 'dev', 'main')
    await gitOk(repo.dir, 'push', '-q', 'origin', 'dev')
    const label = (await s.post('/repos/alice/lists/labels', { name: 'bug', color: '#ff0000' }, tok(alice))).body
    const milestone = (await s.post('/repos/alice/lists/milestones', { title: 'v1' }, tok(alice))).body
    for (const b of ['b1', 'b2', 'b3'])
      expect((await s.post('/repos/alice/lists/pulls', { head: b, base: 'main', title: `PR ${b}`, labels: b === 'b2' ? [label.id, 9999] : [] }, tok(alice))).status).toBe(201)
    expect((await s.get('/repos/alice/lists/pulls')).body.map((p: any) => p.number)).toEqual([3, 2, 1])
    expect((await s.get('/repos/alice/lists/pulls?sort=oldest')).body.map((p: any) => p.number)).toEqual([1, 2, 3])
    expect((await s.get(`/repos/alice/lists/pulls?labels=${label.id}`)).body.map((p: any) => p.number)).toEqual([2])
    expect((await s.get(`/repos/alice/lists/pulls?labels=${label.id},${label.id + 1}`)).body).toEqual([])
    const paged = await s.get('/repos/alice/lists/pulls?limit=2&page=2')
    expect(paged.body.map((p: any) => p.number)).toEqual([1])
    expect(paged.headers.get('x-total-count')).toBe('3')
    expect(paged.headers.get('link')).toContain('rel="first"')

    const edited = await s.patch('/repos/alice/lists/pulls/1', { title: 'PR one', milestone: milestone.id, labels: [label.id], base: 'dev' }, tok(alice))
    expect(edited.status).toBe(201)
    expect(edited.body).toMatchObject({ title: 'PR one', milestone: { id: milestone.id }, labels: [{ id: label.id }], base: { ref: 'dev' } })
    expect((await s.get(`/repos/alice/lists/pulls?milestone=${milestone.id}`)).body.map((p: any) => p.number)).toEqual([1])
    const closed = await s.patch('/repos/alice/lists/pulls/3', { state: 'closed' }, tok(alice))
    expect(closed.body.state).toBe('closed')
    expect((await s.get('/repos/alice/lists/pulls?state=closed')).body.map((p: any) => p.number)).toEqual([3])
    expect((await s.get('/repos/alice/lists')).body.open_pr_counter).toBe(2)
    const events = (await eventsOfRepo(s.deps.db, repo.id, 0, 500)).filter((e) => e.kind.startsWith('issue.') && e.payload.index !== undefined)
    expect(events.map((e) => [e.kind, e.payload.isPull])).toEqual(
      expect.arrayContaining([
        ['issue.edited', true],
        ['issue.milestoned', true],
        ['issue.label_updated', true],
        ['issue.closed', true],
      ]),
    )
    expect(events.find((e) => e.kind === 'issue.edited' && (e.payload.changes as any)?.ref)?.payload.changes).toEqual({ ref: { from: 'main' } })
    // Reopening while another open pull request joins the same head and base: 409.
    expect((await s.post('/repos/alice/lists/pulls', { head: 'b3', base: 'main', title: 'again' }, tok(alice))).status).toBe(201)
    expect((await s.patch('/repos/alice/lists/pulls/3', { state: 'open' }, tok(alice))).status).toBe(409)
    // A refused edit changes nothing, its labels included.
    const eventsBefore = (await eventsOfRepo(s.deps.db, repo.id, 0, 500)).length
    expect((await s.patch('/repos/alice/lists/pulls/3', { state: 'open', labels: [label.id] }, tok(alice))).status).toBe(409)
    expect((await eventsOfRepo(s.deps.db, repo.id, 0, 500)).length).toBe(eventsBefore)
    expect((await s.get('/repos/alice/lists/pulls/3')).body.labels).toEqual([])
    // Another user may not edit; a reader's edit of someone else's pull request: 403.
    expect((await s.patch('/repos/alice/lists/pulls/1', { title: 'x' }, tok(bob))).status).toBe(403)
  })
})

/*
 * The list of pull requests is answered from pages made once (records built, checked against
 * the schema and serialised) while the database is unchanged: these show that each viewer gets
 * its own records, that every write is seen at once, and that the headers are each request's.
 */
/** A repository of alice's with `n` pull requests (#1 … #n, one branch each). */
async function repoWithPulls(name: string, n: number, opts: { private?: boolean } = {}) {
  const repo = await pushedRepo(s, alice, name, dirs)
  if (opts.private) expect((await s.patch(`/repos/alice/${name}`, { private: true }, tok(alice))).status).toBe(200)
  for (let i = 1; i <= n; i++) {
    await commitOn(repo.dir, `b${i}`, { [`b${i}.txt`]: `${i}\n` }, `b${i}`, 'main')
    await gitOk(repo.dir, 'push', '-q', 'origin', `b${i}`)
    expect((await s.post(`/repos/alice/${name}/pulls`, { head: `b${i}`, base: 'main', title: `PR ${i}` }, tok(alice))).status).toBe(201)
  }
  return repo
}

describe('pull request list pages', () => {
  test('records are those of a single read (checked against the schema); JSON content type', async () => {
    await repoWithPulls('shape', 2)
    const list = await s.get('/repos/alice/shape/pulls', tok(alice))
    expect(list.status).toBe(200)
    expect(list.headers.get('content-type')).toStartWith('application/json')
    const again = await s.get('/repos/alice/shape/pulls', tok(alice))
    expect(again.text).toBe(list.text)
    for (const record of list.body) expect(record).toEqual((await s.get(`/repos/alice/shape/pulls/${record.number}`, tok(alice))).body)
  })

  test('each viewer gets its own records, whoever read the page first', async () => {
    await repoWithPulls('viewers', 1)
    const me = (await s.get('/user', tok(alice))).body
    const email = (list: { text: string; body: any[] }) => list.body[0].user.email
    // alice first: her own address; then anonymous must not get it (a no-reply address instead).
    const own = await s.get('/repos/alice/viewers/pulls')
    expect(email(await s.get('/repos/alice/viewers/pulls', tok(alice)))).toBe(me.email)
    const anonymous = await s.get('/repos/alice/viewers/pulls')
    expect(anonymous.status).toBe(200)
    expect(anonymous.text).toBe(own.text)
    expect(anonymous.text).not.toContain(me.email)
    expect(email(await s.get('/repos/alice/viewers/pulls', tok(alice)))).toBe(me.email)

    // A private repository: its reader-to-be sees nothing after alice's read fills the page, then everything once invited.
    await repoWithPulls('hidden', 1, { private: true })
    expect((await s.get('/repos/alice/hidden/pulls', tok(alice))).body).toHaveLength(1)
    expect((await s.get('/repos/alice/hidden/pulls', tok(bob))).status).toBe(404)
    expect((await s.get('/repos/alice/hidden/pulls')).status).toBe(404)
    expect((await s.put('/repos/alice/hidden/collaborators/bob', { permission: 'read' }, tok(alice))).status).toBe(204)
    const bobs = await s.get('/repos/alice/hidden/pulls', tok(bob))
    expect(bobs.body.map((p: any) => [p.number, p.base.repo.private, p.base.repo.permissions])).toEqual([[1, true, { admin: false, push: false, pull: true }]])
  })

  test('every write is seen by the next read: edits, closing, a renamed label', async () => {
    await repoWithPulls('writes', 3)
    const open = async () => s.get('/repos/alice/writes/pulls?state=open', tok(bob))
    let list = await open()
    expect(list.body.map((p: any) => [p.number, p.title])).toEqual([
      [3, 'PR 3'],
      [2, 'PR 2'],
      [1, 'PR 1'],
    ])
    expect(list.headers.get('x-total-count')).toBe('3')
    expect((await s.patch('/repos/alice/writes/pulls/2', { title: 'Second' }, tok(alice))).status).toBe(201)
    expect((await open()).body.map((p: any) => p.title)).toEqual(['PR 3', 'Second', 'PR 1'])
    expect((await s.patch('/repos/alice/writes/pulls/3', { state: 'closed' }, tok(alice))).status).toBe(201)
    list = await open()
    expect(list.body.map((p: any) => p.number)).toEqual([2, 1])
    expect(list.headers.get('x-total-count')).toBe('2')
    expect((await s.get('/repos/alice/writes/pulls?state=closed', tok(bob))).body.map((p: any) => p.number)).toEqual([3])
    // A change that is not the pull request's own (its label's name) shows too.
    const label = (await s.post('/repos/alice/writes/labels', { name: 'bug', color: '#00ff00' }, tok(alice))).body
    expect((await s.post('/repos/alice/writes/issues/1/labels', { labels: [label.id] }, tok(alice))).status).toBe(200)
    expect((await open()).body.find((p: any) => p.number === 1).labels.map((l: any) => l.name)).toEqual(['bug'])
    expect((await s.patch(`/repos/alice/writes/labels/${label.id}`, { name: 'defect' }, tok(alice))).status).toBe(200)
    expect((await open()).body.find((p: any) => p.number === 1).labels.map((l: any) => l.name)).toEqual(['defect'])
  })

  test('X-Total-Count and Link are each request’s, also when the page is already made', async () => {
    await repoWithPulls('links', 3)
    const base = `${s.url}/api/v1/repos/alice/links/pulls`
    for (let round = 0; round < 2; round++) {
      const middle = await s.get('/repos/alice/links/pulls?state=open&limit=1&page=2', tok(alice))
      expect(middle.body.map((p: any) => p.number)).toEqual([2])
      expect(middle.headers.get('x-total-count')).toBe('3')
      expect(middle.headers.get('link')).toBe(
        [
          `<${base}?state=open&limit=1&page=3>; rel="next"`,
          `<${base}?state=open&limit=1&page=3>; rel="last"`,
          `<${base}?state=open&limit=1&page=1>; rel="first"`,
          `<${base}?state=open&limit=1&page=1>; rel="prev"`,
        ].join(','),
      )
      // The same page asked with the parameters in another order: its own links keep that order.
      const reordered = await s.get('/repos/alice/links/pulls?page=2&limit=1&state=open', tok(alice))
      expect(reordered.text).toBe(middle.text)
      expect(reordered.headers.get('link')).toContain(`<${base}?page=3&limit=1&state=open>; rel="next"`)
      const last = await s.get('/repos/alice/links/pulls?limit=1&page=3', tok(alice))
      expect(last.headers.get('x-total-count')).toBe('3')
      expect(last.headers.get('link')).toBe(`<${base}?limit=1&page=1>; rel="first",<${base}?limit=1&page=2>; rel="prev"`)
      const whole = await s.get('/repos/alice/links/pulls', tok(alice))
      expect(whole.headers.get('x-total-count')).toBe('3')
      expect(whole.headers.get('link')).toBeNull()
      expect(whole.headers.get('access-control-expose-headers')).toBe('Link, X-Total-Count')
    }
  })
})
