// Assertions ported from Gitea's own integration tests (go-gitea/gitea, tests/integration/) for
// organisations and teams. Gitea's fixtures are rebuilt here with the API; where modern Gitea
// contradicts /work/shared/api/ (the reference), the reference wins and the comment says so.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'

let s: TestServer
let root: TestUser // site administrator ("user1" in Gitea's fixtures)
let olga: TestUser // owner of "org3" ("user2")
let mia: TestUser // concealed member of "org3" through a write team ("user4")
let otto: TestUser // unrelated user ("user5")

const ALL_UNITS = ['repo.code', 'repo.issues', 'repo.ext_issues', 'repo.wiki', 'repo.pulls', 'repo.releases', 'repo.ext_wiki', 'repo.projects', 'repo.packages']
const sorted = (a: string[]) => [...a].sort()

beforeAll(async () => {
  s = await startTestServer()
  root = await s.user('root', { admin: true })
  olga = await s.user('olga')
  mia = await s.user('mia')
  otto = await s.user('otto')
  expect((await s.post('/orgs', { username: 'org3' }, { token: olga.token })).status).toBe(201)
  expect((await s.post('/orgs', { username: 'org17', full_name: 'Org Seventeen' }, { token: olga.token })).status).toBe(201)
  // olga's memberships are public, as in Gitea's fixtures for user2.
  for (const org of ['org3', 'org17']) expect((await s.put(`/orgs/${org}/public_members/olga`, undefined, { token: olga.token })).status).toBe(204)
  const writers = await s.post('/orgs/org3/teams', { name: 'writers', permission: 'write', includes_all_repositories: true }, { token: olga.token })
  expect(writers.status).toBe(201)
  expect((await s.put(`/teams/${writers.body.id}/members/mia`, undefined, { token: olga.token })).status).toBe(204)
})
afterAll(() => s.stop())

// From api_org_test.go: TestAPIOrgCreate
describe('TestAPIOrgCreate', () => {
  test('POST /orgs echoes every field; the org, its repositories and its members can be read back', async () => {
    const opt = {
      username: 'user1_org',
      full_name: "User1's organization",
      description: 'This organization created by user1',
      website: 'https://try.gitea.io',
      location: 'Shanghai',
      visibility: 'limited',
    }
    const r = await s.post('/orgs', opt, { token: root.token })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({
      name: opt.username,
      username: opt.username,
      full_name: opt.full_name,
      description: opt.description,
      website: opt.website,
      location: opt.location,
      visibility: opt.visibility,
    })
    // The Owners team: owner permission over every unit, all repositories, the creator its member.
    const teams = await s.get(`/orgs/${opt.username}/teams`, { token: root.token })
    expect(teams.body).toHaveLength(1)
    expect(teams.body[0]).toMatchObject({ name: 'Owners', permission: 'owner', includes_all_repositories: true, can_create_org_repo: true })
    expect(sorted(teams.body[0].units)).toEqual(sorted(ALL_UNITS))
    expect((await s.get(`/teams/${teams.body[0].id}/members`, { token: root.token })).body.map((u: any) => u.login)).toEqual(['root'])
    const got = await s.get(`/orgs/${opt.username}`, { token: root.token })
    expect(got.status).toBe(200)
    expect(got.body.name).toBe(opt.username)
    const repos = await s.get(`/orgs/${opt.username}/repos`, { token: root.token })
    expect(repos.status).toBe(200)
    for (const repo of repos.body) expect(repo.private).toBe(false)
    const members = await s.get(`/orgs/${opt.username}/members`, { token: root.token })
    expect(members.status).toBe(200)
    expect(members.body.map((u: any) => u.login)).toEqual(['root'])
  })

  test('the name is case-insensitively unique: a second org with the same name is refused', async () => {
    const r = await s.post('/orgs', { username: 'USER1_ORG' }, { token: olga.token })
    expect(r.status).toBe(422)
    expect(r.body.message).toEqual(expect.any(String))
  })
})

