import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from './helpers'

/** Every operation of the 2017 API Warren first served: method, path, operation id. */
const SEED_OPERATIONS: [string, string, string][] = [
  ['POST', '/admin/users', 'adminCreateUser'],
  ['DELETE', '/admin/users/{username}', 'adminDeleteUser'],
  ['PATCH', '/admin/users/{username}', 'adminEditUser'],
  ['POST', '/admin/users/{username}/keys', 'adminCreatePublicKey'],
  ['POST', '/admin/users/{username}/orgs', 'adminCreateOrg'],
  ['POST', '/admin/users/{username}/repos', 'adminCreateRepo'],
  ['POST', '/markdown', 'renderMarkdown'],
  ['POST', '/markdown/raw', 'renderMarkdownRaw'],
  ['POST', '/org/{org}/repos', 'createOrgRepo'],
  ['GET', '/orgs/{org}', 'orgGet'],
  ['PATCH', '/orgs/{org}', 'orgEdit'],
  ['GET', '/orgs/{org}/hooks', 'orgListHooks'],
  ['POST', '/orgs/{org}/hooks/', 'orgCreateHook'],
  ['GET', '/orgs/{org}/hooks/{id}', 'orgGetHook'],
  ['DELETE', '/orgs/{org}/hooks/{id}', 'orgDeleteHook'],
  ['PATCH', '/orgs/{org}/hooks/{id}', 'orgEditHook'],
  ['GET', '/orgs/{org}/members', 'orgListMembers'],
  ['GET', '/orgs/{org}/members/{username}', 'orgIsMember'],
  ['DELETE', '/orgs/{org}/members/{username}', 'orgDeleteMember'],
  ['GET', '/orgs/{org}/public_members', 'orgListPublicMembers'],
  ['GET', '/orgs/{org}/public_members/{username}', 'orgIsPublicMember'],
  ['PUT', '/orgs/{org}/public_members/{username}', 'orgPublicizeMember'],
  ['DELETE', '/orgs/{org}/public_members/{username}', 'orgConcealMember'],
  ['GET', '/orgs/{org}/repos', 'orgListRepos'],
  ['GET', '/orgs/{org}/teams', 'orgListTeams'],
  ['POST', '/orgs/{org}/teams', 'orgCreateTeam'],
  ['POST', '/repos/migrate', 'repoMigrate'],
  ['GET', '/repos/search', 'repoSearch'],
  ['GET', '/repos/{owner}/{repo}', 'repoGet'],
  ['DELETE', '/repos/{owner}/{repo}', 'repoDelete'],
  ['GET', '/repos/{owner}/{repo}/archive/{filepath}', 'repoGetArchive'],
  ['GET', '/repos/{owner}/{repo}/branches', 'repoListBranches'],
  ['GET', '/repos/{owner}/{repo}/branches/{branch}', 'repoGetBranch'],
  ['GET', '/repos/{owner}/{repo}/collaborators', 'repoListCollaborators'],
  ['GET', '/repos/{owner}/{repo}/collaborators/{collaborator}', 'repoCheckCollaborator'],
  ['PUT', '/repos/{owner}/{repo}/collaborators/{collaborator}', 'repoAddCollaborator'],
  ['DELETE', '/repos/{owner}/{repo}/collaborators/{collaborator}', 'repoDeleteCollaborator'],
  ['GET', '/repos/{owner}/{repo}/commits/{ref}/statuses', 'repoGetCombinedStatusByRef'],
  ['GET', '/repos/{owner}/{repo}/editorconfig/{filepath}', 'repoGetEditorConfig'],
  ['GET', '/repos/{owner}/{repo}/forks', 'listForks'],
  ['POST', '/repos/{owner}/{repo}/forks', 'createFork'],
  ['GET', '/repos/{owner}/{repo}/hooks', 'repoListHooks'],
  ['POST', '/repos/{owner}/{repo}/hooks', 'repoCreateHook'],
  ['GET', '/repos/{owner}/{repo}/hooks/{id}', 'repoGetHook'],
  ['PATCH', '/repos/{owner}/{repo}/hooks/{id}', 'repoEditHook'],
  ['GET', '/repos/{owner}/{repo}/hooks/git', 'repoListGitHooks'],
  ['GET', '/repos/{owner}/{repo}/hooks/git/{id}', 'repoGetGitHook'],
  ['PATCH', '/repos/{owner}/{repo}/hooks/git/{id}', 'repoEditGitHook'],
  ['DELETE', '/repos/{owner}/{repo}/hooks/git/{id}', 'repoDeleteGitHook'],
  ['POST', '/repos/{owner}/{repo}/mirror-sync', 'repoMirrorSync'],
  ['GET', '/repos/{owner}/{repo}/pulls', 'repoListPullRequests'],
  ['POST', '/repos/{owner}/{repo}/pulls', 'repoCreatePullRequest'],
  ['GET', '/repos/{owner}/{repo}/pulls/{index}', 'repoGetPullRequest'],
  ['PATCH', '/repos/{owner}/{repo}/pulls/{index}', 'repoEditPullRequest'],
  ['GET', '/repos/{owner}/{repo}/pulls/{index}/merge', 'repoPullRequestIsMerged'],
  ['POST', '/repos/{owner}/{repo}/pulls/{index}/merge', 'repoMergePullRequest'],
  ['GET', '/repos/{owner}/{repo}/raw/{filepath}', 'repoGetRawFile'],
  // The seed lists this one as GET; Gitea routes the creation as POST.
  ['POST', '/repos/{owner}/{repo}/releases', 'repoCreateRelease'],
  ['DELETE', '/repos/{owner}/{repo}/releases/{id}', 'repoDeleteRelease'],
  ['PATCH', '/repos/{owner}/{repo}/releases/{id}', 'repoEditRelease'],
  ['GET', '/repos/{owner}/{repo}/stargazers', 'repoListStargazers'],
  ['GET', '/repos/{owner}/{repo}/keys', 'repoListKeys'],
  ['POST', '/repos/{owner}/{repo}/keys', 'repoCreateKey'],
  ['GET', '/repos/{owner}/{repo}/keys/{id}', 'repoGetKey'],
  ['DELETE', '/repos/{owner}/{repo}/keys/{id}', 'repoDeleteKey'],
  ['DELETE', '/repos/{owner}/{repo}/comments/{id}', 'issueDeleteComment'],
  ['PATCH', '/repos/{owner}/{repo}/comments/{id}', 'issueEditComment'],
  ['GET', '/repos/{owner}/{repo}/issue/{index}/comments', 'issueGetComments'],
  ['PUT', '/repos/{owner}/{repo}/issue/{index}/labels', 'issueReplaceLabels'],
  ['POST', '/repos/{owner}/{repo}/issue/{index}/labels', 'issueAddLabel'],
  ['DELETE', '/repos/{owner}/{repo}/issue/{index}/labels', 'issueClearLabels'],
  ['DELETE', '/repos/{owner}/{repo}/issue/{index}/labels/{id}', 'issueRemoveLabel'],
  ['GET', '/repos/{owner}/{repo}/issues', 'issueListIssues'],
  ['POST', '/repos/{owner}/{repo}/issues', 'issueCreateIssue'],
  ['GET', '/repos/{owner}/{repo}/issues/comments', 'issueGetRepoComments'],
  ['GET', '/repos/{owner}/{repo}/issues/{id}', 'issueGetIssue'],
  ['PATCH', '/repos/{owner}/{repo}/issues/{id}', 'issueEditIssue'],
  ['POST', '/repos/{owner}/{repo}/issues/{index}/comments', 'issueCreateComment'],
  ['GET', '/repos/{owner}/{repo}/issues/{index}/labels', 'issueGetLabels'],
  ['GET', '/repos/{owner}/{repo}/issues/{index}/times', 'issueTrackedTimes'],
  ['POST', '/repos/{owner}/{repo}/issues/{index}/times', 'issueAddTime'],
  ['GET', '/repos/{owner}/{repo}/labels', 'issueListLabels'],
  ['POST', '/repos/{owner}/{repo}/labels', 'issueCreateLabel'],
  ['GET', '/repos/{owner}/{repo}/labels/{id}', 'issueGetLabel'],
  ['DELETE', '/repos/{owner}/{repo}/labels/{id}', 'issueDeleteLabel'],
  ['PATCH', '/repos/{owner}/{repo}/labels/{id}', 'issueEditLabel'],
  ['GET', '/repos/{owner}/{repo}/milestones', 'issueGetMilestones'],
  ['POST', '/repos/{owner}/{repo}/milestones', 'issueCreateMilestone'],
  ['GET', '/repos/{owner}/{repo}/milestones/{id}', 'issueGetMilestone'],
  ['DELETE', '/repos/{owner}/{repo}/milestones/{id}', 'issueDeleteMilestone'],
  ['PATCH', '/repos/{owner}/{repo}/milestones/{id}', 'issueEditMilestone'],
]

