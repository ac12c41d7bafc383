import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/**
 * Two lists that showed what the visibility rule hides (src/auth/visibility.ts): the teams of a
 * private organisation to a public-only token of a member (`/user/teams`, `/teams/{id}`), and the
 * running stopwatches (`/user/stopwatches`: repository and issue title) of repositories the caller
 * may not read, to a public-only token or to a collaborator since removed.
 */

let s: TestServer
let owner: TestUser, member: TestUser, root: TestUser, worker: TestUser
let privateTeam = 0
let publicTeam = 0

/** A token of `who` with `scopes`, made through the API with Basic auth. */
async function tokenOf(who: TestUser, name: string, scopes: string[]): Promise<string> {
  const made = await s.post(`/users/${who.name}/tokens`, { name, scopes }, { basic: [who.name, who.password] })
  expect(made.status).toBe(201)
  return made.body.sha1
}

async function teamWith(org: string, name: string, members: TestUser[]): Promise<number> {
  const made = await s.post(`/orgs/${org}/teams`, { name, permission: 'read', units: ['repo.code'] }, { token: owner.token })
  expect(made.status).toBe(201)
  for (const m of members) expect((await s.put(`/teams/${made.body.id}/members/${m.name}`, {}, { token: owner.token })).status).toBe(204)
  return made.body.id
}

beforeAll(async () => {
  s = await startTestServer()
  owner = await s.user('owner')
  member = await s.user('member')
  root = await s.user('root', { admin: true })
  worker = await s.user('worker')
  expect((await s.post('/orgs', { username: 'hidden', visibility: 'private' }, { token: owner.token })).status).toBe(201)
  expect((await s.post('/orgs', { username: 'open' }, { token: owner.token })).status).toBe(201)
  privateTeam = await teamWith('hidden', 'crew', [member])
  publicTeam = await teamWith('open', 'crew', [member])
})
afterAll(() => s.stop())

describe('teams and a public-only token', () => {
  test("a member's public-only token sees no team of a private organisation; a normal token sees them all", async () => {
    const publicOnly = { token: await tokenOf(member, 'po-teams', ['public-only', 'read:user', 'read:organization']) }
    // The organisation itself is hidden from the token, as before.
    expect((await s.get('/orgs/hidden', publicOnly)).status).toBe(404)
    expect((await s.get('/user/orgs', publicOnly)).body.map((o: { username: string }) => o.username)).toEqual(['open'])

    const listed = await s.get('/user/teams', publicOnly)
    expect(listed.status).toBe(200)
    expect(listed.body.map((t: { id: number }) => t.id)).toEqual([publicTeam])
    expect(listed.headers.get('x-total-count')).toBe('1')
    expect((await s.get(`/teams/${privateTeam}`, publicOnly)).status).toBe(404)
    expect((await s.get(`/teams/${privateTeam}/members`, publicOnly)).status).toBe(404)
    expect((await s.get(`/teams/${publicTeam}`, publicOnly)).status).toBe(200)
    expect((await s.get(`/teams/${publicTeam}/members`, publicOnly)).status).toBe(200)

    const normal = { token: member.token }
    const all = await s.get('/user/teams', normal)
    expect(all.body.map((t: { id: number }) => t.id).sort()).toEqual([privateTeam, publicTeam].sort())
    expect(all.headers.get('x-total-count')).toBe('2')
    expect((await s.get(`/teams/${privateTeam}`, normal)).status).toBe(200)
    expect((await s.get(`/teams/${privateTeam}/members`, normal)).status).toBe(200)
  })

  test("a site admin's public-only token sees no team of a private organisation; a normal one does", async () => {
    const publicOnly = { token: await tokenOf(root, 'po-admin', ['public-only', 'read:user', 'read:organization']) }
    expect((await s.get(`/teams/${privateTeam}`, publicOnly)).status).toBe(404)
    expect((await s.get(`/teams/${privateTeam}/members`, publicOnly)).status).toBe(404)
    expect((await s.get(`/teams/${publicTeam}`, publicOnly)).status).toBe(200)
    expect((await s.get(`/teams/${privateTeam}`, { token: root.token })).status).toBe(200)
  })
})

describe('/user/stopwatches', () => {
  const titles = async (token: string) => {
    const listed = await s.get('/user/stopwatches', { token })
    expect(listed.status).toBe(200)
    return { titles: listed.body.map((w: { issue_title: string }) => w.issue_title), total: listed.headers.get('x-total-count') }
  }

  test('a public-only token lists no stopwatch on a private repository, but one on a public repository', async () => {
    for (const [name, isPrivate] of [['vault', true], ['square', false]] as const) {
      expect((await s.post('/user/repos', { name, private: isPrivate }, { token: owner.token })).status).toBe(201)
      expect((await s.put(`/repos/owner/${name}/collaborators/worker`, { permission: 'write' }, { token: owner.token })).status).toBe(204)
      expect((await s.post(`/repos/owner/${name}/issues`, { title: `${name} secret title` }, { token: owner.token })).status).toBe(201)
    }
    const publicOnly = await tokenOf(worker, 'po-watch', ['public-only', 'read:user'])
    // One stopwatch runs at a time: on the private repository, then on the public one.
    expect((await s.post('/repos/owner/vault/issues/1/stopwatch/start', undefined, { token: worker.token })).status).toBe(201)
    expect(await titles(worker.token)).toEqual({ titles: ['vault secret title'], total: '1' })
    expect(await titles(publicOnly)).toEqual({ titles: [], total: '0' })

    expect((await s.post('/repos/owner/square/issues/1/stopwatch/start', undefined, { token: worker.token })).status).toBe(201)
    expect(await titles(publicOnly)).toEqual({ titles: ['square secret title'], total: '1' })
    expect(await titles(worker.token)).toEqual({ titles: ['square secret title'], total: '1' })
  })

  test('a collaborator removed from a private repository no longer sees its stopwatch', async () => {
    const leaver = await s.user('leaver')
    expect((await s.post('/user/repos', { name: 'locker', private: true }, { token: owner.token })).status).toBe(201)
    expect((await s.put('/repos/owner/locker/collaborators/leaver', { permission: 'write' }, { token: owner.token })).status).toBe(204)
    expect((await s.post('/repos/owner/locker/issues', { title: 'locker secret title' }, { token: owner.token })).status).toBe(201)
    expect((await s.post('/repos/owner/locker/issues/1/stopwatch/start', undefined, { token: leaver.token })).status).toBe(201)
    expect(await titles(leaver.token)).toEqual({ titles: ['locker secret title'], total: '1' })
    expect((await s.del('/repos/owner/locker/collaborators/leaver', undefined, { token: owner.token })).status).toBe(204)
    expect(await titles(leaver.token)).toEqual({ titles: [], total: '0' })
  })
})
