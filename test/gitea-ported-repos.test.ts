import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, makeWorkRepo, refsOf, remoteUrl, tempDir } from './git-fixture'

/*
 * Assertions ported from Gitea's own integration tests (go-gitea/gitea, tests/integration/),
 * adapted to Warren's fixtures: alice owns proj (public, pushed from makeWorkRepo), hidden
 * (private, same content) and empty (public, no commits); bob is an unrelated user; root a site
 * admin; org acme is owned by alice.
 */
let s: TestServer
let alice: TestUser
let bob: TestUser
let root: TestUser
let work: Awaited<ReturnType<typeof makeWorkRepo>>
const ids: Record<string, number> = {}

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  root = await s.user('root', { admin: true })
  for (const [name, priv] of [['proj', false], ['hidden', true], ['empty', false]] as const) {
    const r = await s.post('/user/repos', { name, private: priv }, { token: alice.token })
    expect(r.status).toBe(201)
    ids[name] = r.body.id
  }
  work = await makeWorkRepo()
  for (const repo of ['proj', 'hidden']) {
    const url = remoteUrl(s.url, `alice/${repo}.git`, 'alice', alice.token)
    await gitOk(work.dir, 'push', '-q', url, '--all')
    await gitOk(work.dir, 'push', '-q', url, '--tags')
  }
  expect((await s.post('/admin/users/alice/orgs', { username: 'acme' }, { token: root.token })).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
  rmSync(work.dir, { recursive: true, force: true })
})

// Gitea: api_repo_test.go TestAPIUserReposNotLogin
describe('TestAPIUserReposNotLogin', () => {
  test('anonymous callers see only the public repositories of the user', async () => {
    const r = await s.get('/users/alice/repos')
    expect(r.status).toBe(200)
    expect(r.body.map((x: any) => x.name).sort()).toEqual(['empty', 'proj'])
    for (const repo of r.body) {
      expect(repo.owner.id).toBe(alice.user.id)
      expect(repo.private).toBe(false)
    }
  })
})

// Gitea: api_repo_test.go TestAPISearchRepo (keyword part)
describe('TestAPISearchRepo', () => {
  test('keyword search: every hit contains the keyword, anonymous callers get no private ones', async () => {
    const r = await s.get('/repos/search?q=pro')
    expect(r.status).toBe(200)
    expect(r.body.data.length).toBeGreaterThan(0)
    for (const repo of r.body.data) {
      expect(repo.name).toContain('pro')
      expect(repo.private).toBe(false)
    }
  })
  test('limit caps the page; a private repository appears only for those who can read it', async () => {
    expect((await s.get('/repos/search?limit=1')).body.data).toHaveLength(1)
    const anon = await s.get(`/repos/search?uid=${alice.user.id}`)
    expect(anon.body.data.map((x: any) => x.name).sort()).toEqual(['empty', 'proj'])
    const own = await s.get(`/repos/search?uid=${alice.user.id}`, { token: alice.token })
    expect(own.body.data.map((x: any) => x.name).sort()).toEqual(['empty', 'hidden', 'proj'])
    const other = await s.get(`/repos/search?uid=${alice.user.id}`, { token: bob.token })
    expect(other.body.data.every((x: any) => !x.private)).toBe(true)
  })
})

// Gitea: api_repo_test.go TestAPIViewRepo
describe('TestAPIViewRepo', () => {
  test('a public repository by owner/name, anonymously', async () => {
    const r = await s.get('/repos/alice/proj')
    expect(r.status).toBe(200)
    expect(r.body.id).toBe(ids.proj!)
    expect(r.body.name).toBe('proj')
    expect(r.body.full_name).toBe('alice/proj')
    expect(r.body.open_issues_count).toBe(0)
    expect((await s.post('/repos/alice/proj/issues', { title: 'one' }, { token: bob.token })).status).toBe(201)
    expect((await s.get('/repos/alice/proj')).body.open_issues_count).toBe(1)
  })
})

// Gitea: api_repo_test.go TestAPIGetRepoByIDUnauthorized
describe('TestAPIGetRepoByIDUnauthorized', () => {
  test('a private repository by id answers 404 to a user who cannot read it', async () => {
    expect((await s.get(`/repositories/${ids.hidden}`, { token: bob.token })).status).toBe(404)
    const own = await s.get(`/repositories/${ids.hidden}`, { token: alice.token })
    expect(own.status).toBe(200)
    expect(own.body.full_name).toBe('alice/hidden')
  })
})

