import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from './helpers'
import { AccessMode, accessLevels, type RepoRow } from '../src/auth/access'
import type { UserRow } from '../src/auth/caller'
import { grantedRepoCondition, grantedRepoIds, ownerVisibleTo, readableRepoCondition, readableUnitsCondition, visibleOwnerCondition } from '../src/auth/visibility'
import type { RepoUnitKey } from '../src/auth/access-mode'
import { and, eq, inArray, or, sql, type SQL } from 'drizzle-orm'
import { repositories, users } from '../src/db/schema'
import { createAccessToken, createUser, followUser } from '../src/modules/users/service'
import { createOrganization, setMemberVisibility } from '../src/modules/orgs/service'
import { addTeamMember, addTeamRepo, createTeam } from '../src/modules/teams/service'
import { loadOrg } from '../src/auth/org-context'
import { loadTeam } from '../src/auth/team-context'
import { createRepository } from '../src/modules/repos/create'
import { addCollaborator } from '../src/modules/collaborators/service'

/*
 * The one visibility rule (src/auth/visibility.ts): its code form and its SQL form agree for every
 * kind of caller over every user, organisation and repository; and the routes under
 * /users/{username} answer for an invisible user exactly as for an unknown one.
 */

let s: TestServer
const people: Record<string, UserRow> = {}
const tokens: Record<string, string> = {}
const orgs: Record<string, UserRow> = {}
const repos: Record<string, RepoRow> = {}

async function person(name: string, visibility: string, isAdmin = false) {
  const row = await createUser(s.deps, { username: name, email: `${name}@example.com`, password: `pw-${name}-secret`, visibility, isAdmin })
  people[name] = row
  tokens[name] = (await createAccessToken(s.deps, row.id, 'test')).secret
  return row
}

beforeAll(async () => {
  s = await startTestServer()
  // Owners of each visibility.
  await person('pubu', 'public')
  await person('limu', 'limited')
  await person('privu', 'private') // also the "owner" caller
  await person('privfan', 'private') // follows the stranger
  await person('privmate', 'private') // shares an organisation with the member
  // Callers.
  await person('stranger', 'public')
  await person('member', 'public')
  await person('collab', 'public')
  await person('teamer', 'public')
  await person('boss', 'public')
  await person('siteadmin', 'public', true)
  await person('wholer', 'public') // in a team covering all of an organisation's repositories
  await person('unitter', 'public') // in a team giving the issues unit, not the pull requests one
  await followUser(s.deps, people.privfan!, people.stranger!)

  for (const v of ['public', 'limited', 'private']) orgs[v] = await createOrganization(s.deps, people.boss!, { username: `org-${v}`, visibility: v })
  const owners: UserRow[] = [people.pubu!, people.limu!, people.privu!, people.privfan!, ...Object.values(orgs)]
  for (const owner of owners)
    for (const priv of [false, true])
      repos[`${owner.name}/${priv ? 'priv' : 'pub'}`] = await createRepository(s.deps, owner, { name: priv ? 'priv' : 'pub', private: priv })

  for (const org of Object.values(orgs)) {
    const ctx = await loadOrg(s.deps, org.name, people.boss!)
    // The member: in a read team covering no repository (privmate too, in the private org).
    const readers = await createTeam(s.deps, ctx, { name: 'readers', permission: 'read' })
    const readersCtx = await loadTeam(s.deps, readers.id, people.boss!)
    await addTeamMember(s.deps, readersCtx, people.member!)
    if (org.visibility === 'private') await addTeamMember(s.deps, readersCtx, people.privmate!)
    // The team member: in a write team covering the organisation's private repository.
    const writers = await createTeam(s.deps, ctx, { name: 'writers', permission: 'write' })
    const writersCtx = await loadTeam(s.deps, writers.id, people.boss!)
    await addTeamMember(s.deps, writersCtx, people.teamer!)
    await addTeamRepo(s.deps, writersCtx, org.name, 'priv')
    if (org.visibility !== 'public') {
      const everything = await createTeam(s.deps, ctx, { name: 'everything', permission: 'read', includes_all_repositories: true })
      await addTeamMember(s.deps, await loadTeam(s.deps, everything.id, people.boss!), people.wholer!)
    }
    if (org.visibility === 'private') {
      const issuesOnly = await createTeam(s.deps, ctx, { name: 'issues-only', permission: 'read', units_map: { 'repo.issues': 'read', 'repo.code': 'read' } })
      const issuesCtx = await loadTeam(s.deps, issuesOnly.id, people.boss!)
      await addTeamMember(s.deps, issuesCtx, people.unitter!)
      await addTeamRepo(s.deps, issuesCtx, org.name, 'priv')
    }
  }
  // The collaborator: on every private repository of a person, and on the private organisation's public one.
  for (const owner of [people.pubu!, people.limu!, people.privu!, people.privfan!]) await addCollaborator(s.deps, repos[`${owner.name}/priv`]!, people.collab!, 'read')
  await addCollaborator(s.deps, repos['org-private/pub']!, people.collab!, 'read')
})
afterAll(() => s.stop())

