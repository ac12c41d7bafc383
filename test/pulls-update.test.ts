import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { giteaApi, type Api } from 'gitea-js'
import { users } from '../src/db/schema'
import { eventsOfRepo } from '../src/events/outbox'
import { repoPath } from '../src/git/run'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import { commitOn, forkWithBranch, pushedRepo } from './pull-fixtures'

/*
 * POST …/pulls/{index}/update (the base brought into the head branch, by a merge commit or a
 * rebase) and the fast-forward-only merge style, through gitea-js; every write checked in a fresh
 * clone, every refusal with the branches unchanged.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, reader: TestUser
let asAlice: Api<unknown>, asBob: Api<unknown>, asReader: Api<unknown>, anon: Api<unknown>
const dirs: string[] = []

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  reader = await s.user('reader')
  await s.deps.db.update(users).set({ fullName: 'Bob Builder' }).where(eq(users.id, bob.user.id))
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  asReader = giteaApi(s.url, { token: reader.token })
  anon = giteaApi(s.url, {})
})
afterAll(async () => {
  await s.stop()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

/** The status of a gitea-js call, whether it succeeded or threw its response. */
const statusOf = async (call: Promise<{ status: number }>) => (await call.catch((e: { status: number }) => e)).status

/**
 * alice/<name>: main = one → m1 (m.txt); feature = one → f1 (f.txt); pull request #1 feature →
 * main by alice; bob writes, reader reads.
 */
async function scenario(name: string) {
  const repo = await pushedRepo(s, alice, name, dirs)
  expect((await s.put(`/repos/alice/${name}/collaborators/bob`, { permission: 'write' }, { token: alice.token })).status).toBe(204)
  expect((await s.put(`/repos/alice/${name}/collaborators/reader`, { permission: 'read' }, { token: alice.token })).status).toBe(204)
  const f1 = await commitOn(repo.dir, 'feature', { 'f.txt': 'f1\n' }, 'f1', 'main')
  const m1 = await commitOn(repo.dir, 'main', { 'm.txt': 'm1\n' }, 'm1')
  await gitOk(repo.dir, 'push', '-q', 'origin', 'main', 'feature')
  const pr = await asAlice.repos.repoCreatePullRequest('alice', name, { head: 'feature', base: 'main', title: 'Feature' })
  expect(pr.status).toBe(201)
  return { ...repo, f1, m1, gitDir: repoPath(s.dataDir, 'alice', name) }
}

/** A fresh clone of `owner/name`: the log of `branch` as "subject|parents count|committer". */
async function logOf(owner: string, name: string, branch: string): Promise<string[]> {
  const dir = tempDir()
  dirs.push(dir)
  await gitOk(dir, 'clone', '-q', '--no-checkout', remoteUrl(s.url, `${owner}/${name}.git`, owner, owner === 'alice' ? alice.password : bob.password), 'c')
  const out = await gitOk(join(dir, 'c'), 'log', '--topo-order', '--format=%s|%p|%an|%cn', `origin/${branch}`)
  return out.split('\n').map((line) => {
    const [subject, parents, author, committer] = line.split('|')
    return `${subject}|${parents!.split(' ').filter(Boolean).length}|${author}|${committer}`
  })
}
const tipOf = (gitDir: string, branch: string) => gitOk(gitDir, 'rev-parse', `refs/heads/${branch}`)

