import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, unitTeam, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'

/**
 * The web's forms and pages ask what the API asks, unit by unit, where a team gives some of a
 * repository's units and not others: a form under `pulls/{index}` reaches a plain issue only as a
 * writer of the issues (the pipeline resolves the issue's own unit there too); the sidebar's bulk
 * forms (`issue_ids`) only for writers of each issue's unit; a repository's projects only to
 * readers of the projects; the topics form is refused on an archived repository, as the API's PUT.
 */

let s: TestServer
let owner: TestUser
/** A team giving the code to read and the pull requests to write; not the issues. */
let puller: TestUser
/** A team giving the code and issues to read, the pull requests to write; not the projects. */
let reader: TestUser
const { page, signIn, submit } = webVisitors(() => s.url, async () => '')
const as = (u: TestUser) => ({ token: u.token })
let issueId = 0

beforeAll(async () => {
  s = await startTestServer()
  owner = await s.user('wuowner')
  puller = await s.user('wupuller')
  reader = await s.user('wureader')
  expect((await s.post('/orgs', { username: 'wuorg', visibility: 'private' }, as(owner))).status).toBe(201)
  expect((await s.post('/orgs/wuorg/repos', { name: 'vault', private: true, auto_init: true }, as(owner))).status).toBe(201)
  await unitTeam(s, owner, 'wuorg', 'pullers', { 'repo.code': 'read', 'repo.issues': 'none', 'repo.pulls': 'write', 'repo.projects': 'read' }, [puller])
  await unitTeam(s, owner, 'wuorg', 'readers', { 'repo.code': 'read', 'repo.issues': 'read', 'repo.pulls': 'write', 'repo.projects': 'none' }, [reader])
  const issue = await s.post('/repos/wuorg/vault/issues', { title: 'Plain issue' }, as(owner))
  expect(issue.status).toBe(201)
  issueId = issue.body.id
  expect((await s.post('/repos/wuorg/vault/labels', { name: 'bug', color: '#ff0000' }, as(owner))).status).toBe(201)
  const made = await submit(owner, '/wuorg/vault/projects/new', { title: 'Roadmap', template_type: '1' })
  expect(made.status).toBe(303)
})
afterAll(() => s.stop())

const commentsOn = async (index: number) => (await s.get(`/repos/wuorg/vault/issues/${index}/comments`, as(owner))).body.length as number

describe('forms under pulls/{index} reach a plain issue only by its own unit', () => {
  test('a writer of the pull requests who may not read the issues cannot comment on, close, react to or watch issue #1 through pulls/1', async () => {
    const before = await commentsOn(1)
    expect((await submit(puller, '/wuorg/vault/pulls/1/comments', { content: 'sneaky', status: 'close' })).status).toBe(404)
    expect((await submit(puller, '/wuorg/vault/pulls/1/reactions/react', { content: '+1' })).status).toBe(404)
    expect((await submit(puller, '/wuorg/vault/pulls/1/watch', { watch: 'true' })).status).toBe(404)
    expect(await commentsOn(1)).toBe(before)
    const issue = (await s.get('/repos/wuorg/vault/issues/1', as(owner))).body
    expect([issue.state, issue.comments]).toEqual(['open', before])
    expect((await s.get('/repos/wuorg/vault/issues/1/reactions', as(owner))).body).toEqual([])
  })

  test('a reader of the issues is refused as a reader there (no comment may close it), not as a writer of the pull requests', async () => {
    const closing = await submit(reader, '/wuorg/vault/pulls/1/comments', { content: '', status: 'close' })
    expect(closing.status).toBe(403)
    expect((await s.get('/repos/wuorg/vault/issues/1', as(owner))).body.state).toBe('open')
  })
})

describe("the sidebar's bulk forms, by each issue's unit", () => {
  test('a writer of the pull requests may not label, assign or milestone an issue by its id; a reader of the issues is refused as a reader', async () => {
    const label = (await s.get('/repos/wuorg/vault/labels', as(owner))).body[0].id
    for (const [who, status] of [[puller, 404], [reader, 403]] as const) {
      expect((await submit(who, '/wuorg/vault/pulls/labels', { issue_ids: String(issueId), action: 'attach', id: String(label) })).status).toBe(status)
      expect((await submit(who, '/wuorg/vault/issues/labels', { issue_ids: String(issueId), action: 'attach', id: String(label) })).status).toBe(status)
      expect((await submit(who, '/wuorg/vault/pulls/assignee', { issue_ids: String(issueId), action: 'attach', id: String(owner.user.id) })).status).toBe(status)
    }
    const issue = (await s.get('/repos/wuorg/vault/issues/1', as(owner))).body
    expect([issue.labels, issue.assignees]).toEqual([[], []])
    // The owner's form still works.
    expect((await submit(owner, '/wuorg/vault/issues/labels', { issue_ids: String(issueId), action: 'attach', id: String(label) })).status).toBe(303)
    expect((await s.get('/repos/wuorg/vault/issues/1', as(owner))).body.labels.map((l: { name: string }) => l.name)).toEqual(['bug'])
  })
})

describe('projects show to their readers only', () => {
  test("a member not given the projects sees no project in the issue list's filter nor the issue's sidebar; the owner does", async () => {
    const filterOf = async (who: TestUser) => (await (await page('/wuorg/vault/issues', await signIn(who))).text()).includes('Roadmap')
    const sideOf = async (who: TestUser) => (await (await page('/wuorg/vault/issues/1', await signIn(who))).text()).includes('<h2 class="side-title">Projects</h2>')
    expect([await filterOf(owner), await filterOf(reader)]).toEqual([true, false])
    // The sidebar's projects (the issue's, and the writer's choice of one).
    const projects = await (await page('/wuorg/vault/projects', await signIn(owner))).text()
    const projectId = /\/wuorg\/vault\/projects\/(\d+)/.exec(projects)![1]!
    expect((await submit(owner, '/wuorg/vault/issues/projects', { issue_ids: String(issueId), id: projectId })).status).toBe(303)
    expect([await sideOf(owner), await sideOf(reader)]).toEqual([true, false])
  })
})

describe('the topics form', () => {
  test('is refused on an archived repository (423), as the API', async () => {
    expect((await s.post('/orgs/wuorg/repos', { name: 'old' }, as(owner))).status).toBe(201)
    expect((await s.patch('/repos/wuorg/old', { archived: true }, as(owner))).status).toBe(200)
    expect((await s.put('/repos/wuorg/old/topics', { topics: ['x'] }, as(owner))).status).toBe(423)
    expect((await submit(owner, '/wuorg/old/topics', { topics: 'x' })).status).toBe(423)
    expect((await s.get('/repos/wuorg/old/topics', as(owner))).body.topics).toEqual([])
  })
})
