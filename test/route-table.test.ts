import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ACCESS_KEYS, isRepoWrite, type OrgRoleNeed, type RepoNeed, type TeamRoleNeed } from '../src/auth/pipeline'
import { contentMark } from './db-snapshot'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/**
 * The route table: every route's declared needs (the request pipeline records them in the route's
 * `detail`), checked against callers just below them. Generated from the app's own route list, so
 * a new route is covered the moment it declares its needs, and a repository route that declares
 * none fails the first test.
 */

type Route = { method: string; path: string; detail: Record<string, unknown> }

let s: TestServer
let routes: Route[]
let owner: TestUser, reader: TestUser, writer: TestUser, repoAdmin: TestUser, stranger: TestUser, member: TestUser, root: TestUser
let devsTeam: number
let mark: () => Promise<string>

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  root = await s.user('root', { admin: true })
  owner = await s.user('alice')
  reader = await s.user('reader')
  writer = await s.user('writer')
  repoAdmin = await s.user('repoadmin')
  stranger = await s.user('stranger')
  member = await s.user('bob')
  const asOwner = { token: owner.token }
  for (const [name, extra] of [
    ['pub', {}],
    ['priv', { private: true }],
    ['arch', {}],
  ] as const) {
    expect((await s.post('/user/repos', { name, auto_init: true, ...extra }, asOwner)).status).toBe(201)
    for (const [who, permission] of [
      [reader, 'read'],
      [writer, 'write'],
      [repoAdmin, 'admin'],
    ] as const)
      expect((await s.put(`/repos/alice/${name}/collaborators/${who.name}`, { permission }, asOwner)).status).toBe(204)
  }
  expect((await s.post('/repos/alice/pub/issues', { title: 'one' }, asOwner)).status).toBe(201)
  expect((await s.patch('/repos/alice/arch', { archived: true }, asOwner)).status).toBe(200)
  expect((await s.post('/user/repos', { name: 'nounits', auto_init: true }, asOwner)).status).toBe(201)
  expect((await s.patch('/repos/alice/nounits', { has_issues: false, has_pull_requests: false, has_wiki: false }, asOwner)).status).toBe(200)
  expect((await s.post('/orgs', { username: 'acme' }, asOwner)).status).toBe(201)
  const team = await s.post('/orgs/acme/teams', { name: 'devs', permission: 'read' }, asOwner)
  expect(team.status).toBe(201)
  devsTeam = team.body.id
  expect((await s.put(`/teams/${devsTeam}/members/bob`, undefined, asOwner)).status).toBe(204)
  routes = (s.app.routes as any[]).map((r) => ({ method: r.method, path: r.path, detail: r.hooks?.detail ?? {} }))
})
afterAll(() => s.stop())

const declared = <T>(route: Route, key: keyof typeof ACCESS_KEYS) => route.detail[ACCESS_KEYS[key]] as T | undefined

/** A concrete URL for a route: the fixture's names for the parameters, `master` for a wildcard. */
function urlOf(route: Route, repo = 'pub'): string {
  const team = route.path.startsWith('/api/v1/teams/:id')
  return route.path
    .replace(':owner', 'alice')
    .replace(':repo', route.path.startsWith('/api/v1/teams/') ? 'pub' : repo)
    .replace(':org', 'acme')
    .replace(':id', team ? String(devsTeam) : '1')
    .replace(':index', '1')
    .replace(':collaborator', 'stranger')
    .replace(':username', 'alice')
    .replace(':target', 'alice')
    .replace('*', 'master')
}

/** Sends the route's request as `who` (null: anonymous) with an empty JSON body where one may go. */
function send(route: Route, url: string, who: TestUser | null) {
  const body = route.method === 'GET' || route.method === 'HEAD' ? undefined : {}
  return s.request(route.method, url, { ...(who ? { token: who.token } : {}), ...(body ? { body } : {}) })
}

/** Every case: the route, who calls, the expected status; nothing may change in the database. */
async function expectRefused(cases: [Route, string, TestUser | null, number][]) {
  const problems: string[] = []
  // One mark per case: the mark after a case is the one before the next (on PostgreSQL a mark reads every table).
  let before = await mark()
  for (const [route, url, who, status] of cases) {
    const res = await send(route, url, who)
    const after = await mark()
    if (res.status !== status) problems.push(`${route.method} ${url} as ${who?.name ?? 'anonymous'}: ${res.status} (wanted ${status}) ${res.text.slice(0, 100)}`)
    else if (after !== before) problems.push(`${route.method} ${url} as ${who?.name ?? 'anonymous'}: refused, yet the database changed`)
    before = after
    if (res.status === status && (typeof res.body?.message !== 'string' || typeof res.body?.url !== 'string'))
      problems.push(`${route.method} ${url}: not the API's error shape: ${res.text.slice(0, 100)}`)
  }
  expect(problems).toEqual([])
  expect(cases.length).toBeGreaterThan(0)
}