const callers = (): [string, UserRow | null][] => [
  ['anonymous', null],
  ['stranger', people.stranger!],
  ['member', people.member!],
  ['collaborator', people.collab!],
  ['team member', people.teamer!],
  ['owner', people.privu!],
  ['site admin', people.siteadmin!],
  // Signed in with a public-only token (src/auth/caller.ts marks the acting user).
  ['owner, public-only', { ...people.privu!, publicOnly: true }],
  ['site admin, public-only', { ...people.siteadmin!, publicOnly: true }],
]

const allOwners = async () => await s.deps.db.select().from(users)
const allRepos = async () => await s.deps.db.select().from(repositories)

/** The owners the code form of the rule shows to `viewer`. */
async function visibleByCode(owners: UserRow[], viewer: UserRow | null): Promise<UserRow[]> {
  const shown: UserRow[] = []
  for (const o of owners) if (await ownerVisibleTo(s.deps.db, o, viewer)) shown.push(o)
  return shown
}

describe('the code and SQL forms agree', () => {
  for (const kind of ['anonymous', 'stranger', 'member', 'collaborator', 'team member', 'owner', 'site admin', 'owner, public-only', 'site admin, public-only'])
    test(`for the ${kind}`, async () => {
      const viewer = callers().find(([k]) => k === kind)![1]
      const owners = await allOwners()
      const bySql = new Set((await s.deps.db.select({ id: users.id }).from(users).where(visibleOwnerCondition(viewer))).map((r) => r.id))
      const byCode = new Set((await visibleByCode(owners, viewer)).map((o) => o.id))
      expect([...bySql].sort()).toEqual([...byCode].sort())

      const list = await allRepos()
      const levels = await accessLevels(s.deps.db, viewer, list)
      const readableByCode = list.filter((r) => (levels.get(r.id) ?? 0) >= AccessMode.Read).map((r) => r.id)
      const readableBySql = (await s.deps.db.select({ id: repositories.id }).from(repositories).where(readableRepoCondition(viewer))).map((r) => r.id)
      expect(readableBySql.sort()).toEqual(readableByCode.sort())
      // One repository at a time (the repository routes' path) gives the same answers.
      for (const r of list) expect((await accessLevels(s.deps.db, viewer, [r])).get(r.id)).toBe(levels.get(r.id)!)
    })
})

