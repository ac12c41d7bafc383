import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { events, notifications, repoTransfers, userBlocks, users } from '../src/db/schema'
import { notifyRound } from '../src/notify/consumer'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/**
 * Blocking (Gitea 1.23's /user/blocks and /orgs/{org}/blocks): the routes and their codes, what a
 * block undoes both ways, what it forbids afterwards (403, Gitea's answer to ErrBlockedUser), an
 * unblock giving it all back, and an organisation's blocks by its owners.
 */

let s: TestServer
let root: TestUser, alice: TestUser, bob: TestUser, carol: TestUser
const as = (u: TestUser) => ({ token: u.token })
const userRow = async (id: number) => (await s.deps.db.select().from(users).where(eq(users.id, id)))[0]!
const logins = (list: { login: string }[]) => list.map((u) => u.login)
/** Handles every event the outbox holds (what the notifier job does as events arrive). */
async function drain() {
  while ((await notifyRound(s.deps)) > 0) {}
}
/** Who has a notification thread of the issue, by id. */
const threadUsers = async (issueId: number) =>
  (await s.deps.db.select({ id: notifications.userId }).from(notifications).where(eq(notifications.issueId, issueId))).map((r) => r.id).sort((a, b) => a - b)

beforeAll(async () => {
  s = await startTestServer()
  root = await s.user('root', { admin: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  for (const [owner, name] of [
    [alice, 'pub'],
    [alice, 'trans'],
    [bob, 'bobs'],
    [carol, 'third'],
  ] as const)
    expect((await s.post('/user/repos', { name, auto_init: true }, as(owner))).status).toBe(201)
  // bob's fork of alice's repository, with a branch to ask a pull request for.
  expect((await s.post('/repos/alice/pub/forks', {}, as(bob))).status).toBe(202)
  const file = await s.post('/repos/bob/pub/contents/new.txt', { content: Buffer.from('new\n').toString('base64'), new_branch: 'mine' }, as(bob))
  expect(file.status).toBe(201)
  expect((await s.post('/orgs', { username: 'acme' }, as(alice))).status).toBe(201)
  expect((await s.post('/orgs/acme/repos', { name: 'tool', auto_init: true }, as(alice))).status).toBe(201)
})
afterAll(() => s.stop())

describe('the routes', () => {
  test('refusals: anonymous 401, unknown 404, oneself or an organisation 400, a long note 422; nothing written', async () => {
    expect((await s.get('/user/blocks')).status).toBe(401)
    expect((await s.put('/user/blocks/bob')).status).toBe(401)
    const unknown = await s.put('/user/blocks/nobody', undefined, as(alice))
    expect(unknown.status).toBe(404)
    expect(typeof unknown.body.message).toBe('string')
    expect((await s.get('/user/blocks/nobody', as(alice))).status).toBe(404)
    const self = await s.put('/user/blocks/alice', undefined, as(alice))
    expect(self.status).toBe(400)
    expect(self.body.message).toBe('cannot block the user')
    const org = await s.put('/user/blocks/acme', undefined, as(bob))
    expect(org.status).toBe(400)
    expect(org.body.message).toBe('cannot block an organization')
    expect((await s.put(`/user/blocks/bob?note=${'x'.repeat(256)}`, undefined, as(alice))).status).toBe(422)
    // Unblocking one not blocked is Gitea's ErrCanNotUnblock.
    expect((await s.del('/user/blocks/bob', undefined, as(alice))).status).toBe(400)
    expect(await s.deps.db.select().from(userBlocks)).toEqual([])
    const list = await s.get('/user/blocks', as(alice))
    expect(list.status).toBe(200)
    expect(list.body).toEqual([])
    expect(list.headers.get('x-total-count')).toBe('0')
    expect((await s.get('/user/blocks/bob', as(alice))).status).toBe(404)
  })
})

describe('a block', () => {
  let issueIndex: number
  let aliceIssueElsewhere: number
  let bobsIssueIndex: number, bobsCommentId: number
  test('undoes follows, stars, watches, assignments, collaborations and pending transfers, both ways', async () => {
    // Ties both ways.
    expect((await s.put('/user/following/alice', undefined, as(bob))).status).toBe(204)
    expect((await s.put('/user/following/bob', undefined, as(alice))).status).toBe(204)
    expect((await s.put('/user/starred/alice/pub', undefined, as(bob))).status).toBe(204)
    expect((await s.put('/repos/alice/pub/subscription', undefined, as(bob))).status).toBe(200)
    expect((await s.put('/user/starred/bob/bobs', undefined, as(alice))).status).toBe(204)
    expect((await s.put('/repos/alice/pub/collaborators/bob', { permission: 'write' }, as(alice))).status).toBe(204)
    expect((await s.put('/repos/bob/bobs/collaborators/alice', { permission: 'write' }, as(bob))).status).toBe(204)
    // bob's own issue and comment in alice's repository, which he may no longer edit once blocked.
    const bobsIssue = await s.post('/repos/alice/pub/issues', { title: 'by bob' }, as(bob))
    expect(bobsIssue.status).toBe(201)
    bobsIssueIndex = bobsIssue.body.number
    const bobsComment = await s.post(`/repos/alice/pub/issues/${bobsIssueIndex}/comments`, { body: 'bob says' }, as(bob))
    expect(bobsComment.status).toBe(201)
    bobsCommentId = bobsComment.body.id
    const issue = await s.post('/repos/alice/pub/issues', { title: 'for bob', assignees: ['bob'] }, as(alice))
    expect(issue.status).toBe(201)
    expect(logins(issue.body.assignees)).toEqual(['bob'])
    issueIndex = issue.body.number
    const transfer = await s.post('/repos/alice/trans/transfer', { new_owner: 'bob' }, as(alice))
    expect(transfer.status).toBe(201)
    // An issue alice opens in carol's repository (blocked by its poster: no comments, no reactions).
    const elsewhere = await s.post('/repos/carol/third/issues', { title: 'by alice' }, as(alice))
    expect(elsewhere.status).toBe(201)
    aliceIssueElsewhere = elsewhere.body.number
    expect((await s.get('/repos/alice/pub', as(alice))).body.stars_count).toBe(1)

    const blocked = await s.put('/user/blocks/bob?note=spam', undefined, as(alice))
    expect(blocked.status).toBe(204)
    expect(blocked.text).toBe('')

    expect((await s.get('/user/blocks/bob', as(alice))).status).toBe(204)
    const list = await s.get('/user/blocks', as(alice))
    expect(logins(list.body)).toEqual(['bob'])
    expect(list.headers.get('x-total-count')).toBe('1')
    const [row] = await s.deps.db.select().from(userBlocks).where(and(eq(userBlocks.blockerId, alice.user.id), eq(userBlocks.blockeeId, bob.user.id)))
    expect(row!.note).toBe('spam')
    // bob blocked nobody.
    expect((await s.get('/user/blocks/alice', as(bob))).status).toBe(404)

    // Follows both ways, with the counters.
    expect((await s.get('/user/following/alice', as(bob))).status).toBe(404)
    expect((await s.get('/user/following/bob', as(alice))).status).toBe(404)
    for (const u of [alice, bob]) {
      const r = await userRow(u.user.id)
      expect([r.numFollowers, r.numFollowing]).toEqual([0, 0])
    }
    // Stars and watches of each other's repositories, with the counters.
    expect((await s.get('/user/starred/alice/pub', as(bob))).status).toBe(404)
    expect((await s.get('/repos/alice/pub/subscription', as(bob))).status).toBe(404)
    expect((await s.get('/user/starred/bob/bobs', as(alice))).status).toBe(404)
    const pub = (await s.get('/repos/alice/pub', as(alice))).body
    expect(pub.stars_count).toBe(0)
    expect(logins((await s.get('/repos/alice/pub/subscribers', as(alice))).body)).toEqual(['alice'])
    expect((await userRow(bob.user.id)).numStars).toBe(0)
    expect((await userRow(alice.user.id)).numStars).toBe(0)
    // Collaborations both ways.
    expect((await s.get('/repos/alice/pub/collaborators/bob', as(alice))).status).toBe(404)
    expect((await s.get('/repos/bob/bobs/collaborators/alice', as(bob))).status).toBe(404)
    // The assignment, announced.
    expect((await s.get(`/repos/alice/pub/issues/${issueIndex}`, as(alice))).body.assignees ?? []).toEqual([])
    const unassigned = (await s.deps.db.select().from(events).where(eq(events.kind, 'issue.unassigned'))).filter((e) => e.actorId === bob.user.id)
    expect(unassigned.length).toBe(1)
    // The pending transfer.
    expect(await s.deps.db.select().from(repoTransfers)).toEqual([])
    expect((await s.get('/repos/alice/trans', as(alice))).body.owner.login).toBe('alice')
  })

  test('blocking again is 400, and changes nothing', async () => {
    const again = await s.put('/user/blocks/bob?note=other', undefined, as(alice))
    expect(again.status).toBe(400)
    const rows = await s.deps.db.select().from(userBlocks)
    expect(rows.map((r) => r.note)).toEqual(['spam'])
  })

  test('forbids afterwards (403): following either way, starring, watching, issues, pull requests, comments, reactions, edits, transfers to the blocker, collaboration', async () => {
    const refused = async (p: Promise<{ status: number; body: any }>) => {
      const r = await p
      expect(r.status).toBe(403)
      expect(r.body.message).toBe('user is blocked')
    }
    await refused(s.put('/user/following/alice', undefined, as(bob)))
    await refused(s.put('/user/following/bob', undefined, as(alice)))
    await refused(s.put('/user/starred/alice/pub', undefined, as(bob)))
    await refused(s.put('/repos/alice/pub/subscription', undefined, as(bob)))
    const issuesBefore = (await s.get('/repos/alice/pub', as(alice))).body.open_issues_count
    await refused(s.post('/repos/alice/pub/issues', { title: 'let me in' }, as(bob)))
    expect((await s.get('/repos/alice/pub', as(alice))).body.open_issues_count).toBe(issuesBefore)
    // A pull request too, from bob's fork.
    const base = (await s.get('/repos/alice/pub', as(alice))).body.default_branch
    await refused(s.post('/repos/alice/pub/pulls', { title: 'pr', head: 'bob:mine', base }, as(bob)))
    const commentsBefore = (await s.get(`/repos/alice/pub/issues/${issueIndex}/comments`, as(alice))).body.length
    await refused(s.post(`/repos/alice/pub/issues/${issueIndex}/comments`, { body: 'hi' }, as(bob)))
    // Refused after the comment was sent with the issue's read (modules/comments createComment): rolled back, count and all.
    expect((await s.get(`/repos/alice/pub/issues/${issueIndex}/comments`, as(alice))).body.length).toBe(commentsBefore)
    expect((await s.get(`/repos/alice/pub/issues/${issueIndex}`, as(alice))).body.comments).toBe(commentsBefore)
    await refused(s.post(`/repos/alice/pub/issues/${issueIndex}/reactions`, { content: '+1' }, as(bob)))
    // In a third person's repository: alice's issue takes neither comments nor reactions from bob.
    await refused(s.post(`/repos/carol/third/issues/${aliceIssueElsewhere}/comments`, { body: 'hi' }, as(bob)))
    await refused(s.post(`/repos/carol/third/issues/${aliceIssueElsewhere}/reactions`, { content: '+1' }, as(bob)))
    // ... nor a reaction to alice's comment on carol's issue.
    const carolIssue = await s.post('/repos/carol/third/issues', { title: 'by carol' }, as(carol))
    const aliceComment = await s.post(`/repos/carol/third/issues/${carolIssue.body.number}/comments`, { body: 'alice here' }, as(alice))
    expect(aliceComment.status).toBe(201)
    await refused(s.post(`/repos/carol/third/issues/comments/${aliceComment.body.id}/reactions`, { content: '+1' }, as(bob)))
    // An administrator of the repository may comment still (Gitea), but not react.
    expect((await s.put('/repos/carol/third/collaborators/bob', { permission: 'admin' }, as(carol))).status).toBe(204)
    expect((await s.post(`/repos/carol/third/issues/${aliceIssueElsewhere}/comments`, { body: 'as admin' }, as(bob))).status).toBe(201)
    await refused(s.post(`/repos/carol/third/issues/${aliceIssueElsewhere}/reactions`, { content: '+1' }, as(bob)))
    expect((await s.del('/repos/carol/third/collaborators/bob', undefined, as(carol))).status).toBe(204)
    // carol's own issue is open to bob.
    expect((await s.post(`/repos/carol/third/issues/${carolIssue.body.number}/comments`, { body: 'bob here' }, as(bob))).status).toBe(201)
    expect((await s.post(`/repos/carol/third/issues/${carolIssue.body.number}/reactions`, { content: '+1' }, as(bob))).status).toBe(201)
    // Editing his own issue's title or text, or his comment, there.
    await refused(s.patch(`/repos/alice/pub/issues/${bobsIssueIndex}`, { title: 'renamed' }, as(bob)))
    await refused(s.patch(`/repos/alice/pub/issues/${bobsIssueIndex}`, { body: 'changed' }, as(bob)))
    await refused(s.patch(`/repos/alice/pub/issues/comments/${bobsCommentId}`, { body: 'changed' }, as(bob)))
    expect((await s.get(`/repos/alice/pub/issues/${bobsIssueIndex}`, as(alice))).body.title).toBe('by bob')
    // Closing it, which changes no text, he still may (Gitea checks only title and text).
    expect((await s.patch(`/repos/alice/pub/issues/${bobsIssueIndex}`, { state: 'closed' }, as(bob))).status).toBe(201)
    // Offering a repository to one who blocked you.
    await refused(s.post('/repos/bob/bobs/transfer', { new_owner: 'alice' }, as(bob)))
    expect(await s.deps.db.select().from(repoTransfers)).toEqual([])
    // Collaboration either way.
    await refused(s.put('/repos/alice/pub/collaborators/bob', { permission: 'read' }, as(alice)))
    await refused(s.put('/repos/bob/bobs/collaborators/alice', { permission: 'read' }, as(bob)))
    // bob may still do what concerns only himself: unstar, unwatch, read.
    expect((await s.del('/user/starred/alice/pub', undefined, as(bob))).status).toBe(204)
    expect((await s.del('/repos/alice/pub/subscription', undefined, as(bob))).status).toBe(204)
    expect((await s.get('/repos/alice/pub', as(bob))).status).toBe(200)
    // alice herself is not refused in her repository, nor are others.
    expect((await s.post(`/repos/alice/pub/issues/${issueIndex}/comments`, { body: 'mine' }, as(alice))).status).toBe(201)
    expect((await s.put('/user/starred/alice/pub', undefined, as(carol))).status).toBe(204)
  })

  test("a mention by the one blocked notifies nobody who blocked them; others still are", async () => {
    const opened = await s.post('/repos/carol/third/issues', { title: 'mentions', body: 'cc @alice @carol' }, as(bob))
    expect(opened.status).toBe(201)
    await drain()
    expect(await threadUsers(opened.body.id)).toEqual([carol.user.id])
  })

  test('a site administrator is not exempt from their own block', async () => {
    expect((await s.put('/user/blocks/carol', undefined, as(root))).status).toBe(204)
    expect((await s.put('/user/following/root', undefined, as(carol))).status).toBe(403)
    expect((await s.put('/user/following/carol', undefined, as(root))).status).toBe(403)
    expect((await s.del('/user/blocks/carol', undefined, as(root))).status).toBe(204)
  })

  test('a site administrator someone blocked is not held back by it (Gitea exempts administrators)', async () => {
    expect((await s.put('/user/blocks/root', undefined, as(carol))).status).toBe(204)
    expect((await s.put('/user/following/carol', undefined, as(root))).status).toBe(204)
    expect((await s.put('/user/starred/carol/third', undefined, as(root))).status).toBe(204)
    expect((await s.del('/user/starred/carol/third', undefined, as(root))).status).toBe(204)
    expect((await s.del('/user/following/carol', undefined, as(root))).status).toBe(204)
    expect((await s.del('/user/blocks/root', undefined, as(carol))).status).toBe(204)
  })

  test('unblocking (204, then 400) gives every ability back', async () => {
    expect((await s.del('/user/blocks/bob', undefined, as(alice))).status).toBe(204)
    expect((await s.del('/user/blocks/bob', undefined, as(alice))).status).toBe(400)
    expect((await s.get('/user/blocks/bob', as(alice))).status).toBe(404)
    expect((await s.get('/user/blocks', as(alice))).body).toEqual([])
    expect((await s.put('/user/following/alice', undefined, as(bob))).status).toBe(204)
    expect((await s.put('/user/starred/alice/pub', undefined, as(bob))).status).toBe(204)
    expect((await s.put('/repos/alice/pub/subscription', undefined, as(bob))).status).toBe(200)
    expect((await s.post('/repos/alice/pub/issues', { title: 'back again' }, as(bob))).status).toBe(201)
    expect((await s.post(`/repos/alice/pub/issues/${issueIndex}/comments`, { body: 'hi' }, as(bob))).status).toBe(201)
    expect((await s.post(`/repos/alice/pub/issues/${issueIndex}/reactions`, { content: '+1' }, as(bob))).status).toBe(201)
    expect((await s.put('/repos/alice/pub/collaborators/bob', { permission: 'read' }, as(alice))).status).toBe(204)
    const opened = await s.post('/repos/carol/third/issues', { title: 'mentions again', body: 'cc @alice' }, as(bob))
    await drain()
    expect(await threadUsers(opened.body.id)).toEqual([alice.user.id, carol.user.id].sort((a, b) => a - b))
  })
})

describe("an organisation's blocks", () => {
  let team: number
  test('its owners only: a member 403, a stranger 404 for a private one, anonymous 401', async () => {
    const t = await s.post('/orgs/acme/teams', { name: 'devs', permission: 'read' }, as(alice))
    expect(t.status).toBe(201)
    team = t.body.id
    expect((await s.put(`/teams/${team}/members/carol`, undefined, as(alice))).status).toBe(204)
    expect((await s.get('/orgs/acme/blocks')).status).toBe(401)
    expect((await s.get('/orgs/acme/blocks', as(carol))).status).toBe(403)
    expect((await s.put('/orgs/acme/blocks/bob', undefined, as(carol))).status).toBe(403)
    expect((await s.get('/orgs/nope/blocks', as(alice))).status).toBe(404)
    const list = await s.get('/orgs/acme/blocks', as(alice))
    expect(list.status).toBe(200)
    expect(list.body).toEqual([])
  })

  test('a member cannot be blocked from it (400); the organisation cannot block itself or another', async () => {
    const member = await s.put('/orgs/acme/blocks/carol', undefined, as(alice))
    expect(member.status).toBe(400)
    expect((await s.put('/orgs/acme/blocks/alice', undefined, as(alice))).status).toBe(400)
    expect((await s.put('/orgs/acme/blocks/acme', undefined, as(alice))).status).toBe(400)
    expect(await s.deps.db.select().from(userBlocks)).toEqual([])
  })

  test("blocks a stranger: its repositories refuse their stars, issues and collaboration, its teams refuse them; an owner lifts it", async () => {
    expect((await s.put('/user/starred/acme/tool', undefined, as(bob))).status).toBe(204)
    expect((await s.put('/orgs/acme/blocks/bob?note=org', undefined, as(alice))).status).toBe(204)
    expect((await s.get('/orgs/acme/blocks/bob', as(alice))).status).toBe(204)
    // A site administrator acts as an owner.
    expect((await s.get('/orgs/acme/blocks/bob', as(root))).status).toBe(204)
    expect(logins((await s.get('/orgs/acme/blocks', as(alice))).body)).toEqual(['bob'])
    // alice's own blocks are apart.
    expect((await s.get('/user/blocks/bob', as(alice))).status).toBe(404)
    expect((await s.get('/user/starred/acme/tool', as(bob))).status).toBe(404)
    expect((await s.put('/user/starred/acme/tool', undefined, as(bob))).status).toBe(403)
    expect((await s.post('/repos/acme/tool/issues', { title: 'x' }, as(bob))).status).toBe(403)
    expect((await s.put('/repos/acme/tool/collaborators/bob', { permission: 'read' }, as(alice))).status).toBe(403)
    expect((await s.put(`/teams/${team}/members/bob`, undefined, as(alice))).status).toBe(403)
    expect((await s.get(`/teams/${team}/members/bob`, as(alice))).status).toBe(404)
    // bob's own repositories are his: the organisation's block does not reach alice's.
    expect((await s.put('/user/starred/bob/bobs', undefined, as(alice))).status).toBe(204)

    expect((await s.del('/orgs/acme/blocks/bob', undefined, as(carol))).status).toBe(403)
    expect((await s.del('/orgs/acme/blocks/bob', undefined, as(alice))).status).toBe(204)
    expect((await s.del('/orgs/acme/blocks/bob', undefined, as(alice))).status).toBe(400)
    expect((await s.put('/user/starred/acme/tool', undefined, as(bob))).status).toBe(204)
    expect((await s.put(`/teams/${team}/members/bob`, undefined, as(alice))).status).toBe(204)
  })
})

describe('a block of one tied to many repositories', () => {
  test("undoes every star, watch and assignment at once, each counter moved by what really went; others' ties untouched", async () => {
    const dave = await s.user('dave')
    const erin = await s.user('erin')
    const names = ['one', 'two', 'three']
    for (const name of names) {
      expect((await s.post('/user/repos', { name, auto_init: true }, as(erin))).status).toBe(201)
      expect((await s.put(`/repos/erin/${name}/collaborators/dave`, { permission: 'write' }, as(erin))).status).toBe(204)
      expect((await s.put(`/user/starred/erin/${name}`, undefined, as(dave))).status).toBe(204)
      // carol's star and watch stay.
      expect((await s.put(`/user/starred/erin/${name}`, undefined, as(carol))).status).toBe(204)
      expect((await s.put(`/repos/erin/${name}/subscription`, undefined, as(carol))).status).toBe(200)
    }
    for (const name of ['one', 'two']) expect((await s.put(`/repos/erin/${name}/subscription`, undefined, as(dave))).status).toBe(200)
    // dave's star elsewhere stays.
    expect((await s.put('/user/starred/carol/third', undefined, as(dave))).status).toBe(204)
    const assigned: { repo: string; number: number }[] = []
    for (const repo of ['one', 'three']) {
      const issue = await s.post(`/repos/erin/${repo}/issues`, { title: `for dave in ${repo}`, assignees: ['dave'] }, as(erin))
      expect(issue.status).toBe(201)
      assigned.push({ repo, number: issue.body.number })
    }
    expect((await userRow(dave.user.id)).numStars).toBe(4)

    expect((await s.put('/user/blocks/dave', undefined, as(erin))).status).toBe(204)

    for (const name of names) {
      const repo = (await s.get(`/repos/erin/${name}`, as(erin))).body
      expect([name, repo.stars_count, repo.watchers_count]).toEqual([name, 1, 2])
      expect(logins((await s.get(`/repos/erin/${name}/stargazers`, as(erin))).body)).toEqual(['carol'])
    }
    expect((await userRow(dave.user.id)).numStars).toBe(1)
    expect((await userRow(carol.user.id)).numStars).toBeGreaterThanOrEqual(3)
    expect(logins((await s.get('/repos/carol/third/stargazers', as(carol))).body)).toContain('dave')
    for (const { repo, number } of assigned) expect((await s.get(`/repos/erin/${repo}/issues/${number}`, as(erin))).body.assignees ?? []).toEqual([])
    const unassigned = (await s.deps.db.select().from(events).where(eq(events.kind, 'issue.unassigned'))).filter((e) => e.actorId === dave.user.id)
    expect(unassigned.map((e) => JSON.parse(e.payload).index).sort()).toEqual(assigned.map((a) => a.number).sort())
    expect(unassigned.every((e) => JSON.parse(e.payload).assignee.login === 'dave')).toBe(true)
  })
})
