import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BAD_WEBSITES, startTestServer, type TestServer, type TestUser } from './helpers'
import { userOrgBlockers } from '../src/modules/orgs/service'
import { sqlitePlanOf, statementRecorder } from './query-counter'

let s: TestServer
let admin: TestUser
let olga: TestUser
let mia: TestUser
let otto: TestUser
let alice: TestUser

const errorShape = (s: TestServer) => ({ message: expect.any(String), url: `${s.config.baseUrl}api/swagger` })

beforeAll(async () => {
  s = await startTestServer()
  admin = await s.user('root', { admin: true })
  olga = await s.user('olga')
  mia = await s.user('mia')
  otto = await s.user('otto')
  alice = await s.user('alice')
})
afterAll(() => s.stop())

describe('creating organisations', () => {
  test('a site admin creates an organisation for a user, who becomes its owner', async () => {
    const r = await s.post('/admin/users/olga/orgs', { username: 'Acme', full_name: 'Acme Inc', description: 'tools', website: 'https://acme.example', location: 'Berlin' }, { token: admin.token })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ username: 'Acme', name: 'Acme', full_name: 'Acme Inc', description: 'tools', website: 'https://acme.example', location: 'Berlin', visibility: 'public', repo_admin_change_team_access: false })
    expect(typeof r.body.id).toBe('number')
    expect(r.body.avatar_url).toStartWith('https://')
    const teams = await s.get('/orgs/acme/teams', { token: olga.token })
    expect(teams.status).toBe(200)
    expect(teams.body).toHaveLength(1)
    expect(teams.body[0]).toMatchObject({ name: 'Owners', permission: 'owner', includes_all_repositories: true, can_create_org_repo: true })
    expect(teams.body[0].organization.username).toBe('Acme')
    const check = await s.get('/orgs/acme/members/olga', { token: olga.token })
    expect(check.status).toBe(204)
    expect(check.text).toBe('')
  })

  test('admin route: 401 anonymous, 403 non-admin, 404 unknown user', async () => {
    expect((await s.post('/admin/users/olga/orgs', { username: 'x1' })).status).toBe(401)
    expect((await s.post('/admin/users/olga/orgs', { username: 'x1' }, { token: olga.token })).status).toBe(403)
    const r = await s.post('/admin/users/nobody/orgs', { username: 'x1' }, { token: admin.token })
    expect(r.status).toBe(404)
    expect(r.body).toEqual(errorShape(s))
    expect((await s.get('/orgs/x1')).status).toBe(404)
  })

  test('POST /orgs for a signed-in user; 401 without one', async () => {
    expect((await s.post('/orgs', { username: 'miaorg' })).status).toBe(401)
    const r = await s.post('/orgs', { username: 'miaorg', visibility: 'private' }, { token: mia.token })
    expect(r.status).toBe(201)
    expect(r.body.visibility).toBe('private')
  })

  test('organisation and user names share one namespace', async () => {
    for (const name of ['olga', 'OLGA', 'acme', 'ACME']) {
      const r = await s.post('/orgs', { username: name }, { token: mia.token })
      expect(r.status).toBe(422)
      expect(r.body.message).toContain('already exists')
    }
    const { createUser } = await import('../src/modules/users/service')
    await expect(createUser(s.deps, { username: 'Acme', email: 'acme@example.com', password: 'x' })).rejects.toThrow('already exists')
  })

  test('bad input answers 422 in the error shape and creates nothing', async () => {
    const bad: Record<string, unknown>[] = [
      {},
      { username: '' },
      { username: 'has space' },
      { username: 'has/slash' },
      { username: 'x'.repeat(41) },
      { username: 'api' },
      { username: 'okname', full_name: 'f'.repeat(101) },
      { username: 'okname', description: 'd'.repeat(256) },
      { username: 'okname', location: 'l'.repeat(51) },
      { username: 'okname', website: 'not a url' },
      { username: 'okname', visibility: 'secret' },
      { username: 42 },
    ]
    const before = (await s.get('/admin/orgs', { token: admin.token })).body.length
    for (const body of bad) {
      const r = await s.post('/orgs', body, { token: mia.token })
      expect(r.status).toBe(422)
      expect(r.body).toMatchObject(errorShape(s))
    }
    expect((await s.get('/orgs/okname')).status).toBe(404)
    expect((await s.get('/admin/orgs', { token: admin.token })).body.length).toBe(before)
  })

  test('a user who may not create organisations gets 403', async () => {
    const { users } = await import('../src/db/schema')
    const { eq } = await import('drizzle-orm')
    const limited = await s.user('limited')
    await s.deps.db.update(users).set({ allowCreateOrganization: false }).where(eq(users.id, limited.user.id))
    expect((await s.post('/orgs', { username: 'limorg' }, { token: limited.token })).status).toBe(403)
  })
})

