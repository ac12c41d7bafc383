/**
 * Gitea 1.23's activity feeds (`/users/{u}`, `/orgs/{o}`, `/teams/{id}`, `/repos/{o}/{r}`
 * `…/activities/feeds`), read from the outbox, through gitea-js.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { giteaApi, type Activity, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { empty, fails, ok } from './gitea-calls'

type Client = Api<unknown>

let s: TestServer
let alice: TestUser
let bob: TestUser
let asAlice: Client
let asBob: Client
let anon: Client

const b64 = (text: string) => Buffer.from(text).toString('base64')
/** The server's date today, as `?date` takes it (the server's time zone is the test's). */
const today = () => {
  const d = new Date()
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`
}
const ops = (list: Activity[]): string[] => list.map((a) => a.op_type ?? '')

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  anon = giteaApi(s.url, {})

  await ok(asAlice.user.createCurrentUserRepo({ name: 'proj', auto_init: true, default_branch: 'main' }), 201)
  await ok(asAlice.repos.repoCreateFile('alice', 'proj', 'a.txt', { content: b64('a\n'), message: 'add a\n\nbody' }), 201)
  await ok(asAlice.repos.issueCreateIssue('alice', 'proj', { title: 'bug' }), 201)
  await ok(asBob.repos.issueCreateComment('alice', 'proj', 1, { body: 'hello there' }), 201)
  await ok(asAlice.repos.issueEditIssue('alice', 'proj', 1, { state: 'closed' }), 201)
  await ok(asAlice.repos.repoCreateFile('alice', 'proj', 'b.txt', { content: b64('b\n'), message: 'add b', new_branch: 'feature' }), 201)
  await ok(asAlice.repos.repoCreatePullRequest('alice', 'proj', { head: 'feature', base: 'main', title: 'Feature' }), 201)
  await ok(asAlice.repos.repoMergePullRequest('alice', 'proj', 2, { Do: 'merge' }))
  await empty(asBob.user.userCurrentPutStar('alice', 'proj'))
  await ok(asAlice.repos.repoCreateRelease('alice', 'proj', { tag_name: 'v1', name: 'First', target_commitish: 'main' }), 201)
  await ok(asAlice.user.createCurrentUserRepo({ name: 'secret', private: true }), 201)
  await ok(asAlice.repos.issueCreateIssue('alice', 'secret', { title: 'hidden' }), 201)
})
afterAll(() => s.stop())

describe('a repository feed', () => {
  test('push, issue, comment, close, pull request, merge and release, newest first, with Gitea op types and contents', async () => {
    const feed = await ok(asBob.repos.repoListActivityFeeds('alice', 'proj'))
    const byOp = (op: string) => feed.filter((a) => a.op_type === op)
    // Newest first.
    expect(feed.map((a) => a.id)).toEqual([...feed.map((a) => a.id!)].sort((x, y) => y - x))
    expect(byOp('create_repo')).toHaveLength(1)

    const pushes = byOp('commit_repo')
    const mainPush = pushes.find((a) => a.ref_name === 'refs/heads/main' && JSON.parse(a.content!).HeadCommit?.Message.startsWith('add a'))!
    expect(mainPush).toBeDefined()
    const commits = JSON.parse(mainPush.content!)
    expect(commits.Len).toBe(1)
    expect(commits.Commits).toHaveLength(1)
    expect(commits.Commits[0]).toMatchObject({ Message: expect.stringMatching(/^add a\n\nbody\n?$/), AuthorName: 'alice', Sha1: expect.stringMatching(/^[0-9a-f]{40}$/) })
    expect(commits.CompareURL).toMatch(/^alice\/proj\/compare\/[0-9a-f]{40}\.\.\.[0-9a-f]{40}$/)
    expect(mainPush.act_user?.login).toBe('alice')
    expect(mainPush.repo?.full_name).toBe('alice/proj')
    expect(mainPush.user_id).toBe(alice.user.id)
    expect(pushes.some((a) => a.ref_name === 'refs/heads/feature')).toBe(true)

    expect(byOp('create_issue').map((a) => a.content)).toEqual(['1|bug'])
    const [comment] = byOp('comment_issue')
    expect(comment).toMatchObject({ content: '1|hello there', act_user_id: bob.user.id, user_id: bob.user.id, is_private: false })
    expect(comment!.comment).toMatchObject({ body: 'hello there', user: { login: 'bob' } })
    expect(comment!.comment_id).toBe(comment!.comment!.id)
    expect(byOp('close_issue').map((a) => a.content)).toEqual(['1|'])
    expect(byOp('create_pull_request').map((a) => a.content)).toEqual(['2|Feature'])
    expect(byOp('merge_pull_request').map((a) => a.content)).toEqual(['2|Feature'])
    expect(byOp('publish_release')).toMatchObject([{ content: 'First', ref_name: 'refs/tags/v1' }])
    const [tag] = byOp('push_tag')
    expect(tag).toMatchObject({ ref_name: 'refs/tags/v1' })
    expect(JSON.parse(tag!.content!).HeadCommit.Sha1).toMatch(/^[0-9a-f]{40}$/)
    // Gitea 1.23 records no action for a star (its feed notifier has none).
    expect(byOp('star_repo')).toHaveLength(0)
    expect(feed.every((a) => a.comment === null || a.op_type === 'comment_issue')).toBe(true)
  })

  test('paged in SQL: pages are disjoint and counted; ?date keeps that day only; a bad date is 422', async () => {
    const all = await s.get<Activity[]>('/repos/alice/proj/activities/feeds?limit=50', { token: bob.token })
    const total = Number(all.headers.get('x-total-count'))
    expect(total).toBe(all.body.length)
    expect(total).toBeGreaterThan(6)
    const first = await s.get<Activity[]>('/repos/alice/proj/activities/feeds?limit=3&page=1', { token: bob.token })
    const second = await s.get<Activity[]>('/repos/alice/proj/activities/feeds?limit=3&page=2', { token: bob.token })
    expect(first.body.map((a) => a.id)).toEqual(all.body.slice(0, 3).map((a) => a.id))
    expect(second.body.map((a) => a.id)).toEqual(all.body.slice(3, 6).map((a) => a.id))
    expect(Number(first.headers.get('x-total-count'))).toBe(total)
    expect(first.headers.get('link')).toContain('rel="next"')

    expect(await ok(asBob.repos.repoListActivityFeeds('alice', 'proj', { date: today(), limit: 50 }))).toHaveLength(total)
    expect(await ok(asBob.repos.repoListActivityFeeds('alice', 'proj', { date: '2001-02-03' }))).toEqual([])
    await fails(asBob.repos.repoListActivityFeeds('alice', 'proj', { date: 'yesterday' }), 422)
    await fails(asBob.repos.repoListActivityFeeds('alice', 'proj', { date: '2024-02-30' }), 422)
  })

  test('reviews: approve_pull_request and reject_pull_request with the first line of the review', async () => {
    await ok(asAlice.repos.repoCreateFile('alice', 'proj', 'c.txt', { content: b64('c\n'), message: 'add c', new_branch: 'second' }), 201)
    const pull = await ok(asAlice.repos.repoCreatePullRequest('alice', 'proj', { head: 'second', base: 'main', title: 'Second' }), 201)
    await ok(asBob.repos.repoCreatePullReview('alice', 'proj', pull.number!, { event: 'REQUEST_CHANGES', body: 'not yet\nmore below' }))
    await ok(asBob.repos.repoCreatePullReview('alice', 'proj', pull.number!, { event: 'APPROVED', body: 'LGTM' }))
    const feed = await ok(asBob.repos.repoListActivityFeeds('alice', 'proj', { limit: 3 }))
    expect(feed.map((a) => [a.op_type, a.content, a.act_user?.login])).toEqual([
      ['approve_pull_request', `${pull.number}|LGTM`, 'bob'],
      ['reject_pull_request', `${pull.number}|not yet`, 'bob'],
      ['create_pull_request', `${pull.number}|Second`, 'alice'],
    ])
    // ?only-performed-by reads booleans as Gitea does.
    const mine = await s.get<Activity[]>('/users/bob/activities/feeds?only-performed-by=1', { token: bob.token })
    expect(mine.body.map((a) => a.op_type)).toEqual(['approve_pull_request', 'reject_pull_request', 'comment_issue'])
  })

  test('a private repository: its feed and its actions are hidden from those who may not read it', async () => {
    await fails(asBob.repos.repoListActivityFeeds('alice', 'secret'), 404)
    await fails(anon.repos.repoListActivityFeeds('alice', 'secret'), 404)
    expect(ops(await ok(asAlice.repos.repoListActivityFeeds('alice', 'secret')))).toEqual(['create_issue', 'create_repo'])
  })
})

describe("a user's feed", () => {
  test("the user's actions, private repositories' only for the user; ?only-performed-by; watched repositories", async () => {
    const own = await ok(asAlice.users.userListActivityFeeds('alice', { limit: 50 }))
    expect(own.some((a) => a.repo?.name === 'secret')).toBe(true)
    expect(own.every((a) => a.user_id === alice.user.id)).toBe(true)
    for (const c of [asBob, anon]) {
      const seen = await ok(c.users.userListActivityFeeds('alice', { limit: 50 }))
      expect(seen.length).toBeGreaterThan(0)
      expect(seen.some((a) => a.repo?.name === 'secret')).toBe(false)
    }

    // Bob's feed: his comment; with Gitea's default (not only performed by him) also what
    // happens in the repositories he watches.
    const bobs = ['approve_pull_request', 'reject_pull_request', 'comment_issue']
    expect(ops(await ok(asBob.users.userListActivityFeeds('bob', { 'only-performed-by': true })))).toEqual(bobs)
    expect(ops(await ok(asBob.users.userListActivityFeeds('bob')))).toEqual(bobs)
    await ok(asBob.repos.userCurrentPutSubscription('alice', 'proj'))
    const watching = await ok(asBob.users.userListActivityFeeds('bob', { limit: 50 }))
    expect(watching.length).toBeGreaterThan(5)
    expect(watching.every((a) => a.repo?.full_name === 'alice/proj' && a.user_id === bob.user.id)).toBe(true)
    expect(ops(await ok(asBob.users.userListActivityFeeds('bob', { 'only-performed-by': true })))).toEqual(bobs)
  })

  test('hidden activity (keep_activity_private): an empty feed for others, and the actions gone from every feed they see', async () => {
    const carol = await s.user('carol')
    const asCarol = giteaApi(s.url, { token: carol.token })
    await ok(asCarol.user.createCurrentUserRepo({ name: 'diary' }), 201)
    await ok(asBob.repos.issueCreateIssue('carol', 'diary', { title: 'from bob' }), 201)
    await ok(asCarol.user.updateUserSettings({ hide_activity: true }))
    expect(await ok(asBob.users.userListActivityFeeds('carol'))).toEqual([])
    expect(await ok(anon.users.userListActivityFeeds('carol'))).toEqual([])
    expect(ops(await ok(asCarol.users.userListActivityFeeds('carol')))).toEqual(['create_issue', 'create_repo'])
    // In the repository's feed others see bob's action only.
    expect(ops(await ok(asBob.repos.repoListActivityFeeds('carol', 'diary')))).toEqual(['create_issue'])
    expect(ops(await ok(asCarol.repos.repoListActivityFeeds('carol', 'diary')))).toEqual(['create_issue', 'create_repo'])
  })
})

describe('organisation and team feeds', () => {
  test("an organisation's repositories; private ones for members; a team's repositories only", async () => {
    await ok(asAlice.orgs.orgCreate({ username: 'acme' }), 201)
    await ok(asAlice.orgs.createOrgRepo('acme', { name: 'site' }), 201)
    await ok(asAlice.orgs.createOrgRepo('acme', { name: 'inner', private: true }), 201)
    await ok(asAlice.repos.issueCreateIssue('acme', 'site', { title: 'public work' }), 201)
    await ok(asAlice.repos.issueCreateIssue('acme', 'inner', { title: 'private work' }), 201)

    const member = await ok(asAlice.orgs.orgListActivityFeeds('acme'))
    expect(member.map((a) => `${a.op_type} ${a.repo?.name}`)).toEqual(['create_issue inner', 'create_issue site', 'create_repo inner', 'create_repo site'])
    expect(member.every((a) => a.user_id === member[0]!.repo!.owner!.id)).toBe(true)
    expect(member[0]).toMatchObject({ is_private: true, content: '1|private work' })
    const outsider = await ok(asBob.orgs.orgListActivityFeeds('acme'))
    expect(outsider.map((a) => `${a.op_type} ${a.repo?.name}`)).toEqual(['create_issue site', 'create_repo site'])
    expect(await ok(asBob.orgs.orgListActivityFeeds('acme', { date: '2001-02-03' }))).toEqual([])

    const team = await ok(asAlice.orgs.orgCreateTeam('acme', { name: 'devs', permission: 'write', units: ['repo.code', 'repo.issues'] }), 201)
    await empty(asAlice.teams.orgAddTeamRepository(team.id!, 'acme', 'inner'))
    await empty(asAlice.teams.orgAddTeamMember(team.id!, 'bob'))
    const teamFeed = await ok(asBob.teams.orgListTeamActivityFeeds(team.id!))
    expect(teamFeed.map((a) => `${a.op_type} ${a.repo?.name}`)).toEqual(['create_issue inner', 'create_repo inner'])
    expect(await ok(asBob.teams.orgListTeamActivityFeeds(team.id!, { date: today() }))).toHaveLength(2)
    const carolClient = giteaApi(s.url, { token: (await s.user('dan')).token })
    await fails(carolClient.teams.orgListTeamActivityFeeds(team.id!), 404)
  })

  test("a team's units: who reads only the code sees pushes, not issues or pull requests, in every feed; a tracker turned off hides its events", async () => {
    const erin = await s.user('erin')
    const asErin = giteaApi(s.url, { token: erin.token })
    await ok(asAlice.orgs.createOrgRepo('acme', { name: 'vault', private: true, auto_init: true, default_branch: 'main' }), 201)
    await ok(asAlice.repos.repoCreateFile('acme', 'vault', 'code.txt', { content: b64('x\n'), message: 'add code' }), 201)
    await ok(asAlice.repos.issueCreateIssue('acme', 'vault', { title: 'vault issue' }), 201)
    await ok(asAlice.repos.repoCreateFile('acme', 'vault', 'f.txt', { content: b64('f\n'), message: 'feature', new_branch: 'feature' }), 201)
    await ok(asAlice.repos.repoCreatePullRequest('acme', 'vault', { head: 'feature', base: 'main', title: 'vault pull' }), 201)
    const coders = await ok(
      asAlice.orgs.orgCreateTeam('acme', { name: 'coders', permission: 'read', units_map: { 'repo.code': 'read', 'repo.issues': 'none', 'repo.pulls': 'none' } } as never),
      201,
    )
    await empty(asAlice.teams.orgAddTeamRepository(coders.id!, 'acme', 'vault'))
    await empty(asAlice.teams.orgAddTeamMember(coders.id!, 'erin'))
    await ok(asErin.repos.userCurrentPutSubscription('acme', 'vault'))

    const seen = (list: Activity[]) => list.filter((a) => a.repo?.name === 'vault').map((a) => a.op_type)
    // The repository's owner sees all of it; erin its code only, in each feed that lists it.
    expect(seen(await ok(asAlice.repos.repoListActivityFeeds('acme', 'vault')))).toEqual(['create_pull_request', 'commit_repo', 'create_issue', 'commit_repo', 'create_repo'])
    expect(seen(await ok(asErin.repos.repoListActivityFeeds('acme', 'vault')))).toEqual(['commit_repo', 'commit_repo', 'create_repo'])
    expect(seen(await ok(asErin.orgs.orgListActivityFeeds('acme')))).toEqual(['commit_repo', 'commit_repo', 'create_repo'])
    expect(seen(await ok(asErin.teams.orgListTeamActivityFeeds(coders.id!)))).toEqual(['commit_repo', 'commit_repo', 'create_repo'])
    expect(seen(await ok(asErin.users.userListActivityFeeds('erin')))).toEqual(['commit_repo', 'commit_repo', 'create_repo'])
    // Counted as shown.
    const counted = await asErin.repos.repoListActivityFeeds('acme', 'vault')
    expect(counted.headers.get('x-total-count')).toBe('3')

    // The issues turned off: their events leave every feed, the owner's too; on again, they are back.
    await ok(asAlice.repos.repoEdit('acme', 'vault', { has_issues: false }))
    expect(seen(await ok(asAlice.repos.repoListActivityFeeds('acme', 'vault')))).toEqual(['create_pull_request', 'commit_repo', 'commit_repo', 'create_repo'])
    await ok(asAlice.repos.repoEdit('acme', 'vault', { has_issues: true }))
    expect(seen(await ok(asAlice.repos.repoListActivityFeeds('acme', 'vault')))).toContain('create_issue')
  })
})

describe('a comment in an action', () => {
  test('a long comment is cut at 200 characters (code points, not UTF-16 units) with an ellipsis, as Gitea', async () => {
    const text = '😀é'.repeat(150_000)
    const posted = await ok(asBob.repos.issueCreateComment('alice', 'proj', 1, { body: text }), 201)
    const feed = await ok(asBob.repos.repoListActivityFeeds('alice', 'proj', { limit: 5 }))
    const action = feed.find((a) => a.comment_id === posted.id)!
    expect(action.content).toBe(`1|${[...'😀é'.repeat(100)].slice(0, 199).join('')}…`)
  })
})
