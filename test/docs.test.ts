import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from './helpers'

/** Every operation of the seed (shared/seed/api-spec.md §4): method, path, operation id. */
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
  ['POST', '/repos/{owner}/{repo}/mirror-sync', 'repoMirrorSync'],
  ['GET', '/repos/{owner}/{repo}/pulls', 'repoListPullRequests'],
  ['POST', '/repos/{owner}/{repo}/pulls', 'repoCreatePullRequest'],
  ['GET', '/repos/{owner}/{repo}/pulls/{index}', 'repoGetPullRequest'],
  ['PATCH', '/repos/{owner}/{repo}/pulls/{index}', 'repoEditPullRequest'],
  ['GET', '/repos/{owner}/{repo}/pulls/{index}/merge', 'repoPullRequestIsMerged'],
  ['POST', '/repos/{owner}/{repo}/pulls/{index}/merge', 'repoMergePullRequest'],
  ['GET', '/repos/{owner}/{repo}/raw/{filepath}', 'repoGetRawFile'],
  // The seed lists this one as GET; Gitea routes the creation as POST (endpoints.md A.4).
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
  ['POST', '/user/repos', 'createCurrentUserRepo'],
  ['GET', '/repos/{owner}/{repo}', 'repoGet'],
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