describe('reading and editing organisations', () => {
  test('GET /orgs/{org} for everyone; private ones only for members and admins', async () => {
    expect((await s.get('/orgs/acme')).body.username).toBe('Acme')
    expect((await s.get('/orgs/miaorg')).status).toBe(404)
    expect((await s.get('/orgs/miaorg', { token: otto.token })).status).toBe(404)
    expect((await s.get('/orgs/miaorg', { token: mia.token })).status).toBe(200)
    expect((await s.get('/orgs/miaorg', { token: admin.token })).status).toBe(200)
    expect((await s.get('/orgs/olga')).status).toBe(404)
  })

  test('GET /users/{org} hides private organisations from outsiders and limited ones from anonymous callers', async () => {
    expect((await s.get('/users/miaorg')).status).toBe(404)
    expect((await s.get('/users/miaorg', { token: otto.token })).status).toBe(404)
    expect((await s.get('/users/miaorg', { token: mia.token })).body.login).toBe('miaorg')
    expect((await s.get('/users/miaorg', { token: admin.token })).status).toBe(200)
    // Its repository list hides it the same way (a hidden organisation is like an unknown name).
    expect((await s.get('/users/miaorg/repos')).status).toBe(404)
    expect((await s.get('/users/miaorg/repos', { token: otto.token })).status).toBe(404)
    expect((await s.get('/users/miaorg/repos', { token: mia.token })).status).toBe(200)
    expect((await s.get('/users/miaorg/repos', { token: admin.token })).status).toBe(200)
    expect((await s.post('/orgs', { username: 'limorg', visibility: 'limited' }, { token: mia.token })).status).toBe(201)
    expect((await s.get('/users/limorg')).status).toBe(404)
    expect((await s.get('/users/limorg', { token: otto.token })).status).toBe(200)
    expect((await s.get('/users/limorg/repos')).status).toBe(404)
    expect((await s.get('/users/limorg/repos', { token: otto.token })).status).toBe(200)
    expect((await s.get('/users/acme')).status).toBe(200)
    expect((await s.get('/orgs/limorg')).status).toBe(404)
    expect((await s.del('/orgs/limorg', undefined, { token: mia.token })).status).toBe(204)
  })

  test('PATCH /orgs/{org}: owners only, absent fields unchanged', async () => {
    expect((await s.patch('/orgs/acme', { description: 'x' })).status).toBe(401)
    expect((await s.patch('/orgs/acme', { description: 'x' }, { token: otto.token })).status).toBe(403)
    const r = await s.patch('/orgs/acme', { description: 'new tools' }, { token: olga.token })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ description: 'new tools', full_name: 'Acme Inc', website: 'https://acme.example' })
    const bad = await s.patch('/orgs/acme', { visibility: 'nope', description: 'changed?' }, { token: olga.token })
    expect(bad.status).toBe(422)
    expect((await s.get('/orgs/acme')).body.description).toBe('new tools')
    expect((await s.patch('/orgs/acme', { location: 'Paris' }, { token: admin.token })).body.location).toBe('Paris')
  })

  test("the organisation's e-mail is hidden from callers who are not signed in", async () => {
    expect((await s.patch('/orgs/acme', { email: 'hello@acme.example' }, { token: olga.token })).body.email).toBe('hello@acme.example')
    expect((await s.get('/orgs/acme')).body.email).toBe('')
    expect((await s.get('/users/acme')).body.email).toBe('')
    expect((await s.get('/orgs/acme', { token: otto.token })).body.email).toBe('hello@acme.example')
    expect((await s.get('/users/acme', { token: otto.token })).body.email).toBe('hello@acme.example')
    expect((await s.patch('/orgs/acme', { email: '' }, { token: olga.token })).body.email).toBe('')
  })

  test('routes that need a signed-in caller answer 401 to anonymous callers whatever the organisation', async () => {
    for (const org of ['acme', 'miaorg', 'no-such-org']) {
      const calls = [
        s.patch(`/orgs/${org}`, { description: 'x' }),
        s.del(`/orgs/${org}`),
        s.get(`/orgs/${org}/teams`),
        s.post(`/orgs/${org}/teams`, { name: 'x' }),
        s.get(`/orgs/${org}/members/mia`),
        s.del(`/orgs/${org}/members/mia`),
        s.put(`/orgs/${org}/public_members/mia`),
        s.del(`/orgs/${org}/public_members/mia`),
        s.post(`/orgs/${org}/repos`, { name: 'x' }),
        s.post(`/org/${org}/repos`, { name: 'x' }),
      ]
      for (const r of await Promise.all(calls)) {
        expect(r.status).toBe(401)
        expect(r.body).toEqual(errorShape(s))
      }
    }
    expect((await s.get('/orgs/miaorg', { token: mia.token })).body.description).toBe('')
  })

  test('GET /admin/orgs: site admins only, paged', async () => {
    expect((await s.get('/admin/orgs')).status).toBe(401)
    expect((await s.get('/admin/orgs', { token: olga.token })).status).toBe(403)
    const r = await s.get('/admin/orgs?limit=1', { token: admin.token })
    expect(r.status).toBe(200)
    expect(r.body).toHaveLength(1)
    expect(r.headers.get('x-total-count')).toBe('2')
    expect(r.headers.get('link')).toContain('rel="next"')
  })

  test('an organisation website: the same rule', async () => {
    for (const website of BAD_WEBSITES) expect((await s.post('/orgs', { username: 'badsite', website }, { token: alice.token })).status).toBe(422)
    expect((await s.post('/orgs', { username: 'goodsite', website: 'http://example.org' }, { token: alice.token })).status).toBe(201)
    expect((await s.patch('/orgs/goodsite', { website: 'javascript:alert(1)' }, { token: alice.token })).status).toBe(422)
    expect((await s.get('/orgs/goodsite')).body.website).toBe('http://example.org')
  })
})

