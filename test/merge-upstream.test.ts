/**
 * POST /repos/{o}/{r}/merge-upstream through gitea-js: a fork's branch fast-forwarded to its
 * parent's, or merged when it has commits of its own; conflicts, non-forks, missing branches and
 * the fork's branch protection refuse it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { giteaApi, type Api } from 'gitea-js'
import { repoPath, git } from '../src/git/run'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, oneCommitRepo, refsOf, remoteUrl } from './git-fixture'

let s: TestServer
let alice: TestUser
let bob: TestUser
let asAlice: Api<unknown>
let asBob: Api<unknown>
const dirs: string[] = []

const statusOf = (p: Promise<{ status: number }>) => p.then((r) => r.status, (r: { status: number }) => r.status)
const b64 = (text: string) => Buffer.from(text).toString('base64')
const tipOf = async (owner: string, name: string, branch = 'main') => (await refsOf(repoPath(s.dataDir, owner, name)))[`refs/heads/${branch}`]

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  expect((await s.post('/user/repos', { name: 'up' }, { token: alice.token })).status).toBe(201)
  const dir = await oneCommitRepo()
  dirs.push(dir)
  await gitOk(dir, 'push', '-q', remoteUrl(s.url, 'alice/up.git', 'alice', alice.password), 'main')
  expect((await asBob.repos.createFork('alice', 'up', {})).status).toBe(202)
})
afterAll(async () => {
  await s.stop()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

describe('merge-upstream', () => {
  test('a fork behind its parent is fast-forwarded; one already up to date answers fast-forward too', async () => {
    expect((await asAlice.repos.repoCreateFile('alice', 'up', 'b.txt', { content: b64('b\n'), message: 'add b', branch: 'main' })).status).toBe(201)
    const r = await asBob.repos.repoMergeUpstream('bob', 'up', { branch: 'main' })
    expect(r.status).toBe(200)
    expect(r.data).toEqual({ merge_type: 'fast-forward' })
    expect(await tipOf('bob', 'up')).toBe((await tipOf('alice', 'up'))!)
    expect((await asBob.repos.repoMergeUpstream('bob', 'up', { branch: 'main' })).data).toEqual({ merge_type: 'fast-forward' })
    // The move was a push of bob's: recorded, so the fork's branch list shows the new commit.
    expect((await asBob.repos.repoGetBranch('bob', 'up', 'main')).data.commit!.id).toBe((await tipOf('alice', 'up'))!)
  })

  test('a fork with commits of its own gets a merge commit of both; a conflict is 409 and moves nothing', async () => {
    expect((await asBob.repos.repoCreateFile('bob', 'up', 'mine.txt', { content: b64('mine\n'), message: 'mine', branch: 'main' })).status).toBe(201)
    expect((await asAlice.repos.repoCreateFile('alice', 'up', 'theirs.txt', { content: b64('theirs\n'), message: 'theirs', branch: 'main' })).status).toBe(201)
    const before = (await tipOf('bob', 'up'))!
    const r = await asBob.repos.repoMergeUpstream('bob', 'up', { branch: 'main' })
    expect(r.data).toEqual({ merge_type: 'merge' })
    const tip = (await tipOf('bob', 'up'))!
    const parents = (await git(['rev-list', '--parents', '-n', '1', tip], { gitDir: repoPath(s.dataDir, 'bob', 'up') })).trim().split(' ').slice(1)
    expect(parents).toEqual([before, (await tipOf('alice', 'up'))!])

    expect((await asBob.repos.repoCreateFile('bob', 'up', 'same.txt', { content: b64('bob\n'), message: 'bob', branch: 'main' })).status).toBe(201)
    expect((await asAlice.repos.repoCreateFile('alice', 'up', 'same.txt', { content: b64('alice\n'), message: 'alice', branch: 'main' })).status).toBe(201)
    const held = await tipOf('bob', 'up')
    expect(await statusOf(asBob.repos.repoMergeUpstream('bob', 'up', { branch: 'main' }))).toBe(409)
    expect(await tipOf('bob', 'up')).toBe(held)
  })

  test('refusals: not a fork 400, missing branch 404, readers 403, a protected fork branch refuses the move', async () => {
    expect(await statusOf(asAlice.repos.repoMergeUpstream('alice', 'up', { branch: 'main' }))).toBe(400)
    expect(await statusOf(asBob.repos.repoMergeUpstream('bob', 'up', { branch: 'nope' }))).toBe(404)
    expect(await statusOf(asAlice.repos.repoMergeUpstream('bob', 'up', { branch: 'main' }))).toBe(403)
    expect((await s.post('/repos/bob/up/merge-upstream', {}, { token: bob.token })).status).toBe(422)
    // bob's fork: main protected against pushes; alice moves on.
    expect((await asBob.repos.repoDeleteFile('bob', 'up', 'same.txt', { message: 'drop', branch: 'main', sha: (await asBob.repos.repoGetContents('bob', 'up', 'same.txt')).data.sha as string })).status).toBe(200)
    expect((await asBob.repos.repoCreateBranchProtection('bob', 'up', { rule_name: 'main', enable_push: false })).status).toBe(201)
    expect((await asAlice.repos.repoCreateFile('alice', 'up', 'later.txt', { content: b64('later\n'), message: 'later', branch: 'main' })).status).toBe(201)
    const held = await tipOf('bob', 'up')
    const refused = await statusOf(asBob.repos.repoMergeUpstream('bob', 'up', { branch: 'main' }))
    expect(refused).toBeGreaterThanOrEqual(400)
    expect(refused).toBeLessThan(500)
    expect(await tipOf('bob', 'up')).toBe(held)
  })
})
