import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { TransformKind } from '@sinclair/typebox'
import { ACCESS_KEYS, isRepoWrite, type AttachmentNeed, type OrgRoleNeed, type RepoNeed, type ScopeNeed, type TeamRoleNeed } from '../src/auth/pipeline'
import { SCOPE_CATEGORIES, type ScopeCategory } from '../src/auth/scopes'
import { createAccessToken } from '../src/modules/users/service'
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
/** The API's app's routes, and the web pages' app's. */
let apiRoutes: Route[], pageRoutes: Route[]
let owner: TestUser, reader: TestUser, writer: TestUser, repoAdmin: TestUser, stranger: TestUser, member: TestUser, root: TestUser
let devsTeam: number
let privId: number
/** Release assets the fixture uploads: one of the private repository, one of a draft of the public one. */
type Asset = { repo: string; tag: string; name: string; uuid: string }
let privAsset: Asset, draftAsset: Asset
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
  expect((await s.patch('/repos/alice/nounits', { has_issues: false, has_pull_requests: false, has_wiki: false, has_releases: false, has_packages: false, has_projects: false }, asOwner)).status).toBe(200)
  expect((await s.post('/orgs', { username: 'acme' }, asOwner)).status).toBe(201)
  const team = await s.post('/orgs/acme/teams', { name: 'devs', permission: 'read' }, asOwner)
  expect(team.status).toBe(201)
  devsTeam = team.body.id
  expect((await s.put(`/teams/${devsTeam}/members/bob`, undefined, asOwner)).status).toBe(204)
  privId = (await s.get('/repos/alice/priv', asOwner)).body.id
  privAsset = await releaseAsset('priv', 'p1', false, asOwner.token)
  draftAsset = await releaseAsset('pub', 'd1', true, asOwner.token)
  // The API's app and the web pages' (made at the first page asked for, here at once); the API's
  // route of every method that hands the rest to the pages (createApp) is no route of its own.
  const route = (r: any): Route => ({ method: r.method, path: r.path, detail: r.hooks?.detail ?? {} })
  apiRoutes = (s.app.routes as any[]).map(route).filter((r) => !(r.method === 'ALL' && r.path === '/*'))
  pageRoutes = ((await s.app.webApp()).routes as any[]).map(route)
  routes = [...apiRoutes, ...pageRoutes]
})
afterAll(() => s.stop())