describe('route table', () => {
  test('every repository route of the API declares its repository need', () => {
    const undeclared = routes.filter((r) => r.path.startsWith('/api/v1/repos/:owner/:repo') && !declared(r, 'repo')).map((r) => `${r.method} ${r.path}`)
    expect(undeclared).toEqual([])
    // The table below is not empty by accident.
    expect(routes.filter((r) => declared(r, 'repo')).length).toBeGreaterThan(40)
  })

  test('every route declares its needs, but for the public ones and git smart HTTP (which answers in its own shape by the same access rule)', () => {
    const keys = Object.values(ACCESS_KEYS)
    const undeclared = routes.filter((r) => !keys.some((k) => k in r.detail)).map((r) => `${r.method} ${r.path}`)
    expect(undeclared.sort()).toEqual(
      [
        'GET /',
        'GET /api/swagger',
        'GET /api/swagger/assets/:file',
        'GET /swagger.v1.json',
        'GET /api/v1/version',
        'POST /api/v1/markdown',
        'POST /api/v1/markdown/raw',
        'GET /:owner/:repo/info/refs',
        'POST /:owner/:repo/git-upload-pack',
        'POST /:owner/:repo/git-receive-pack',
      ].sort(),
    )
  })

  test('repository routes refuse callers below their declared level (401 anonymous, 403 known, 404 hidden)', async () => {
    const below: Record<string, TestUser> = { write: reader, admin: writer, owner: repoAdmin }
    const cases: [Route, string, TestUser | null, number][] = []
    for (const route of routes) {
      const need = declared<RepoNeed>(route, 'repo')
      if (!need) continue
      // A private repository is hidden from a stranger whatever the route.
      cases.push([route, urlOf(route, 'priv'), stranger, 404])
      cases.push([route, urlOf(route, 'priv'), null, 404])
      const level = need.level ?? 'read'
      if (level !== 'read') {
        cases.push([route, urlOf(route), below[level]!, 403])
        cases.push([route, urlOf(route), null, 401])
      }
    }
    await expectRefused(cases)
  })

  test('routes of a unit answer 404 when the repository has the unit turned off, even to its owner', async () => {
    const cases: [Route, string, TestUser | null, number][] = []
    for (const route of routes) if (declared<RepoNeed>(route, 'repo')?.unit) cases.push([route, urlOf(route, 'nounits'), owner, 404])
    await expectRefused(cases)
  })

  test('every write to an archived repository is refused with 423, even for its owner and a site admin; reads still work', async () => {
    const cases: [Route, string, TestUser | null, number][] = []
    for (const route of routes) {
      const need = declared<RepoNeed>(route, 'repo')
      if (!need || !isRepoWrite(route.method, need)) continue
      cases.push([route, urlOf(route, 'arch'), owner, 423])
      cases.push([route, urlOf(route, 'arch'), root, 423])
    }
    await expectRefused(cases)
    expect((await s.get('/repos/alice/arch/raw/master/README.md')).status).toBe(200)
    expect((await s.get('/repos/alice/arch/issues', { token: reader.token })).status).toBe(200)
  })

  test('routes that need a signed-in caller answer 401 to an anonymous one', async () => {
    const cases: [Route, string, TestUser | null, number][] = []
    for (const route of routes) if (declared(route, 'signed') || declared(route, 'siteAdmin')) cases.push([route, urlOf(route), null, 401])
    await expectRefused(cases)
  })

  test('site administration answers 403 to a signed-in caller who is not a site admin', async () => {
    const cases: [Route, string, TestUser | null, number][] = []
    for (const route of routes) if (declared(route, 'siteAdmin')) cases.push([route, urlOf(route), stranger, 403])
    await expectRefused(cases)
  })

  test('organisation routes refuse callers below their declared role', async () => {
    const cases: [Route, string, TestUser | null, number][] = []
    for (const route of routes) {
      const role = declared<OrgRoleNeed>(route, 'org')
      if (role === 'member') cases.push([route, urlOf(route), stranger, 403])
      if (role === 'owner') cases.push([route, urlOf(route), member, 403], [route, urlOf(route), stranger, 403])
    }
    await expectRefused(cases)
  })

  test("team routes answer 404 to callers outside the team's organisation (and owner routes to plain members), 401 anonymous", async () => {
    const cases: [Route, string, TestUser | null, number][] = []
    for (const route of routes) {
      const role = declared<TeamRoleNeed>(route, 'team')
      if (!role) continue
      cases.push([route, urlOf(route), stranger, 404], [route, urlOf(route), null, 401])
      if (role === 'owner') cases.push([route, urlOf(route), member, 404])
    }
    await expectRefused(cases)
  })
})
