import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'

let s: TestServer
let olga: TestUser // owner of "acme"
let mia: TestUser // member through a team
let otto: TestUser // outsider
let admin: TestUser
let ownersId: number
let devsId: number

const errorShape = () => ({ message: expect.any(String), url: `${s.config.baseUrl}api/swagger` })
const teamNames = async () => (await s.get('/orgs/acme/teams', { token: olga.token })).body.map((t: any) => t.name)

beforeAll(async () => {
  s = await startTestServer()
  admin = await s.user('root', { admin: true })
  olga = await s.user('olga')
  mia = await s.user('mia')
  otto = await s.user('otto')
  expect((await s.post('/orgs', { username: 'acme' }, { token: olga.token })).status).toBe(201)
  ownersId = (await s.get('/orgs/acme/teams', { token: olga.token })).body[0].id
})
afterAll(() => s.stop())

describe('creating teams', () => {
  test('owners create teams; permission defaults to read, units to all', async () => {
    const r = await s.post('/orgs/acme/teams', { name: 'devs', description: 'developers' }, { token: olga.token })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ name: 'devs', description: 'developers', permission: 'read', includes_all_repositories: false, can_create_org_repo: false })
    expect(r.body.units).toContain('repo.code')
    expect(r.body.organization.username).toBe('acme')
    devsId = r.body.id
    const w = await s.post('/orgs/acme/teams', { name: 'writers', permission: 'write', units: ['repo.code'], can_create_org_repo: true }, { token: olga.token })
    expect(w.body).toMatchObject({ permission: 'write', units: ['repo.code'], can_create_org_repo: true })
  })

  test('401 anonymous, 403 outsiders and plain members, 404 unknown org', async () => {
    expect((await s.post('/orgs/acme/teams', { name: 'x' })).status).toBe(401)
    expect((await s.post('/orgs/acme/teams', { name: 'x' }, { token: otto.token })).status).toBe(403)
    expect((await s.put(`/teams/${devsId}/members/mia`, undefined, { token: olga.token })).status).toBe(204)
    expect((await s.post('/orgs/acme/teams', { name: 'x' }, { token: mia.token })).status).toBe(403)
    expect((await s.post('/orgs/nope/teams', { name: 'x' }, { token: olga.token })).status).toBe(404)
    expect((await s.get('/orgs/acme/teams')).status).toBe(401)
    expect((await s.get('/orgs/acme/teams', { token: otto.token })).status).toBe(403)
    expect((await s.get('/orgs/acme/teams', { token: mia.token })).status).toBe(200)
  })

  test('bad input answers 422 in the error shape and creates nothing', async () => {
    const bad: Record<string, unknown>[] = [
      {},
      { name: '' },
      { name: 'with space' },
      { name: 'with/slash' },
      { name: 'x'.repeat(31) },
      { name: 'DEVS' },
      { name: 'Owners' },
      { name: 'ok', permission: 'superuser' },
      { name: 'ok', permission: 'owner' },
      { name: 'ok', permission: 'none' },
      { name: 'ok', description: 'd'.repeat(256) },
      { name: 'ok', units: ['repo.nope'] },
      { name: 'ok', permission: 3 },
    ]
    const before = await teamNames()
    for (const body of bad) {
      const r = await s.post('/orgs/acme/teams', body, { token: olga.token })
      expect(r.status).toBe(422)
      expect(r.body).toMatchObject(errorShape())
    }
    expect((await s.post('/orgs/acme/teams', { name: 'devs' }, { token: olga.token })).body.message).toContain('team already exists')
    expect(await teamNames()).toEqual(before)
    expect((await s.get('/orgs/acme', { token: olga.token })).status).toBe(200)
  })
})