/** Makes a release of `tag` in alice's `repo` (a draft when asked) with one asset, uploaded as a multipart body. */
async function releaseAsset(repo: string, tag: string, draft: boolean, token: string): Promise<Asset> {
  const release = await s.post(`/repos/alice/${repo}/releases`, { tag_name: tag, draft }, { token })
  expect(release.status).toBe(201)
  const boundary = 'route-table-boundary'
  const body = `--${boundary}\r\nContent-Disposition: form-data; name="attachment"; filename="a.txt"\r\n\r\nbytes of ${tag}\r\n--${boundary}--\r\n`
  const res = await fetch(`${s.url}/api/v1/repos/alice/${repo}/releases/${release.body.id}/assets`, {
    method: 'POST',
    headers: { authorization: `token ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
  })
  expect(res.status).toBe(201)
  const asset = (await res.json()) as { name: string; uuid: string }
  return { repo, tag, name: asset.name, uuid: asset.uuid }
}

const declared = <T>(route: Route, key: keyof typeof ACCESS_KEYS) => route.detail[ACCESS_KEYS[key]] as T | undefined

/** A concrete URL for a route: the fixture's names for the parameters, `main` (the fixture's default branch) for a wildcard. */
function urlOf(route: Route, repo = 'pub'): string {
  const team = route.path.startsWith('/api/v1/teams/:id')
  return route.path
    .replace(':owner', 'alice')
    .replace(':repo', route.path.startsWith('/api/v1/teams/') ? 'pub' : repo)
    .replace(':org', 'acme')
    .replace(':team', 'devs')
    .replace(':id', team ? String(devsTeam) : '1')
    .replace(':index', '1')
    .replace(':collaborator', 'stranger')
    .replace(':username', 'alice')
    .replace(':target', 'alice')
    .replace('*', 'main')
}

/** Sends the route's request as `who` (null: anonymous) with an empty JSON body where one may go. */
async function send(route: Route, url: string, who: TestUser | null) {
  const body = route.method === 'GET' || route.method === 'HEAD' ? undefined : {}
  if (url.startsWith('/api/')) return s.request(route.method, url, { ...(who ? { token: who.token } : {}), ...(body ? { body } : {}) })
  // Routes outside the API (downloads) by their own URL.
  const res = await fetch(s.url + url, { method: route.method, headers: who ? { authorization: `token ${who.token}` } : {}, redirect: 'manual' })
  const text = await res.text()
  let parsed: any = null
  try {
    parsed = JSON.parse(text)
  } catch {}
  return { status: res.status, body: parsed, text, headers: res.headers }
}

/** The URL of a route that names a release asset (`attachment` need), for `asset`. */
const assetUrlOf = (route: Route, asset: Asset): string =>
  declared<AttachmentNeed>(route, 'attachment') === 'uuid'
    ? route.path.replace(':uuid', asset.uuid)
    : route.path.replace(':owner', 'alice').replace(':repo', asset.repo).replace('*', `${asset.tag}/${asset.name}`)

/**
 * What an anonymous caller gets from a route needing more: 401, except a web page's plain visit
 * (a GET), which goes to the sign-in page (303; Gitea's reqSignIn).
 */
const anonymously = (route: Route): number => (route.detail['x-warren-page'] && (route.method === 'GET' || route.method === 'HEAD') ? 303 : 401)

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
    // Web pages answer error pages, never JSON; or send a visitor to sign in first.
    if (route.detail['x-warren-page']) {
      if (res.status === 303 && status === 303) {
        if (!res.headers.get('location')?.startsWith('/user/login?redirect_to=')) problems.push(`${route.method} ${url}: 303 elsewhere than the sign-in page: ${res.headers.get('location')}`)
      } else if (res.status === status && !res.text.startsWith('<!doctype html>')) problems.push(`${route.method} ${url}: not an error page: ${res.text.slice(0, 100)}`)
    } else if (res.status === status && (typeof res.body?.message !== 'string' || typeof res.body?.url !== 'string'))
      problems.push(`${route.method} ${url}: not the API's error shape: ${res.text.slice(0, 100)}`)
  }
  expect(problems).toEqual([])
  expect(cases.length).toBeGreaterThan(0)
}

/**
 * The limit of a test that sends a request (and reads the database's mark) for every route and
 * caller: a few hundred each, which a busy machine's PostgreSQL half takes minutes over. It
 * catches a hang; it times nothing.
 */
const SWEEP_MS = 360_000

/** Whether an Elysia route pattern (`:name` one segment, `*` the rest) serves `path`. */
function serves(pattern: string, path: string): boolean {
  const want = pattern.split('/')
  const have = path.split('/')
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '*') return true
    if (i >= have.length || (!want[i]!.startsWith(':') && want[i] !== have[i])) return false
  }
  return want.length === have.length
}