describe('updating a pull request', () => {
  test('merge (the default): a merge commit of main on the head, by the updater, recorded as their push; again: nothing to do; then fast-forward-only merges it', async () => {
    const sc = await scenario('u-merge')
    const last = (await eventsOfRepo(s.deps.db, sc.id, 0, 500)).at(-1)!.id
    const r = await asBob.repos.repoUpdatePullRequest('alice', 'u-merge', 1)
    expect(r.status).toBe(200)
    const tip = await tipOf(sc.gitDir, 'feature')
    expect(await gitOk(sc.gitDir, 'show', '-s', '--format=%P', tip)).toBe(`${sc.f1} ${sc.m1}`)
    expect(await logOf('alice', 'u-merge', 'feature')).toEqual([
      "Merge branch 'main' into feature|2|Bob Builder|Bob Builder",
      'm1|1|Alice A|Alice A',
      'f1|1|Alice A|Alice A',
      'one|0|Alice A|Alice A',
    ])
    expect(await gitOk(sc.gitDir, 'show', `${tip}:m.txt`)).toBe('m1')
    expect(await tipOf(sc.gitDir, 'main')).toBe(sc.m1)
    const events = (await eventsOfRepo(s.deps.db, sc.id, last, 500)).map((e) => [e.kind, e.actorId, e.payload])
    expect(events).toEqual([['push', bob.user.id, { ref: 'refs/heads/feature', before: sc.f1, after: tip }]])

    // Up to date: answered, nothing written.
    expect((await asBob.repos.repoUpdatePullRequest('alice', 'u-merge', 1, { style: 'merge' })).status).toBe(200)
    expect(await tipOf(sc.gitDir, 'feature')).toBe(tip)

    // The head now holds main: fast-forward-only moves main to it, no commit of its own.
    expect((await asBob.repos.repoMergePullRequest('alice', 'u-merge', 1, { Do: 'fast-forward-only' })).status).toBe(200)
    expect(await tipOf(sc.gitDir, 'main')).toBe(tip)
    const pr = (await asBob.repos.repoGetPullRequest('alice', 'u-merge', 1)).data
    expect([pr.merged, pr.state, pr.merge_commit_sha]).toEqual([true, 'closed', tip])
    // Merged: no more updates.
    expect(await statusOf(asBob.repos.repoUpdatePullRequest('alice', 'u-merge', 1))).toBe(422)
  })

  test('rebase: the head commits replayed on main (authors kept, the updater commits); old commits gone from the branch', async () => {
    const sc = await scenario('u-rebase')
    expect((await asBob.repos.repoUpdatePullRequest('alice', 'u-rebase', 1, { style: 'rebase' })).status).toBe(200)
    expect(await logOf('alice', 'u-rebase', 'feature')).toEqual(['f1|1|Alice A|Bob Builder', 'm1|1|Alice A|Alice A', 'one|0|Alice A|Alice A'])
    const tip = await tipOf(sc.gitDir, 'feature')
    expect(tip).not.toBe(sc.f1)
    expect(await gitOk(sc.gitDir, 'show', '-s', '--format=%P', tip)).toBe(sc.m1)
    expect((await asAlice.repos.repoMergePullRequest('alice', 'u-rebase', 1, { Do: 'fast-forward-only' })).status).toBe(200)
    expect(await tipOf(sc.gitDir, 'main')).toBe(tip)
  })

  test('refusals change nothing: no push access (403), a protected head (403: no rebase; no update without push), anonymous (401), conflicts (409), closed (422), unknown style (422) or index (404); fast-forward-only of a diverged head (405)', async () => {
    const sc = await scenario('u-refuse')
    const before = { main: await tipOf(sc.gitDir, 'main'), feature: await tipOf(sc.gitDir, 'feature') }
    expect(await statusOf(asReader.repos.repoUpdatePullRequest('alice', 'u-refuse', 1))).toBe(403)
    expect(await statusOf(anon.repos.repoUpdatePullRequest('alice', 'u-refuse', 1))).toBe(401)
    expect((await s.post('/repos/alice/u-refuse/pulls/1/update?style=squash', {}, { token: bob.token })).status).toBe(422)
    expect(await statusOf(asBob.repos.repoUpdatePullRequest('alice', 'u-refuse', 9))).toBe(404)
    // main has commits the head lacks: no fast-forward.
    const ff = await s.post('/repos/alice/u-refuse/pulls/1/merge', { Do: 'fast-forward-only' }, { token: bob.token })
    expect([ff.status, ff.body.message]).toEqual([405, expect.stringContaining('fast-forward')])
    expect((await s.get('/repos/alice/u-refuse/pulls/1')).body.merged).toBe(false)

    // A second pull request whose head changes m.txt as main did, differently: both styles conflict.
    await commitOn(sc.dir, 'clash', { 'm.txt': 'clash\n' }, 'clash', sc.f1)
    await gitOk(sc.dir, 'push', '-q', 'origin', 'clash')
    expect((await asAlice.repos.repoCreatePullRequest('alice', 'u-refuse', { head: 'clash', base: 'main', title: 'Clash' })).status).toBe(201)
    const clash = await tipOf(sc.gitDir, 'clash')
    for (const style of ['merge', 'rebase'] as const) {
      const r = await s.post(`/repos/alice/u-refuse/pulls/2/update?style=${style}`, {}, { token: bob.token })
      expect([r.status, r.body.message]).toEqual([409, expect.stringContaining('m.txt')])
    }
    expect(await tipOf(sc.gitDir, 'clash')).toBe(clash)

    // The head branch protected (Gitea's IsUserAllowedToUpdate): no rebase even with pushes allowed; no update at all without.
    expect((await s.post('/repos/alice/u-refuse/branch_protections', { rule_name: 'feature', enable_push: true }, { token: alice.token })).status).toBe(201)
    const rebase = await s.post('/repos/alice/u-refuse/pulls/1/update?style=rebase', {}, { token: bob.token })
    expect([rebase.status, rebase.body.message]).toEqual([403, expect.stringContaining('is protected')])
    expect((await s.patch('/repos/alice/u-refuse/branch_protections/feature', { enable_push: false }, { token: alice.token })).status).toBe(200)
    expect(await statusOf(asBob.repos.repoUpdatePullRequest('alice', 'u-refuse', 1))).toBe(403)
    expect((await s.del('/repos/alice/u-refuse/branch_protections/feature', undefined, { token: alice.token })).status).toBe(204)

    // Closed: 422.
    expect((await asAlice.repos.repoEditPullRequest('alice', 'u-refuse', 1, { state: 'closed' })).status).toBe(201)
    expect(await statusOf(asBob.repos.repoUpdatePullRequest('alice', 'u-refuse', 1))).toBe(422)
    expect({ main: await tipOf(sc.gitDir, 'main'), feature: await tipOf(sc.gitDir, 'feature') }).toEqual(before)
  })

  test("a fork's head: its owner updates it (the base's commits copied into the fork); the base's owner, who may not push to the fork, may not", async () => {
    const sc = await scenario('u-fork')
    const fork = await forkWithBranch(s, alice, 'u-fork', bob, 'fix', dirs)
    expect((await asBob.repos.repoCreatePullRequest('alice', 'u-fork', { head: 'bob:fix', base: 'main', title: 'Fix' })).status).toBe(201)
    // main moves on after the fork was made.
    const m2 = await commitOn(sc.dir, 'main', { 'm.txt': 'm2\n' }, 'm2')
    await gitOk(sc.dir, 'push', '-q', 'origin', 'main')
    const forkDir = repoPath(s.dataDir, 'bob', 'u-fork')
    const forkId = (await s.get('/repos/bob/u-fork')).body.id as number
    const last = (await eventsOfRepo(s.deps.db, forkId, 0, 500)).at(-1)?.id ?? 0

    // alice owns the base but has no write access to bob's fork (and no maintainer edits allowed).
    expect(await statusOf(asAlice.repos.repoUpdatePullRequest('alice', 'u-fork', 2))).toBe(403)
    expect(await tipOf(forkDir, 'fix')).toBe(fork.head)

    expect((await asBob.repos.repoUpdatePullRequest('alice', 'u-fork', 2)).status).toBe(200)
    const tip = await tipOf(forkDir, 'fix')
    expect(await gitOk(forkDir, 'show', '-s', '--format=%P', tip)).toBe(`${fork.head} ${m2}`)
    expect((await logOf('bob', 'u-fork', 'fix'))[0]).toBe("Merge branch 'main' into fix|2|Bob Builder|Bob Builder")
    expect(await tipOf(sc.gitDir, 'main')).toBe(m2)
    const events = (await eventsOfRepo(s.deps.db, forkId, last, 500)).map((e) => [e.kind, e.actorId, e.payload])
    expect(events).toEqual([['push', bob.user.id, { ref: 'refs/heads/fix', before: fork.head, after: tip }]])
  })
})