// From api_org_test.go: TestAPIOrgEdit, TestAPIOrgEditBadVisibility (the editor there is the
// site administrator, who is not a member of the organisation)
describe('TestAPIOrgEdit', () => {
  test('a site administrator edits an organisation they do not belong to', async () => {
    const opt = {
      full_name: 'User3 organization new full name',
      description: 'A new description',
      website: 'https://try.gitea.io/new',
      location: 'Beijing',
      visibility: 'private',
    }
    const r = await s.patch('/orgs/org17', opt, { token: root.token })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ name: 'org17', ...opt })
    expect((await s.patch('/orgs/org17', { visibility: 'public' }, { token: root.token })).body.visibility).toBe('public')
  })

  test('a bad visibility answers 422 and changes nothing', async () => {
    const before = (await s.get('/orgs/org17', { token: olga.token })).body
    const r = await s.patch(
      '/orgs/org17',
      { full_name: 'changed', description: 'changed', website: 'https://try.gitea.io/new', location: 'Beijing', visibility: 'badvisibility' },
      { token: olga.token },
    )
    expect(r.status).toBe(422)
    expect(r.body.message).toEqual(expect.any(String))
    expect((await s.get('/orgs/org17', { token: olga.token })).body).toEqual(before)
  })

  test('a member who is not an owner gets 403, an outsider 403, anonymous 401', async () => {
    expect((await s.patch('/orgs/org3', { description: 'x' }, { token: mia.token })).status).toBe(403)
    expect((await s.patch('/orgs/org3', { description: 'x' }, { token: otto.token })).status).toBe(403)
    expect((await s.patch('/orgs/org3', { description: 'x' })).status).toBe(401)
  })
})

// From api_org_test.go: TestAPIOrgDeny (Gitea turns on REQUIRE_SIGNIN_VIEW; the same outcome for
// a private organisation: its page, repositories and members are 404 to outsiders)
describe('TestAPIOrgDeny', () => {
  test('a private organisation is 404 to outsiders and anonymous callers on every read route', async () => {
    expect((await s.post('/orgs', { username: 'hidden_org', visibility: 'private' }, { token: olga.token })).status).toBe(201)
    for (const auth of [{ token: otto.token }, {}]) {
      for (const path of ['/orgs/hidden_org', '/orgs/hidden_org/repos', '/orgs/hidden_org/members', '/orgs/hidden_org/public_members']) {
        const r = await s.get(path, auth)
        expect(r.status).toBe(404)
        expect(r.body.message).toEqual(expect.any(String))
      }
    }
    for (const path of ['/orgs/hidden_org', '/orgs/hidden_org/repos', '/orgs/hidden_org/members'])
      expect((await s.get(path, { token: olga.token })).status).toBe(200)
  })
})

// From api_org_test.go: TestAPIOrgSearchEmptyTeam (the team part; /teams/search is not in the reference)
describe('TestAPIOrgSearchEmptyTeam', () => {
  test('a team without members, covering all repositories, is created and listed', async () => {
    expect((await s.post('/orgs', { username: 'org_with_empty_team' }, { token: root.token })).status).toBe(201)
    const r = await s.post(
      '/orgs/org_with_empty_team/teams',
      { name: 'Empty', includes_all_repositories: true, permission: 'read', units: ['repo.code', 'repo.issues', 'repo.ext_issues', 'repo.wiki', 'repo.pulls'] },
      { token: root.token },
    )
    expect(r.status).toBe(201)
    const list = await s.get('/orgs/org_with_empty_team/teams', { token: root.token })
    expect(list.body.map((t: any) => t.name)).toContain('Empty')
    expect((await s.get(`/teams/${r.body.id}/members`, { token: root.token })).body).toEqual([])
  })
})