describe('route table', () => {
  test("the API's app shadows no page: no route of it serves a path of a web page's route (the pages get only what it leaves)", () => {
    expect(pageRoutes.length).toBeGreaterThan(200)
    const shadowed: string[] = []
    for (const page of pageRoutes) {
      // The page's path with every parameter a plain value, its rest two segments.
      const path = page.path.replace(/:\w+/g, 'x1').replace(/\*$/, 'a/b')
      for (const api of apiRoutes)
        if ((api.method === page.method || (api.method === 'GET' && page.method === 'HEAD')) && serves(api.path, path)) shadowed.push(`${page.method} ${page.path} by ${api.path}`)
    }
    expect(shadowed).toEqual([])
  })

  test("no answer's schema holds a Transform (validate.ts integer() or numeric(), for queries and paths: records use Int())", () => {
    // A Transform anywhere in an answer's schema makes Elysia encode the whole answer through
    // TypeBox's interpreted Value.Encode: a notification list's ten threads with their
    // repositories spent most of their CPU there.
    const transformed = (schema: unknown, seen = new Set<unknown>()): boolean => {
      if (!schema || typeof schema !== 'object' || seen.has(schema)) return false
      seen.add(schema)
      return TransformKind in schema || Object.entries(schema).some(([key, value]) => key !== 'default' && transformed(value, seen))
    }
    const answers = (s.app.routes as any[]).flatMap((r) => Object.entries((r.hooks?.response ?? {}) as Record<string, unknown>).map(([status, schema]) => ({ route: `${r.method} ${r.path} ${status}`, schema })))
    expect(answers.length).toBeGreaterThan(300)
    expect(answers.filter((a) => transformed(a.schema)).map((a) => a.route)).toEqual([])
  })

  test('every repository route of the API declares its repository need', () => {
    const undeclared = routes.filter((r) => r.path.startsWith('/api/v1/repos/:owner/:repo') && !declared(r, 'repo')).map((r) => `${r.method} ${r.path}`)
    expect(undeclared).toEqual([])
    // The table below is not empty by accident.
    expect(routes.filter((r) => declared(r, 'repo')).length).toBeGreaterThan(40)
  })

  test('every route declares its needs, but for the public ones and git smart HTTP (which answers in its own shape by the same access rule)', () => {
    // Access needs only: the token scope every API route declares is checked below.
    const keys = Object.values(ACCESS_KEYS).filter((k) => k !== ACCESS_KEYS.scope)
    const undeclared = routes.filter((r) => !keys.some((k) => k in r.detail)).map((r) => `${r.method} ${r.path}`)
    expect(undeclared.sort()).toEqual(
      [
        'GET /api/swagger',
        'GET /api/swagger/assets/:file',
        'GET /swagger.v1.json',
        'GET /api/v1/version',
        'GET /api/v1/nodeinfo',
        // The templates a new repository may start from, the same for everyone.
        'GET /api/v1/gitignore/templates',
        'GET /api/v1/gitignore/templates/:name',
        'GET /api/v1/licenses',
        'GET /api/v1/licenses/:name',
        'GET /api/v1/label/templates',
        'GET /api/v1/label/templates/:name',
        'GET /api/v1/settings/api',
        'GET /api/v1/settings/attachment',
        'GET /api/v1/settings/repository',
        'GET /api/v1/settings/ui',
        // (/markdown and /markup read the caller: a context repository's default branch, when they may read it.)
        'POST /api/v1/markdown/raw',
        'GET /:owner/:repo/info/refs',
        'POST /:owner/:repo/git-upload-pack',
        'POST /:owner/:repo/git-receive-pack',
        // The Git LFS server: git's caller and access decision (modules/lfs/access.ts authorizeLfs), answered in the LFS shape.
        'POST /:owner/:repo/info/lfs/objects/batch',
        'PUT /:owner/:repo/info/lfs/objects/:oid/:size',
        'GET /:owner/:repo/info/lfs/objects/:oid',
        'POST /:owner/:repo/info/lfs/verify',
        'GET /:owner/:repo/info/lfs/locks',
        'POST /:owner/:repo/info/lfs/locks',
        'POST /:owner/:repo/info/lfs/locks/verify',
        'POST /:owner/:repo/info/lfs/locks/:id/unlock',
        // The OAuth2 provider's endpoints for clients: they authenticate the client, not a person.
        'POST /login/oauth/access_token',
        'POST /login/oauth/revoke',
        'GET /login/oauth/keys',
        'GET /.well-known/openid-configuration',
        // Uploaded avatars, named by a hash of their content, public as in Gitea (their URLs are in records).
        'GET /avatars/:hash',
        'GET /repo-avatars/:hash',
        // The web stylesheet and script (one file each, the same for everyone).
        ...routes.filter((r) => r.path.startsWith('/assets/')).map((r) => `${r.method} ${r.path}`),
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
        cases.push([route, urlOf(route), null, anonymously(route)])
      }
    }
    await expectRefused(cases)
  }, SWEEP_MS)

  test('routes of a unit answer 404 when the repository has the unit turned off, even to its owner', async () => {
    const cases: [Route, string, TestUser | null, number][] = []
    for (const route of routes) if (declared<RepoNeed>(route, 'repo')?.unit) cases.push([route, urlOf(route, 'nounits'), owner, 404])
    await expectRefused(cases)
  }, SWEEP_MS)

  test('every write to an archived repository is refused with 423, even for its owner and a site admin; reads still work', async () => {
    const cases: [Route, string, TestUser | null, number][] = []
    for (const route of routes) {
      const need = declared<RepoNeed>(route, 'repo')
      if (!need || !isRepoWrite(route.method, need)) continue
      cases.push([route, urlOf(route, 'arch'), owner, 423])
      cases.push([route, urlOf(route, 'arch'), root, 423])
    }
    await expectRefused(cases)
    expect((await s.get('/repos/alice/arch/raw/main/README.md')).status).toBe(200)
    expect((await s.get('/repos/alice/arch/issues', { token: reader.token })).status).toBe(200)
  }, SWEEP_MS)

  test('routes that need a signed-in caller answer 401 to an anonymous one', async () => {
    const cases: [Route, string, TestUser | null, number][] = []
    for (const route of routes) if (declared(route, 'signed') || declared(route, 'siteAdmin')) cases.push([route, urlOf(route), null, anonymously(route)])
    await expectRefused(cases)
  }, SWEEP_MS)

  test('site administration answers 403 to a signed-in caller who is not a site admin', async () => {
    const cases: [Route, string, TestUser | null, number][] = []
    for (const route of routes) if (declared(route, 'siteAdmin')) cases.push([route, urlOf(route), stranger, 403])
    await expectRefused(cases)
  })

  test('organisation routes refuse callers below their declared role', async () => {
    const cases: [Route, string, TestUser | null, number][] = []
    for (const route of routes) {
      const role = declared<OrgRoleNeed>(route, 'org')
      if (role === 'owner') cases.push([route, urlOf(route), member, 403])
      // A route naming a team resolves it first: outside its organisation, 404 (the test below).
      if (role && role !== 'visible' && !declared(route, 'team')) cases.push([route, urlOf(route), stranger, 403])
    }
    await expectRefused(cases)
  })

  test("team routes answer 404 to callers outside the team's organisation (and owner routes to plain members), 401 anonymous", async () => {
    const cases: [Route, string, TestUser | null, number][] = []
    for (const route of routes) {
      const role = declared<TeamRoleNeed>(route, 'team')
      if (!role) continue
      cases.push([route, urlOf(route), stranger, 404], [route, urlOf(route), null, anonymously(route)])
      if (role === 'owner') cases.push([route, urlOf(route), member, 404])
    }
    await expectRefused(cases)
  })

  test('the routes that name a repository by id or a release asset declare it, the asset by tag after its repository', () => {
    const needs = (key: keyof typeof ACCESS_KEYS) =>
      routes.filter((r) => declared(r, key) !== undefined).map((r) => `${r.method} ${r.path} ${JSON.stringify(declared(r, key))}`)
    expect(needs('repoById')).toEqual(['GET /api/v1/repositories/:id true'])
    expect(needs('attachment').sort()).toEqual(['GET /:owner/:repo/releases/download/* "tag"', 'GET /attachments/:uuid "uuid"'].sort())
    for (const route of routes) if (declared(route, 'attachment') === 'tag') expect(declared<RepoNeed>(route, 'repo')).toEqual({ level: 'read', unit: 'releases' })
  })

  test("a repository by id, or a release asset, that the caller may not read answers 404 (a draft's asset to callers who do not see drafts)", async () => {
    const cases: [Route, string, TestUser | null, number][] = []
    for (const route of routes) {
      if (declared(route, 'repoById'))
        cases.push([route, route.path.replace(':id', String(privId)), stranger, 404], [route, route.path.replace(':id', '999999'), owner, 404])
      if (!declared(route, 'attachment')) continue
      cases.push([route, assetUrlOf(route, privAsset), stranger, 404], [route, assetUrlOf(route, privAsset), null, 404])
      cases.push([route, assetUrlOf(route, draftAsset), reader, 404], [route, assetUrlOf(route, draftAsset), null, 404])
    }
    expect(cases.length).toBe(10)
    await expectRefused(cases)
    // Those who may read them get them.
    for (const route of routes) {
      if (declared(route, 'repoById')) expect((await send(route, route.path.replace(':id', String(privId)), reader)).body.full_name).toBe('alice/priv')
      if (!declared(route, 'attachment')) continue
      expect((await send(route, assetUrlOf(route, privAsset), reader)).text).toBe('bytes of p1')
      expect((await send(route, assetUrlOf(route, draftAsset), writer)).text).toBe('bytes of d1')
    }
  })
})