describe('reading and editing teams', () => {
  test('GET /teams/{id}: members of the org; others 404; anonymous 401', async () => {
    expect((await s.get(`/teams/${devsId}`, { token: mia.token })).body.name).toBe('devs')
    expect((await s.get(`/teams/${devsId}`, { token: admin.token })).status).toBe(200)
    expect((await s.get(`/teams/${devsId}`, { token: otto.token })).status).toBe(404)
    expect((await s.get(`/teams/${devsId}`)).status).toBe(401)
    expect((await s.get('/teams/999999', { token: olga.token })).status).toBe(404)
  })

  test('PATCH: owners only (members get 404); absent permission unchanged', async () => {
    expect((await s.patch(`/teams/${devsId}`, { description: 'x' }, { token: mia.token })).status).toBe(404)
    expect((await s.patch(`/teams/${devsId}`, { description: 'x' }, { token: otto.token })).status).toBe(404)
    const w = await s.patch(`/teams/${devsId}`, { permission: 'write' }, { token: olga.token })
    expect(w.body.permission).toBe('write')
    const r = await s.patch(`/teams/${devsId}`, { description: 'the developers', name: 'developers' }, { token: olga.token })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ name: 'developers', description: 'the developers', permission: 'write' })
  })

  test('PATCH bad input: 422 and nothing changed', async () => {
    for (const body of [{ permission: 'root' }, { name: 'writers' }, { name: 'a b' }, { name: 'x'.repeat(31) }, { description: 'd'.repeat(256) }, { units: ['x'] }]) {
      const r = await s.patch(`/teams/${devsId}`, { ...body }, { token: olga.token })
      expect(r.status).toBe(422)
      expect(r.body).toMatchObject(errorShape())
    }
    expect((await s.get(`/teams/${devsId}`, { token: olga.token })).body).toMatchObject({ name: 'developers', permission: 'write', description: 'the developers' })
  })

  test('the Owners team keeps its permission and name and cannot be deleted', async () => {
    expect((await s.patch(`/teams/${ownersId}`, { permission: 'read' }, { token: olga.token })).status).toBe(403)
    expect((await s.patch(`/teams/${ownersId}`, { name: 'Bosses' }, { token: olga.token })).status).toBe(403)
    const ok = await s.patch(`/teams/${ownersId}`, { description: 'the bosses', permission: 'owner' }, { token: olga.token })
    expect(ok.body).toMatchObject({ name: 'Owners', permission: 'owner', description: 'the bosses' })
    const del = await s.del(`/teams/${ownersId}`, undefined, { token: olga.token })
    expect(del.status).toBe(403)
    expect(del.body.message).toContain('Owners team')
    expect(await teamNames()).toContain('Owners')
  })

  test('/user/teams lists the caller’s teams across organisations', async () => {
    expect((await s.get('/user/teams')).status).toBe(401)
    const r = await s.get('/user/teams', { token: mia.token })
    expect(r.body.map((t: any) => t.name)).toEqual(['developers'])
    expect(r.body[0].organization.username).toBe('acme')
    expect((await s.get('/user/teams', { token: olga.token })).body.map((t: any) => t.name)).toEqual(['Owners'])
  })
})

