import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { and, eq, inArray } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, oneCommitRepo, remoteUrl, tempDir } from './git-fixture'
import { folderMoves, repoGitStates, repositories, users } from '../src/db/schema'
import { repairAtStart, withFolderClaimed } from '../src/modules/repos/repair'
import { startRepositorySweep, type SweepResult } from '../src/jobs/repository-sweep'
import { refsFingerprint } from '../src/git/ref-state'

let s: TestServer
let admin: TestUser
let alice: TestUser
let work: string
const outside: string[] = []
const asAdmin = () => ({ token: admin.token })
const errorShape = () => ({ message: expect.any(String), url: `${s.config.baseUrl}api/swagger` })
const folder = (owner: string, name: string) => join(s.dataDir, 'repositories', owner, `${name}.git`)

/** A bare repository made by git itself in the repositories root, as an operator would put it there. */
async function bareFolder(owner: string, name: string, opts: { head?: string; push?: string[] } = {}): Promise<string> {
  const path = folder(owner, name)
  mkdirSync(join(s.dataDir, 'repositories', owner), { recursive: true })
  await gitOk(s.dataDir, 'init', '--bare', '-q', `--initial-branch=${opts.head ?? 'trunk'}`, path)
  for (const refspec of opts.push ?? []) await gitOk(work, 'push', '-q', path, refspec)
  return path
}

/** One run of the background sweep, as after a start at `startedAt`. */
const sweepOnce = (startedAt: number): Promise<SweepResult> =>
  new Promise((resolve) => startRepositorySweep(s.deps, { startedAt, pauseMs: 1, delayMs: 0, onDone: resolve }))

const rowOf = async (owner: string, name: string) =>
  (await s.deps.db
    .select()
    .from(repositories)
    .where(and(eq(repositories.ownerName, owner), eq(repositories.lowerName, name.toLowerCase()))))[0]

beforeAll(async () => {
  s = await startTestServer()
  admin = await s.user('root', { admin: true })
  alice = await s.user('alice')
  work = await oneCommitRepo()
  await bareFolder('alice', 'stuff', { push: ['main:trunk', 'main:other'] })
  await bareFolder('alice', 'headless', { head: 'nothing', push: ['main:zeta', 'main:master'] })
  await bareFolder('alice', 'empty')
  await bareFolder('ghost', 'orphan')
  mkdirSync(folder('alice', 'notgit'))
})
afterAll(async () => {
  await s.stop()
  rmSync(work, { recursive: true, force: true })
  for (const dir of outside) rmSync(dir, { recursive: true, force: true })
})

describe('GET /admin/unadopted', () => {
  test('site administrators only', async () => {
    const anonymous = await s.get('/admin/unadopted')
    expect(anonymous.status).toBe(401)
    expect(anonymous.body).toEqual(errorShape())
    expect((await s.get('/admin/unadopted', { token: alice.token })).status).toBe(403)
    expect((await s.post('/admin/unadopted/alice/stuff', undefined, { token: alice.token })).status).toBe(403)
    expect((await s.del('/admin/unadopted/alice/stuff', undefined, { token: alice.token })).status).toBe(403)
    expect(existsSync(folder('alice', 'stuff'))).toBe(true)
  })

  test('lists the folders no repository names, of owners that exist, by name; paged; filtered by pattern', async () => {
    const all = await s.get('/admin/unadopted', asAdmin())
    expect(all.status).toBe(200)
    // ghost/orphan has no owner (Gitea skips such folders); the repository rows' folders are not listed
    expect(all.body).toEqual(['alice/empty', 'alice/headless', 'alice/notgit', 'alice/stuff'])
    expect(all.headers.get('x-total-count')).toBe('4')
    const second = await s.get('/admin/unadopted?limit=1&page=2', asAdmin())
    expect(second.body).toEqual(['alice/headless'])
    expect(second.headers.get('x-total-count')).toBe('4')
    expect((await s.get('/admin/unadopted?pattern=alice/st*', asAdmin())).body).toEqual(['alice/stuff'])
    expect((await s.get('/admin/unadopted?pattern=ALICE/?mpty', asAdmin())).body).toEqual(['alice/empty'])
    expect((await s.get('/admin/unadopted?pattern=al*', asAdmin())).body).toHaveLength(4)
    expect((await s.get('/admin/unadopted?query=nobody', asAdmin())).body).toEqual([])
    const tooLong = await s.get(`/admin/unadopted?pattern=${'x'.repeat(5000)}`, asAdmin())
    expect(tooLong.status).toBe(422)
  })
})

