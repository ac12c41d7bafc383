import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { eq } from 'drizzle-orm'
import { giteaApi, type Api } from 'gitea-js'
import { issueDependencies, issues } from '../src/db/schema'
import { startTrackerWorld, type TrackerWorld } from './issue-fixtures'
import { empty, fails, ok } from './gitea-calls'
import { commitOn, pushedRepo } from './pull-fixtures'
import { gitOk } from './git-fixture'

let w: TrackerWorld
let asOwner: Api<unknown>
let asAdmin: Api<unknown>
let asWriter: Api<unknown>
let asReader: Api<unknown>
let asOutsider: Api<unknown>
const dirs: string[] = []

beforeAll(async () => {
  w = await startTrackerWorld()
  asOwner = giteaApi(w.s.url, { token: w.owner.token })
  asAdmin = giteaApi(w.s.url, { token: w.admin.token })
  asWriter = giteaApi(w.s.url, { token: w.writer.token })
  asReader = giteaApi(w.s.url, { token: w.reader.token })
  asOutsider = giteaApi(w.s.url, { token: w.outsider.token })
  await w.repo('deps')
  await w.repo('other')
  for (const title of ['one', 'two', 'three', 'four', 'five']) await ok(asWriter.repos.issueCreateIssue('owner', 'deps', { title }), 201)
  await ok(asWriter.repos.issueCreateIssue('owner', 'other', { title: 'elsewhere' }), 201)
  // A private repository of the outsider's, which none of the owner's people may read.
  expect((await w.s.post('/user/repos', { name: 'hidden', private: true }, { token: w.outsider.token })).status).toBe(201)
  await ok(asOutsider.repos.issueCreateIssue('outsider', 'hidden', { title: 'secret' }), 201)
})
afterAll(async () => {
  await w.s.stop()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

const meta = (index: number, repo = 'deps', owner = 'owner') => ({ owner, repo, index })
const numbers = (list: { number?: number }[]) => list.map((i) => i.number)

describe('issue dependencies', () => {
  test('add and list both ways; the answer is the path issue; records and timeline events on both', async () => {
    const made = await ok(asWriter.repos.issueCreateIssueDependencies('owner', 'deps', '1', meta(2)), 201)
    expect(made.number).toBe(1)
    // #3 blocks #1, said from #3's side.
    const blocking = await ok(asWriter.repos.issueCreateIssueBlocking('owner', 'deps', '3', meta(1)), 201)
    expect(blocking.number).toBe(3)
    expect(numbers(await ok(asReader.repos.issueListIssueDependencies('owner', 'deps', '1')))).toEqual([2, 3])
    expect(numbers(await ok(asReader.repos.issueListBlocks('owner', 'deps', '2')))).toEqual([1])
    expect(numbers(await ok(asReader.repos.issueListBlocks('owner', 'deps', '3')))).toEqual([1])
    expect(await ok(asReader.repos.issueListBlocks('owner', 'deps', '1'))).toEqual([])
    // Paged, with the total.
    const page = await w.s.get('/repos/owner/deps/issues/1/dependencies?limit=1&page=2', { token: w.reader.token })
    expect(page.status).toBe(200)
    expect(page.body.map((i: { number: number }) => i.number)).toEqual([3])
    expect(page.headers.get('x-total-count')).toBe('2')
    const timeline = await ok(asReader.repos.issueGetCommentsAndTimeline('owner', 'deps', 1))
    const added = timeline.filter((c) => c.type === 'add_dependency')
    expect(added.map((c) => c.dependent_issue?.number)).toEqual([2, 3])
    expect(added[0]!.user?.login).toBe('writer')
    const other = await ok(asReader.repos.issueGetCommentsAndTimeline('owner', 'deps', 2))
    expect(other.filter((c) => c.type === 'add_dependency').map((c) => c.dependent_issue?.number)).toEqual([1])
    const repo = await ok(asReader.repos.repoGet('owner', 'deps'))
    expect(repo.internal_tracker?.enable_issue_dependencies).toBe(true)
  })

  test('self, repeated and circular dependencies are refused with 422 and change nothing', async () => {
    const before = (await w.s.deps.db.select().from(issueDependencies)).length
    await fails(asWriter.repos.issueCreateIssueDependencies('owner', 'deps', '4', meta(4)), 422)
    await fails(asWriter.repos.issueCreateIssueDependencies('owner', 'deps', '1', meta(2)), 422)
    // 2 ← 1 exists: 1 → 2 → 1 would be a cycle, and so would one through a third issue.
    await fails(asWriter.repos.issueCreateIssueDependencies('owner', 'deps', '2', meta(1)), 422)
    await ok(asWriter.repos.issueCreateIssueDependencies('owner', 'deps', '2', meta(4)), 201)
    const cycle = await fails(asWriter.repos.issueCreateIssueDependencies('owner', 'deps', '4', meta(1)), 422)
    expect(cycle.message).toContain('circular')
    await ok(asWriter.repos.issueRemoveIssueDependencies('owner', 'deps', '2', meta(4)), 201)
    expect((await w.s.deps.db.select().from(issueDependencies)).length).toBe(before)
    // No index, or a bad one, is 422; an unknown issue 404.
    expect((await w.s.post('/repos/owner/deps/issues/1/dependencies', { owner: 'owner', repo: 'deps' }, { token: w.writer.token })).status).toBe(422)
    await fails(asWriter.repos.issueCreateIssueDependencies('owner', 'deps', '1', meta(99)), 404)
    await fails(asWriter.repos.issueCreateIssueDependencies('owner', 'deps', '99', meta(1)), 404)
  })

  test('across repositories: a readable one works, a private one the caller cannot read is 404', async () => {
    await ok(asWriter.repos.issueCreateIssueDependencies('owner', 'deps', '5', meta(1, 'other')), 201)
    expect(numbers(await ok(asReader.repos.issueListIssueDependencies('owner', 'deps', '5')))).toEqual([1])
    const blocked = await ok(asReader.repos.issueListBlocks('owner', 'other', '1'))
    expect(blocked.map((i) => [i.repository?.full_name, i.number])).toEqual([['owner/deps', 5]])
    await fails(asWriter.repos.issueCreateIssueDependencies('owner', 'deps', '5', meta(1, 'hidden', 'outsider')), 404)
    await fails(asWriter.repos.issueCreateIssueBlocking('owner', 'deps', '5', meta(1, 'hidden', 'outsider')), 404)
    await fails(asWriter.repos.issueCreateIssueDependencies('owner', 'deps', '5', meta(1, 'nothing', 'nobody')), 404)
    // The outsider may read owner/deps (public) but not write it; blocking its issue from theirs needs write there.
    await fails(asOutsider.repos.issueCreateIssueBlocking('outsider', 'hidden', '1', meta(4)), 403)
    // The outsider's own issue may depend on a public one; the owner's people do not see it in #4's list.
    await ok(asOutsider.repos.issueCreateIssueDependencies('outsider', 'hidden', '1', meta(4)), 201)
    expect(await ok(asReader.repos.issueListBlocks('owner', 'deps', '4'))).toEqual([])
    expect(numbers(await ok(asOutsider.repos.issueListBlocks('owner', 'deps', '4')))).toEqual([1])
    // Nor in #4's timeline: the event is there, its issue is not.
    const timeline = await ok(asReader.repos.issueGetCommentsAndTimeline('owner', 'deps', 4))
    // (#2's dependency on #4, added and removed before, is the first.)
    expect(timeline.filter((c) => c.type === 'add_dependency').map((c) => c.dependent_issue?.number ?? null)).toEqual([2, null])
    await ok(asOutsider.repos.issueRemoveIssueDependencies('outsider', 'hidden', '1', meta(4)), 201)
  })

  test('readers, the anonymous and strangers may not change dependencies', async () => {
    await fails(asReader.repos.issueCreateIssueDependencies('owner', 'deps', '4', meta(5)), 403)
    await fails(asReader.repos.issueRemoveIssueDependencies('owner', 'deps', '1', meta(2)), 403)
    await fails(asReader.repos.issueCreateIssueBlocking('owner', 'deps', '4', meta(5)), 403)
    expect((await w.s.post('/repos/owner/deps/issues/4/dependencies', meta(5))).status).toBe(401)
    await fails(asOutsider.repos.issueCreateIssueDependencies('outsider', 'hidden', '1', meta(1, 'hidden', 'outsider')), 422)
    expect(numbers(await ok(asReader.repos.issueListIssueDependencies('owner', 'deps', '1')))).toEqual([2, 3])
  })

  test('removing: both ways, 404 when there is none; remove_dependency in the timeline', async () => {
    await fails(asWriter.repos.issueRemoveIssueDependencies('owner', 'deps', '4', meta(5)), 404)
    const gone = await ok(asWriter.repos.issueRemoveIssueBlocking('owner', 'deps', '3', meta(1)), 201)
    expect(gone.number).toBe(3)
    expect(numbers(await ok(asReader.repos.issueListIssueDependencies('owner', 'deps', '1')))).toEqual([2])
    const timeline = await ok(asReader.repos.issueGetCommentsAndTimeline('owner', 'deps', 3))
    expect(timeline.map((c) => c.type).filter((t) => t?.endsWith('_dependency'))).toEqual(['add_dependency', 'remove_dependency'])
  })

  test('an issue with an open dependency cannot be closed (412, nothing changes); once it is closed, it can', async () => {
    const refused = await fails(asWriter.repos.issueEditIssue('owner', 'deps', 1, { state: 'closed', title: 'renamed' }), 412)
    expect(refused.message).toContain('open dependencies')
    const still = await ok(asReader.repos.issueGetIssue('owner', 'deps', 1))
    expect([still.state, still.title]).toEqual(['open', 'one'])
    // Reopening and other edits are not refused.
    await ok(asWriter.repos.issueEditIssue('owner', 'deps', 1, { body: 'edited' }), 201)
    await ok(asWriter.repos.issueEditIssue('owner', 'deps', 2, { state: 'closed' }), 201)
    expect((await ok(asWriter.repos.issueEditIssue('owner', 'deps', 1, { state: 'closed' }), 201)).state).toBe('closed')
    await ok(asWriter.repos.issueEditIssue('owner', 'deps', 2, { state: 'open' }), 201)
    await ok(asWriter.repos.issueEditIssue('owner', 'deps', 1, { state: 'open' }), 201)
  })

  test('a repository that turns dependencies off lists none and lets a blocked issue close', async () => {
    await ok(asOwner.repos.repoEdit('owner', 'deps', { internal_tracker: { enable_time_tracker: true, allow_only_contributors_to_track_time: true, enable_issue_dependencies: false } }))
    await fails(asReader.repos.issueListIssueDependencies('owner', 'deps', '1'), 404)
    await fails(asWriter.repos.issueCreateIssueDependencies('owner', 'deps', '4', meta(5)), 404)
    await ok(asWriter.repos.issueEditIssue('owner', 'deps', 1, { state: 'closed' }), 201)
    await ok(asWriter.repos.issueEditIssue('owner', 'deps', 1, { state: 'open' }), 201)
    await ok(asOwner.repos.repoEdit('owner', 'deps', { internal_tracker: { enable_time_tracker: true, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true } }))
  })

  test('a pull request blocked by an open issue cannot be merged (405); once the issue is closed it merges', async () => {
    const repo = await pushedRepo(w.s, w.owner, 'merging', dirs)
    await commitOn(repo.dir, 'feature', { 'f.txt': 'f\n' }, 'f', 'main')
    await gitOk(repo.dir, 'push', '-q', 'origin', 'feature')
    const pr = await ok(asOwner.repos.repoCreatePullRequest('owner', 'merging', { head: 'feature', base: 'main', title: 'Feature' }), 201)
    await ok(asOwner.repos.issueCreateIssue('owner', 'merging', { title: 'first this' }), 201)
    await ok(asOwner.repos.issueCreateIssueDependencies('owner', 'merging', String(pr.number), meta(2, 'merging')), 201)
    const refused = await fails(asOwner.repos.repoMergePullRequest('owner', 'merging', pr.number!, { Do: 'merge' }), 405)
    expect(refused.message).toContain('blocked')
    expect((await ok(asOwner.repos.repoGetPullRequest('owner', 'merging', pr.number!))).merged).toBe(false)
    // Closing the pull request is refused the same way.
    await fails(asOwner.repos.repoEditPullRequest('owner', 'merging', pr.number!, { state: 'closed' }), 412)
    await ok(asOwner.repos.issueEditIssue('owner', 'merging', 2, { state: 'closed' }), 201)
    const merged = await w.s.post(`/repos/owner/merging/pulls/${pr.number}/merge`, { Do: 'merge' }, { token: w.owner.token })
    expect(merged.status).toBe(200)
    expect((await ok(asOwner.repos.repoGetPullRequest('owner', 'merging', pr.number!))).merged).toBe(true)
  })

  test("a deleted branch closes its pull requests but a blocked one, which stays open (as Gitea's CloseBranchPulls)", async () => {
    const repo = await pushedRepo(w.s, w.owner, 'branchy', dirs)
    for (const branch of ['blocked', 'free']) {
      await commitOn(repo.dir, branch, { [`${branch}.txt`]: 'x\n' }, branch, 'main')
      await gitOk(repo.dir, 'push', '-q', 'origin', branch)
      await ok(asOwner.repos.repoCreatePullRequest('owner', 'branchy', { head: branch, base: 'main', title: branch }), 201)
    }
    await ok(asOwner.repos.issueCreateIssue('owner', 'branchy', { title: 'open blocker' }), 201)
    await ok(asOwner.repos.issueCreateIssueDependencies('owner', 'branchy', '1', meta(3, 'branchy')), 201)
    for (const branch of ['blocked', 'free']) expect((await w.s.del(`/repos/owner/branchy/branches/${branch}`, undefined, { token: w.owner.token })).status).toBe(204)
    expect((await ok(asReader.repos.issueGetIssue('owner', 'branchy', 1))).state).toBe('open')
    expect((await ok(asReader.repos.issueGetIssue('owner', 'branchy', 2))).state).toBe('closed')
  })

  test('deleting an issue deletes its dependencies both ways', async () => {
    await ok(asWriter.repos.issueCreateIssueDependencies('owner', 'deps', '4', meta(5)), 201)
    const five = (await w.s.deps.db.select().from(issues).where(eq(issues.title, 'five')))[0]!
    expect((await w.s.deps.db.select().from(issueDependencies).where(eq(issueDependencies.dependencyId, five.id))).length).toBe(1)
    expect((await w.s.deps.db.select().from(issueDependencies).where(eq(issueDependencies.issueId, five.id))).length).toBe(1)
    await empty(asAdmin.repos.issueDelete('owner', 'deps', 5))
    expect((await w.s.deps.db.select().from(issueDependencies).where(eq(issueDependencies.dependencyId, five.id))).length).toBe(0)
    expect((await w.s.deps.db.select().from(issueDependencies).where(eq(issueDependencies.issueId, five.id))).length).toBe(0)
    expect(await ok(asReader.repos.issueListIssueDependencies('owner', 'deps', '4'))).toEqual([])
    expect(await ok(asReader.repos.issueListBlocks('owner', 'other', '1'))).toEqual([])
  })
})

describe('pinned issues and pull requests', () => {
  const pinned = async () => (await ok(asReader.repos.repoListPinnedIssues('owner', 'other'))).map((i) => [i.title, i.pin_order])

  test('admins pin up to 3 issues, in order; the record carries pin_order; a fourth is 400', async () => {
    for (const title of ['b', 'c', 'd']) await ok(asWriter.repos.issueCreateIssue('owner', 'other', { title }), 201)
    expect(await ok(asReader.repos.repoNewPinAllowed('owner', 'other'))).toEqual({ issues: true, pull_requests: true })
    for (const index of [3, 1, 2]) await empty(asAdmin.repos.pinIssue('owner', 'other', index))
    // Pinning again changes nothing.
    await empty(asAdmin.repos.pinIssue('owner', 'other', 3))
    expect(await pinned()).toEqual([['c', 1], ['elsewhere', 2], ['b', 3]])
    expect((await ok(asReader.repos.issueGetIssue('owner', 'other', 3))).pin_order).toBe(1)
    expect((await ok(asReader.repos.issueGetIssue('owner', 'other', 4))).pin_order).toBe(0)
    await fails(asAdmin.repos.pinIssue('owner', 'other', 4), 400)
    expect(await ok(asReader.repos.repoNewPinAllowed('owner', 'other'))).toEqual({ issues: false, pull_requests: true })
    const timeline = await ok(asReader.repos.issueGetCommentsAndTimeline('owner', 'other', 3))
    expect(timeline.map((c) => c.type)).toContain('pin')
  })

  test('moving a pin shifts the ones between; past the end it goes last; below 1 is 422', async () => {
    await empty(asAdmin.repos.moveIssuePin('owner', 'other', 2, 1))
    expect(await pinned()).toEqual([['b', 1], ['c', 2], ['elsewhere', 3]])
    await empty(asAdmin.repos.moveIssuePin('owner', 'other', 2, 9))
    expect(await pinned()).toEqual([['c', 1], ['elsewhere', 2], ['b', 3]])
    await fails(asAdmin.repos.moveIssuePin('owner', 'other', 2, 0), 422)
    // An issue not pinned does not move (as Gitea).
    await empty(asAdmin.repos.moveIssuePin('owner', 'other', 4, 1))
    expect(await pinned()).toEqual([['c', 1], ['elsewhere', 2], ['b', 3]])
  })

  test('only repository admins pin, unpin and move', async () => {
    await fails(asWriter.repos.pinIssue('owner', 'other', 4), 403)
    await fails(asWriter.repos.unpinIssue('owner', 'other', 3), 403)
    await fails(asReader.repos.moveIssuePin('owner', 'other', 3, 2), 403)
    expect((await w.s.post('/repos/owner/other/issues/4/pin', undefined)).status).toBe(401)
    await fails(asAdmin.repos.pinIssue('owner', 'other', 99), 404)
    expect(await pinned()).toEqual([['c', 1], ['elsewhere', 2], ['b', 3]])
  })

  test('unpinning and deleting close the gap', async () => {
    await empty(asOwner.repos.unpinIssue('owner', 'other', 3))
    expect(await pinned()).toEqual([['elsewhere', 1], ['b', 2]])
    expect((await ok(asReader.repos.issueGetIssue('owner', 'other', 3))).pin_order).toBe(0)
    await empty(asOwner.repos.unpinIssue('owner', 'other', 3))
    await empty(asAdmin.repos.pinIssue('owner', 'other', 4))
    await empty(asAdmin.repos.issueDelete('owner', 'other', 1))
    expect(await pinned()).toEqual([['b', 1], ['d', 2]])
  })

  test('pull requests are pinned apart and listed as pull requests', async () => {
    const repo = await pushedRepo(w.s, w.owner, 'pinpulls', dirs)
    await commitOn(repo.dir, 'feature', { 'f.txt': 'f\n' }, 'f', 'main')
    await gitOk(repo.dir, 'push', '-q', 'origin', 'feature')
    const pr = await ok(asOwner.repos.repoCreatePullRequest('owner', 'pinpulls', { head: 'feature', base: 'main', title: 'Pinned pull' }), 201)
    await ok(asOwner.repos.issueCreateIssue('owner', 'pinpulls', { title: 'pinned issue' }), 201)
    await empty(asOwner.repos.pinIssue('owner', 'pinpulls', pr.number!))
    await empty(asOwner.repos.pinIssue('owner', 'pinpulls', 2))
    const pulls = await ok(asReader.repos.repoListPinnedPullRequests('owner', 'pinpulls'))
    expect(pulls.map((p) => [p.number, p.pin_order, p.head?.ref])).toEqual([[pr.number, 1, 'feature']])
    expect((await ok(asReader.repos.repoListPinnedIssues('owner', 'pinpulls'))).map((i) => [i.number, i.pin_order])).toEqual([[2, 1]])
  })
})