// From api_admin_org_test.go: TestAPIAdminOrgCreate, TestAPIAdminOrgCreateBadVisibility,
// TestAPIAdminOrgCreateNotAdmin (Gitea's non-admin there has no token and gets 401; with
// credentials the reference answers 403)
describe('TestAPIAdminOrgCreate', () => {
  test('a site administrator creates a private organisation owned by another user', async () => {
    const opt = {
      username: 'user2_org',
      full_name: "User2's organization",
      description: 'This organization created by admin for user2',
      website: 'https://try.gitea.io',
      location: 'Shanghai',
      visibility: 'private',
    }
    const r = await s.post('/admin/users/olga/orgs', opt, { token: root.token })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ name: opt.username, ...opt, username: opt.username })
    // olga owns it: she sees it, edits it, and it is in her /user/orgs.
    expect((await s.get('/orgs/user2_org', { token: olga.token })).status).toBe(200)
    expect((await s.patch('/orgs/user2_org', { location: 'Berlin' }, { token: olga.token })).status).toBe(200)
    expect((await s.get('/user/orgs', { token: olga.token })).body.map((o: any) => o.username)).toContain('user2_org')
    expect((await s.get('/orgs/user2_org', { token: otto.token })).status).toBe(404)
  })

  test('a bad visibility is 422 and creates nothing', async () => {
    const r = await s.post('/admin/users/olga/orgs', { username: 'user2_org_bad', visibility: 'notvalid' }, { token: root.token })
    expect(r.status).toBe(422)
    expect((await s.get('/orgs/user2_org_bad', { token: root.token })).status).toBe(404)
  })

  test('not an administrator: 403 with credentials, 401 without; nothing created', async () => {
    const opt = { username: 'user2_org_x', visibility: 'public' }
    expect((await s.post('/admin/users/olga/orgs', opt, { token: olga.token })).status).toBe(403)
    expect((await s.post('/admin/users/olga/orgs', opt)).status).toBe(401)
    expect((await s.get('/orgs/user2_org_x', { token: root.token })).status).toBe(404)
  })
})

// From api_team_test.go: TestAPITeam
describe('TestAPITeam', () => {
  let ownersId: number
  test('a team member reads the team with its organisation; outsiders get 404 (reference; modern Gitea 403), anonymous 401', async () => {
    ownersId = (await s.get('/orgs/org3/teams', { token: olga.token })).body.find((t: any) => t.name === 'Owners').id
    const r = await s.get(`/teams/${ownersId}`, { token: olga.token })
    expect(r.status).toBe(200)
    expect(r.body.id).toBe(ownersId)
    expect(r.body.name).toBe('Owners')
    const org = (await s.get('/orgs/org3', { token: olga.token })).body
    expect(r.body.organization).toEqual(org)
    expect((await s.get(`/teams/${ownersId}`, { token: otto.token })).status).toBe(404)
    expect((await s.get(`/teams/${ownersId}`)).status).toBe(401)
  })

  test('a site administrator creates, edits, reads and deletes teams', async () => {
    const create = { name: 'team1', description: 'team one', includes_all_repositories: true, permission: 'write', units: ['repo.code', 'repo.issues'] }
    let r = await s.post('/orgs/org3/teams', create, { token: root.token })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ name: 'team1', description: 'team one', includes_all_repositories: true, permission: 'write' })
    expect(sorted(r.body.units)).toEqual(sorted(create.units))
    const id = r.body.id

    // Edit: name, description, permission admin, includes_all off, units.
    const edit = { name: 'teamone', description: 'team 1', permission: 'admin', includes_all_repositories: false, units: ['repo.code', 'repo.pulls', 'repo.releases'] }
    r = await s.patch(`/teams/${id}`, edit, { token: root.token })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ name: 'teamone', description: 'team 1', permission: 'admin', includes_all_repositories: false })
    // An admin team may use every unit (Gitea gives admin teams all units whatever was sent).
    expect(sorted(r.body.units)).toEqual(sorted(ALL_UNITS))

    // Edit the description only: everything else stays.
    r = await s.patch(`/teams/${id}`, { description: 'first team' }, { token: root.token })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ name: 'teamone', description: 'first team', permission: 'admin', includes_all_repositories: false })
    expect(sorted(r.body.units)).toEqual(sorted(ALL_UNITS))

    // Read it back.
    const read = await s.get(`/teams/${id}`, { token: root.token })
    expect(read.status).toBe(200)
    expect(read.body).toEqual(r.body)

    // Delete it.
    expect((await s.del(`/teams/${id}`, undefined, { token: root.token })).status).toBe(204)
    expect((await s.get(`/teams/${id}`, { token: root.token })).status).toBe(404)
  })

  test('a team created with permission admin gets every unit', async () => {
    const r = await s.post('/orgs/org3/teams', { name: 'teamadmin', description: 'team admin', includes_all_repositories: true, permission: 'admin' }, { token: root.token })
    expect(r.status).toBe(201)
    expect(r.body.permission).toBe('admin')
    expect(sorted(r.body.units)).toEqual(sorted(ALL_UNITS))
    const admin2 = await s.post('/orgs/org3/teams', { name: 'teamadmin2', permission: 'admin', units: ['repo.code'] }, { token: root.token })
    expect(admin2.status).toBe(201)
    expect(sorted(admin2.body.units)).toEqual(sorted(ALL_UNITS))
    for (const id of [r.body.id, admin2.body.id]) expect((await s.del(`/teams/${id}`, undefined, { token: root.token })).status).toBe(204)
  })
})