// Gitea: api_repo_test.go TestAPIRepoCreateConflict
describe('TestAPIRepoCreateConflict', () => {
  test('creating a repository whose name is taken answers 409 with Gitea message', async () => {
    expect((await s.post('/user/repos', { name: 'repo-tmp-17' }, { token: alice.token })).status).toBe(201)
    const r = await s.post('/user/repos', { name: 'repo-tmp-17' }, { token: alice.token })
    expect(r.status).toBe(409)
    expect(r.body.message).toStartWith('The repository with the same name already exists.')
  })
})

// Gitea: api_repo_test.go TestAPIOrgRepoCreate
describe('TestAPIOrgRepoCreate', () => {
  test('site admin and org owner create (201); an outsider gets 403', async () => {
    expect((await s.post('/org/acme/repos', { name: 'repo-admin' }, { token: root.token })).status).toBe(201)
    expect((await s.post('/org/acme/repos', { name: 'repo-own' }, { token: alice.token })).status).toBe(201)
    expect((await s.post('/org/acme/repos', { name: 'repo-bad-org' }, { token: bob.token })).status).toBe(403)
    expect((await s.get('/repos/acme/repo-bad-org', { token: root.token })).status).toBe(404)
  })
})

// Gitea: api_repo_edit_test.go TestAPIRepoEdit
describe('TestAPIRepoEdit', () => {
  test('owner renames and changes properties; the answer and a re-read agree', async () => {
    expect((await s.post('/user/repos', { name: 'editme' }, { token: alice.token })).status).toBe(201)
    const opt = {
      name: 'editmerenamed',
      description: 'new description',
      website: 'http://wwww.newwebsite.com',
      private: true,
      has_issues: false,
      has_wiki: false,
      archived: true,
    }
    const r = await s.patch('/repos/alice/editme', opt, { token: alice.token })
    expect(r.status).toBe(200)
    expect(r.body.name).toBe(opt.name)
    expect(r.body.description).toBe(opt.description)
    expect(r.body.website).toBe(opt.website)
    expect(r.body.archived).toBe(true)
    const back = await s.get('/repos/alice/editmerenamed', { token: alice.token })
    expect(back.body).toMatchObject({ name: opt.name, description: opt.description, website: opt.website, private: true, archived: true, has_issues: false, has_wiki: false })

    // Options left out are not touched.
    const small = await s.patch('/repos/alice/editmerenamed', { description: 'small change' }, { token: alice.token })
    expect(small.status).toBe(200)
    expect(small.body).toMatchObject({ description: 'small change', has_issues: false, has_wiki: false, private: true, website: opt.website })

    // Making it public again, and back.
    expect((await s.patch('/repos/alice/editmerenamed', { private: false }, { token: alice.token })).body.private).toBe(false)
    expect((await s.patch('/repos/alice/editmerenamed', { private: true }, { token: alice.token })).body.private).toBe(true)
  })
  // Gitea checks URLs of the external tracker/wiki (not served here); the website is at most 255 characters.
  test('an over-long website is 422 and changes nothing', async () => {
    const r = await s.patch('/repos/alice/proj', { website: 'http://x.example/' + 'a'.repeat(250), description: 'nope' }, { token: alice.token })
    expect(r.status).toBe(422)
    expect((await s.get('/repos/alice/proj')).body.description).toBe('')
  })
  test('a repository that does not exist is 404', async () => {
    expect((await s.patch('/repos/alice/repodoesnotexist', { name: 'repodoesnotexist' }, { token: alice.token })).status).toBe(404)
  })
  test('a private repository: 404 to a non-collaborator and to anonymous callers; 200 to its owner', async () => {
    expect((await s.patch('/repos/alice/hidden', { description: 'x' }, { token: bob.token })).status).toBe(404)
    expect((await s.patch('/repos/alice/hidden', { description: 'x' })).status).toBe(404)
    expect((await s.get('/repos/alice/hidden', { token: alice.token })).body.description).toBe('')
    expect((await s.patch('/repos/alice/hidden', { description: 'x' }, { token: alice.token })).status).toBe(200)
  })
  test('archiving and unarchiving an empty repository', async () => {
    expect((await s.patch('/repos/alice/empty', { archived: true }, { token: alice.token })).body.archived).toBe(true)
    expect((await s.get('/repos/alice/empty')).body.archived).toBe(true)
    expect((await s.patch('/repos/alice/empty', { archived: false }, { token: alice.token })).body.archived).toBe(false)
  })
  test('a public repository the caller does not administer: 403, unchanged', async () => {
    expect((await s.patch('/repos/alice/proj', { description: 'by bob' }, { token: bob.token })).status).toBe(403)
    expect((await s.patch('/repos/alice/proj', { description: 'anon' })).status).toBe(401)
    expect((await s.get('/repos/alice/proj')).body.description).toBe('')
  })
  test('an org repository edited by an org owner', async () => {
    const r = await s.patch('/repos/acme/repo-own', { name: 'repo-own-renamed', description: 'new description' }, { token: alice.token })
    expect(r.status).toBe(200)
    expect(r.body.full_name).toBe('acme/repo-own-renamed')
    expect((await s.patch('/repos/acme/repo-own-renamed', { name: 'repo-own' }, { token: alice.token })).status).toBe(200)
  })
})

