import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { count, eq } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { makeOrg } from './access-fixtures'
import { repositories, users } from '../src/db/schema'
import { initBareRepository } from '../src/git/init'
import { repoPath, git } from '../src/git/run'

/** Creating a repository: names, templates, races with a name or a leftover folder, who may, how many. */

let s: TestServer
let alice: TestUser
let bob: TestUser
let admin: TestUser
const scratch = mkdtempSync(join(tmpdir(), 'warren-repos-create-test-'))

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  admin = await s.user('root', { admin: true })
})
afterAll(async () => {
  await s.stop()
  rmSync(scratch, { recursive: true, force: true })
})

const repoRow = async (owner: string, name: string) =>
  (await s.deps.db.select().from(repositories).where(eq(repositories.lowerName, name.toLowerCase()))).find((r) => r.ownerName === owner)
const numRepos = async (id: number) => (await s.deps.db.select().from(users).where(eq(users.id, id)))[0]!.numRepos
const repoCount = async (ownerId: number) => (await s.deps.db.select({ n: count() }).from(repositories).where(eq(repositories.ownerId, ownerId)))[0]!.n

/** Clones a repository straight from its folder (smart HTTP is another area's test) and returns the clone's path. */
async function clone(fullName: string): Promise<string> {
  const dir = mkdtempSync(join(scratch, 'clone-'))
  const [owner, name] = fullName.split('/') as [string, string]
  await git(['clone', '--quiet', '--', repoPath(s.config.dataDir, owner, name), dir], { cwd: scratch })
  return dir
}