describe('members and public members', () => {
  let teamId: number
  beforeAll(async () => {
    const r = await s.post('/orgs/acme/teams', { name: 'devs', permission: 'write' }, { token: olga.token })
    teamId = r.body.id
    expect((await s.put(`/teams/${teamId}/members/mia`, undefined, { token: olga.token })).status).toBe(204)
  })

  test('adding a team member adds them to the organisation', async () => {
    expect((await s.get('/orgs/acme/members/mia', { token: olga.token })).status).toBe(204)
    const members = await s.get('/orgs/acme/members', { token: mia.token })
    expect(members.body.map((u: any) => u.login)).toEqual(['mia', 'olga'])
  })

  test('membership checks need a signed-in caller; outsiders are sent to the public check', async () => {
    expect((await s.get('/orgs/acme/members/mia')).status).toBe(401)
    expect((await s.get('/orgs/acme/members/otto', { token: mia.token })).status).toBe(404)
    expect((await s.get('/orgs/acme/members/otto', { token: otto.token })).status).toBe(404)
    const outsider = await s.get('/orgs/acme/members/mia', { token: otto.token })
    expect(outsider.status).toBe(302)
    expect(outsider.headers.get('location')).toBe(`${s.config.baseUrl}api/v1/orgs/Acme/public_members/mia`)
    expect((await s.get('/orgs/acme/members/nobody', { token: mia.token })).status).toBe(404)
  })

  test('non-members see only public members; e-mails hidden from anonymous callers', async () => {
    expect((await s.get('/orgs/acme/members')).body).toEqual([])
    expect((await s.get('/orgs/acme/public_members')).body).toEqual([])
    expect((await s.get('/orgs/acme/public_members/mia')).status).toBe(404)
    expect((await s.get('/users/mia/orgs')).body).toEqual([])

    expect((await s.put('/orgs/acme/public_members/mia')).status).toBe(401)
    expect((await s.put('/orgs/acme/public_members/mia', undefined, { token: olga.token })).body.message).toBe('Cannot publicize another member')
    expect((await s.put('/orgs/acme/public_members/mia', undefined, { token: otto.token })).status).toBe(403)
    expect((await s.put('/orgs/acme/public_members/mia', undefined, { token: mia.token })).status).toBe(204)

    expect((await s.get('/orgs/acme/public_members/mia')).status).toBe(204)
    const anon = await s.get('/orgs/acme/members')
    expect(anon.body.map((u: any) => u.login)).toEqual(['mia'])
    expect(anon.body[0].email).not.toBe('mia@example.com')
    expect((await s.get('/orgs/acme/members', { token: otto.token })).body[0].email).toBe('mia@example.com')
    expect((await s.get('/users/mia/orgs')).body.map((o: any) => o.username)).toEqual(['Acme'])
    const outsider = await s.get('/orgs/acme/members/mia', { token: otto.token })
    expect(outsider.status).toBe(302)
    expect((await fetch(outsider.headers.get('location')!)).status).toBe(204)
  })

  test('a member may conceal only themself; owners may conceal anyone', async () => {
    expect((await s.put('/orgs/acme/public_members/olga', undefined, { token: olga.token })).status).toBe(204)
    const forbidden = await s.del('/orgs/acme/public_members/olga', undefined, { token: mia.token })
    expect(forbidden.status).toBe(403)
    expect(forbidden.body.message).toBe('Cannot conceal another member')
    expect((await s.get('/orgs/acme/public_members/olga')).status).toBe(204)
    expect((await s.del('/orgs/acme/public_members/mia', undefined, { token: olga.token })).status).toBe(204)
    expect((await s.get('/orgs/acme/public_members/mia')).status).toBe(404)
    expect((await s.get('/orgs/acme/public_members')).body.map((u: any) => u.login)).toEqual(['olga'])
  })

  test('/user/orgs lists concealed memberships too; /users/{u}/orgs shows them to the user and admins', async () => {
    expect((await s.get('/user/orgs')).status).toBe(401)
    expect((await s.get('/user/orgs', { token: mia.token })).body.map((o: any) => o.username)).toEqual(['Acme', 'miaorg'])
    expect((await s.get('/users/mia/orgs', { token: mia.token })).body.map((o: any) => o.username)).toEqual(['Acme', 'miaorg'])
    expect((await s.get('/users/mia/orgs', { token: admin.token })).body).toHaveLength(2)
    expect((await s.get('/users/mia/orgs', { token: otto.token })).body).toEqual([])
    expect((await s.get('/users/nobody/orgs')).status).toBe(404)
  })

  test('DELETE member: owners only; removes from every team; the last owner stays', async () => {
    expect((await s.del('/orgs/acme/members/mia')).status).toBe(401)
    expect((await s.del('/orgs/acme/members/mia', undefined, { token: otto.token })).status).toBe(403)
    expect((await s.del('/orgs/acme/members/olga', undefined, { token: mia.token })).status).toBe(403)
    const sent = statementRecorder(s.deps.db)
    let last!: Awaited<ReturnType<TestServer['del']>>
    const reads = await sent.during(async () => (last = await s.del('/orgs/acme/members/olga', undefined, { token: olga.token })))
    expect(last.status).toBe(422)
    expect((last.body as { message: string }).message).toContain('last owner')
    // SQLite's plan of the owners' count: by the organisation's teams, never every membership of the site.
    if (s.deps.db.$runtime.dialect === 'sqlite') {
      const owners = reads.find((text) => /^select count\(\*\) from "team_users" inner join "teams"/.test(text))
      expect(owners).toBeDefined()
      const plan = sqlitePlanOf(s.deps.db, owners!)
      expect(plan).toContain('SEARCH teams USING INDEX teams_org_name_uq (org_id=?)')
      expect(plan.filter((step) => step.startsWith('SCAN'))).toEqual([])
    }
    expect((await s.get('/orgs/acme/members/olga', { token: olga.token })).status).toBe(204)

    expect((await s.del('/orgs/acme/members/mia', undefined, { token: olga.token })).status).toBe(204)
    expect((await s.get('/orgs/acme/members/mia', { token: olga.token })).status).toBe(404)
    expect((await s.get(`/teams/${teamId}/members`, { token: olga.token })).body).toEqual([])
    expect((await s.get(`/teams/${teamId}`, { token: mia.token })).status).toBe(404)
    expect((await s.del('/orgs/acme/members/mia', undefined, { token: olga.token })).status).toBe(404)
  })
})