// ---- token scopes ------------------------------------------------------------------------------

const categoriesOf = (route: Route): ScopeCategory[] => {
  const need = declared<ScopeNeed>(route, 'scope')
  return need === undefined || need === 'none' ? [] : typeof need === 'string' ? [need as ScopeCategory] : [...need]
}
const levelOf = (method: string) => (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) ? 'write' : 'read')

/**
 * The category Gitea's routes (tokenRequiresScopes per group) put each path under, written out
 * here on its own so that a route declaring another one fails.
 */
function giteaCategories(path: string): ScopeCategory[] | 'none' {
  if (['/api/v1/version', '/api/v1/nodeinfo', '/api/v1/markdown', '/api/v1/markdown/raw', '/api/v1/markup'].includes(path) || path.startsWith('/api/v1/settings/')) return 'none'
  // The templates a new repository may start from (Gitea's misc routes, outside any scope group).
  if (/^\/api\/v1\/(gitignore\/templates|licenses|label\/templates)(\/|$)/.test(path)) return 'none'
  if (path.startsWith('/api/v1/admin/')) return ['admin']
  if (path.startsWith('/api/v1/packages/') || path.startsWith('/api/packages/')) return ['package']
  // The package pages of an owner: the package routes' category (a repository's packages page is the repository's).
  if (path.startsWith('/:owner/-/packages')) return ['package']
  if (path === '/api/v1/org/:org/repos') return ['organization', 'repository']
  if (path.startsWith('/api/v1/orgs') || path.startsWith('/api/v1/teams/')) return ['organization']
  if (path.startsWith('/api/v1/notifications') || path === '/api/v1/repos/:owner/:repo/notifications') return ['notification']
  if (/^\/api\/v1\/repos\/:owner\/:repo\/(issues|issue|labels|milestones|comments)(\/|$)/.test(path) || path === '/api/v1/repos/issues/search') return ['issue']
  if (path.startsWith('/api/v1/repos/') || path.startsWith('/api/v1/repositories/')) return ['repository']
  if (path === '/api/v1/user/repos' || path.startsWith('/api/v1/user/starred') || path === '/api/v1/users/:username/repos') return ['user', 'repository']
  if (path === '/api/v1/user/orgs' || path.startsWith('/api/v1/users/:username/orgs')) return ['user', 'organization']
  if (path.startsWith('/api/v1/user')) return ['user']
  // The notifications page: its API routes' category.
  if (path === '/notifications' || path.startsWith('/notifications/')) return ['notification']
  // The dashboard, a person's profile page, its follow form and its feed: the API's user routes' category.
  if (path === '/' || path === '/:owner' || path === '/:owner/-/feed/:format') return ['user']
  // An owner's projects: the owner's page's category.
  if (path.startsWith('/:owner/-/projects')) return ['user']
  // The user's own settings pages: the API's `/user/...` routes' category.
  if (path.startsWith('/user/settings')) return ['user']
  // Signing in, up and out, the second factor's step, the mailed codes' pages and the OAuth2 consent: no token is asked for there.
  if (/^\/user\/(login|logout|sign_up|two_factor|forgot_password|recover_account|activate|activate_email)(\/|$)/.test(path) || path.startsWith('/login/oauth/') || path === '/explore') return 'none'
  // The site administration's pages: the API's `/admin/...` routes' category.
  if (path.startsWith('/-/admin') || path.startsWith('/admin/')) return ['admin']
  // An organisation's pages and forms, its creation, and the list of organisations: the API's `/orgs/...` routes' category.
  if (path.startsWith('/org/') || path === '/explore/organizations') return ['organization']
  // The list of users: the API's `/users/search`.
  if (path === '/explore/users') return ['user']
  // Web routes serving a repository's content (raw files, archives, release downloads).
  return ['repository']
}

