import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eq, Placeholder } from 'drizzle-orm'
import { BAD_WEBSITES, startTestServer, type TestServer, type TestUser } from './helpers'
import { addTeam, makeOrg } from './access-fixtures'
import { Database } from 'bun:sqlite'
import { folderMoves, repositories, users } from '../src/db/schema'
import { DIALECT } from '../src/db/dialect'
import { redirectTarget } from '../src/auth/repo-context'
import { initBareRepository } from '../src/git/init'
import { repoPath, git } from '../src/git/run'
import { repairRepositories } from '../src/modules/repos/repair'
import { createDeps } from '../src/deps'
import { loadConfig } from '../src/config'
import { closeDatabase } from '../src/db/client'
import { freshTestDatabase } from './test-database'
import { dropInBackground } from './process-helpers'
import { sqlitePlanOf, statementRecorder } from './query-counter'

let s: TestServer
let alice: TestUser
let bob: TestUser
let admin: TestUser
const scratch = mkdtempSync(join(tmpdir(), 'warren-repos-test-'))

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  admin = await s.user('root', { admin: true })
  // A public repository of alice's (creating one is test/repos-create.test.ts's), which the reads and the start-up repair find.
  expect((await s.post('/user/repos', { name: 'plain', description: 'd' }, { token: alice.token })).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
  rmSync(scratch, { recursive: true, force: true })
})

const repoRow = async (owner: string, name: string) =>
  (await s.deps.db.select().from(repositories).where(eq(repositories.lowerName, name.toLowerCase()))).find((r) => r.ownerName === owner)
const numRepos = async (id: number) => (await s.deps.db.select().from(users).where(eq(users.id, id)))[0]!.numRepos

/** Clones a repository straight from its folder (smart HTTP is another area's test) and returns the clone's path. */
async function clone(fullName: string): Promise<string> {
  const dir = mkdtempSync(join(scratch, 'clone-'))
  const [owner, name] = fullName.split('/') as [string, string]
  await git(['clone', '--quiet', '--', repoPath(s.config.dataDir, owner, name), dir], { cwd: scratch })
  return dir
}