describe('units_map (Gitea 1.23)', () => {
  const ALL = ['repo.code', 'repo.issues', 'repo.ext_issues', 'repo.wiki', 'repo.pulls', 'repo.releases', 'repo.ext_wiki', 'repo.projects', 'repo.packages']
  const sorted = (a: string[]) => [...a].sort()
  const read = async (id: number) => (await s.get(`/teams/${id}`, { token: olga.token })).body

  test('units alone: each listed unit at the team’s permission; an admin team every unit at admin', async () => {
    const one = await s.post('/orgs/acme/teams', { name: 'team1', description: 'team one', includes_all_repositories: true, permission: 'write', units: ['repo.code', 'repo.issues'] }, { token: olga.token })
    expect(one.status).toBe(201)
    expect(one.body).toMatchObject({ permission: 'write', units: ['repo.code', 'repo.issues'], units_map: { 'repo.code': 'write', 'repo.issues': 'write' } })
    expect(Object.keys(one.body.units_map)).toHaveLength(2)
    const admin = await s.patch(`/teams/${one.body.id}`, { name: 'teamone', description: 'team 1', permission: 'admin', includes_all_repositories: false, units: ['repo.code', 'repo.pulls'] }, { token: olga.token })
    expect(admin.body.permission).toBe('admin')
    expect(sorted(admin.body.units)).toEqual(sorted(ALL))
    expect(admin.body.units_map).toEqual(Object.fromEntries(ALL.map((u) => [u, 'admin'])))
    // The description alone changes nothing else; a read gives back the same record.
    const desc = await s.patch(`/teams/${one.body.id}`, { description: 'first team' }, { token: olga.token })
    expect(desc.body).toMatchObject({ permission: 'admin', description: 'first team', units_map: admin.body.units_map })
    expect(await read(one.body.id)).toEqual(desc.body)
    expect((await s.del(`/teams/${one.body.id}`, undefined, { token: olga.token })).status).toBe(204)
  })

  test('units_map takes precedence over units; the permission is the least unit mode above none', async () => {
    const map = { 'repo.code': 'read', 'repo.issues': 'write', 'repo.wiki': 'none' }
    const two = await s.post('/orgs/acme/teams', { name: 'team2', description: 'team two', includes_all_repositories: true, permission: 'write', units: ['repo.releases'], units_map: map }, { token: olga.token })
    expect(two.status).toBe(201)
    expect(two.body).toMatchObject({ name: 'team2', permission: 'read', includes_all_repositories: true, units_map: map })
    expect(Object.keys(two.body.units_map)).toHaveLength(3)
    expect(sorted(two.body.units)).toEqual(sorted(Object.keys(map)))
    const edit = { 'repo.code': 'read', 'repo.pulls': 'read', 'repo.releases': 'write' }
    const edited = await s.patch(`/teams/${two.body.id}`, { name: 'teamtwo', description: 'team 2', permission: 'write', includes_all_repositories: false, units_map: edit }, { token: olga.token })
    expect(edited.status).toBe(200)
    expect(edited.body).toMatchObject({ name: 'teamtwo', permission: 'read', includes_all_repositories: false, units_map: edit })
    expect(Object.keys(edited.body.units_map)).toHaveLength(3)
    const desc = await s.patch(`/teams/${two.body.id}`, { description: 'second team' }, { token: olga.token })
    expect(desc.body).toMatchObject({ permission: 'read', units_map: edit })
    expect(await read(two.body.id)).toEqual(desc.body)
    // Listed with the organisation's teams and the caller's, the same record.
    const listed = (await s.get('/orgs/acme/teams', { token: olga.token })).body.find((t: any) => t.id === two.body.id)
    expect(listed).toEqual(desc.body)
    // A permission changed alone moves the units the team has to it; those at none stay none.
    const moved = await s.patch(`/teams/${two.body.id}`, { permission: 'write' }, { token: olga.token })
    expect(moved.body).toMatchObject({ permission: 'write', units_map: { 'repo.code': 'write', 'repo.pulls': 'write', 'repo.releases': 'write' } })
    const withNone = await s.patch(`/teams/${two.body.id}`, { units_map: { 'repo.code': 'write', 'repo.issues': 'none' } }, { token: olga.token })
    expect(withNone.body.units_map).toEqual({ 'repo.code': 'write', 'repo.issues': 'none' })
    expect((await s.patch(`/teams/${two.body.id}`, { permission: 'read' }, { token: olga.token })).body.units_map).toEqual({ 'repo.code': 'read', 'repo.issues': 'none' })
    // Every unit at none: a team of permission none.
    const none = await s.patch(`/teams/${two.body.id}`, { permission: 'read', units_map: { 'repo.code': 'none' } }, { token: olga.token })
    expect(none.body).toMatchObject({ permission: 'none', units_map: { 'repo.code': 'none' } })
    expect((await s.del(`/teams/${two.body.id}`, undefined, { token: olga.token })).status).toBe(204)
  })

  test('an admin team ignores its units_map; the Owners team reports owner on every unit', async () => {
    const admin = await s.post('/orgs/acme/teams', { name: 'teamadmin', permission: 'admin', units_map: { 'repo.code': 'read' } }, { token: olga.token })
    expect(admin.body).toMatchObject({ permission: 'admin', units_map: Object.fromEntries(ALL.map((u) => [u, 'admin'])) })
    expect((await s.del(`/teams/${admin.body.id}`, undefined, { token: olga.token })).status).toBe(204)
    const owners = await read(ownersId)
    expect(owners.units_map).toEqual(Object.fromEntries(ALL.map((u) => [u, 'owner'])))
    expect(sorted(owners.units)).toEqual(sorted(ALL))
  })

  test('a units_map naming an unknown unit or mode answers 422 and changes nothing', async () => {
    const before = await teamNames()
    for (const units_map of [{ 'repo.nope': 'read' }, { 'repo.code': 'owner' }, { 'repo.code': 'all' }, { 'repo.code': 1 }]) {
      const r = await s.post('/orgs/acme/teams', { name: 'bad', units_map }, { token: olga.token })
      expect(r.status).toBe(422)
      expect(r.body).toMatchObject(errorShape())
      expect((await s.patch(`/teams/${devsId}`, { units_map }, { token: olga.token })).status).toBe(422)
    }
    expect(await teamNames()).toEqual(before)
  })
})