describe('create', () => {
  test('POST /user/repos creates an empty repository and counts it', async () => {
    const before = await numRepos(alice.user.id)
    const r = await s.post('/user/repos', { name: 'plain', description: 'd' }, { token: alice.token })
    expect(r.status).toBe(201)
    expect(r.body.full_name).toBe('alice/plain')
    expect(r.body.empty).toBe(true)
    expect(r.body.permissions).toEqual({ admin: true, push: true, pull: true })
    expect(await numRepos(alice.user.id)).toBe(before + 1)
    expect(existsSync(repoPath(s.config.dataDir, 'alice', 'plain'))).toBe(true)
  })

  test('bad names, duplicates and anonymous callers are refused with nothing created', async () => {
    expect((await s.post('/user/repos', { name: 'x' })).status).toBe(401)
    for (const name of ['a b', '..', 'x.git', 'y.wiki', '', 'a'.repeat(101)])
      expect((await s.post('/user/repos', { name }, { token: alice.token })).status).toBe(422)
    expect((await s.post('/user/repos', { name: 'PLAIN' }, { token: alice.token })).status).toBe(409)
    expect((await s.deps.db.select().from(repositories).where(eq(repositories.ownerId, alice.user.id))).length).toBe(1)
  })

  test('auto_init writes a real first commit with README, .gitignore and LICENSE', async () => {
    const r = await s.post(
      '/user/repos',
      { name: 'inited', description: 'Hello there', auto_init: true, gitignores: 'Go, Node', license: 'MIT', default_branch: 'main' },
      { token: alice.token },
    )
    expect(r.status).toBe(201)
    expect(r.body.empty).toBe(false)
    expect(r.body.size).toBeGreaterThan(0)
    expect(r.body.default_branch).toBe('main')
    const dir = await clone('alice/inited')
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('# inited\n\nHello there\n')
    const ignore = readFileSync(join(dir, '.gitignore'), 'utf8')
    expect(ignore).toContain('# ---> Go')
    expect(ignore).toContain('# ---> Node')
    expect(ignore).toContain('node_modules/')
    const license = readFileSync(join(dir, 'LICENSE'), 'utf8')
    expect(license).toContain(`Copyright (c) ${new Date().getUTCFullYear()} alice`)
    expect(license).not.toContain('<year>')
    const log = (await git(['log', '--format=%an <%ae>|%s', 'main'], { cwd: dir })).trim()
    expect(log).toBe('alice <alice@example.com>|Initial commit')
    expect((await git(['symbolic-ref', 'HEAD'], { gitDir: repoPath(s.config.dataDir, 'alice', 'inited') })).trim()).toBe('refs/heads/main')
  })

  test('a default branch git would refuse is 422 on create and edit, and nothing is created', async () => {
    const before = (await s.deps.db.select().from(repositories)).length
    for (const branch of ['.hidden', 'a/.b', 'x.lock/y', 'trailing.', '-opt', 'two..dots', 'sp ace'])
      for (const auto_init of [false, true]) {
        const r = await s.post('/user/repos', { name: 'badbranch', default_branch: branch, auto_init }, { token: alice.token })
        expect(r.status).toBe(422)
        expect(r.body.message).toContain('DefaultBranch')
      }
    expect((await s.deps.db.select().from(repositories)).length).toBe(before)
    expect(existsSync(repoPath(s.config.dataDir, 'alice', 'badbranch'))).toBe(false)
    expect((await s.patch('/repos/alice/inited', { default_branch: '.hidden' }, { token: alice.token })).status).toBe(422)
  })

  test('every shipped template can be used', async () => {
    const ignores = 'Go,Node,Python,Java,C,C++,Rust,Ruby,Swift,Kotlin,Dotnet,VisualStudio,macOS,Windows,Linux,JetBrains,VisualStudioCode'
    const licenses = ['MIT', 'Apache-2.0', 'GPL-2.0', 'GPL-3.0', 'LGPL-3.0', 'AGPL-3.0', 'BSD-2-Clause', 'BSD-3-Clause', 'MPL-2.0', 'Unlicense', 'ISC']
    const r = await s.post('/user/repos', { name: 'all-ignores', auto_init: true, gitignores: ignores, license: 'Apache-2.0' }, { token: bob.token })
    expect(r.status).toBe(201)
    for (const license of licenses.slice(2)) {
      const res = await s.post('/user/repos', { name: `lic-${license}`, auto_init: true, license }, { token: bob.token })
      expect(res.status).toBe(201)
      expect(res.body.empty).toBe(false)
    }
    const dir = await clone('bob/lic-GPL-3.0')
    expect(readFileSync(join(dir, 'LICENSE'), 'utf8')).toContain('GNU GENERAL PUBLIC LICENSE')
  })

  test('unknown templates answer 422 before anything is created', async () => {
    for (const body of [
      { name: 't1', auto_init: true, gitignores: 'Go,NoSuchLang' },
      { name: 't1', auto_init: true, license: 'WTFPL-9' },
      { name: 't1', auto_init: true, readme: 'Fancy' },
    ]) {
      const r = await s.post('/user/repos', body, { token: alice.token })
      expect(r.status).toBe(422)
    }
    expect(await repoRow('alice', 't1')).toBeUndefined()
    expect(existsSync(repoPath(s.config.dataDir, 'alice', 't1'))).toBe(false)
  })

  test('concurrent creates of one name: one 201, the others 409, one row and one folder', async () => {
    const names = ['race', 'Race', 'RACE', 'race']
    const answers = await Promise.all(names.map((name) => s.post('/user/repos', { name, auto_init: true }, { token: alice.token })))
    const statuses = answers.map((a) => a.status).sort()
    expect(statuses).toEqual([201, 409, 409, 409])
    expect((await s.deps.db.select().from(repositories).where(eq(repositories.lowerName, 'race'))).filter((r) => r.ownerId === alice.user.id).length).toBe(1)
    expect(readdirSync(join(s.config.dataDir, 'repositories', 'alice')).filter((n) => n.startsWith('race')).length).toBe(1)
    const won = answers.find((a) => a.status === 201)!
    expect((await s.get(`/repos/alice/${won.body.name}/branches/main`, { token: alice.token })).status).toBe(200)
  })

  test('a leftover git folder with no row is neither adopted nor deleted by a create (409)', async () => {
    const leftover = repoPath(s.config.dataDir, 'alice', 'leftover')
    await initBareRepository(leftover, 'keep')
    const before = await numRepos(alice.user.id)
    const r = await s.post('/user/repos', { name: 'leftover', auto_init: true }, { token: alice.token })
    expect(r.status).toBe(409)
    expect(await repoRow('alice', 'leftover')).toBeUndefined()
    expect(await numRepos(alice.user.id)).toBe(before)
    expect(readFileSync(join(leftover, 'HEAD'), 'utf8')).toBe('ref: refs/heads/keep\n')
    rmSync(leftover, { recursive: true, force: true })
    expect((await s.post('/user/repos', { name: 'leftover' }, { token: alice.token })).status).toBe(201)
  })

  test('POST /admin/users/{u}/repos: site admin only, user or organisation owner, 404 unknown owner', async () => {
    const { org } = await makeOrg(s, 'adminorg', bob)
    expect((await s.post('/admin/users/alice/repos', { name: 'byadmin' })).status).toBe(401)
    expect((await s.post('/admin/users/alice/repos', { name: 'byadmin' }, { token: bob.token })).status).toBe(403)
    expect((await s.post('/admin/users/nobody/repos', { name: 'byadmin' }, { token: admin.token })).status).toBe(404)
    const r = await s.post('/admin/users/alice/repos', { name: 'byadmin', auto_init: true }, { token: admin.token })
    expect(r.status).toBe(201)
    expect(r.body.owner.login).toBe('alice')
    const dir = await clone('alice/byadmin')
    expect((await git(['log', '-1', '--format=%an'], { cwd: dir })).trim()).toBe('root')
    const o = await s.post('/admin/users/adminorg/repos', { name: 'orgrepo' }, { token: admin.token })
    expect(o.status).toBe(201)
    expect(o.body.owner.id).toBe(org.id)
    expect(await numRepos(org.id)).toBe(1)
  })

  test('create and read a repository; private ones are hidden', async () => {
    const r = await s.post('/user/repos', { name: 'Proj', private: true }, { token: bob.token })
    expect(r.status).toBe(201)
    expect(r.body.full_name).toBe('bob/Proj')
    expect(r.body.permissions).toEqual({ admin: true, push: true, pull: true })
    expect((await s.get('/repos/bob/proj', { token: bob.token })).status).toBe(200)
    expect((await s.get('/repos/bob/proj')).status).toBe(404)
    expect((await s.get('/repos/bob/proj', { token: alice.token })).status).toBe(404)
    expect((await s.post('/user/repos', { name: 'proj' }, { token: bob.token })).status).toBe(409)
    expect((await s.post('/user/repos', { name: 'bad name' }, { token: bob.token })).status).toBe(422)
  })
})