describe('deleting organisations and owners', () => {
  test('userOrgBlockers names the organisations a user owns alone', async () => {
    expect(await userOrgBlockers(s.deps, olga.user.id)).toContain('Acme')
    expect(await userOrgBlockers(s.deps, otto.user.id)).toBeNull()
    const owners = (await s.get('/orgs/acme/teams', { token: olga.token })).body.find((t: any) => t.name === 'Owners')
    expect((await s.put(`/teams/${owners.id}/members/otto`, undefined, { token: olga.token })).status).toBe(204)
    expect(await userOrgBlockers(s.deps, olga.user.id)).toBeNull()
    expect(await userOrgBlockers(s.deps, mia.user.id)).toContain('miaorg')
  })

  test('an organisation that owns repositories cannot be deleted', async () => {
    expect((await s.post('/org/miaorg/repos', { name: 'keep' }, { token: mia.token })).status).toBe(201)
    expect((await s.del('/orgs/miaorg')).status).toBe(401) // sign-in is checked first (Gitea's reqToken)
    expect((await s.del('/orgs/miaorg', undefined, { token: otto.token })).status).toBe(404)
    const r = await s.del('/orgs/miaorg', undefined, { token: mia.token })
    expect(r.status).toBe(422)
    expect(r.body.message).toContain('still owns 1 repository')
    expect((await s.get('/orgs/miaorg', { token: mia.token })).status).toBe(200)
  })

  test('organisation repositories: unknown org 404, outsiders 403, name clash 409', async () => {
    expect((await s.post('/org/nope/repos', { name: 'x' }, { token: mia.token })).status).toBe(404)
    expect((await s.post('/orgs/acme/repos', { name: 'x' }, { token: mia.token })).status).toBe(403)
    expect((await s.post('/orgs/miaorg/repos', { name: 'KEEP' }, { token: mia.token })).status).toBe(409)
    const bad = await s.post('/orgs/miaorg/repos', { name: 'a b' }, { token: mia.token })
    expect(bad.status).toBe(422)
    expect((await s.get('/orgs/miaorg/repos', { token: mia.token })).body.map((r: any) => r.name)).toEqual(['keep'])
  })

  test('the OpenAPI document names every organisation and team route', async () => {
    const spec: any = await (await fetch(`${s.url}/swagger.v1.json`)).json()
    const ids = new Set(Object.values(spec.paths).flatMap((p: any) => Object.values(p).map((op: any) => op.operationId)))
    for (const id of ['adminCreateOrg', 'adminGetAllOrgs', 'orgCreate', 'orgGet', 'orgEdit', 'orgDelete', 'orgListMembers', 'orgIsMember',
      'orgDeleteMember', 'orgListPublicMembers', 'orgIsPublicMember', 'orgPublicizeMember', 'orgConcealMember', 'orgListRepos',
      'createOrgRepo', 'orgListCurrentUserOrgs', 'orgListUserOrgs', 'orgListTeams', 'orgCreateTeam', 'orgGetTeam', 'orgEditTeam',
      'orgDeleteTeam', 'orgListTeamMembers', 'orgListTeamMember', 'orgAddTeamMember', 'orgRemoveTeamMember', 'orgListTeamRepos',
      'orgAddTeamRepository', 'orgRemoveTeamRepository', 'userListTeams'])
      expect(ids.has(id)).toBe(true)
  })

  test('an owner deletes an empty organisation with its teams', async () => {
    const created = await s.post('/orgs', { username: 'tmporg' }, { token: otto.token })
    const teams = (await s.get('/orgs/tmporg/teams', { token: otto.token })).body
    expect((await s.del('/orgs/tmporg', undefined, { token: mia.token })).status).toBe(403)
    expect((await s.del('/orgs/tmporg', undefined, { token: otto.token })).status).toBe(204)
    expect(created.status).toBe(201)
    expect((await s.get('/orgs/tmporg')).status).toBe(404)
    expect((await s.get(`/teams/${teams[0].id}`, { token: otto.token })).status).toBe(404)
    expect((await s.get('/user/orgs', { token: otto.token })).body.map((o: any) => o.username)).toEqual(['Acme'])
  })
})