// Gitea: api_branch_test.go TestAPIGetBranch
describe('TestAPIGetBranch', () => {
  for (const [name, exists] of [
    ['master', true],
    ['master/doesnotexist', false],
    ['feature/slash', true],
    ['feature/slash/doesnotexist', false],
  ] as const)
    test(`${name} → ${exists ? 200 : 404}`, async () => {
      const r = await s.get(`/repos/alice/proj/branches/${name}`, { token: alice.token })
      expect(r.status).toBe(exists ? 200 : 404)
      if (exists) {
        expect(r.body.name).toBe(name)
        expect(r.body.user_can_push).toBe(true)
        expect(r.body.user_can_merge).toBe(true)
      }
    })
  test('a reader may not push or merge', async () => {
    const r = await s.get('/repos/alice/proj/branches/master', { token: bob.token })
    expect(r.status).toBe(200)
    expect(r.body.user_can_push).toBe(false)
    expect(r.body.user_can_merge).toBe(false)
  })
  test('the list holds every branch', async () => {
    const r = await s.get('/repos/alice/proj/branches', { token: alice.token })
    expect(r.status).toBe(200)
    expect(r.body.map((b: any) => b.name).sort()).toEqual(['dev', 'feature/slash', 'master'])
  })
})

// Gitea: api_repo_raw_test.go TestAPIReposRaw
describe('TestAPIReposRaw', () => {
  test('by branch, tag and commit id, and on the default branch without a ref', async () => {
    const refs = await refsOf(work.dir)
    for (const ref of ['master', 'v1.0', refs['refs/heads/master']!]) {
      const r = await fetch(`${s.url}/api/v1/repos/alice/proj/raw/${ref}/README.md?token=${alice.token}`)
      expect(r.status).toBe(200)
      expect(Buffer.from(await r.arrayBuffer()).equals(work.files['README.md']!)).toBe(true)
    }
    const r = await fetch(`${s.url}/api/v1/repos/alice/proj/raw/README.md?token=${alice.token}`)
    expect(r.status).toBe(200)
    expect(Buffer.from(await r.arrayBuffer()).equals(work.files['README.md']!)).toBe(true)
  })
  test('private repository: 404 for others, 200 for the owner', async () => {
    expect((await s.get('/repos/alice/hidden/raw/master/README.md', { token: bob.token })).status).toBe(404)
    expect((await s.get('/repos/alice/hidden/raw/master/README.md', { token: alice.token })).status).toBe(200)
  })
})

// Gitea: api_repo_archive_test.go TestAPIDownloadArchive
describe('TestAPIDownloadArchive', () => {
  test('zip and tar.gz of master; no extension is refused (404, where Gitea says 400)', async () => {
    const zip = await fetch(`${s.url}/api/v1/repos/alice/proj/archive/master.zip?token=${alice.token}`)
    expect(zip.status).toBe(200)
    const zipBytes = Buffer.from(await zip.arrayBuffer())
    expect(zipBytes.subarray(0, 2).toString()).toBe('PK')
    const tgz = await fetch(`${s.url}/api/v1/repos/alice/proj/archive/master.tar.gz?token=${alice.token}`)
    expect(tgz.status).toBe(200)
    const tgzBytes = Buffer.from(await tgz.arrayBuffer())
    expect([tgzBytes[0], tgzBytes[1]]).toEqual([0x1f, 0x8b])
    const none = await fetch(`${s.url}/api/v1/repos/alice/proj/archive/master?token=${alice.token}`)
    expect(none.status).toBe(404)
    await none.arrayBuffer()
  })
})

// Gitea: git_smart_http_test.go TestGitSmartHTTP (testGitSmartHTTP)
describe('TestGitSmartHTTP', () => {
  const cases: [string, number][] = [
    ['alice/proj/info/refs?service=git-upload-pack', 200],
    ['alice/proj/objects/info/alternates', 404],
    ['alice/proj/objects/info/http-alternates', 404],
    ['alice/proj/../../custom/conf/app.ini', 404],
    ['alice/proj/objects/info/../../../../custom/conf/app.ini', 404],
  ]
  for (const [path, code] of cases)
    test(`${path} → ${code}`, async () => {
      const r = await fetch(`${s.url}/${path}`, { headers: { authorization: alice.basic }, redirect: 'manual' })
      await r.arrayBuffer()
      expect(r.status).toBe(code)
    })
})

