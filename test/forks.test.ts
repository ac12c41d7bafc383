import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { eventsOfRepo } from '../src/events/outbox'
import { repoPath } from '../src/git/run'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, oneCommitRepo, refsOf, remoteUrl, tempDir } from './git-fixture'

let s: TestServer
let alice: TestUser
let bob: TestUser
let carol: TestUser
let dave: TestUser
const dirs: string[] = []
const tok = (u: TestUser) => ({ token: u.token })

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  dave = await s.user('dave')
})
afterAll(async () => {
  await s.stop()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

/** A repository of alice's with one pushed commit on main. */
async function pushedRepo(name: string, opts: { private?: boolean } = {}) {
  const r = await s.post('/user/repos', { name, private: opts.private ?? false }, tok(alice))
  expect(r.status).toBe(201)
  const dir = await oneCommitRepo()
  dirs.push(dir)
  await gitOk(dir, 'push', '-q', remoteUrl(s.url, `alice/${name}.git`, 'alice', alice.password), 'main')
  return { id: r.body.id as number, dir }
}

describe('forks', () => {
  test('fork, clone the fork, push to it: the parent is unchanged; records show fork and parent', async () => {
    const src = await pushedRepo('proj')
    const parentRefs = await refsOf(repoPath(s.dataDir, 'alice', 'proj'))
    const r = await s.post('/repos/alice/proj/forks', {}, tok(bob))
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ full_name: 'bob/proj', fork: true, private: false, empty: false, default_branch: 'main' })
    expect(r.body.permissions).toEqual({ admin: true, push: true, pull: true })
    expect(r.body.parent).toMatchObject({ id: src.id, full_name: 'alice/proj', forks_count: 1, parent: null })
    expect(await refsOf(repoPath(s.dataDir, 'bob', 'proj'))).toEqual(parentRefs)
    // The fork's object files are the parent's (hard links), and it borrows nothing (no alternates).
    const packDir = join(repoPath(s.dataDir, 'bob', 'proj'), 'objects', 'pack')
    const packs = readdirSync(packDir).filter((f) => f.endsWith('.pack'))
    expect(packs.length).toBeGreaterThan(0)
    for (const p of packs) expect(statSync(join(packDir, p)).nlink).toBe(2)
    expect(readdirSync(join(repoPath(s.dataDir, 'bob', 'proj'), 'objects')).includes('info') ? readdirSync(join(repoPath(s.dataDir, 'bob', 'proj'), 'objects', 'info')) : []).not.toContain('alternates')

    const clone = tempDir()
    dirs.push(clone)
    await gitOk(clone, 'clone', '-q', remoteUrl(s.url, 'bob/proj.git', 'bob', bob.password), 'w')
    const w = join(clone, 'w')
    expect(await gitOk(w, 'rev-parse', 'HEAD')).toBe(parentRefs['refs/heads/main']!)
    writeFileSync(join(w, 'b.txt'), 'bob\n')
    await gitOk(w, 'add', 'b.txt')
    await gitOk(w, 'commit', '-q', '-m', 'bob was here')
    await gitOk(w, 'push', '-q', 'origin', 'main')
    expect((await refsOf(repoPath(s.dataDir, 'bob', 'proj')))['refs/heads/main']).toBe(await gitOk(w, 'rev-parse', 'HEAD'))
    expect(await refsOf(repoPath(s.dataDir, 'alice', 'proj'))).toEqual(parentRefs)
    // The fork's first push is one update of main, not a creation of every ref.
    const forkId = r.body.id as number
    expect((await eventsOfRepo(s.deps.db, forkId)).map((e) => e.kind)).toEqual(['push'])

    const got = await s.get('/repos/bob/proj', tok(carol))
    expect(got.body).toMatchObject({ fork: true, parent: { full_name: 'alice/proj', forks_count: 1 } })
    expect((await s.get('/repos/alice/proj')).body).toMatchObject({ fork: false, parent: null, forks_count: 1 })

    // The event, in the source's outbox, names both.
    const forked = (await eventsOfRepo(s.deps.db, src.id)).filter((e) => e.kind === 'repo.forked')
    expect(forked).toHaveLength(1)
    expect(forked[0]).toMatchObject({ actorId: bob.user.id, payload: { parentId: src.id, forkId } })
    expect((forked[0]!.payload.forkee as any).id).toBe(src.id)
    expect((forked[0]!.payload.repository as any).id).toBe(forkId)
  })

  test('a second fork by the same owner, or onto a taken name, is refused with 409; unknown names 404/422', async () => {
    await pushedRepo('twice')
    expect((await s.post('/repos/alice/twice/forks', {}, tok(bob))).status).toBe(202)
    const again = await s.post('/repos/alice/twice/forks', { name: 'twice-2' }, tok(bob))
    expect(again.status).toBe(409)
    expect(again.body.message).toContain('repository is already forked by user')
    // Carol owns a repository of that name already.
    expect((await s.post('/user/repos', { name: 'twice' }, tok(carol))).status).toBe(201)
    const taken = await s.post('/repos/alice/twice/forks', {}, tok(carol))
    expect(taken.status).toBe(409)
    // ... but may fork under another name.
    const named = await s.post('/repos/alice/twice/forks', { name: 'twice-fork' }, tok(carol))
    expect(named.status).toBe(202)
    expect(named.body.full_name).toBe('carol/twice-fork')
    expect((await s.post('/repos/alice/twice/forks', { name: 'bad name' }, tok(dave))).status).toBe(422)
    expect((await s.post('/repos/alice/twice/forks', {}, {})).status).toBe(401)
    expect((await s.post('/repos/alice/nothing/forks', {}, tok(bob))).status).toBe(404)
    expect((await s.get('/repos/alice/twice')).body.forks_count).toBe(2)
  })

  test('private repositories: strangers get 404, readers fork privately, the forks list hides private forks', async () => {
    await pushedRepo('secret', { private: true })
    expect((await s.post('/repos/alice/secret/forks', {}, tok(dave))).status).toBe(404)
    expect((await s.put('/repos/alice/secret/collaborators/bob', { permission: 'read' }, tok(alice))).status).toBe(204)
    const f = await s.post('/repos/alice/secret/forks', {}, tok(bob))
    expect(f.status).toBe(202)
    expect(f.body.private).toBe(true)

    // A public source: bob's public fork and carol's fork made private afterwards.
    await pushedRepo('listed')
    expect((await s.post('/repos/alice/listed/forks', {}, tok(bob))).status).toBe(202)
    expect((await s.post('/repos/alice/listed/forks', {}, tok(carol))).status).toBe(202)
    expect((await s.patch('/repos/carol/listed', { private: true }, tok(carol))).status).toBe(200)
    const strangers = await s.get('/repos/alice/listed/forks', tok(dave))
    expect(strangers.status).toBe(200)
    expect(strangers.body.map((r: any) => r.full_name)).toEqual(['bob/listed'])
    expect(strangers.headers.get('x-total-count')).toBe('1')
    const own = await s.get('/repos/alice/listed/forks', tok(carol))
    expect(own.body.map((r: any) => r.full_name).sort()).toEqual(['bob/listed', 'carol/listed'])
    const anon = await s.get('/repos/alice/listed/forks?limit=1&page=1')
    expect(anon.body).toHaveLength(1)
    expect(anon.body[0]).toMatchObject({ fork: true, parent: { full_name: 'alice/listed' } })
    // The fork of a private source shows no parent to whoever cannot read the source. A fork of
    // a private repository stays private (422): bob's goes public while its source is public.
    expect((await s.patch('/repos/bob/secret', { private: false }, tok(bob))).status).toBe(422)
    expect((await s.patch('/repos/alice/secret', { private: false }, tok(alice))).status).toBe(200)
    expect((await s.patch('/repos/bob/secret', { private: false }, tok(bob))).status).toBe(200)
    expect((await s.patch('/repos/alice/secret', { private: true }, tok(alice))).status).toBe(200)
    expect((await s.get('/repos/bob/secret', tok(dave))).body).toMatchObject({ fork: true, parent: null })
    expect((await s.get('/repos/bob/secret', tok(bob))).body.parent.full_name).toBe('alice/secret')
  })

  test('forking into an organisation: owners and teams that may create repositories; others 403; unknown 422', async () => {
    await pushedRepo('orgsrc')
    expect((await s.post('/orgs', { username: 'guild' }, tok(carol))).status).toBe(201)
    const team = await s.post('/orgs/guild/teams', { name: 'makers', permission: 'read', can_create_org_repo: true }, tok(carol))
    const plain = await s.post('/orgs/guild/teams', { name: 'plain', permission: 'read' }, tok(carol))
    expect((await s.put(`/teams/${team.body.id}/members/bob`, undefined, tok(carol))).status).toBe(204)
    expect((await s.put(`/teams/${plain.body.id}/members/dave`, undefined, tok(carol))).status).toBe(204)

    expect((await s.post('/repos/alice/orgsrc/forks', { organization: 'guild' }, tok(dave))).status).toBe(403)
    expect((await s.post('/repos/alice/orgsrc/forks', { organization: 'guild' }, tok(alice))).status).toBe(403)
    expect((await s.post('/repos/alice/orgsrc/forks', { organization: 'nowhere' }, tok(bob))).status).toBe(422)
    // A user's name is not an organisation.
    expect((await s.post('/repos/alice/orgsrc/forks', { organization: 'carol' }, tok(bob))).status).toBe(422)
    const made = await s.post('/repos/alice/orgsrc/forks', { organization: 'guild' }, tok(bob))
    expect(made.status).toBe(202)
    expect(made.body).toMatchObject({ full_name: 'guild/orgsrc', fork: true, permissions: { admin: true } })
    expect((await s.post('/repos/alice/orgsrc/forks', { organization: 'guild', name: 'other' }, tok(carol))).status).toBe(409)
    // The owner of the organisation may fork into it too (another source).
    await pushedRepo('orgsrc2')
    expect((await s.post('/repos/alice/orgsrc2/forks', { organization: 'guild' }, tok(carol))).status).toBe(202)
  })

  test('forks_count is exact after concurrent forks by different users, and after deleting forks', async () => {
    await pushedRepo('busy')
    const forkers = await Promise.all(Array.from({ length: 6 }, (_, i) => s.user(`forker${i}`)))
    const results = await Promise.all(forkers.map((u) => s.post('/repos/alice/busy/forks', {}, tok(u))))
    expect(results.map((r) => r.status)).toEqual(forkers.map(() => 202))
    // The same user twice at once: one fork, one 409.
    const racing = await Promise.all([0, 1].map((i) => s.post('/repos/alice/busy/forks', { name: `busy-${i}` }, tok(dave))))
    expect(racing.map((r) => r.status).sort()).toEqual([202, 409])
    expect((await s.get('/repos/alice/busy')).body.forks_count).toBe(7)
    expect((await s.get('/repos/alice/busy/forks?limit=50')).headers.get('x-total-count')).toBe('7')
    expect((await s.del('/repos/forker0/busy', undefined, tok(forkers[0]!))).status).toBe(204)
    expect((await s.del('/repos/forker1/busy', undefined, tok(forkers[1]!))).status).toBe(204)
    expect((await s.get('/repos/alice/busy')).body.forks_count).toBe(5)
  })

  test('deleting the parent leaves the fork cloneable (a plain repository now); search modes fork/source', async () => {
    await pushedRepo('doomed')
    const f = await s.post('/repos/alice/doomed/forks', {}, tok(carol))
    expect(f.status).toBe(202)
    const forkMode = await s.get('/repos/search?q=doomed&mode=fork')
    expect(forkMode.body.data.map((r: any) => r.full_name)).toEqual(['carol/doomed'])
    const sourceMode = await s.get('/repos/search?q=doomed&mode=source')
    expect(sourceMode.body.data.map((r: any) => r.full_name)).toEqual(['alice/doomed'])

    // Repack the parent first, as `gc` would: the fork keeps its own links to the old files.
    await gitOk(repoPath(s.dataDir, 'alice', 'doomed'), 'repack', '-a', '-d', '-q')
    expect((await s.del('/repos/alice/doomed', undefined, tok(alice))).status).toBe(204)
    const clone = tempDir()
    dirs.push(clone)
    await gitOk(clone, 'clone', '-q', remoteUrl(s.url, 'carol/doomed.git'), 'w')
    expect(await gitOk(join(clone, 'w'), 'log', '--format=%s')).toBe('one')
    await gitOk(repoPath(s.dataDir, 'carol', 'doomed'), 'fsck', '--strict')
    expect((await s.get('/repos/carol/doomed')).body).toMatchObject({ fork: false, parent: null })
    const after = await s.get('/repos/search?q=doomed&mode=source')
    expect(after.body.data.map((r: any) => r.full_name)).toEqual(['carol/doomed'])
  })

  test('empty and archived repositories fork (as in Gitea)', async () => {
    expect((await s.post('/user/repos', { name: 'blank' }, tok(alice))).status).toBe(201)
    const f = await s.post('/repos/alice/blank/forks', {}, tok(bob))
    expect(f.status).toBe(202)
    expect(f.body).toMatchObject({ empty: true, fork: true })
    await pushedRepo('frozen')
    expect((await s.patch('/repos/alice/frozen', { archived: true }, tok(alice))).status).toBe(200)
    const g = await s.post('/repos/alice/frozen/forks', {}, tok(bob))
    expect(g.status).toBe(202)
    expect(g.body.archived).toBe(false)
  })
})