describe('get, edit, delete', () => {
  test('GET /repos/{o}/{r}: private repositories are 404 for anonymous callers and outsiders', async () => {
    await s.post('/user/repos', { name: 'secret', private: true }, { token: alice.token })
    expect((await s.get('/repos/alice/secret')).status).toBe(404)
    expect((await s.get('/repos/alice/secret', { token: bob.token })).status).toBe(404)
    const own = await s.get('/repos/ALICE/Secret', { token: alice.token })
    expect(own.status).toBe(200)
    expect(own.body.private).toBe(true)
    expect((await s.get('/repos/alice/secret', { token: admin.token })).body.permissions.admin).toBe(true)
    const pub = await s.get('/repos/alice/plain')
    expect(pub.body.permissions).toEqual({ admin: false, push: false, pull: true })
    expect((await s.get('/repos/alice/nothing')).status).toBe(404)
  })

  test('GET /repositories/{id}: signed in and readable', async () => {
    const secret = (await repoRow('alice', 'secret'))!
    expect((await s.get(`/repositories/${secret.id}`)).status).toBe(401)
    expect((await s.get(`/repositories/${secret.id}`, { token: bob.token })).status).toBe(404)
    const r = await s.get(`/repositories/${secret.id}`, { token: alice.token })
    expect(r.status).toBe(200)
    expect(r.body.full_name).toBe('alice/secret')
    expect((await s.get('/repositories/999999', { token: alice.token })).status).toBe(404)
    expect((await s.get('/repositories/abc', { token: alice.token })).status).toBe(422)
  })

  test('PATCH needs admin access; fields change; bad input changes nothing', async () => {
    await s.post('/user/repos', { name: 'editme' }, { token: alice.token })
    expect((await s.patch('/repos/alice/editme', { description: 'x' })).status).toBe(401)
    expect((await s.patch('/repos/alice/editme', { description: 'x' }, { token: bob.token })).status).toBe(403)
    const r = await s.patch(
      '/repos/alice/editme',
      {
        description: 'new desc',
        website: 'https://example.com',
        has_issues: false,
        has_wiki: false,
        allow_squash_merge: false,
        internal_tracker: { enable_time_tracker: false, allow_only_contributors_to_track_time: false },
      },
      { token: alice.token },
    )
    expect(r.status).toBe(200)
    expect(r.body.description).toBe('new desc')
    expect(r.body.website).toBe('https://example.com')
    expect(r.body.has_issues).toBe(false)
    expect(r.body.has_wiki).toBe(false)
    expect(r.body.allow_squash_merge).toBe(false)
    // With the built-in issues off the tracker settings are kept but not shown (Gitea: no issues unit).
    expect(r.body.internal_tracker).toBeNull()
    expect((await repoRow('alice', 'editme'))!.enableTimeTracker).toBe(false)
    const before = (await repoRow('alice', 'editme'))!
    for (const body of [{ description: 'y'.repeat(256) }, { name: 'bad name' }, { name: 'plain' }, { default_branch: '-x' }, { private: 'yes' }]) {
      const bad = await s.patch('/repos/alice/editme', body, { token: alice.token })
      expect(bad.status).toBe(422)
    }
    expect(await repoRow('alice', 'editme')).toEqual(before)
  })

  test('a repository website must be http(s); empty clears it; a refusal changes nothing', async () => {
    expect((await s.post('/user/repos', { name: 'site' }, { token: alice.token })).status).toBe(201)
    expect((await s.patch('/repos/alice/site', { website: 'https://example.com/x' }, { token: alice.token })).body.website).toBe('https://example.com/x')
    for (const website of BAD_WEBSITES) {
      const res = await s.patch('/repos/alice/site', { website, description: 'changed' }, { token: alice.token })
      expect(res.status).toBe(422)
      expect(res.body.errors[0].fieldNames).toEqual(['Website'])
    }
    const after = await s.get('/repos/alice/site')
    expect(after.body.website).toBe('https://example.com/x')
    expect(after.body.description).toBe('')
    expect((await s.patch('/repos/alice/site', { website: '' }, { token: alice.token })).body.website).toBe('')
  })

  test('PATCH private hides the repository from others', async () => {
    await s.post('/user/repos', { name: 'flip' }, { token: alice.token })
    expect((await s.patch('/repos/alice/flip', { private: true }, { token: alice.token })).body.private).toBe(true)
    expect((await s.get('/repos/alice/flip', { token: bob.token })).status).toBe(404)
  })

  test('PATCH name renames the repository and moves its git folder', async () => {
    await s.post('/user/repos', { name: 'oldname', auto_init: true }, { token: alice.token })
    const r = await s.patch('/repos/alice/oldname', { name: 'NewName' }, { token: alice.token })
    expect(r.status).toBe(200)
    expect(r.body.full_name).toBe('alice/NewName')
    expect(existsSync(repoPath(s.config.dataDir, 'alice', 'oldname'))).toBe(false)
    expect(existsSync(repoPath(s.config.dataDir, 'alice', 'newname'))).toBe(true)
    expect((await s.get('/repos/alice/newname')).status).toBe(200)
    // The old name of a renamed repository redirects (307, modern Gitea).
    const old = await s.get('/repos/alice/oldname')
    expect(old.status).toBe(307)
    expect(old.headers.get('location')).toBe('/api/v1/repos/alice/NewName')
    const dir = await clone('alice/newname')
    expect(existsSync(join(dir, 'README.md'))).toBe(true)
    expect((await repoRow('alice', 'NewName'))!.lowerName).toBe('newname')
  })

  test("a repository path that names none looks its name up in the redirects' index, not through every repository (SQLite's plan)", async () => {
    if (DIALECT !== 'sqlite') return
    // Every 404 of a repository's path asks whether the name is an old one: SQLite started that
    // lookup from every ready repository when the old owner was matched with IN (subquery).
    const { sql: text, params } = redirectTarget(s.deps.db).getQuery()
    const values = { owner: 'alice', repo: 'nothing' }
    const args = params.map((p) => (p instanceof Placeholder ? values[p.name as keyof typeof values] : p)) as string[]
    const file = new Database(join(s.config.dataDir, 'warren.db'), { readonly: true })
    try {
      const plan = file.query<{ detail: string }, string[]>(`EXPLAIN QUERY PLAN ${text}`).all(...args).map((row) => row.detail)
      expect(plan).toContain('SEARCH repo_redirects USING INDEX repo_redirects_name_uq (owner_id=? AND lower_name=?)')
      expect(plan.filter((step) => step.includes('repositories'))).toEqual([])
    } finally {
      file.close()
    }
    expect((await s.get('/repos/alice/nothing', { token: alice.token })).status).toBe(404)
  })

  test("an owner's repositories and another person's feed are read through the owner's and the events' indexes, not every repository (SQLite's plans)", async () => {
    if (DIALECT !== 'sqlite') return
    // SQLite has no statistics (Warren never runs ANALYZE): it took the index whose leading column
    // matched, `status = ?` (every repository) over `owner_id = ?`, and an index on `is_private` to
    // start a feed's read from every public repository.
    const viewer = await s.user('plan-viewer')
    const sent = statementRecorder(s.deps.db)
    const reads = await sent.during(async () => {
      for (const auth of [{}, { token: viewer.token }]) {
        expect((await s.get('/users/alice/repos', auth)).status).toBe(200)
        expect((await s.get('/users/alice/activities/feeds', auth)).status).toBe(200)
      }
    })
    const planOf = (text: string) => sqlitePlanOf(s.deps.db, text)
    const owners = reads.filter((text) => /^select .* from "repositories" where .*"repositories"."owner_id" = \?/.test(text))
    const feeds = reads.filter((text) => /from "events" inner join "repositories"/.test(text))
    expect(owners.length).toBeGreaterThanOrEqual(2)
    expect(feeds.length).toBeGreaterThanOrEqual(2)
    for (const text of owners) expect(planOf(text).find((step) => /^SEARCH repositories USING (COVERING )?INDEX \w+ \(owner_id=\?/.test(step))).toBeDefined()
    for (const text of [...owners, ...feeds]) expect(planOf(text).filter((step) => /^(SCAN repositories|SEARCH repositories USING (COVERING )?INDEX \w+ \((status|is_private)=)/.test(step))).toEqual([])
  })

  test("a repository's forks and a person's starred and watched repositories are read from their own ids, not every ready repository (SQLite's plans)", async () => {
    if (DIALECT !== 'sqlite') return
    // SQLite took the list index's `status = ?` (and `is_private = ?`) for fewer rows than the 25 it
    // assumes of `id IN (subquery)`: at 100,000 repositories the lists took 75-140 ms.
    const fan = await s.user('plan-fan')
    expect((await s.post('/user/repos', { name: 'forked-plan', auto_init: true }, { token: alice.token })).status).toBe(201)
    expect((await s.post('/repos/alice/forked-plan/forks', {}, { token: fan.token })).status).toBe(202)
    expect((await s.put('/user/starred/alice/forked-plan', undefined, { token: fan.token })).status).toBe(204)
    expect((await s.put('/repos/alice/forked-plan/subscription', undefined, { token: fan.token })).status).toBe(200)
    const sent = statementRecorder(s.deps.db)
    const lists: Record<string, string[]> = {}
    for (const [path, token] of [['/repos/alice/forked-plan/forks', undefined], ['/repos/alice/forked-plan/forks', fan.token], ['/user/starred', fan.token], ['/users/plan-fan/starred', alice.token], ['/user/subscriptions', fan.token], ['/users/plan-fan/subscriptions', alice.token]] as const) {
      let body: { full_name: string }[] = []
      lists[`${path} ${token ? 'signed in' : 'anonymous'}`] = await sent.during(async () => {
        const r = await s.get(path, token ? { token } : {})
        expect(r.status).toBe(200)
        body = r.body
      })
      // The fork is watched by its owner, as each of one's own new repositories.
      const expected = path.includes('forks') ? ['plan-fan/forked-plan'] : path.includes('subscriptions') ? ['alice/forked-plan', 'plan-fan/forked-plan'] : ['alice/forked-plan']
      expect(body.map((r) => r.full_name)).toEqual(expected)
    }
    for (const [list, reads] of Object.entries(lists)) {
      const repoReads = reads.filter((text) => /^select .* from "repositories" where .*("repositories"."fork_id" = \?|from "stars"|from "watches")/.test(text))
      expect([list, repoReads.length]).toEqual([list, 2]) // the count and the page
      for (const text of repoReads) {
        const plan = sqlitePlanOf(s.deps.db, text)
        // The forks by their parent's index; the marked by their ids, from the person's marks.
        const driver = list.includes('forks') ? 'SEARCH repositories USING INDEX repositories_fork_idx (fork_id=?)' : 'SEARCH repositories USING INTEGER PRIMARY KEY (rowid=?)'
        expect([list, plan.includes(driver)]).toEqual([list, true])
        if (!list.includes('forks')) expect([list, plan.some((step) => /^SEARCH (stars|watches) USING COVERING INDEX (stars|watches)_pair_uq \(user_id=\?\)$/.test(step))]).toEqual([list, true])
        expect([list, plan.filter((step) => /repositories_(list|name_order)_idx|^SCAN repositories/.test(step))]).toEqual([list, []])
      }
    }
  })

  test("a person's own list and the search of a person's repositories start from their ids (owned, shared), not every repository (SQLite's plans)", async () => {
    if (DIALECT !== 'sqlite') return
    // A test of each repository (owner, or shared through a collaboration or a team) read all of
    // them: 46 ms for /user/repos, 88 for a search by `uid`, at 100,000 repositories.
    const sharer = await s.user('plan-sharer')
    expect((await s.post('/user/repos', { name: 'shared-plan' }, { token: alice.token })).status).toBe(201)
    expect((await s.put('/repos/alice/shared-plan/collaborators/plan-sharer', { permission: 'read' }, { token: alice.token })).status).toBe(204)
    const sent = statementRecorder(s.deps.db)
    for (const [path, expected] of [
      ['/user/repos', ['alice/shared-plan']],
      [`/repos/search?uid=${sharer.user.id}`, ['alice/shared-plan']],
      [`/repos/search?uid=${sharer.user.id}&mode=collaborative`, ['alice/shared-plan']],
      [`/repos/search?uid=${alice.user.id}&exclusive=true&limit=1`, undefined],
    ] as const) {
      let body: any
      const reads = await sent.during(async () => {
        const r = await s.get(path, { token: sharer.token })
        expect(r.status).toBe(200)
        body = r.body
      })
      if (expected) expect((body.data ?? body).map((r: { full_name: string }) => r.full_name)).toEqual(expected)
      const repoReads = reads.filter((text) => /^select .* from "repositories" where/.test(text))
      expect([path, repoReads.length]).toEqual([path, 2]) // the count and the page
      for (const text of repoReads) expect([path, sqlitePlanOf(s.deps.db, text).filter((step) => /repositories_(list|name_order)_idx|^SCAN repositories/.test(step))]).toEqual([path, []])
    }
  })

  test('renames at once of one repository: one wins, the others are 409, never a 500; folder, row and redirects agree', async () => {
    await s.post('/user/repos', { name: 'racy', auto_init: true }, { token: alice.token })
    const answers = await Promise.all(['racy-a', 'racy-b', 'racy-c', 'racy-d'].map((name) => s.patch('/repos/alice/racy', { name }, { token: alice.token })))
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((st) => st === 200).length).toBeGreaterThanOrEqual(1)
    expect(statuses.every((st) => st === 200 || st === 409 || st === 307 || st === 404)).toBe(true)
    const row = (await s.deps.db.select().from(repositories).where(eq(repositories.ownerName, 'alice'))).find((r) => r.lowerName.startsWith('racy'))!
    expect(existsSync(repoPath(s.config.dataDir, 'alice', row.lowerName))).toBe(true)
    for (const name of ['racy-a', 'racy-b', 'racy-c', 'racy-d'].filter((n) => n !== row.lowerName))
      expect(existsSync(repoPath(s.config.dataDir, 'alice', name))).toBe(false)
    expect((await s.get('/repos/alice/racy')).status).toBe(307)
    // Renamed back to a name that redirects to it: the redirect is replaced, not duplicated.
    expect((await s.patch(`/repos/alice/${row.lowerName}`, { name: 'racy' }, { token: alice.token })).status).toBe(200)
    expect((await s.patch('/repos/alice/racy', { name: row.lowerName }, { token: alice.token })).status).toBe(200)
    expect((await s.get('/repos/alice/racy')).headers.get('location')).toBe(`/api/v1/repos/alice/${row.lowerName}`)
  })

  test('PATCH default_branch must name an existing branch and moves HEAD', async () => {
    await s.post('/user/repos', { name: 'branchy', auto_init: true }, { token: alice.token })
    const gitDir = repoPath(s.config.dataDir, 'alice', 'branchy')
    await git(['branch', 'develop', 'main'], { gitDir })
    expect((await s.patch('/repos/alice/branchy', { default_branch: 'nope' }, { token: alice.token })).status).toBe(422)
    const r = await s.patch('/repos/alice/branchy', { default_branch: 'develop' }, { token: alice.token })
    expect(r.status).toBe(200)
    expect(r.body.default_branch).toBe('develop')
    expect((await git(['symbolic-ref', 'HEAD'], { gitDir })).trim()).toBe('refs/heads/develop')
    // An empty repository takes any valid name.
    const e = await s.patch('/repos/alice/plain', { default_branch: 'trunk' }, { token: alice.token })
    expect(e.body.default_branch).toBe('trunk')
  })

  test('archiving needs the owner; a repository admin may edit other fields', async () => {
    await s.post('/user/repos', { name: 'shared' }, { token: alice.token })
    expect((await s.put('/repos/alice/shared/collaborators/bob', { permission: 'admin' }, { token: alice.token })).status).toBe(204)
    expect((await s.patch('/repos/alice/shared', { description: 'by bob' }, { token: bob.token })).status).toBe(200)
    expect((await s.patch('/repos/alice/shared', { archived: true }, { token: bob.token })).status).toBe(403)
    const r = await s.patch('/repos/alice/shared', { archived: true }, { token: alice.token })
    expect(r.body.archived).toBe(true)
  })

  test('DELETE: repository admins only; removes row, folder and count', async () => {
    await s.post('/user/repos', { name: 'doomed', auto_init: true }, { token: alice.token })
    await s.put('/repos/alice/doomed/collaborators/bob', { permission: 'write' }, { token: alice.token })
    expect((await s.del('/repos/alice/doomed')).status).toBe(401)
    expect((await s.del('/repos/alice/doomed', undefined, { token: bob.token })).status).toBe(403)
    expect(await repoRow('alice', 'doomed')).toBeDefined()
    const before = await numRepos(alice.user.id)
    expect((await s.del('/repos/alice/doomed', undefined, { token: alice.token })).status).toBe(204)
    expect(await repoRow('alice', 'doomed')).toBeUndefined()
    expect(existsSync(repoPath(s.config.dataDir, 'alice', 'doomed'))).toBe(false)
    expect(await numRepos(alice.user.id)).toBe(before - 1)
    expect((await s.get('/repos/alice/doomed', { token: alice.token })).status).toBe(404)
  })

  test('DELETE by a site admin and by the owners team of an organisation', async () => {
    await s.post('/user/repos', { name: 'gone', auto_init: false }, { token: bob.token })
    expect((await s.del('/repos/bob/gone', undefined, { token: admin.token })).status).toBe(204)
    const carol = await s.user('carol')
    await makeOrg(s, 'delorg', carol, [alice])
    await s.post('/admin/users/delorg/repos', { name: 'r' }, { token: admin.token })
    expect((await s.del('/repos/delorg/r', undefined, { token: alice.token })).status).toBe(403)
    expect((await s.del('/repos/delorg/r', undefined, { token: carol.token })).status).toBe(204)
  })

  test('DELETE by an admin collaborator and by an admin team (the issue: 403 only for non-admins)', async () => {
    await s.post('/user/repos', { name: 'shared-admin' }, { token: alice.token })
    await s.put('/repos/alice/shared-admin/collaborators/bob', { permission: 'admin' }, { token: alice.token })
    expect((await s.del('/repos/alice/shared-admin', undefined, { token: bob.token })).status).toBe(204)
    expect(await repoRow('alice', 'shared-admin')).toBeUndefined()
    expect(existsSync(repoPath(s.config.dataDir, 'alice', 'shared-admin'))).toBe(false)
    const frank = await s.user('frank')
    const { org } = await makeOrg(s, 'teamadm', alice)
    await s.post('/admin/users/teamadm/repos', { name: 'team-r' }, { token: admin.token })
    await addTeam(s, org.id, 'Admins', 3, [frank], { repoIds: [(await repoRow('teamadm', 'team-r'))!.id] })
    expect((await s.get('/repos/teamadm/team-r', { token: frank.token })).body.permissions.admin).toBe(true)
    expect((await s.del('/repos/teamadm/team-r', undefined, { token: frank.token })).status).toBe(204)
    expect(await repoRow('teamadm', 'team-r')).toBeUndefined()
  })

  test('DELETE while the git folder is already gone: 204, row removed', async () => {
    await s.post('/user/repos', { name: 'folderless', auto_init: true }, { token: alice.token })
    rmSync(repoPath(s.config.dataDir, 'alice', 'folderless'), { recursive: true, force: true })
    const before = await numRepos(alice.user.id)
    expect((await s.del('/repos/alice/folderless', undefined, { token: alice.token })).status).toBe(204)
    expect(await repoRow('alice', 'folderless')).toBeUndefined()
    expect(await numRepos(alice.user.id)).toBe(before - 1)
    // and the name is free again
    expect((await s.post('/user/repos', { name: 'folderless' }, { token: alice.token })).status).toBe(201)
  })
})

describe('lists', () => {
  test('GET /user/repos: own, collaborations and organisation team repositories, paged', async () => {
    const dave = await s.user('dave')
    const erin = await s.user('erin')
    await s.post('/user/repos', { name: 'd1' }, { token: dave.token })
    await s.post('/user/repos', { name: 'd2', private: true }, { token: dave.token })
    await s.post('/user/repos', { name: 'e1', private: true }, { token: erin.token })
    await s.post('/user/repos', { name: 'e2', private: true }, { token: erin.token })
    await s.put('/repos/erin/e1/collaborators/dave', {}, { token: erin.token })
    await makeOrg(s, 'daveorg', dave)
    await s.post('/admin/users/daveorg/repos', { name: 'o1', private: true }, { token: admin.token })
    expect((await s.get('/user/repos')).status).toBe(401)
    const r = await s.get('/user/repos', { token: dave.token })
    expect(r.status).toBe(200)
    expect(r.body.map((x: any) => x.full_name).sort()).toEqual(['dave/d1', 'dave/d2', 'daveorg/o1', 'erin/e1'])
    expect(r.headers.get('x-total-count')).toBe('4')
    const e1 = r.body.find((x: any) => x.full_name === 'erin/e1')
    expect(e1.permissions).toEqual({ admin: false, push: true, pull: true })
    const p = await s.get('/user/repos?limit=3&page=2', { token: dave.token })
    expect(p.body.length).toBe(1)
    expect(p.headers.get('link')).toContain('rel="first"')
  })

  test('GET /users/{u}/repos: private ones only for those who can read them', async () => {
    expect((await s.get('/users/nobody/repos')).status).toBe(404)
    const anon = await s.get('/users/erin/repos')
    expect(anon.body).toEqual([])
    expect(anon.headers.get('x-total-count')).toBe('0')
    const dave = await s.get('/users/erin/repos', { token: (await s.post('/users/dave/tokens', { name: 'x', scopes: ['all'] }, { basic: ['dave', 'pw-dave-secret'] })).body.sha1 })
    expect(dave.body.map((x: any) => x.name)).toEqual(['e1'])
    const erin = await s.get('/users/erin/repos?limit=1', { token: admin.token })
    expect(erin.body.map((x: any) => x.name)).toEqual(['e1'])
    expect(erin.headers.get('x-total-count')).toBe('2')
    expect(erin.headers.get('link')).toContain('rel="next"')
    expect((await s.get('/users/erin/repos?page=x')).status).toBe(422)
  })
})

describe('startup repair', () => {
  test('`warren serve` removes unfinished repositories before serving, and a deletion\'s leftover folders in its background sweep; folders without a row stay, unadopted', async () => {
    const data = mkdtempSync(join(scratch, 'serve-'))
    // A database of its own, as startTestServer's: a new SQLite file in `data`, or a new PostgreSQL database.
    const database = await freshTestDatabase()
    const config = loadConfig({}, { dataDir: data, databaseUrl: database.url })
    const deps = await createDeps(config)
    const now = Math.floor(Date.now() / 1000)
    const owner = (await deps.db
      .insert(users)
      .values({ name: 'sam', lowerName: 'sam', email: 'sam@example.com', numRepos: 1, createdUnix: now, updatedUnix: now })
      .returning())[0]
    await deps.db
      .insert(repositories)
      .values({ ownerId: owner.id, ownerName: 'sam', name: 'half', lowerName: 'half', status: 'creating', createdUnix: now, updatedUnix: now })
    await closeDatabase(deps.db)
    await initBareRepository(repoPath(data, 'sam', 'half'), 'master')
    await initBareRepository(repoPath(data, 'sam', 'orphan'), 'master')
    // A deletion a crash interrupted after its commit: the folder in .deleted/, no row.
    const deleted = join(data, 'repositories', '.deleted', '7-crashed.git')
    await initBareRepository(deleted, 'master')
    const port = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
    const free = port.port!
    port.stop(true)
    const proc = Bun.spawn([process.execPath, 'src/cli.ts', 'serve'], {
      cwd: join(import.meta.dir, '..'),
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        WARREN_DATA: data,
        WARREN_PORT: String(free),
        WARREN_HOST: '127.0.0.1',
        ...(database.url ? { WARREN_DATABASE_URL: database.url } : {}),
      },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    try {
      let up = false
      // Up to 30 s: a loaded 2-core machine may take long to start a second Bun process.
      for (let i = 0; i < 600 && !up; i++) {
        up = await fetch(`http://127.0.0.1:${free}/api/v1/version`).then((r) => r.ok, () => false)
        if (!up) await Bun.sleep(50)
      }
      expect(up).toBe(true)
      // The unfinished repository is gone before the first answer.
      expect(existsSync(repoPath(data, 'sam', 'half'))).toBe(false)
      expect((await fetch(`http://127.0.0.1:${free}/api/v1/users/sam/repos`).then((r) => r.json())) as unknown[]).toEqual([])
      // The deletion's leftover is removed by the background sweep (SWEEP_DELAY_MS after the start)...
      for (let i = 0; i < 600 && existsSync(deleted); i++) await Bun.sleep(50)
      expect(existsSync(deleted)).toBe(false)
      // ...and the folder no row accounts for stays where it is (unadopted, as in Gitea).
      expect(existsSync(join(repoPath(data, 'sam', 'orphan'), 'HEAD'))).toBe(true)
      expect(existsSync(join(data, 'repositories', '.orphaned'))).toBe(false)
    } finally {
      proc.kill()
      await proc.exited
    }
    const check = await createDeps(config)
    try {
      expect(await check.db.select().from(repositories)).toEqual([])
      expect((await check.db.select().from(users).where(eq(users.id, owner.id)))[0]!.numRepos).toBe(0)
    } finally {
      await closeDatabase(check.db)
      dropInBackground(database)
    }
  }, 240_000)

  test('removes unfinished rows with their folders and deleted repositories\' folders, and lists folders without a row (left in place)', async () => {
    const now = Math.floor(Date.now() / 1000)
    const half = (await s.deps.db
      .insert(repositories)
      .values({ ownerId: alice.user.id, ownerName: 'alice', name: 'half', lowerName: 'half', status: 'creating', createdUnix: now, updatedUnix: now })
      .returning())[0]
    await s.deps.db.update(users).set({ numRepos: await numRepos(alice.user.id) + 1 }).where(eq(users.id, alice.user.id))
    const before = await numRepos(alice.user.id)
    const halfPath = repoPath(s.config.dataDir, 'alice', 'half')
    await initBareRepository(halfPath, 'master')
    // A migration's wiki, cloned while the row was 'creating', goes with it.
    const halfWiki = halfPath.replace(/\.git$/, '.wiki.git')
    await initBareRepository(halfWiki, 'master')
    const orphan = repoPath(s.config.dataDir, 'ghost', 'lost')
    await initBareRepository(orphan, 'master')
    mkdirSync(repoPath(s.config.dataDir, 'alice', 'stray'), { recursive: true })
    const deleted = join(s.config.dataDir, 'repositories', '.deleted', '99-x.wiki.git')
    await initBareRepository(deleted, 'master')
    const result = await repairRepositories(s.deps)
    expect(result.removedRows).toBe(1)
    expect(result.deleted).toBe(1)
    expect(result.unadopted.sort()).toEqual(['alice/stray.git', 'ghost/lost.git'])
    expect((await s.deps.db.select().from(repositories).where(eq(repositories.id, half.id)))[0]).toBeUndefined()
    expect(await numRepos(alice.user.id)).toBe(before - 1)
    expect(existsSync(halfPath)).toBe(false)
    expect(existsSync(halfWiki)).toBe(false)
    expect(existsSync(deleted)).toBe(false)
    expect(existsSync(join(orphan, 'HEAD'))).toBe(true)
    // Real repositories are left alone.
    expect(existsSync(repoPath(s.config.dataDir, 'alice', 'plain'))).toBe(true)
    const again = await repairRepositories(s.deps)
    expect({ ...again, unadopted: again.unadopted.sort() }).toEqual({ removedRows: 0, deleted: 0, unadopted: ['alice/stray.git', 'ghost/lost.git'], missing: [], leftovers: [] })
    // A wiki folder left beside no repository does not block its name: the new repository has it as its wiki.
    const strayWiki = repoPath(s.config.dataDir, 'alice', 'wikiless').replace(/\.git$/, '.wiki.git')
    await initBareRepository(strayWiki, 'master')
    expect((await s.post('/user/repos', { name: 'wikiless' }, { token: alice.token })).status).toBe(201)
    expect((await s.del('/repos/alice/wikiless', undefined, { token: alice.token })).status).toBe(204)
    expect(existsSync(strayWiki)).toBe(false)
    rmSync(orphan, { recursive: true })
    rmSync(repoPath(s.config.dataDir, 'alice', 'stray'), { recursive: true })
  })

  test('a move done outside Warren (folder moved, row not) is reported, the folder left where it is', async () => {
    await s.post('/user/repos', { name: 'mid-rename', auto_init: true }, { token: alice.token })
    const from = repoPath(s.config.dataDir, 'alice', 'mid-rename')
    const to = repoPath(s.config.dataDir, 'alice', 'new-name')
    renameSync(from, to)
    const result = await repairRepositories(s.deps)
    expect(result).toEqual({ removedRows: 0, deleted: 0, unadopted: ['alice/new-name.git'], missing: ['alice/mid-rename'], leftovers: [] })
    expect(existsSync(join(to, 'HEAD'))).toBe(true)
    // No 500 while the folder is gone; the row can still be deleted.
    expect((await s.get('/repos/alice/mid-rename/branches', { token: alice.token })).status).toBeLessThan(500)
    expect((await s.get('/repos/alice/mid-rename/raw/master/README.md', { token: alice.token })).status).toBe(404)
    expect((await fetch(`${s.url}/alice/mid-rename.git/info/refs?service=git-upload-pack`)).status).toBe(404)
    for (const path of ['branches/master', 'archive/master.zip', 'editorconfig/README.md'])
      expect((await s.get(`/repos/alice/mid-rename/${path}`, { token: alice.token })).status).toBe(404)
    const upload = await fetch(`${s.url}/alice/mid-rename.git/git-upload-pack`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-git-upload-pack-request' },
      body: '0000',
    })
    expect(upload.status).toBeLessThan(500)
    await upload.arrayBuffer()
    expect((await s.patch('/repos/alice/mid-rename', { default_branch: 'other' }, { token: alice.token })).status).toBe(422)
    expect((await s.patch('/repos/alice/mid-rename', { name: 'mid-renamed', description: 'x' }, { token: alice.token })).status).toBe(200)
    expect((await s.del('/repos/alice/mid-renamed', undefined, { token: alice.token })).status).toBe(204)
    await s.post('/user/repos', { name: 'mid-empty' }, { token: alice.token })
    rmSync(repoPath(s.config.dataDir, 'alice', 'mid-empty'), { recursive: true, force: true })
    expect((await s.patch('/repos/alice/mid-empty', { default_branch: 'main' }, { token: alice.token })).status).toBe(200)
    expect((await s.del('/repos/alice/mid-empty', undefined, { token: alice.token })).status).toBe(204)
    rmSync(to, { recursive: true })
  })

  test('a deleted repository\'s folder and its wiki\'s go through repositories/.deleted/ and are gone, never left to adopt', async () => {
    await s.post('/user/repos', { name: 'doomed', auto_init: true }, { token: alice.token })
    expect((await s.post('/repos/alice/doomed/wiki/new', { title: 'Home', content_base64: btoa('hi') }, { token: alice.token })).status).toBe(201)
    const path = repoPath(s.config.dataDir, 'alice', 'doomed')
    expect(existsSync(path.replace(/\.git$/, '.wiki.git'))).toBe(true)
    expect((await s.del('/repos/alice/doomed', undefined, { token: alice.token })).status).toBe(204)
    expect(existsSync(path)).toBe(false)
    expect(existsSync(path.replace(/\.git$/, '.wiki.git'))).toBe(false)
    const trash = join(s.config.dataDir, 'repositories', '.deleted')
    expect(existsSync(trash) ? readdirSync(trash) : []).toEqual([])
    expect(await s.deps.db.select().from(folderMoves)).toEqual([])
    expect((await repairRepositories(s.deps)).unadopted).toEqual([])
    // The name is free again.
    expect((await s.post('/user/repos', { name: 'doomed' }, { token: alice.token })).status).toBe(201)
  })
})