/** Operations that must exist now: the seed's and Gitea's ids for the areas already built. */
const REQUIRED_OPERATIONS: [string, string, string][] = [
  ['GET', '/version', 'getVersion'],
  ['POST', '/markdown', 'renderMarkdown'],
  ['POST', '/markdown/raw', 'renderMarkdownRaw'],
  ['POST', '/admin/users/{username}/keys', 'adminCreatePublicKey'],
  ['DELETE', '/admin/users/{username}/keys/{id}', 'adminDeleteUserPublicKey'],
  ['GET', '/user', 'userGetCurrent'],
  ['GET', '/users/{username}', 'userGet'],
  ['GET', '/user/keys', 'userCurrentListKeys'],
  ['POST', '/user/keys', 'userCurrentPostKey'],
  ['GET', '/user/keys/{id}', 'userCurrentGetKey'],
  ['DELETE', '/user/keys/{id}', 'userCurrentDeleteKey'],
  ['GET', '/users/{username}/keys', 'userListKeys'],
  ['GET', '/user/gpg_keys', 'userCurrentListGPGKeys'],
  ['POST', '/user/gpg_keys', 'userCurrentPostGPGKey'],
  ['GET', '/user/gpg_keys/{id}', 'userCurrentGetGPGKey'],
  ['DELETE', '/user/gpg_keys/{id}', 'userCurrentDeleteGPGKey'],
  ['GET', '/users/{username}/gpg_keys', 'userListGPGKeys'],
  ['GET', '/user/gpg_key_token', 'getVerificationToken'],
  ['POST', '/user/gpg_key_verify', 'userVerifyGPGKey'],
  ['POST', '/user/repos', 'createCurrentUserRepo'],
  ['GET', '/repos/{owner}/{repo}', 'repoGet'],
  // Actions: secrets, variables, runner registration tokens (the POSTs that reset a token are Gitea 1.24's).
  ['GET', '/repos/{owner}/{repo}/actions/secrets', 'repoListActionsSecrets'],
  ['PUT', '/repos/{owner}/{repo}/actions/secrets/{secretname}', 'updateRepoSecret'],
  ['DELETE', '/repos/{owner}/{repo}/actions/secrets/{secretname}', 'deleteRepoSecret'],
  ['GET', '/repos/{owner}/{repo}/actions/variables', 'getRepoVariablesList'],
  ['GET', '/repos/{owner}/{repo}/actions/variables/{variablename}', 'getRepoVariable'],
  ['POST', '/repos/{owner}/{repo}/actions/variables/{variablename}', 'createRepoVariable'],
  ['PUT', '/repos/{owner}/{repo}/actions/variables/{variablename}', 'updateRepoVariable'],
  ['DELETE', '/repos/{owner}/{repo}/actions/variables/{variablename}', 'deleteRepoVariable'],
  ['GET', '/repos/{owner}/{repo}/actions/runners/registration-token', 'repoGetRunnerRegistrationToken'],
  ['POST', '/repos/{owner}/{repo}/actions/runners/registration-token', 'repoCreateRunnerRegistrationToken'],
  ['GET', '/orgs/{org}/actions/secrets', 'orgListActionsSecrets'],
  ['PUT', '/orgs/{org}/actions/secrets/{secretname}', 'updateOrgSecret'],
  ['DELETE', '/orgs/{org}/actions/secrets/{secretname}', 'deleteOrgSecret'],
  ['GET', '/orgs/{org}/actions/variables', 'getOrgVariablesList'],
  ['GET', '/orgs/{org}/actions/variables/{variablename}', 'getOrgVariable'],
  ['POST', '/orgs/{org}/actions/variables/{variablename}', 'createOrgVariable'],
  ['PUT', '/orgs/{org}/actions/variables/{variablename}', 'updateOrgVariable'],
  ['DELETE', '/orgs/{org}/actions/variables/{variablename}', 'deleteOrgVariable'],
  ['GET', '/orgs/{org}/actions/runners/registration-token', 'orgGetRunnerRegistrationToken'],
  ['POST', '/orgs/{org}/actions/runners/registration-token', 'orgCreateRunnerRegistrationToken'],
  ['PUT', '/user/actions/secrets/{secretname}', 'updateUserSecret'],
  ['DELETE', '/user/actions/secrets/{secretname}', 'deleteUserSecret'],
  ['GET', '/user/actions/variables', 'getUserVariablesList'],
  ['GET', '/user/actions/variables/{variablename}', 'getUserVariable'],
  ['POST', '/user/actions/variables/{variablename}', 'createUserVariable'],
  ['PUT', '/user/actions/variables/{variablename}', 'updateUserVariable'],
  ['DELETE', '/user/actions/variables/{variablename}', 'deleteUserVariable'],
  ['GET', '/user/actions/runners/registration-token', 'userGetRunnerRegistrationToken'],
  ['POST', '/user/actions/runners/registration-token', 'userCreateRunnerRegistrationToken'],
  ['GET', '/admin/runners/registration-token', 'adminGetRunnerRegistrationToken'],
  ['POST', '/admin/runners/registration-token', 'adminCreateRunnerRegistrationToken'],
]

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options']
/** `/repos/{owner}/{repo}/` → `/repos/{}/{}`: parameter names and trailing slashes do not matter. */
const shape = (path: string) => path.replace(/\{[^}]*\}/g, '{}').replace(/\/+$/, '')