describe('team members', () => {
  test('list, get one, add (idempotent) and remove', async () => {
    const list = await s.get(`/teams/${devsId}/members`, { token: mia.token })
    expect(list.body.map((u: any) => u.login)).toEqual(['mia'])
    expect((await s.get(`/teams/${devsId}/members/mia`, { token: mia.token })).body.login).toBe('mia')
    expect((await s.get(`/teams/${devsId}/members/olga`, { token: mia.token })).status).toBe(404)
    expect((await s.get(`/teams/${devsId}/members/nobody`, { token: mia.token })).status).toBe(404)
    expect((await s.put(`/teams/${devsId}/members/mia`, undefined, { token: olga.token })).status).toBe(204)
    expect((await s.get(`/teams/${devsId}/members`, { token: mia.token })).body).toHaveLength(1)
    expect((await s.put(`/teams/${devsId}/members/nobody`, undefined, { token: olga.token })).status).toBe(404)
    expect((await s.put(`/teams/${devsId}/members/otto`, undefined, { token: mia.token })).status).toBe(404)
    expect((await s.get('/orgs/acme/members', { token: olga.token })).body.map((u: any) => u.login)).toEqual(['mia', 'olga'])
  })

  test('removing a user from their teams keeps them in the organisation', async () => {
    expect((await s.del(`/teams/${devsId}/members/mia`, undefined, { token: mia.token })).status).toBe(404)
    expect((await s.del(`/teams/${devsId}/members/mia`, undefined, { token: olga.token })).status).toBe(204)
    expect((await s.get(`/teams/${devsId}/members`, { token: olga.token })).body).toEqual([])
    expect((await s.get('/orgs/acme/members/mia', { token: olga.token })).status).toBe(204)
    expect((await s.del(`/teams/${devsId}/members/mia`, undefined, { token: olga.token })).status).toBe(404)
  })

  test('the last member of the Owners team cannot be removed', async () => {
    const r = await s.del(`/teams/${ownersId}/members/olga`, undefined, { token: olga.token })
    expect(r.status).toBe(422)
    expect(r.body.message).toContain('last owner')
    expect((await s.put(`/teams/${ownersId}/members/mia`, undefined, { token: olga.token })).status).toBe(204)
    expect((await s.del(`/teams/${ownersId}/members/olga`, undefined, { token: mia.token })).status).toBe(204)
    expect((await s.get(`/teams/${ownersId}/members`, { token: mia.token })).body.map((u: any) => u.login)).toEqual(['mia'])
    // olga is still a member (of no team), no longer an owner
    expect((await s.get(`/teams/${ownersId}`, { token: olga.token })).status).toBe(200)
    expect((await s.patch('/orgs/acme', { description: 'x' }, { token: olga.token })).status).toBe(403)
    expect((await s.put(`/teams/${ownersId}/members/olga`, undefined, { token: mia.token })).status).toBe(204)
  })
})

