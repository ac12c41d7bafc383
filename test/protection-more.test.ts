/**
 * Branch and tag protection, the rest of Gitea's rules, through gitea-js and the real git and
 * OpenSSH clients: a deploy key with write access obeys the same rules as a person, a team push
 * whitelist, an admin's force_merge (and the rule that blocks it), a protected tag pattern
 * refusing a tag push over SSH, approvals dismissed by a push when the rule says so, and official
 * review requests blocking a merge until answered.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, sh, tempDir } from './git-fixture'
import { commitOn, pushedRepo } from './pull-fixtures'
import { empty, fails, ok } from './gitea-calls'
import { startPullChecker } from '../src/jobs/pull-checker'

let s: TestServer
let checker: ReturnType<typeof startPullChecker>
let alice: TestUser, bob: TestUser, carol: TestUser
let asAlice: Api<unknown>, asBob: Api<unknown>, asCarol: Api<unknown>
let dir: string
let knownHosts: string
const dirs: string[] = []
const keys: Record<string, string> = {}
const O = 'alice'
const R = 'more'

const httpUrl = (u: TestUser, path = `${O}/${R}.git`) => remoteUrl(s.url, path, u.name, u.password)
const sshUrl = (path = `${O}/${R}.git`) => `ssh://git@127.0.0.1:${s.ssh!.port}/${path}`
const sshEnv = (key: string) => ({ GIT_SSH_COMMAND: `ssh -F /dev/null -i ${keys[key]} -o IdentitiesOnly=yes -o UserKnownHostsFile=${knownHosts} -o StrictHostKeyChecking=yes -o BatchMode=yes` })
const push = (env: Record<string, string>, url: string, ...refspecs: string[]) => sh(['git', 'push', '--porcelain', url, ...refspecs], dir, env)
const tip = async (branch: string) => (await ok(asAlice.repos.repoGetBranch(O, R, branch))).commit!.id!

async function newKey(name: string): Promise<string> {
  keys[name] = join(knownHosts, '..', name)
  await sh(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', keys[name]!], join(knownHosts, '..'))
  return readFileSync(keys[name] + '.pub', 'utf8').trim()
}

/** A pull request from a new branch `name` off main, checked; answers its index. */
async function openPull(name: string): Promise<number> {
  await gitOk(dir, 'fetch', '-q', httpUrl(alice), 'main')
  await commitOn(dir, name, { [`${name}.txt`]: `${name}\n` }, name, 'FETCH_HEAD')
  expect((await push({}, httpUrl(alice), name)).code).toBe(0)
  const pull = await ok(asAlice.repos.repoCreatePullRequest(O, R, { head: name, base: 'main', title: name }), 201)
  await checker.drain()
  return pull.number!
}