let s: TestServer
let spec: any
/** "METHOD shape" → operation id, for every operation under /api/v1. */
const operations = new Map<string, string | undefined>()

beforeAll(async () => {
  s = await startTestServer()
  const res = await fetch(`${s.url}/swagger.v1.json`)
  expect(res.status).toBe(200)
  spec = await res.json()
  for (const [path, item] of Object.entries<any>(spec.paths)) {
    if (!path.startsWith('/api/v1/')) continue
    for (const method of METHODS) if (item[method]) operations.set(`${method.toUpperCase()} ${shape(path.slice('/api/v1'.length))}`, item[method].operationId)
  }
})
afterAll(() => s.stop())

describe('OpenAPI document', () => {
  test('is an OpenAPI document describing Warren', () => {
    expect(spec.openapi).toMatch(/^3\./)
    expect(spec.info.title).toBe('Warren API')
    expect(operations.size).toBeGreaterThan(REQUIRED_OPERATIONS.length)
  })

  test('every route under /api/v1 has an operation id; an id names one method (aliases share it)', () => {
    const missing = [...operations].filter(([, id]) => !id).map(([route]) => route)
    expect(missing).toEqual([])
    // The seed's quirky paths are served beside Gitea's real ones by the same handler, so one id
    // may appear on two paths, but never on two different methods.
    const methodOf = new Map<string, string>()
    const clashes: string[] = []
    for (const [route, id] of operations) {
      const method = route.split(' ')[0]!
      if (methodOf.has(id!) && methodOf.get(id!) !== method) clashes.push(`${id}: ${methodOf.get(id!)} and ${method}`)
      methodOf.set(id!, method)
    }
    expect(clashes).toEqual([])
  })

  test("the seed's operation ids are used for every seed route that exists", () => {
    const wrong: string[] = []
    for (const [method, path, id] of SEED_OPERATIONS) {
      const actual = operations.get(`${method} ${shape(path)}`)
      if (actual !== undefined && actual !== id) wrong.push(`${method} ${path}: ${actual} instead of ${id}`)
    }
    expect(wrong).toEqual([])
  })

  test('the operations of the areas built so far are all present with their ids', () => {
    const missing = REQUIRED_OPERATIONS.filter(([method, path, id]) => operations.get(`${method} ${shape(path)}`) !== id).map(
      ([method, path, id]) => `${method} ${path} (${id})`,
    )
    expect(missing).toEqual([])
  })

  test('markdown/raw documents a text/plain body; keys document their records', () => {
    const raw = spec.paths['/api/v1/markdown/raw'].post
    expect(Object.keys(raw.requestBody.content)).toContain('text/plain')
    const created = spec.paths['/api/v1/user/keys'].post.responses['201']
    expect(JSON.stringify(created)).toContain('fingerprint')
  })

  test('every request body is documented with its media type and schema', () => {
    const empty: string[] = []
    for (const [path, item] of Object.entries<any>(spec.paths))
      for (const method of METHODS) {
        const body = item[method]?.requestBody
        if (body && Object.keys(body.content ?? {}).length === 0) empty.push(`${method.toUpperCase()} ${path}`)
      }
    expect(empty).toEqual([])
    const create = spec.paths['/api/v1/user/repos'].post.requestBody.content['application/json'].schema
    expect(create.required).toEqual(['name'])
    expect(create.properties.name).toMatchObject({ type: 'string', maxLength: 100 })
  })
})