describe('rows of several kinds, each read through its own unit', () => {
  test('one condition names what the condition of each unit names for its rows', async () => {
    // Two kinds of row told apart by a column (here a repository's privacy), each of its unit.
    const pairs: [RepoUnitKey, RepoUnitKey][] = [['repo.issues', 'repo.pulls'], ['repo.pulls', 'repo.issues'], ['repo.code', 'repo.pulls']]
    const ids = async (where: SQL | undefined) => (await s.deps.db.select({ id: repositories.id }).from(repositories).where(where)).map((r) => r.id).sort()
    const viewers: [string, UserRow | null][] = [...callers(), ['issues-only team member', people.unitter!], ['whole-organisation team member', people.wholer!]]
    for (const [, viewer] of viewers)
      for (const [pub, priv] of pairs) {
        const kinds: [SQL, RepoUnitKey][] = [[eq(repositories.isPrivate, false), pub], [eq(repositories.isPrivate, true), priv]]
        const each = or(...kinds.map(([kind, unit]) => and(kind, readableRepoCondition(viewer, unit) ?? sql`1 = 1`)))
        const together = await ids(readableUnitsCondition(viewer, kinds))
        expect(together).toEqual(await ids(each))
      }
    // The units do tell rows apart: the issues-only member reads the private repository's issues, not its pull requests.
    const priv = repos['org-private/priv']!.id
    const onlyIssues = await ids(readableUnitsCondition(people.unitter!, [[eq(repositories.isPrivate, false), 'repo.pulls'], [eq(repositories.isPrivate, true), 'repo.issues']]))
    const onlyPulls = await ids(readableUnitsCondition(people.unitter!, [[eq(repositories.isPrivate, false), 'repo.issues'], [eq(repositories.isPrivate, true), 'repo.pulls']]))
    expect([onlyIssues.includes(priv), onlyPulls.includes(priv)]).toEqual([true, false])
  })
})

describe("the repositories granted to someone: a test of each repository, the list of their ids, a person's own list", () => {
  test('name the same repositories for every person', async () => {
    for (const person of Object.values(people)) {
      const tested = (await s.deps.db.select({ id: repositories.id }).from(repositories).where(grantedRepoCondition(person.id))).map((r) => r.id)
      const listed = (await s.deps.db.select({ id: repositories.id }).from(repositories).where(inArray(repositories.id, grantedRepoIds(person.id)))).map((r) => r.id)
      expect({ person: person.name, ids: listed.sort() }).toEqual({ person: person.name, ids: tested.sort() })
      // GET /user/repos: their own and those granted, by name.
      const own = (await s.deps.db.select().from(repositories).where(or(eq(repositories.ownerId, person.id), grantedRepoCondition(person.id))))
        .map((r) => `${r.ownerName}/${r.name}`)
        .sort()
      const answered = await s.get('/user/repos?limit=50', { token: tokens[person.name]! })
      expect({ person: person.name, repos: answered.body.map((r: { full_name: string }) => r.full_name).sort() }).toEqual({ person: person.name, repos: own })
      expect(answered.headers.get('x-total-count')).toBe(String(own.length))
    }
    // What the world gives: a collaborator's, a team's own repository, every repository of organisations (owners' team, a team covering all).
    expect((await s.get('/user/repos', { token: tokens.wholer! })).body.map((r: { full_name: string }) => r.full_name).sort()).toEqual([
      'org-limited/priv',
      'org-limited/pub',
      'org-private/priv',
      'org-private/pub',
    ])
    expect((await s.get('/user/repos', { token: tokens.boss! })).body.length).toBe(6)
    expect((await s.get('/user/repos', { token: tokens.teamer! })).body.map((r: { full_name: string }) => r.full_name).sort()).toEqual([
      'org-limited/priv',
      'org-private/priv',
      'org-public/priv',
    ])
  })
})