// Gitea: git_smart_http_test.go testRenamedRepoRedirect
describe('testRenamedRepoRedirect', () => {
  test('git: the old name of a renamed repository answers 301 to the new one once the caller may read it', async () => {
    expect((await s.post('/user/repos', { name: 'oldrepo1', private: true, default_branch: 'master' }, { token: alice.token })).status).toBe(201)
    const oldUrl = remoteUrl(s.url, 'alice/oldrepo1.git', 'alice', alice.token)
    await gitOk(work.dir, 'push', '-q', oldUrl, '--all')
    await gitOk(work.dir, 'push', '-q', oldUrl, '--tags')
    expect((await s.patch('/repos/alice/oldrepo1', { name: 'repo1' }, { token: alice.token })).status).toBe(200)

    // Gitea redirects before asking for credentials; Warren asks first, so that the new name of a
    // private repository is never shown to anonymous callers (git retries with credentials).
    const anon = await fetch(`${s.url}/alice/oldrepo1/info/refs?service=git-upload-pack`, { redirect: 'manual' })
    await anon.arrayBuffer()
    expect(anon.status).toBe(401)
    expect(anon.headers.get('www-authenticate')).toBe('Basic realm="."')
    const outsider = await fetch(`${s.url}/alice/oldrepo1/info/refs?service=git-upload-pack`, { headers: { authorization: bob.basic }, redirect: 'manual' })
    await outsider.arrayBuffer()
    expect(outsider.status).toBe(404)

    const moved = await fetch(`${s.url}/alice/oldrepo1/info/refs?service=git-upload-pack`, { headers: { authorization: alice.basic }, redirect: 'manual' })
    await moved.arrayBuffer()
    expect(moved.status).toBe(301)
    const location = moved.headers.get('location')!
    expect(location).toBe('/alice/repo1/info/refs?service=git-upload-pack')
    const signed = await fetch(s.url + location, { headers: { authorization: alice.basic } })
    expect(signed.status).toBe(200)
    const refs = await refsOf(work.dir)
    expect(await signed.text()).toContain(`${refs['refs/tags/v1.0']} refs/tags/v1.0`)

    // A real clone through the old URL follows the redirect.
    const clone = tempDir()
    await gitOk(clone, 'clone', '-q', oldUrl, 'c')
    expect(await gitOk(join(clone, 'c'), 'rev-parse', 'HEAD')).toBe(refs['refs/heads/master']!)
    rmSync(clone, { recursive: true, force: true })
  })

  test('API: 307 to the new name for readers, 404 for others; gone once the old name is reused', async () => {
    const api = await s.get('/repos/alice/oldrepo1/branches?x=1', { token: alice.token })
    expect(api.status).toBe(307)
    expect(api.headers.get('location')).toBe('/api/v1/repos/alice/repo1/branches?x=1')
    expect((await s.get('/repos/alice/oldrepo1', { token: bob.token })).status).toBe(404)
    expect((await s.get('/repos/alice/oldrepo1')).status).toBe(404)

    // A public renamed repository redirects anonymous callers too.
    expect((await s.post('/user/repos', { name: 'pubold' }, { token: alice.token })).status).toBe(201)
    expect((await s.patch('/repos/alice/pubold', { name: 'pubnew' }, { token: alice.token })).status).toBe(200)
    const pub = await s.get('/repos/alice/pubold')
    expect(pub.status).toBe(307)
    expect(pub.headers.get('location')).toBe('/api/v1/repos/alice/pubnew')

    // Creating a repository under the old name ends the redirect.
    expect((await s.post('/user/repos', { name: 'pubold' }, { token: alice.token })).status).toBe(201)
    expect((await s.get('/repos/alice/pubold')).body.id).not.toBe((await s.get('/repos/alice/pubnew')).body.id)
    // Renaming back onto an old name ends it as well, and deleting the repository ends the rest.
    expect((await s.patch('/repos/alice/repo1', { name: 'oldrepo1' }, { token: alice.token })).status).toBe(200)
    expect((await s.get('/repos/alice/oldrepo1', { token: alice.token })).status).toBe(200)
    expect((await s.get('/repos/alice/repo1', { token: alice.token })).status).toBe(307)
    expect((await s.del('/repos/alice/oldrepo1', undefined, { token: alice.token })).status).toBe(204)
    expect((await s.get('/repos/alice/repo1', { token: alice.token })).status).toBe(404)
  })
})