describe('docs page', () => {
  test('loads its scripts and styles from this server only, and points at the document', async () => {
    const page = await s.get('/api/swagger')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
    expect(refs.length).toBeGreaterThanOrEqual(2)
    for (const ref of refs) {
      expect(ref).toStartWith('/')
      expect(ref).not.toStartWith('//')
      const asset = await fetch(s.url + ref)
      expect(asset.status).toBe(200)
      expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(1000)
    }
    expect(page.text).not.toMatch(/https?:\/\//)
    // the page fetches the document from where it really is
    const url = /"url":"([^"]+)"/.exec(page.text)![1]!
    const doc = await fetch(new URL(url, `${s.url}/api/swagger`))
    expect(doc.status).toBe(200)
    expect(((await doc.json()) as any).paths).toBeDefined()
  })

  test('assets have proper types; unknown files and path tricks are 404', async () => {
    const js = await fetch(`${s.url}/api/swagger/assets/swagger-ui-bundle.js`)
    expect(js.headers.get('content-type')).toContain('javascript')
    const css = await fetch(`${s.url}/api/swagger/assets/swagger-ui.css`)
    expect(css.headers.get('content-type')).toContain('text/css')
    for (const bad of ['package.json', 'nope.js', '..%2Fpackage.json', '%2e%2e%2fpackage.json', 'index.html']) {
      const r = await s.get(`/api/swagger/assets/${bad}`)
      expect(r.status).toBe(404)
      expect(r.body.message).toBeString()
    }
  })
})