describe('what each caller sees', () => {
  const seenOwners = async (viewer: UserRow | null) =>
    new Set((await visibleByCode(await allOwners(), viewer)).map((o) => o.name))
  const readable = async (viewer: UserRow | null) => {
    const list = await allRepos()
    const ids = new Set((await s.deps.db.select({ id: repositories.id }).from(repositories).where(readableRepoCondition(viewer))).map((r) => r.id))
    return new Set(list.filter((r) => ids.has(r.id)).map((r) => `${r.ownerName}/${r.name}`))
  }

  test('owners: public to all, limited to signed-in callers, private to self, members, ties and admins', async () => {
    const anon = await seenOwners(null)
    expect(anon.has('pubu') && anon.has('org-public')).toBe(true)
    for (const hidden of ['limu', 'privu', 'org-limited', 'org-private']) expect(anon.has(hidden)).toBe(false)
    const stranger = await seenOwners(people.stranger!)
    expect(stranger.has('limu') && stranger.has('org-limited')).toBe(true)
    expect(stranger.has('privfan')).toBe(true) // privfan follows the stranger (Gitea: they see each other)
    for (const hidden of ['privu', 'privmate', 'org-private']) expect(stranger.has(hidden)).toBe(false)
    const member = await seenOwners(people.member!)
    expect(member.has('org-private') && member.has('privmate')).toBe(true) // member of the org; shares it with privmate
    expect(member.has('privu') || member.has('privfan')).toBe(false)
    expect((await seenOwners(people.privu!)).has('privu')).toBe(true)
    expect((await seenOwners(people.siteadmin!)).size).toBe((await allOwners()).length)
  })

  test('a public-only caller sees what an anonymous one sees, owners and repositories', async () => {
    for (const kind of ['owner, public-only', 'site admin, public-only']) {
      const viewer = callers().find(([k]) => k === kind)![1]
      expect([...(await seenOwners(viewer))].sort()).toEqual([...(await seenOwners(null))].sort())
      expect([...(await readable(viewer))].sort()).toEqual(['org-public/pub', 'pubu/pub'])
    }
  })

  test('repositories: public ones of open owners, plus what access grants; personal ties open no code', async () => {
    expect([...await readable(null)].sort()).toEqual(['org-public/pub', 'pubu/pub'])
    const stranger = await readable(people.stranger!)
    expect([...stranger].sort()).toEqual(['limu/pub', 'org-limited/pub', 'org-public/pub', 'pubu/pub'])
    const member = await readable(people.member!)
    expect(member.has('org-private/pub')).toBe(true)
    expect(member.has('org-private/priv')).toBe(false)
    const collab = await readable(people.collab!)
    for (const r of ['pubu/priv', 'privu/priv', 'privfan/priv', 'org-private/pub']) expect(collab.has(r)).toBe(true)
    expect(collab.has('privu/pub') || collab.has('org-private/priv')).toBe(false)
    const teamer = await readable(people.teamer!)
    for (const r of ['org-private/priv', 'org-private/pub', 'org-limited/priv']) expect(teamer.has(r)).toBe(true)
    const owner = await readable(people.privu!)
    expect(owner.has('privu/pub') && owner.has('privu/priv')).toBe(true)
    expect((await readable(people.siteadmin!)).size).toBe((await allRepos()).length)
  })
})