// From api_team_user_test.go: TestAPITeamUser
describe('TestAPITeamUser', () => {
  test('GET /teams/{id}/members/{user}: 404 for a user not in the team, the User record for a member', async () => {
    const teams = (await s.get('/orgs/org3/teams', { token: mia.token })).body
    const writers = teams.find((t: any) => t.name === 'writers').id
    const r404 = await s.get(`/teams/${writers}/members/olga`, { token: mia.token })
    expect(r404.status).toBe(404)
    expect(r404.body.message).toEqual(expect.any(String))
    const r = await s.get(`/teams/${writers}/members/mia`, { token: mia.token })
    expect(r.status).toBe(200)
    // The same record as the user reads about themself.
    expect(r.body).toEqual((await s.get('/user', { token: mia.token })).body)
    expect((await s.get(`/teams/${writers}/members/nobody`, { token: mia.token })).status).toBe(404)
  })
})

// From api_user_orgs_test.go: TestUserOrgs, TestMyOrgs (modern Gitea answers 401 to anonymous
// callers of /users/{u}/orgs; the reference makes it anonymous-readable, public memberships only)
describe('TestUserOrgs', () => {
  const orgShape = (name: string, fullName = '') => ({
    id: expect.any(Number),
    name,
    username: name,
    full_name: fullName,
    avatar_url: expect.any(String),
    description: '',
    website: '',
    location: '',
    visibility: 'public',
  })

  test('an administrator sees a user’s organisations sorted by name, as Organization records', async () => {
    const r = await s.get('/users/olga/orgs', { token: root.token })
    expect(r.status).toBe(200)
    const names = r.body.map((o: any) => o.username)
    expect(names).toEqual([...names].sort())
    // org17 was edited by TestAPIOrgEdit above.
    expect(r.body.find((o: any) => o.username === 'org17')).toMatchObject({
      ...orgShape('org17', 'User3 organization new full name'),
      description: 'A new description',
      website: 'https://try.gitea.io/new',
      location: 'Beijing',
    })
    expect(r.body.find((o: any) => o.username === 'org3')).toMatchObject(orgShape('org3'))
  })

  test('a concealed membership: the user sees it, an unrelated user and anonymous callers do not', async () => {
    expect((await s.get('/users/mia/orgs', { token: mia.token })).body.map((o: any) => o.username)).toEqual(['org3'])
    const other = await s.get('/users/mia/orgs', { token: otto.token })
    expect(other.status).toBe(200)
    expect(other.body).toEqual([])
    expect((await s.get('/users/mia/orgs')).body).toEqual([])
  })

  test('GET /user/orgs: 401 anonymous; the caller’s organisations sorted by name', async () => {
    expect((await s.get('/user/orgs')).status).toBe(401)
    const r = await s.get('/user/orgs', { token: olga.token })
    expect(r.status).toBe(200)
    const names = r.body.map((o: any) => o.username)
    expect(names).toEqual([...names].sort())
    expect(names).toEqual(expect.arrayContaining(['hidden_org', 'org17', 'org3', 'user2_org']))
    expect(r.body.find((o: any) => o.username === 'org3')).toMatchObject(orgShape('org3'))
  })
})