beforeAll(async () => {
  s = await startTestServer({ startSshServer: true })
  checker = startPullChecker(s.deps)
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  ;[asAlice, asBob, asCarol] = [alice, bob, carol].map((u) => giteaApi(s.url, { token: u.token }))
  dir = (await pushedRepo(s, alice, R, dirs)).dir
  await empty(asAlice.repos.repoAddCollaborator(O, R, 'bob', { permission: 'write' }))
  const keysDir = tempDir()
  dirs.push(keysDir)
  knownHosts = join(keysDir, 'known_hosts')
  writeFileSync(knownHosts, `[127.0.0.1]:${s.ssh!.port} ${s.ssh!.hostKey.publicKey}\n`)
  await ok(asAlice.user.userCurrentPostKey({ title: 'alice', key: await newKey('alice') }), 201)
})
afterAll(async () => {
  await checker.stop()
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('protection: the rest of the rules', () => {
  test('a deploy key with write access obeys branch protection over SSH: refused on the protected branch, accepted elsewhere', async () => {
    await ok(asAlice.repos.repoCreateKey(O, R, { title: 'deploy', key: await newKey('deploy'), read_only: false }), 201)
    await ok(asAlice.repos.repoCreateBranchProtection(O, R, { rule_name: 'main', enable_push: true, enable_push_whitelist: true, push_whitelist_usernames: ['alice'], push_whitelist_deploy_keys: false }), 201)
    const before = await tip('main')
    await commitOn(dir, 'main', { 'deploy.txt': 'by the key\n' }, 'deploy key commit')
    const refused = await push(sshEnv('deploy'), sshUrl(), 'main')
    expect(refused.code).not.toBe(0)
    expect(refused.stdout + refused.stderr).toContain('protected branch main')
    expect(await tip('main')).toBe(before)
    // Elsewhere the key writes.
    expect((await push(sshEnv('deploy'), sshUrl(), 'main:refs/heads/from-key')).code).toBe(0)
    expect(await tip('from-key')).toBe(await gitOk(dir, 'rev-parse', 'HEAD'))
    // The rule's push_whitelist_deploy_keys lets deploy keys with write access in.
    await ok(asAlice.repos.repoEditBranchProtection(O, R, 'main', { push_whitelist_deploy_keys: true }))
    expect((await push(sshEnv('deploy'), sshUrl(), 'main')).code).toBe(0)
    expect(await tip('main')).toBe(await gitOk(dir, 'rev-parse', 'HEAD'))
  })

  test('a team push whitelist: a member of the team pushes, a writer outside it is refused', async () => {
    await ok(asAlice.orgs.orgCreate({ username: 'acme' }), 201)
    await ok(asAlice.orgs.createOrgRepo('acme', { name: 'app', auto_init: true, default_branch: 'main' }), 201)
    const devs = await ok(asAlice.orgs.orgCreateTeam('acme', { name: 'devs', permission: 'write', units: ['repo.code', 'repo.pulls'] }), 201)
    const others = await ok(asAlice.orgs.orgCreateTeam('acme', { name: 'others', permission: 'write', units: ['repo.code', 'repo.pulls'] }), 201)
    await empty(asAlice.teams.orgAddTeamMember(devs.id!, 'bob'))
    await empty(asAlice.teams.orgAddTeamMember(others.id!, 'carol'))
    await empty(asAlice.teams.orgAddTeamRepository(devs.id!, 'acme', 'app'))
    await empty(asAlice.teams.orgAddTeamRepository(others.id!, 'acme', 'app'))
    await ok(asAlice.repos.repoCreateBranchProtection('acme', 'app', { rule_name: 'main', enable_push: true, enable_push_whitelist: true, push_whitelist_teams: ['devs'] }), 201)
    const file = (who: string) => ({ content: btoa(`${who}\n`), branch: 'main', message: who })
    const refused = await fails(asCarol.repos.repoCreateFile('acme', 'app', 'carol.txt', file('carol')), 403)
    expect(refused.message).toContain('protected branch main')
    await ok(asBob.repos.repoCreateFile('acme', 'app', 'bob.txt', file('bob')), 201)
    // And with git over HTTP.
    const work = tempDir()
    dirs.push(work)
    await gitOk(work, 'clone', '-q', httpUrl(carol, 'acme/app.git'), 'w')
    const w = join(work, 'w')
    await commitOn(w, 'main', { 'c.txt': 'c\n' }, 'carol')
    const byCarol = await sh(['git', 'push', '--porcelain', httpUrl(carol, 'acme/app.git'), 'main'], w)
    expect(byCarol.code).not.toBe(0)
    expect(byCarol.stdout + byCarol.stderr).toContain('protected branch main')
    expect((await sh(['git', 'push', '--porcelain', httpUrl(bob, 'acme/app.git'), 'main'], w)).code).toBe(0)
  })

  test('force_merge: a repository admin merges past unmet rules, a writer cannot; block_admin_merge_override stops the admin too', async () => {
    await ok(asAlice.repos.repoEditBranchProtection(O, R, 'main', { required_approvals: 1 }))
    const first = await openPull('forced')
    await fails(asBob.repos.repoMergePullRequest(O, R, first, { Do: 'merge', force_merge: true }), 405)
    await ok(asAlice.repos.repoEditBranchProtection(O, R, 'main', { block_admin_merge_override: true }))
    expect((await fails(asAlice.repos.repoMergePullRequest(O, R, first, { Do: 'merge', force_merge: true }), 405)).message).toContain('Does not have enough approvals')
    await ok(asAlice.repos.repoEditBranchProtection(O, R, 'main', { block_admin_merge_override: false }))
    await fails(asAlice.repos.repoMergePullRequest(O, R, first, { Do: 'merge' }), 405)
    expect((await asAlice.repos.repoMergePullRequest(O, R, first, { Do: 'merge', force_merge: true })).status).toBe(200)
    expect((await ok(asAlice.repos.repoGetPullRequest(O, R, first))).merged).toBe(true)
  })

  test('dismiss_stale_approvals: a push to the head dismisses the approvals, and the merge waits for a new one', async () => {
    await ok(asAlice.repos.repoEditBranchProtection(O, R, 'main', { dismiss_stale_approvals: true }))
    const index = await openPull('stale')
    const approval = await ok(asBob.repos.repoCreatePullReview(O, R, index, { event: 'APPROVED', body: 'fine' }))
    await commitOn(dir, 'stale', { 'stale.txt': 'changed\n' }, 'more work')
    expect((await push({}, httpUrl(alice), 'stale')).code).toBe(0)
    await checker.drain()
    const review = await ok(asAlice.repos.repoGetPullReview(O, R, index, approval.id!))
    expect(review).toMatchObject({ state: 'APPROVED', dismissed: true, stale: true })
    expect((await fails(asAlice.repos.repoMergePullRequest(O, R, index, { Do: 'merge' }), 405)).message).toContain('Does not have enough approvals')
    await ok(asBob.repos.repoCreatePullReview(O, R, index, { event: 'APPROVED', body: 'still fine' }))
    expect((await asAlice.repos.repoMergePullRequest(O, R, index, { Do: 'merge' })).status).toBe(200)
  })

  test('block_on_official_review_requests: an unanswered request of a writer blocks the merge until they review', async () => {
    await ok(asAlice.repos.repoEditBranchProtection(O, R, 'main', { block_on_official_review_requests: true, dismiss_stale_approvals: false }))
    await empty(asAlice.repos.repoAddCollaborator(O, R, 'carol', { permission: 'write' }))
    const index = await openPull('asked')
    await ok(asAlice.repos.repoCreatePullReviewRequests(O, R, index, { reviewers: ['carol'] }), 201)
    await ok(asBob.repos.repoCreatePullReview(O, R, index, { event: 'APPROVED', body: 'fine' }))
    expect((await fails(asAlice.repos.repoMergePullRequest(O, R, index, { Do: 'merge' }), 405)).message).toContain('There are official review requests')
    await ok(asCarol.repos.repoCreatePullReview(O, R, index, { event: 'APPROVED', body: 'me too' }))
    expect((await asAlice.repos.repoMergePullRequest(O, R, index, { Do: 'merge' })).status).toBe(200)
  })

  test('a protected tag pattern refuses a tag push over SSH, and accepts one from its whitelist', async () => {
    await ok(asAlice.repos.repoCreateTagProtection(O, R, { name_pattern: 'v*', whitelist_usernames: ['alice'] }), 201)
    await gitOk(dir, 'tag', 'v1.0', 'HEAD')
    await ok(asBob.user.userCurrentPostKey({ title: 'bob', key: await newKey('bob') }), 201)
    const byBob = await push(sshEnv('bob'), sshUrl(), 'refs/tags/v1.0')
    expect(byBob.code).not.toBe(0)
    expect(byBob.stdout + byBob.stderr).toContain('v1.0')
    await fails(asAlice.repos.repoGetTag(O, R, 'v1.0'), 404)
    expect((await push(sshEnv('bob'), sshUrl(), 'HEAD:refs/tags/other')).code).toBe(0)
    expect((await push(sshEnv('alice'), sshUrl(), 'refs/tags/v1.0')).code).toBe(0)
    await ok(asAlice.repos.repoGetTag(O, R, 'v1.0'))
  })
})
