import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, unitTeam, type TestServer, type TestUser } from './helpers'

/**
 * An issue's dependency lists leave out the issues of repositories the caller may not read, for
 * every kind of caller: its statements are prepared once per kind of viewer (anonymous, a site
 * administrator, anyone else) with the viewer's id bound at each request, so a grant that only one
 * user has (a collaborator's) must show to that user and to no other.
 */
describe('dependency lists, by who asks', () => {
  let s: TestServer
  let owner: TestUser
  let collaborator: TestUser
  let stranger: TestUser
  let admin: TestUser

  beforeAll(async () => {
    s = await startTestServer()
    owner = await s.user('depowner')
    collaborator = await s.user('depcollab')
    stranger = await s.user('depstranger')
    admin = await s.user('depadmin', { admin: true })
    const token = { token: owner.token }
    expect((await s.post('/user/repos', { name: 'open' }, token)).status).toBe(201)
    expect((await s.post('/user/repos', { name: 'closed', private: true }, token)).status).toBe(201)
    expect((await s.put('/repos/depowner/closed/collaborators/depcollab', { permission: 'read' }, token)).status).toBe(204)
    for (const repo of ['open', 'closed']) expect((await s.post(`/repos/depowner/${repo}/issues`, { title: `in ${repo}` }, token)).status).toBe(201)
    expect((await s.post('/repos/depowner/open/issues', { title: 'second in open' }, token)).status).toBe(201)
    // open#1 depends on closed#1 (private) and on open#2.
    for (const dependency of [{ repo: 'closed', index: 1 }, { repo: 'open', index: 2 }])
      expect((await s.post('/repos/depowner/open/issues/1/dependencies', { owner: 'depowner', ...dependency }, token)).status).toBe(201)
  })
  afterAll(() => s.stop())

  const listed = async (path: string, who: TestUser | null) => {
    const res = await s.get(path, who ? { token: who.token } : {})
    expect(res.status).toBe(200)
    return (res.body as { title: string }[]).map((i) => i.title).sort()
  }

  test('the private repository\'s issue shows to its owner, its collaborator and an administrator; not to a stranger or the anonymous', async () => {
    const path = '/repos/depowner/open/issues/1/dependencies'
    // Each asked twice: the second answer comes from the statement the first prepared.
    for (let round = 0; round < 2; round++) {
      for (const who of [owner, collaborator, admin]) expect(await listed(path, who)).toEqual(['in closed', 'second in open'])
      for (const who of [stranger, null]) expect(await listed(path, who)).toEqual(['second in open'])
    }
  })

  test('the other direction: what the private issue blocks shows to those who may read it', async () => {
    for (const who of [owner, collaborator, stranger, null]) expect(await listed('/repos/depowner/open/issues/2/blocks', who)).toEqual(['in open'])
    expect(await listed('/repos/depowner/closed/issues/1/blocks', collaborator)).toEqual(['in open'])
  })

  test("a team member whose team gives the repository but not its issues unit sees none of its issues, in the lists and the timeline", async () => {
    const token = { token: owner.token }
    const coder = await s.user('depcoder')
    expect((await s.post('/orgs', { username: 'deporg', visibility: 'private' }, token)).status).toBe(201)
    expect((await s.post('/orgs/deporg/repos', { name: 'hidden', private: true }, token)).status).toBe(201)
    await unitTeam(s, owner, 'deporg', 'coders', { 'repo.code': 'read', 'repo.issues': 'none', 'repo.pulls': 'none' }, [coder])
    expect((await s.post('/repos/deporg/hidden/issues', { title: 'in hidden' }, token)).status).toBe(201)
    expect((await s.post('/repos/depowner/open/issues', { title: 'third in open' }, token)).status).toBe(201)
    expect((await s.post('/repos/depowner/open/issues/3/dependencies', { owner: 'deporg', repo: 'hidden', index: 1 }, token)).status).toBe(201)
    // The member reads the repository (its code) but not its issues: the issue is not listed to them.
    expect((await s.get('/repos/deporg/hidden', { token: coder.token })).status).toBe(200)
    expect((await s.get('/repos/deporg/hidden/issues/1', { token: coder.token })).status).toBe(404)
    for (let round = 0; round < 2; round++) {
      for (const who of [owner, admin]) expect(await listed('/repos/depowner/open/issues/3/dependencies', who)).toEqual(['in hidden'])
      for (const who of [coder, collaborator, stranger, null]) expect(await listed('/repos/depowner/open/issues/3/dependencies', who)).toEqual([])
    }
    // The timeline's dependency event names the issue to those who may read it, and null to the others.
    const dependent = async (who: TestUser | null) => {
      const res = await s.get('/repos/depowner/open/issues/3/timeline', who ? { token: who.token } : {})
      expect(res.status).toBe(200)
      const event = (res.body as { type: string; dependent_issue: { title: string } | null }[]).find((e) => e.type === 'add_dependency')
      expect(event).toBeDefined()
      return event!.dependent_issue?.title ?? null
    }
    for (const who of [owner, admin]) expect(await dependent(who)).toBe('in hidden')
    for (const who of [coder, stranger, null]) expect(await dependent(who)).toBeNull()
    // Nor may they name it as a dependency of an issue of their own: 404, as for one that does not exist.
    expect((await s.post('/user/repos', { name: 'mine' }, { token: coder.token })).status).toBe(201)
    expect((await s.post('/repos/depcoder/mine/issues', { title: 'mine' }, { token: coder.token })).status).toBe(201)
    for (const direction of ['dependencies', 'blocks']) {
      const res = await s.post(`/repos/depcoder/mine/issues/1/${direction}`, { owner: 'deporg', repo: 'hidden', index: 1 }, { token: coder.token })
      expect([res.status, res.body.message]).toEqual([404, expect.stringContaining('issue does not exist')])
    }
    expect(await listed('/repos/depcoder/mine/issues/1/dependencies', owner)).toEqual([])
  })
})