describe('/users/{username}/… routes', () => {
  const UNKNOWN = 'nosuchuser'
  const routes = () =>
    s.app.routes
      .filter((r: { path: string }) => r.path.startsWith('/api/v1/users/:username'))
      .map((r: { method: string; path: string }) => ({ method: r.method, path: r.path }))
  /** The answer for `name` in the route, with the name itself replaced so answers compare. */
  async function answer(route: { method: string; path: string }, name: string, token?: string) {
    const path = route.path.replace(':username', name).replace(':target', 'pubu').replace(/:[a-z]+/g, '1')
    const res = await s.request(route.method, path, { token, body: ['POST', 'PUT', 'PATCH'].includes(route.method) ? {} : undefined })
    return { status: res.status, body: res.text.split(name).join('{name}'), total: res.headers.get('x-total-count') }
  }

  test('the route list covers the user routes', () => {
    const paths = routes().map((r) => `${r.method} ${r.path}`)
    for (const p of ['GET /api/v1/users/:username', 'GET /api/v1/users/:username/keys', 'GET /api/v1/users/:username/orgs', 'GET /api/v1/users/:username/followers'])
      expect(paths).toContain(p)
  })

  const cases: [string, string, () => string | undefined][] = [
    ['a private user seen anonymously', 'privu', () => undefined],
    ['a private user seen by a signed-in stranger', 'privu', () => tokens.stranger],
    ['a private user seen by an organisation member', 'privu', () => tokens.member],
    ['a limited user seen anonymously', 'limu', () => undefined],
    ['a limited organisation seen anonymously', 'org-limited', () => undefined],
    ['a private organisation seen by a stranger', 'org-private', () => tokens.stranger],
  ]
  for (const [label, name, token] of cases)
    test(`${label} answers like an unknown user on every route`, async () => {
      for (const route of routes()) {
        const hidden = await answer(route, name, token())
        const unknown = await answer(route, UNKNOWN, token())
        expect({ route: `${route.method} ${route.path}`, ...hidden }).toEqual({ route: `${route.method} ${route.path}`, ...unknown })
      }
    })

  test("a repository's tracked times of a hidden user answer like those of an unknown one", async () => {
    const hidden = await s.get('/repos/pubu/pub/times/privu', { token: tokens.stranger })
    const unknown = await s.get('/repos/pubu/pub/times/nosuchuser', { token: tokens.stranger })
    expect(hidden.status).toBe(404)
    expect([unknown.status, unknown.text]).toEqual([hidden.status, hidden.text.replace('privu', 'nosuchuser')])
    expect((await s.get('/repos/pubu/pub/times/privu', { token: tokens.siteadmin })).status).toBe(200)
  })

  test("a repository's issue filters (created_by, assigned_by) naming a hidden user answer like an unknown one", async () => {
    for (const filter of ['created_by', 'assigned_by']) {
      const hidden = await s.get(`/repos/pubu/pub/issues?${filter}=privu`, { token: tokens.stranger })
      const unknown = await s.get(`/repos/pubu/pub/issues?${filter}=nosuchuser`, { token: tokens.stranger })
      expect(hidden.status).toBe(404)
      expect([unknown.status, unknown.text]).toEqual([hidden.status, hidden.text.replace('privu', 'nosuchuser')])
      expect((await s.get(`/repos/pubu/pub/issues?${filter}=privu`, { token: tokens.siteadmin })).status).toBe(200)
    }
  })

  test('visible users are still found (the rule is not "always 404")', async () => {
    expect((await s.get('/users/privu', { token: tokens.privu })).status).toBe(200)
    expect((await s.get('/users/privfan/keys', { token: tokens.stranger })).status).toBe(200)
    expect((await s.get('/users/privmate/followers', { token: tokens.member })).status).toBe(200)
    expect((await s.get('/users/limu/orgs', { token: tokens.stranger })).status).toBe(200)
    expect((await s.get('/users/privu/repos', { token: tokens.siteadmin })).status).toBe(200)
    expect((await s.get('/users/nosuchuser', { token: tokens.siteadmin })).status).toBe(404)
  })
})