describe('team repositories', () => {
  test('add, list and remove; the repository must belong to the team’s organisation', async () => {
    expect((await s.post('/org/acme/repos', { name: 'tool', private: true }, { token: olga.token })).status).toBe(201)
    expect((await s.post('/user/repos', { name: 'mine' }, { token: olga.token })).status).toBe(201)
    expect((await s.put(`/teams/${devsId}/repos/olga/mine`, undefined, { token: olga.token })).status).toBe(404)
    expect((await s.put(`/teams/${devsId}/repos/acme/nope`, undefined, { token: olga.token })).status).toBe(404)
    expect((await s.put(`/teams/${devsId}/repos/acme/tool`, undefined, { token: otto.token })).status).toBe(404)
    expect((await s.put(`/teams/${devsId}/repos/acme/tool`)).status).toBe(401)
    expect((await s.put(`/teams/${devsId}/repos/acme/tool`, undefined, { token: olga.token })).status).toBe(204)
    expect((await s.put(`/teams/${devsId}/repos/ACME/Tool`, undefined, { token: olga.token })).status).toBe(204)
    const repos = await s.get(`/teams/${devsId}/repos`, { token: olga.token })
    expect(repos.body.map((r: any) => r.full_name)).toEqual(['acme/tool'])
    expect(repos.headers.get('x-total-count')).toBe('1')
    expect((await s.get(`/teams/${ownersId}/repos`, { token: olga.token })).body.map((r: any) => r.name)).toEqual(['tool'])
    // One of them (Gitea's GetTeamRepo): the record when the team covers it, else 404.
    const one = await s.get(`/teams/${devsId}/repos/ACME/tool`, { token: olga.token })
    expect(one.status).toBe(200)
    expect(one.body).toEqual(repos.body[0])
    expect((await s.get(`/teams/${ownersId}/repos/acme/tool`, { token: olga.token })).body.full_name).toBe('acme/tool')
    expect((await s.get(`/teams/${devsId}/repos/olga/mine`, { token: olga.token })).status).toBe(404)
    expect((await s.get(`/teams/${devsId}/repos/acme/nope`, { token: olga.token })).status).toBe(404)
    expect((await s.get(`/teams/${devsId}/repos/acme/tool`, { token: otto.token })).status).toBe(404)
    expect((await s.get(`/teams/${devsId}/repos/acme/tool`)).status).toBe(401)
    expect((await s.del(`/teams/${devsId}/repos/acme/tool`, undefined, { token: olga.token })).status).toBe(204)
    expect((await s.get(`/teams/${devsId}/repos`, { token: olga.token })).body).toEqual([])
    expect((await s.get(`/teams/${devsId}/repos/acme/tool`, { token: olga.token })).status).toBe(404)
  })

  test('deleting a team keeps its members in the organisation', async () => {
    const t = await s.post('/orgs/acme/teams', { name: 'temp' }, { token: olga.token })
    expect((await s.put(`/teams/${t.body.id}/members/otto`, undefined, { token: olga.token })).status).toBe(204)
    expect((await s.del(`/teams/${t.body.id}`, undefined, { token: otto.token })).status).toBe(404)
    expect((await s.del(`/teams/${t.body.id}`, undefined, { token: olga.token })).status).toBe(204)
    expect((await s.get(`/teams/${t.body.id}`, { token: olga.token })).status).toBe(404)
    expect((await s.get('/orgs/acme/members/otto', { token: olga.token })).status).toBe(204)
    expect(await teamNames()).not.toContain('temp')
  })
})

