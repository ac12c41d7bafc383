/**
 * Branch protection (Gitea's branch_protections) through gitea-js, enforced on every way a ref
 * moves: git push over HTTP and SSH (the real git and OpenSSH clients, the reason shown by git),
 * the contents API, branch deletion, and merges (a required status check, required approvals).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, sh, tempDir } from './git-fixture'
import { commitOn, pushedRepo } from './pull-fixtures'
import { empty, fails, ok } from './gitea-calls'
import { missingGiteaFields } from './gitea-types'
import { branchProtections } from '../src/db/schema'

let s: TestServer
let alice: TestUser
let bob: TestUser
let asAlice: Api<unknown>
let asBob: Api<unknown>
let dir: string
let knownHosts: string
const dirs: string[] = []
const keys: Record<string, string> = {}

const urlOf = (u: TestUser) => remoteUrl(s.url, 'alice/proj.git', u.name, u.password)
const sshUrl = () => `ssh://git@127.0.0.1:${s.ssh!.port}/alice/proj.git`
const sshEnv = (who: string) => ({ GIT_SSH_COMMAND: `ssh -F /dev/null -i ${keys[who]} -o IdentitiesOnly=yes -o UserKnownHostsFile=${knownHosts} -o StrictHostKeyChecking=yes -o BatchMode=yes` })
/** The ids of rules (Gitea's record does not show them; the priority call takes them). */
const ruleIds = async (...names: string[]) => {
  const rows = await s.deps.db.select().from(branchProtections)
  return names.map((n) => rows.find((r) => r.ruleName === n)!.id)
}
/** The server's tip of `branch`. */
const tip = async (branch: string) => (await ok(asAlice.repos.repoGetBranch('alice', 'proj', branch))).commit!.id!
/** A push from the work copy: its exit code and what git printed. */
const push = (env: Record<string, string>, url: string, ...refspecs: string[]) => sh(['git', 'push', '--porcelain', url, ...refspecs], dir, env)