// From org_test.go: testPrivateOrg, testLimitedOrg, testOrgMembers (the web pages there; the same
// rules through the API: GET /orgs/{org} and GET /repos/{org}/{repo})
describe('TestOrg: private and limited organisations', () => {
  beforeAll(async () => {
    for (const [org, visibility] of [['privated_org', 'private'], ['limited_org', 'limited']]) {
      expect((await s.post('/orgs', { username: org, visibility }, { token: olga.token })).status).toBe(201)
      expect((await s.post(`/orgs/${org}/repos`, { name: `public_repo_on_${visibility}_org` }, { token: olga.token })).status).toBe(201)
      expect((await s.post(`/orgs/${org}/repos`, { name: `private_repo_on_${visibility}_org`, private: true }, { token: olga.token })).status).toBe(201)
    }
    // mia collaborates on the public repository of the private organisation only.
    expect((await s.put('/repos/privated_org/public_repo_on_private_org/collaborators/mia', { permission: 'read' }, { token: olga.token })).status).toBe(204)
  })

  const status = async (path: string, token?: string) => (await s.get(path, token ? { token } : {})).status

  test('private organisation: anonymous and outsiders 404 everywhere; a collaborator sees only their repository; admins all', async () => {
    const org = '/orgs/privated_org'
    const pub = '/repos/privated_org/public_repo_on_private_org'
    const priv = '/repos/privated_org/private_repo_on_private_org'
    for (const token of [undefined, otto.token]) {
      expect(await status(org, token)).toBe(404)
      expect(await status(pub, token)).toBe(404)
      expect(await status(priv, token)).toBe(404)
    }
    expect(await status(org, mia.token)).toBe(404)
    expect(await status(pub, mia.token)).toBe(200)
    expect(await status(priv, mia.token)).toBe(404)
    for (const path of [org, pub, priv]) expect(await status(path, root.token)).toBe(200)
  })

  test('limited organisation: anonymous 404; signed-in outsiders see it and its public repository only; admins all', async () => {
    const org = '/orgs/limited_org'
    const pub = '/repos/limited_org/public_repo_on_limited_org'
    const priv = '/repos/limited_org/private_repo_on_limited_org'
    for (const path of [org, pub, priv]) expect(await status(path)).toBe(404)
    expect(await status(org, otto.token)).toBe(200)
    expect(await status(pub, otto.token)).toBe(200)
    expect(await status(priv, otto.token)).toBe(404)
    for (const path of [org, pub, priv]) expect(await status(path, root.token)).toBe(200)
    // The organisation's repository list follows the same rule.
    expect((await s.get('/orgs/limited_org/repos', { token: otto.token })).body.map((r: any) => r.name)).toEqual(['public_repo_on_limited_org'])
    expect((await s.get('/orgs/limited_org/repos', { token: root.token })).body.map((r: any) => r.name).sort()).toEqual([
      'private_repo_on_limited_org',
      'public_repo_on_limited_org',
    ])
  })

  test('the members of a public organisation are listed for anonymous callers, members and admins', async () => {
    expect((await s.get('/orgs/org3/members')).body.map((u: any) => u.login)).toEqual(['olga'])
    expect((await s.get('/orgs/org3/members', { token: mia.token })).body.map((u: any) => u.login)).toEqual(['mia', 'olga'])
    expect((await s.get('/orgs/org3/members', { token: root.token })).body.map((u: any) => u.login)).toEqual(['mia', 'olga'])
  })
})