describe('max_repo_creation (Gitea CanCreateRepoIn)', () => {
  test('0 stops POST /user/repos with a 422 and creates nothing; -1 lifts the limit again', async () => {
    const u = await s.user('capped')
    const set = await s.patch('/admin/users/capped', { max_repo_creation: 0 }, { token: admin.token })
    expect(set.status).toBe(200)
    const refused = await s.post('/user/repos', { name: 'nope' }, { token: u.token })
    expect(refused.status).toBe(422)
    expect(refused.body.message).toContain('You have already reached your limit of 0 repositories.')
    expect(typeof refused.body.url).toBe('string')
    expect(await repoCount(u.user.id)).toBe(0)
    expect(existsSync(join(s.dataDir, 'repositories', 'capped', 'nope.git'))).toBe(false)
    expect((await s.get('/repos/capped/nope', { token: u.token })).status).toBe(404)

    await s.patch('/admin/users/capped', { max_repo_creation: -1 }, { token: admin.token })
    expect((await s.post('/user/repos', { name: 'yes' }, { token: u.token })).status).toBe(201)
  })

  test('N caps the number of repositories the user owns', async () => {
    const u = await s.user('two')
    await s.patch('/admin/users/two', { max_repo_creation: 2 }, { token: admin.token })
    expect((await s.post('/user/repos', { name: 'r1' }, { token: u.token })).status).toBe(201)
    expect((await s.post('/user/repos', { name: 'r2' }, { token: u.token })).status).toBe(201)
    const third = await s.post('/user/repos', { name: 'r3' }, { token: u.token })
    expect(third.status).toBe(422)
    expect(third.body.message).toContain('limit of 2 repositories')
    expect(await repoCount(u.user.id)).toBe(2)
    // Deleting one frees a place.
    expect((await s.del('/repos/two/r1', undefined, { token: u.token })).status).toBe(204)
    expect((await s.post('/user/repos', { name: 'r3' }, { token: u.token })).status).toBe(201)
  })

  test('a site administrator is exempt, for itself and when creating for a capped user', async () => {
    const boss = await s.user('boss', { admin: true })
    await s.patch('/admin/users/boss', { max_repo_creation: 0 }, { token: admin.token })
    expect((await s.post('/user/repos', { name: 'mine' }, { token: boss.token })).status).toBe(201)
    await s.user('managed')
    await s.patch('/admin/users/managed', { max_repo_creation: 0 }, { token: admin.token })
    expect((await s.post('/admin/users/managed/repos', { name: 'given' }, { token: admin.token })).status).toBe(201)
  })
})