/** Tokens by owner and scope list, made once: the secret and the scope as stored. */
const tokens = new Map<string, { secret: string; text: string }>()
async function tokenWith(who: TestUser, scopes: string[]) {
  const key = `${who.name}|${scopes.join(',')}`
  let token = tokens.get(key)
  if (!token) {
    const { row, secret } = await createAccessToken(s.deps, who.user.id, key.slice(0, 200), scopes)
    tokens.set(key, (token = { secret, text: row.scope }))
  }
  return token
}

/** The route's request with a token; routes outside the API (web downloads) by their own URL. */
async function sendWithToken(route: Route, url: string, secret: string) {
  const withBody = levelOf(route.method) === 'write'
  if (url.startsWith('/api/')) return s.request(route.method, url, { token: secret, ...(withBody ? { body: {} } : {}) })
  const res = await fetch(s.url + url, { method: route.method, headers: { authorization: `token ${secret}` } })
  const text = await res.text()
  let body: any = null
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: res.status, body, text }
}

describe('route table: token scopes', () => {
  test('every API route and web page declares its token scope category, the one Gitea groups it under (or explicitly none)', () => {
    const api = routes.filter((r) => r.path.startsWith('/api/v1/'))
    expect(api.filter((r) => declared(r, 'scope') === undefined).map((r) => `${r.method} ${r.path}`)).toEqual([])
    // So does every web page: a page a token may read shows what the token's scope would hide in the API.
    const pages = routes.filter((r) => r.detail['x-warren-page'])
    expect(pages.length).toBeGreaterThan(200)
    expect(pages.filter((r) => declared(r, 'scope') === undefined).map((r) => `${r.method} ${r.path}`)).toEqual([])
    const wrong = routes
      .filter((r) => declared(r, 'scope') !== undefined)
      .filter((r) => {
        const need = declared<ScopeNeed>(r, 'scope')
        const expected = giteaCategories(r.path)
        return need === 'none' ? expected !== 'none' : JSON.stringify(categoriesOf(r)) !== JSON.stringify(expected)
      })
      .map((r) => `${r.method} ${r.path}: ${JSON.stringify(declared(r, 'scope'))}`)
    expect(wrong).toEqual([])
    for (const r of routes) for (const c of categoriesOf(r)) expect(SCOPE_CATEGORIES).toContain(c)
    // Repository content outside the API (raw files, archives, downloads) is under the repository scope too
    // (git's and LFS's endpoints check it in git's access decision, auth/git-access.ts tokenGitAccess).
    const web = routes.filter((r) => r.path.startsWith('/:owner/:repo/') && !/info\/refs|git-|info\/lfs\//.test(r.path))
    expect(web.length).toBeGreaterThan(2)
    expect(web.filter((r) => categoriesOf(r).join() !== 'repository')).toEqual([])
  })

  test("a token without the route's category, or holding it only at read for a write, gets 403 in Gitea's words and changes nothing", async () => {
    const problems: string[] = []
    // The owner of everything the fixture made, so that only the scope stands in the way.
    const cases: [Route, { secret: string; text: string }][] = []
    for (const route of routes) {
      const categories = categoriesOf(route)
      if (!categories.length) continue
      const others = SCOPE_CATEGORIES.filter((c) => !categories.includes(c)).map((c) => `write:${c}`)
      cases.push([route, await tokenWith(owner, others)])
      if (levelOf(route.method) === 'write') cases.push([route, await tokenWith(owner, [...others, ...categories.map((c) => `read:${c}`)])])
    }
    let before = await mark()
    let checked = 0
    for (const [route, token] of cases) {
      const categories = categoriesOf(route)
      const level = levelOf(route.method)
      const res = await sendWithToken(route, urlOf(route), token.secret)
      const after = await mark()
      const message = `token does not have at least one of required scope(s), required=[${categories.map((c) => `${level}:${c}`).join(' ')}], token scope=${token.text}`
      // A page says it in its error page.
      const said = route.detail['x-warren-page'] ? res.text.includes(message) : res.body?.message === message
      if (res.status !== 403 || !said) problems.push(`${route.method} ${route.path} (${token.text}): ${res.status} ${res.text.slice(0, 160)}`)
      else if (typeof res.body?.url !== 'string' && route.path.startsWith('/api/')) problems.push(`${route.method} ${route.path}: not the API's error shape`)
      if (after !== before) problems.push(`${route.method} ${route.path} (${token.text}): refused, yet the database changed`)
      before = after
      checked++
    }
    expect(problems).toEqual([])
    expect(checked).toBeGreaterThan(200)
  }, SWEEP_MS)

  test("a token with exactly the route's categories at the request's level passes the scope check", async () => {
    const problems: string[] = []
    for (const route of routes) {
      const categories = categoriesOf(route)
      if (!categories.length) continue
      const level = levelOf(route.method)
      // A caller the later needs refuse (a stranger, a private repository): only the scope check is exercised.
      const token = await tokenWith(stranger, categories.map((c) => `${level}:${c}`))
      const res = await sendWithToken(route, urlOf(route, 'priv'), token.secret)
      if (res.status === 403 && String(res.body?.message).startsWith('token does not have')) problems.push(`${route.method} ${route.path}: ${res.body.message}`)
    }
    expect(problems).toEqual([])
  })
})