describe('POST /admin/unadopted/{owner}/{repo}', () => {
  test('adopts a folder: a private repository with HEAD as its default branch, readable and cloneable, its refs recorded', async () => {
    const r = await s.post('/admin/unadopted/alice/stuff', undefined, asAdmin())
    expect(r.status).toBe(204)
    const repo = await s.get('/repos/alice/stuff', asAdmin())
    expect(repo.status).toBe(200)
    expect(repo.body).toMatchObject({ full_name: 'alice/stuff', default_branch: 'trunk', empty: false, private: true })
    expect(repo.body.size).toBeGreaterThan(0)
    const branches = await s.get('/repos/alice/stuff/branches', asAdmin())
    expect(branches.body.map((b: { name: string }) => b.name).sort()).toEqual(['other', 'trunk'])
    const file = await s.get('/repos/alice/stuff/contents/a.txt', asAdmin())
    expect(Buffer.from(file.body.content, 'base64').toString()).toBe('one\n')
    // The owner reads it (the repository is hers) and clones it over HTTP.
    expect((await s.get('/repos/alice/stuff', { token: alice.token })).status).toBe(200)
    const clone = tempDir()
    outside.push(clone)
    await gitOk(clone, 'clone', '-q', remoteUrl(s.url, 'alice/stuff.git', alice.name, alice.token), 'copy')
    expect(await gitOk(join(clone, 'copy'), 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('trunk')
    // Its refs are the starting point: what was there is no push.
    const row = (await rowOf('alice', 'stuff'))!
    expect(row.status).toBe('ready')
    const state = (await s.deps.db.select().from(repoGitStates).where(eq(repoGitStates.repoId, row.id)))[0]!
    expect(Object.keys(JSON.parse(state.refs)).sort()).toEqual(['refs/heads/other', 'refs/heads/trunk'])
    expect((await s.deps.db.select({ n: users.numRepos }).from(users).where(eq(users.id, alice.user.id)))[0]!.n).toBe(1)
    // Served like any other repository: alice pushes to it.
    await gitOk(join(clone, 'copy'), 'push', '-q', 'origin', 'trunk:pushed')
    expect((await s.get('/repos/alice/stuff/branches/pushed', asAdmin())).status).toBe(200)
    // No longer unadopted; a second adoption finds a repository, not loose files.
    expect((await s.get('/admin/unadopted', asAdmin())).body).not.toContain('alice/stuff')
    const again = await s.post('/admin/unadopted/alice/stuff', undefined, asAdmin())
    expect(again.status).toBe(404)
    expect(again.body).toEqual(errorShape())
  })

  test('HEAD naming no branch: master (or main, or the first branch) becomes the default and HEAD', async () => {
    expect((await s.post('/admin/unadopted/alice/headless', undefined, asAdmin())).status).toBe(204)
    expect((await s.get('/repos/alice/headless', asAdmin())).body).toMatchObject({ default_branch: 'master', empty: false })
    expect(await gitOk(folder('alice', 'headless'), 'symbolic-ref', 'HEAD')).toBe('refs/heads/master')
    // The refs were recorded after HEAD moved: their fingerprint is the folder's as it is now.
    const row = (await rowOf('alice', 'headless'))!
    const state = (await s.deps.db.select().from(repoGitStates).where(eq(repoGitStates.repoId, row.id)))[0]!
    expect(state.fingerprint).toBe(await refsFingerprint(folder('alice', 'headless')))
    expect(Object.keys(JSON.parse(state.refs)).sort()).toEqual(['refs/heads/master', 'refs/heads/zeta'])
  })

  test('an empty folder is adopted as an empty repository', async () => {
    expect((await s.post('/admin/unadopted/alice/empty', undefined, asAdmin())).status).toBe(204)
    expect((await s.get('/repos/alice/empty', asAdmin())).body).toMatchObject({ default_branch: 'trunk', empty: true })
  })

  test('refusals: no folder, no owner, a repository of that name, a bad name, a folder that is no git repository', async () => {
    const missing = await s.post('/admin/unadopted/alice/nothing', undefined, asAdmin())
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual(errorShape())
    expect((await s.post('/admin/unadopted/ghost/orphan', undefined, asAdmin())).status).toBe(404)
    expect(existsSync(folder('ghost', 'orphan'))).toBe(true)
    expect((await s.post('/user/repos', { name: 'real' }, { token: alice.token })).status).toBe(201)
    expect((await s.post('/admin/unadopted/alice/real', undefined, asAdmin())).status).toBe(404)
    expect((await s.del('/admin/unadopted/alice/real', undefined, asAdmin())).status).toBe(404)
    expect((await s.get('/repos/alice/real', { token: alice.token })).status).toBe(200)
    expect((await s.post('/admin/unadopted/alice/x.wiki', undefined, asAdmin())).status).toBe(422)
    const notGit = await s.post('/admin/unadopted/alice/notgit', undefined, asAdmin())
    expect(notGit.status).toBe(422)
    expect(notGit.body.message).toContain('not a bare git repository')
    // Nothing was made, and the folder stays as it was.
    expect(await rowOf('alice', 'notgit')).toBeUndefined()
    expect(existsSync(folder('alice', 'notgit'))).toBe(true)
  })

  test('a symbolic link in the repositories root is never followed', async () => {
    const elsewhere = tempDir()
    outside.push(elsewhere)
    await gitOk(elsewhere, 'init', '--bare', '-q', join(elsewhere, 'x.git'))
    symlinkSync(join(elsewhere, 'x.git'), folder('alice', 'linked'))
    expect((await s.get('/admin/unadopted', asAdmin())).body).not.toContain('alice/linked')
    expect((await s.post('/admin/unadopted/alice/linked', undefined, asAdmin())).status).toBe(404)
    expect((await s.del('/admin/unadopted/alice/linked', undefined, asAdmin())).status).toBe(404)
    expect(existsSync(join(elsewhere, 'x.git', 'HEAD'))).toBe(true)
    expect(await rowOf('alice', 'linked')).toBeUndefined()
  })
})

describe('DELETE /admin/unadopted/{owner}/{repo}', () => {
  test('removes the folder; then nothing is there to remove or adopt', async () => {
    const r = await s.del('/admin/unadopted/alice/notgit', undefined, asAdmin())
    expect(r.status).toBe(204)
    expect(existsSync(folder('alice', 'notgit'))).toBe(false)
    expect((await s.get('/admin/unadopted', asAdmin())).body).toEqual([])
    expect((await s.del('/admin/unadopted/alice/notgit', undefined, asAdmin())).status).toBe(404)
    expect((await s.del('/admin/unadopted/nobody/notgit', undefined, asAdmin())).status).toBe(404)
  })
})

describe('adoption against the repair', () => {
  test('the sweep leaves a folder without a row where it is, listed as unadopted, and it can still be adopted', async () => {
    await bareFolder('alice', 'swept')
    const path = folder('alice', 'swept')
    // `startedAt` in the future: the folder counts as there before the process started.
    const swept = await sweepOnce(Date.now() + 3_600_000)
    expect(swept.unadopted).toBeGreaterThanOrEqual(1)
    expect(existsSync(join(path, 'HEAD'))).toBe(true)
    expect(existsSync(join(s.dataDir, 'repositories', '.orphaned'))).toBe(false)
    expect((await s.get('/admin/unadopted?pattern=alice/swept', asAdmin())).body).toEqual(['alice/swept'])
    expect((await s.post('/admin/unadopted/alice/swept', undefined, asAdmin())).status).toBe(204)
    expect((await rowOf('alice', 'swept'))?.status).toBe('ready')
  })

  test('a second adoption of a folder being adopted is 409', async () => {
    await bareFolder('alice', 'busy')
    const path = folder('alice', 'busy')
    const r = await withFolderClaimed(s.deps, path, () => s.post('/admin/unadopted/alice/busy', undefined, asAdmin()))
    expect(r.status).toBe(409)
    expect(await rowOf('alice', 'busy')).toBeUndefined()
  })

  test("an adoption a crash interrupted is undone at start, and its folder stays, unadopted again", async () => {
    await bareFolder('alice', 'crashy')
    const now = Math.floor(Date.now() / 1000)
    await s.deps.db
      .insert(repositories)
      .values({ ownerId: alice.user.id, ownerName: 'alice', name: 'crashy', lowerName: 'crashy', status: 'adopting', createdUnix: now, updatedUnix: now })
    expect((await s.get('/admin/unadopted', asAdmin())).body).not.toContain('alice/crashy')
    const { removedRows } = await repairAtStart(s.deps)
    expect(removedRows).toBe(1)
    expect(await rowOf('alice', 'crashy')).toBeUndefined()
    expect(existsSync(join(folder('alice', 'crashy'), 'HEAD'))).toBe(true)
    expect((await s.get('/admin/unadopted', asAdmin())).body).toContain('alice/crashy')
  })
})

describe('folders a folder move names', () => {
  test("a pending move's source or target (or what is inside one) is neither listed, counted by the sweep, adopted nor deleted: 409", async () => {
    await bareFolder('alice', 'move-source')
    await bareFolder('alice', 'move-target')
    await bareFolder('mover', 'inside')
    await s.user('mover')
    const startedAt = Date.now() + 3_600_000
    const before = (await sweepOnce(startedAt)).unadopted
    const listed = async () => (await s.get('/admin/unadopted?pattern=*/*&limit=50', asAdmin())).body as string[]
    expect(await listed()).toEqual(expect.arrayContaining(['alice/move-source', 'alice/move-target', 'mover/inside']))
    // A rename of alice/move-source under way (its folder not moved yet), and an owner folder's move to mover/.
    const intents = await s.deps.db
      .insert(folderMoves)
      .values([
        { fromPath: 'alice/move-source.git', toPath: 'alice/move-elsewhere.git', createdUnix: 0 },
        { fromPath: 'someone', toPath: 'alice/move-target.git', createdUnix: 0 },
        { fromPath: 'old-mover', toPath: 'mover', createdUnix: 0 },
      ])
      .returning({ id: folderMoves.id })
    try {
      for (const gone of ['alice/move-source', 'alice/move-target', 'mover/inside']) expect(await listed()).not.toContain(gone)
      expect((await sweepOnce(startedAt)).unadopted).toBe(before - 3)
      for (const [owner, name] of [['alice', 'move-source'], ['alice', 'move-target'], ['mover', 'inside']] as const) {
        const adopt = await s.post(`/admin/unadopted/${owner}/${name}`, undefined, asAdmin())
        expect(adopt.status).toBe(409)
        expect(adopt.body).toEqual(errorShape())
        expect(adopt.body.message).toContain(`being moved (a rename or transfer is under way) [name: ${owner}/${name}]`)
        expect((await s.del(`/admin/unadopted/${owner}/${name}`, undefined, asAdmin())).status).toBe(409)
        expect(existsSync(join(folder(owner, name), 'HEAD'))).toBe(true)
        expect(await rowOf(owner, name)).toBeUndefined()
      }
    } finally {
      await s.deps.db.delete(folderMoves).where(inArray(folderMoves.id, intents.map((i) => i.id)))
    }
    // The moves over: unadopted again, and removable.
    expect(await listed()).toEqual(expect.arrayContaining(['alice/move-source', 'alice/move-target', 'mover/inside']))
    for (const [owner, name] of [['alice', 'move-source'], ['alice', 'move-target'], ['mover', 'inside']] as const)
      expect((await s.del(`/admin/unadopted/${owner}/${name}`, undefined, asAdmin())).status).toBe(204)
  })
})

describe('the listing across owners', () => {
  test("is in the order of whole `owner/name` strings (an owner's name a prefix of another's), paged, owners without a user skipped", async () => {
    await s.user('zed')
    await s.user('zed-b')
    for (const [owner, name] of [['zed', 'z'], ['zed', 'b'], ['zed-b', 'a'], ['zed-c', 'a']]) await bareFolder(owner!, name!)
    const all = await s.get('/admin/unadopted?pattern=zed*', asAdmin())
    expect(all.body).toEqual(['zed-b/a', 'zed/b', 'zed/z'])
    expect(all.headers.get('x-total-count')).toBe('3')
    const second = await s.get('/admin/unadopted?pattern=zed*&limit=2&page=2', asAdmin())
    expect(second.body).toEqual(['zed/z'])
    expect(second.headers.get('x-total-count')).toBe('3')
  })
})