/** Every `$ref` in a JSON value. */
function refsIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsIn(item, out)
  else if (value && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') out.push(item)
      else refsIn(item, out)
    }
  return out
}

/** The schema of a query parameter or a JSON body field of an operation, whether inline or by `$ref`. */
function fieldSchema(method: string, path: string, field: string): any {
  const op = spec.paths[`/api/v1${path}`][method]
  const param = op.parameters?.find((p: any) => p.name === field && p.in === 'query')
  if (param) return param.schema
  let body = op.requestBody.content['application/json'].schema
  if (!body.properties) body = spec.components.schemas[body.$ref.split('/').pop()]
  return body.properties[field]
}

describe('OpenAPI document: one operation per id, named records, enumerations, security', () => {
  test('every operation id is used by exactly one operation', () => {
    const seen = new Map<string, string>()
    const twice: string[] = []
    for (const [path, item] of Object.entries<any>(spec.paths))
      for (const method of METHODS) {
        const id = item[method]?.operationId
        if (!id) continue
        if (seen.has(id)) twice.push(`${id}: ${seen.get(id)} and ${method} ${path}`)
        seen.set(id, `${method} ${path}`)
      }
    expect(twice).toEqual([])
  })

  test("both spellings of a path are documented, each under its own id, and served by the same handler", async () => {
    const documented = (path: string, method: string) => spec.paths[`/api/v1${path}`]?.[method]?.operationId
    // The seed's spellings keep the seed's ids; Gitea's spellings of the same operations have their own.
    expect(documented('/repos/{owner}/{repo}/issues/{index}/labels', 'get')).toBe('issueGetLabels')
    expect(documented('/repos/{owner}/{repo}/issue/{index}/labels', 'get')).toBe('issueGetLabelsSingularPath')
    expect(documented('/repos/{owner}/{repo}/issue/{index}/labels', 'put')).toBe('issueReplaceLabels')
    expect(documented('/repos/{owner}/{repo}/issues/{index}/labels', 'put')).toBe('issueReplaceIssueLabels')
    expect(documented('/repos/{owner}/{repo}/comments/{id}', 'patch')).toBe('issueEditComment')
    expect(documented('/repos/{owner}/{repo}/issues/comments/{id}', 'patch')).toBe('issueEditIssueComment')
    expect(documented('/repos/{owner}/{repo}/issue/{index}/comments', 'get')).toBe('issueGetComments')
    expect(documented('/repos/{owner}/{repo}/issues/{index}/comments', 'get')).toBe('issueListIssueComments')
    // Every route the app serves under /api/v1 is in the document.
    const served = (s.app as any).routes
      .filter((r: any) => r.path.startsWith('/api/v1/') && r.hooks?.detail?.operationId)
      .map((r: any) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`)
    const inDocument = new Set(Object.entries<any>(spec.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => `${m} ${path}`)))
    expect(served.filter((route: string) => !inDocument.has(route))).toEqual([])

    const alice = await s.user('docalice')
    expect((await s.post('/user/repos', { name: 'aliased' }, { token: alice.token })).status).toBe(201)
    const label = await s.post('/repos/docalice/aliased/labels', { name: 'bug', color: '#ee0701' }, { token: alice.token })
    expect((await s.post('/repos/docalice/aliased/issues', { title: 'one', labels: [label.body.id] }, { token: alice.token })).status).toBe(201)
    for (const path of ['/repos/docalice/aliased/issues/1/labels', '/repos/docalice/aliased/issue/1/labels']) {
      const r = await s.get(path, { token: alice.token })
      expect(r.status).toBe(200)
      expect(r.body.map((l: any) => l.name)).toEqual(['bug'])
    }
    const comment = await s.post('/repos/docalice/aliased/issues/1/comments', { body: 'first' }, { token: alice.token })
    const edited = await s.patch(`/repos/docalice/aliased/issues/comments/${comment.body.id}`, { body: 'edited' }, { token: alice.token })
    expect(edited.status).toBe(200)
    expect(edited.body.body).toBe('edited')
  })

  test('enumerated fields list their values, and a value outside them is a 422 naming the field', async () => {
    const cases: [string, string, string, string[]][] = [
      ['get', '/repos/{owner}/{repo}/issues', 'state', ['open', 'closed', 'all']],
      ['get', '/repos/{owner}/{repo}/issues', 'type', ['issues', 'pulls', 'all']],
      ['get', '/repos/{owner}/{repo}/milestones', 'state', ['open', 'closed', 'all']],
      ['get', '/repos/{owner}/{repo}/labels', 'sort', ['leastissues', 'mostissues', 'reversealphabetically']],
      ['get', '/repos/search', 'mode', ['source', 'fork', 'mirror', 'collaborative']],
      ['patch', '/repos/{owner}/{repo}/issues/{index}', 'state', ['open', 'closed']],
      ['patch', '/repos/{owner}/{repo}/milestones/{id}', 'state', ['open', 'closed']],
      ['post', '/orgs', 'visibility', ['public', 'limited', 'private']],
      ['post', '/admin/users', 'visibility', ['public', 'limited', 'private']],
      ['post', '/orgs/{org}/teams', 'permission', ['read', 'write', 'admin']],
      ['put', '/repos/{owner}/{repo}/collaborators/{collaborator}', 'permission', ['read', 'write', 'admin']],
    ]
    for (const [method, path, field, values] of cases) {
      const schema = fieldSchema(method, path, field)
      expect({ path, field, enum: schema.enum }).toMatchObject({ path, field, enum: expect.arrayContaining(values) })
    }
    const units = fieldSchema('post', '/orgs/{org}/teams', 'units')
    expect(units.items.enum).toContain('repo.code')
    // Records say their values too.
    expect(spec.components.schemas.Issue.properties.state.enum).toEqual(['open', 'closed'])
    expect(spec.components.schemas.Team.properties.permission.enum).toEqual(['none', 'read', 'write', 'admin', 'owner'])
    expect(spec.components.schemas.User.properties.visibility.enum).toEqual(['public', 'limited', 'private'])

    const root = await s.user('docroot', { admin: true })
    expect((await s.post('/user/repos', { name: 'enums' }, { token: root.token })).status).toBe(201)
    expect((await s.post('/repos/docroot/enums/issues', { title: 'one' }, { token: root.token })).status).toBe(201)
    const bad: [() => Promise<any>, string][] = [
      [() => s.get('/repos/docroot/enums/issues?state=bogus'), 'state'],
      [() => s.get('/repos/docroot/enums/issues?type=nope'), 'type'],
      [() => s.get('/repos/docroot/enums/labels?sort=sideways'), 'sort'],
      [() => s.patch('/repos/docroot/enums/issues/1', { state: 'reopened' }, { token: root.token }), 'state'],
      [() => s.post('/orgs', { username: 'docorg', visibility: 'secret' }, { token: root.token }), 'visibility'],
    ]
    for (const [send, field] of bad) {
      const r = await send()
      expect(r.status).toBe(422)
      expect(r.body.message).toContain(`[${field}]`)
      expect(r.body.message).toContain('must be one of')
      expect(r.body.url).toBeString()
    }
    // Lenient fields keep Gitea's leniency: letter case for a collaborator's permission.
    expect((await s.put('/repos/docroot/enums/collaborators/docalice', { permission: 'WRITE' }, { token: root.token })).status).toBe(204)
    expect((await s.put('/repos/docroot/enums/collaborators/docalice', { permission: 'owner' }, { token: root.token })).status).toBe(422)
  })

  test('security schemes are declared as in Gitea and apply to every operation', () => {
    const schemes = spec.components.securitySchemes
    expect(schemes.BasicAuth).toMatchObject({ type: 'http', scheme: 'basic' })
    expect(schemes.AuthorizationHeaderToken).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' })
    expect(schemes.Token).toMatchObject({ type: 'apiKey', in: 'query', name: 'token' })
    expect(schemes.AccessToken).toMatchObject({ type: 'apiKey', in: 'query', name: 'access_token' })
    expect(schemes.SudoParam).toMatchObject({ type: 'apiKey', in: 'query', name: 'sudo' })
    expect(schemes.SudoHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'Sudo' })
    expect(schemes.TOTPHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-GITEA-OTP' })
    const applied = (spec.security as Record<string, unknown>[]).flatMap((alternative) => Object.keys(alternative))
    expect(applied.sort()).toEqual(Object.keys(schemes).sort())
  })

  test("records are components referenced by name, with Gitea's names, and every $ref resolves", () => {
    const names = Object.keys(spec.components.schemas)
    for (const name of ['User', 'Repository', 'Issue', 'Label', 'Milestone', 'Comment', 'Organization', 'Team', 'PublicKey', 'GPGKey', 'TrackedTime', 'Branch', 'CreateRepoOption', 'CreateIssueOption'])
      expect(names).toContain(name)
    expect(spec.paths['/api/v1/users/{username}'].get.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/User')
    expect(spec.paths['/api/v1/repos/{owner}/{repo}/issues'].get.responses['200'].content['application/json'].schema.items.$ref).toBe(
      '#/components/schemas/Issue',
    )
    expect(spec.paths['/api/v1/repos/{owner}/{repo}/issues'].post.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/CreateIssueOption',
    )
    // Nested records too: an issue's poster, a repository's owner.
    expect(spec.components.schemas.Issue.properties.user.$ref).toBe('#/components/schemas/User')
    expect(spec.components.schemas.Repository.properties.owner.$ref).toBe('#/components/schemas/User')
    const refs = refsIn(spec)
    expect(refs.length).toBeGreaterThan(50)
    expect(refs.filter((ref) => !ref.startsWith('#/components/schemas/') || !spec.components.schemas[ref.split('/').pop()!])).toEqual([])
    // No schema is left half-named (a name taken by two different schemas would stay inline).
    expect(JSON.stringify(spec)).not.toContain('"$id"')
  })

  test('the answers still match the records the document names', async () => {
    const bob = await s.user('docbob')
    const me = await s.get('/user', { token: bob.token })
    expect(me.status).toBe(200)
    expect(Object.keys(me.body).sort()).toEqual(Object.keys(spec.components.schemas.User.properties).sort())
    expect(spec.components.schemas.User.properties.visibility.enum).toContain(me.body.visibility)
  })
})