beforeAll(async () => {
  s = await startTestServer({ startSshServer: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  dir = (await pushedRepo(s, alice, 'proj', dirs)).dir
  await empty(asAlice.repos.repoAddCollaborator('alice', 'proj', 'bob', { permission: 'write' }))
  const keysDir = tempDir()
  dirs.push(keysDir)
  knownHosts = join(keysDir, 'known_hosts')
  writeFileSync(knownHosts, `[127.0.0.1]:${s.ssh!.port} ${s.ssh!.hostKey.publicKey}\n`)
  for (const [who, u] of [['alice', alice], ['bob', bob]] as const) {
    keys[who] = join(keysDir, who)
    await sh(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', who, '-f', keys[who]!], keysDir)
    await ok(giteaApi(s.url, { token: u.token }).user.userCurrentPostKey({ title: who, key: readFileSync(keys[who] + '.pub', 'utf8').trim() }), 201)
  }
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('branch_protections', () => {
  test('create, get, list, edit, refusals; the branch record shows the rule', async () => {
    const rule = await ok(
      asAlice.repos.repoCreateBranchProtection('alice', 'proj', {
        rule_name: 'main',
        enable_push: true,
        enable_push_whitelist: true,
        push_whitelist_usernames: ['alice'],
        protected_file_patterns: 'secret.txt',
        enable_status_check: true,
        status_check_contexts: ['ci/*'],
      }),
      201,
    )
    expect(missingGiteaFields('BranchProtection', rule)).toEqual([])
    expect(rule).toMatchObject({ rule_name: 'main', enable_push: true, enable_push_whitelist: true, push_whitelist_usernames: ['alice'], enable_force_push: false, status_check_contexts: ['ci/*'] })
    expect((await ok(asAlice.repos.repoGetBranchProtection('alice', 'proj', 'main'))).rule_name).toBe('main')
    expect((await ok(asAlice.repos.repoListBranchProtection('alice', 'proj'))).map((r) => r.rule_name)).toEqual(['main'])
    await fails(asAlice.repos.repoCreateBranchProtection('alice', 'proj', { rule_name: 'main' }), 403)
    await fails(asAlice.repos.repoCreateBranchProtection('alice', 'proj', { rule_name: 'no-such-branch' }), 404)
    await fails(asAlice.repos.repoCreateBranchProtection('alice', 'proj', { rule_name: 'x/*', push_whitelist_usernames: ['nobody'] }), 422)
    // Repository admins only: bob writes but does not administer.
    await fails(asBob.repos.repoListBranchProtection('alice', 'proj'), 403)
    await fails(asBob.repos.repoCreateBranchProtection('alice', 'proj', { rule_name: 'rel/*' }), 403)
    await ok(asAlice.repos.repoCreateBranchProtection('alice', 'proj', { rule_name: 'rel/*', enable_push: false }), 201)
    expect((await ok(asAlice.repos.repoEditBranchProtection('alice', 'proj', 'rel/*', { required_approvals: 2 }))).required_approvals).toBe(2)
    await empty(asAlice.repos.repoUpdateBranchProtectionPriories('alice', 'proj', { ids: await ruleIds('rel/*', 'main') }))
    expect((await ok(asAlice.repos.repoListBranchProtection('alice', 'proj'))).map((r) => [r.rule_name, r.priority])).toEqual([['rel/*', 1], ['main', 2]])
    await fails(asAlice.repos.repoUpdateBranchProtectionPriories('alice', 'proj', { ids: [999999] }), 422)
    await empty(asAlice.repos.repoDeleteBranchProtection('alice', 'proj', 'rel/*'))
    await fails(asAlice.repos.repoGetBranchProtection('alice', 'proj', 'rel/*'), 404)

    const forAlice = await ok(asAlice.repos.repoGetBranch('alice', 'proj', 'main'))
    expect(forAlice).toMatchObject({ protected: true, effective_branch_protection_name: 'main', user_can_push: true, enable_status_check: true, status_check_contexts: ['ci/*'] })
    expect((await ok(asBob.repos.repoGetBranch('alice', 'proj', 'main'))).user_can_push).toBe(false)
  })

  test('over HTTP: a push from outside the whitelist, a force push and a protected file are refused with the reason; a whitelisted push lands', async () => {
    const before = await tip('main')
    await commitOn(dir, 'main', { 'http-1.txt': 'one\n' }, 'one')
    const byBob = await push({}, urlOf(bob), 'main')
    expect(byBob.code).not.toBe(0)
    expect(byBob.stdout + byBob.stderr).toContain('Not allowed to push to protected branch main')
    expect(await tip('main')).toBe(before)

    expect((await push({}, urlOf(alice), 'main')).code).toBe(0)
    const landed = await gitOk(dir, 'rev-parse', 'HEAD')
    expect(await tip('main')).toBe(landed)

    await gitOk(dir, 'reset', '-q', '--hard', 'HEAD~1')
    await commitOn(dir, 'main', { 'b.txt': 'rewritten\n' }, 'rewrite')
    const forced = await push({}, urlOf(alice), '+main')
    expect(forced.code).not.toBe(0)
    expect(forced.stdout + forced.stderr).toContain('branch main is protected from force push')
    expect(await tip('main')).toBe(landed)

    await gitOk(dir, 'reset', '-q', '--hard', landed)
    await commitOn(dir, 'main', { 'secret.txt': 'x\n' }, 'touch the secret')
    const touching = await push({}, urlOf(alice), 'main')
    expect(touching.code).not.toBe(0)
    expect(touching.stdout + touching.stderr).toContain('branch main is protected from changing file secret.txt')
    expect(await tip('main')).toBe(landed)
    await gitOk(dir, 'reset', '-q', '--hard', landed)
  })

  test('over SSH: the same refusals, and the whitelisted push', async () => {
    const before = await tip('main')
    await commitOn(dir, 'main', { 'c.txt': 'ssh\n' }, 'over ssh')
    const byBob = await push(sshEnv('bob'), sshUrl(), 'main')
    expect(byBob.code).not.toBe(0)
    expect(byBob.stdout + byBob.stderr).toContain('Not allowed to push to protected branch main')
    expect(await tip('main')).toBe(before)
    expect((await push(sshEnv('alice'), sshUrl(), 'main')).code).toBe(0)
    const landed = await gitOk(dir, 'rev-parse', 'HEAD')
    expect(await tip('main')).toBe(landed)

    await gitOk(dir, 'reset', '-q', '--hard', 'HEAD~1')
    await commitOn(dir, 'main', { 'd.txt': 'other\n' }, 'rewrite over ssh')
    const forced = await push(sshEnv('alice'), sshUrl(), '+main')
    expect(forced.code).not.toBe(0)
    expect(forced.stdout + forced.stderr).toContain('branch main is protected from force push')
    expect(await tip('main')).toBe(landed)
    await gitOk(dir, 'reset', '-q', '--hard', landed)
  })

  test('the contents API and branch deletion obey the rule', async () => {
    const before = await tip('main')
    const refused = await fails(asBob.repos.repoCreateFile('alice', 'proj', 'bob.txt', { content: btoa('bob\n'), branch: 'main' }), 403)
    expect(refused.message).toContain('Not allowed to push to protected branch main')
    expect(await tip('main')).toBe(before)
    await fails(asAlice.repos.repoCreateFile('alice', 'proj', 'secret.txt', { content: btoa('s\n'), branch: 'main' }), 403)
    await ok(asAlice.repos.repoCreateFile('alice', 'proj', 'alice.txt', { content: btoa('alice\n'), branch: 'main' }), 201)
    expect(await tip('main')).not.toBe(before)

    // A branch another rule protects cannot be deleted, even by the owner.
    await ok(asAlice.repos.repoCreateBranch('alice', 'proj', { new_branch_name: 'keep', old_branch_name: 'main' }), 201)
    await ok(asAlice.repos.repoCreateBranchProtection('alice', 'proj', { rule_name: 'keep', enable_push: true }), 201)
    const deleting = await fails(asAlice.repos.repoDeleteBranch('alice', 'proj', 'keep'), 403)
    expect(deleting.message).toContain('branch keep is protected from deletion')
    expect(await tip('keep')).toBeTruthy()
  })

  test('a merge into the protected branch waits for its required status check', async () => {
    await gitOk(dir, 'fetch', '-q', urlOf(alice), 'main')
    const head = await commitOn(dir, 'topic', { 'topic.txt': 'topic\n' }, 'topic', 'FETCH_HEAD')
    expect((await push({}, urlOf(alice), 'topic')).code).toBe(0)
    const pull = await ok(asAlice.repos.repoCreatePullRequest('alice', 'proj', { head: 'topic', base: 'main', title: 'Topic' }), 201)
    const before = await tip('main')
    const waiting = await fails(asAlice.repos.repoMergePullRequest('alice', 'proj', pull.number!, { Do: 'merge' }), 405)
    expect(waiting.message).toContain('Not all required status checks successful')
    expect(await tip('main')).toBe(before)
    await ok(asAlice.repos.repoCreateStatus('alice', 'proj', head, { state: 'pending', context: 'ci/build' }), 201)
    await fails(asAlice.repos.repoMergePullRequest('alice', 'proj', pull.number!, { Do: 'merge' }), 405)
    await ok(asAlice.repos.repoCreateStatus('alice', 'proj', head, { state: 'success', context: 'ci/build' }), 201)
    // One approval required, and a request for changes blocks: the reviews decide.
    await ok(asAlice.repos.repoEditBranchProtection('alice', 'proj', 'main', { required_approvals: 1, block_on_rejected_reviews: true }))
    expect((await fails(asAlice.repos.repoMergePullRequest('alice', 'proj', pull.number!, { Do: 'merge' }), 405)).message).toContain('Does not have enough approvals')
    const rejected = await ok(asBob.repos.repoCreatePullReview('alice', 'proj', pull.number!, { event: 'REQUEST_CHANGES', body: 'not yet' }))
    await ok(asBob.repos.repoCreatePullReview('alice', 'proj', pull.number!, { event: 'APPROVED', body: 'now fine' }))
    expect(rejected.state).toBe('REQUEST_CHANGES')
    expect(await tip('main')).toBe(before)
    const merged = await asAlice.repos.repoMergePullRequest('alice', 'proj', pull.number!, { Do: 'merge' }).catch((e) => e)
    expect(merged.status).toBe(200)
    expect(await tip('main')).not.toBe(before)
  })
})