describe('team paths and counters', () => {
  test('a non-numeric or unknown team id is 404 in the error shape (anonymous still 401)', async () => {
    for (const path of ['/teams/abc', '/teams/1x', '/teams/abc/members', '/teams/abc/repos', '/teams/99999999999999999999']) {
      const r = await s.get(path, { token: olga.token })
      expect(r.status).toBe(404)
      expect(r.body).toEqual(errorShape())
    }
    expect((await s.put('/teams/abc/members/mia', undefined, { token: olga.token })).status).toBe(404)
    expect((await s.patch('/teams/abc', { description: 'x' }, { token: olga.token })).status).toBe(404)
    expect((await s.get('/teams/abc')).status).toBe(401)
  })

  test('member, team and repository counters follow every change', async () => {
    const { teams, users } = await import('../src/db/schema')
    const { eq } = await import('drizzle-orm')
    expect((await s.post('/orgs', { username: 'counted' }, { token: olga.token })).status).toBe(201)
    const org = async () => (await s.deps.db.select().from(users).where(eq(users.lowerName, 'counted')))[0]!
    const team = async (id: number) => (await s.deps.db.select().from(teams).where(eq(teams.id, id)))[0]!
    expect([(await org()).numMembers, (await org()).numTeams]).toEqual([1, 1])
    const a = (await s.post('/orgs/counted/teams', { name: 'a', permission: 'write' }, { token: olga.token })).body.id
    const b = (await s.post('/orgs/counted/teams', { name: 'b' }, { token: olga.token })).body.id
    for (const id of [a, b]) {
      expect((await s.put(`/teams/${id}/members/mia`, undefined, { token: olga.token })).status).toBe(204)
      expect((await s.put(`/teams/${id}/members/mia`, undefined, { token: olga.token })).status).toBe(204)
    }
    expect([(await org()).numMembers, (await org()).numTeams, (await team(a)).numMembers, (await team(b)).numMembers]).toEqual([2, 3, 1, 1])
    expect((await s.post('/orgs/counted/repos', { name: 'r1' }, { token: olga.token })).status).toBe(201)
    expect((await s.put(`/teams/${a}/repos/counted/r1`, undefined, { token: olga.token })).status).toBe(204)
    expect((await s.put(`/teams/${a}/repos/counted/r1`, undefined, { token: olga.token })).status).toBe(204)
    expect([(await team(a)).numRepos, (await org()).numRepos]).toEqual([1, 1])
    expect((await s.del(`/teams/${b}/members/mia`, undefined, { token: olga.token })).status).toBe(204)
    expect([(await org()).numMembers, (await team(b)).numMembers, (await team(a)).numMembers]).toEqual([2, 0, 1])
    expect((await s.del('/orgs/counted/members/mia', undefined, { token: olga.token })).status).toBe(204)
    expect([(await org()).numMembers, (await team(a)).numMembers]).toEqual([1, 0])
    expect((await s.del(`/teams/${b}`, undefined, { token: olga.token })).status).toBe(204)
    expect((await org()).numTeams).toBe(2)
    expect((await s.del(`/teams/${a}/repos/counted/r1`, undefined, { token: olga.token })).status).toBe(204)
    expect((await team(a)).numRepos).toBe(0)
    // Deleting a repository takes it from its teams' counts too.
    expect((await s.put(`/teams/${a}/repos/counted/r1`, undefined, { token: olga.token })).status).toBe(204)
    expect((await team(a)).numRepos).toBe(1)
    expect((await s.del('/repos/counted/r1', undefined, { token: olga.token })).status).toBe(204)
    expect([(await team(a)).numRepos, (await org()).numRepos]).toEqual([0, 0])
  })
})