describe('lists that contain users leave invisible ones out', () => {
  test('followers and following, counted alike', async () => {
    await followUser(s.deps, people.privu!, people.pubu!)
    await followUser(s.deps, people.limu!, people.pubu!)
    await followUser(s.deps, people.pubu!, people.privu!)
    const logins = (res: { body: { login: string }[] }) => res.body.map((u) => u.login).sort()
    const stranger = await s.get('/users/pubu/followers', { token: tokens.stranger })
    expect(logins(stranger)).toEqual(['limu'])
    expect(stranger.headers.get('x-total-count')).toBe('1')
    const admin = await s.get('/users/pubu/followers', { token: tokens.siteadmin })
    expect(logins(admin)).toEqual(['limu', 'privu'])
    expect(admin.headers.get('x-total-count')).toBe('2')
    expect(logins(await s.get('/users/pubu/following', { token: tokens.stranger }))).toEqual([])
    expect(logins(await s.get('/users/pubu/following', { token: tokens.privu }))).toEqual(['privu'])
  })

  test('user search', async () => {
    const names = async (token?: string) => ((await s.get('/users/search?q=u&limit=50', { token })).body.data as { login: string }[]).map((u) => u.login)
    expect(await names()).not.toContain('limu')
    expect(await names(tokens.stranger)).toContain('limu')
    expect(await names(tokens.stranger)).not.toContain('privu')
    expect(await names(tokens.siteadmin)).toContain('privu')
  })

  test('collaborators, organisation public members and organisations of a user', async () => {
    await addCollaborator(s.deps, repos['pubu/pub']!, people.privu!, 'read')
    const collaborators = async (token?: string) => (await s.get('/repos/pubu/pub/collaborators', { token })).body.map((u: { login: string }) => u.login)
    expect(await collaborators(tokens.stranger)).not.toContain('privu')
    expect(await collaborators(tokens.siteadmin)).toContain('privu')

    await addTeamMember(s.deps, await loadTeam(s.deps, (await createTeam(s.deps, await loadOrg(s.deps, 'org-public', people.boss!), { name: 'mates' })).id, people.boss!), people.privmate!)
    await setMemberVisibility(s.deps, await loadOrg(s.deps, 'org-public', people.privmate!), people.privmate!, true)
    await setMemberVisibility(s.deps, await loadOrg(s.deps, 'org-public', people.member!), people.member!, true)
    const publicMembers = await s.get('/orgs/org-public/public_members')
    expect(publicMembers.body.map((u: { login: string }) => u.login)).toEqual(['member'])
    expect(publicMembers.headers.get('x-total-count')).toBe('1')
    expect((await s.get('/orgs/org-public/public_members/privmate')).status).toBe(404)

    // Public memberships in organisations the caller may not see are left out too.
    for (const org of ['org-limited', 'org-private']) await setMemberVisibility(s.deps, await loadOrg(s.deps, org, people.member!), people.member!, true)
    const memberOrgs = async (token?: string) => (await s.get('/users/member/orgs', { token })).body.map((o: { username: string }) => o.username).sort()
    expect(await memberOrgs()).toEqual(['org-public'])
    expect(await memberOrgs(tokens.stranger)).toEqual(['org-limited', 'org-public'])
    expect(await memberOrgs(tokens.member)).toEqual(['org-limited', 'org-private', 'org-public'])
  })
})

describe('a follow of a user who has gone private', () => {
  test('can still be checked and undone by its follower; to anyone else the user answers like an unknown one', async () => {
    const fan = await person('loyalfan', 'public')
    const star = await person('gonedark', 'public')
    await followUser(s.deps, fan, star)
    await s.deps.db.update(users).set({ visibility: 'private' }).where(eq(users.id, star.id))
    expect((await s.get('/users/gonedark', { token: tokens.loyalfan })).status).toBe(404)
    expect((await s.get('/user/following/gonedark', { token: tokens.loyalfan })).status).toBe(204)
    for (const method of ['GET', 'DELETE']) {
      const hidden = await s.request(method, '/user/following/gonedark', { token: tokens.stranger })
      const unknown = await s.request(method, '/user/following/nosuchuser', { token: tokens.stranger })
      expect([hidden.status, hidden.text.replace('gonedark', 'nosuchuser')]).toEqual([unknown.status, unknown.text])
    }
    expect((await s.del('/user/following/gonedark', undefined, { token: tokens.loyalfan })).status).toBe(204)
    expect((await s.get('/user/following/gonedark', { token: tokens.loyalfan })).status).toBe(404)
    expect((await s.deps.db.select().from(users).where(eq(users.id, fan.id)))[0]!.numFollowing).toBe(0)
  })
})
