/**
 * POST /repos/{template_owner}/{template_repo}/generate through gitea-js: a repository made from
 * a template's git content (one new commit, none of the template's history), topics and labels,
 * for the caller or an organisation; Gitea's refusals.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { giteaApi, type Api } from 'gitea-js'
import { repoPath, git } from '../src/git/run'
import { startTestServer, type TestServer, type TestUser } from './helpers'

let s: TestServer
let alice: TestUser
let bob: TestUser
let asAlice: Api<unknown>
let asBob: Api<unknown>

const statusOf = (p: Promise<{ status: number }>) => p.then((r) => r.status, (r: { status: number }) => r.status)
const b64 = (text: string) => Buffer.from(text).toString('base64')

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  expect((await asAlice.user.createCurrentUserRepo({ name: 'tpl', auto_init: true, default_branch: 'main' })).status).toBe(201)
  expect((await asAlice.repos.repoCreateFile('alice', 'tpl', 'src/app.txt', { content: b64('app\n'), message: 'second', branch: 'main' })).status).toBe(201)
  expect((await asAlice.repos.repoEdit('alice', 'tpl', { template: true })).status).toBe(200)
  expect((await asAlice.repos.repoUpdateTopics('alice', 'tpl', { topics: ['starter', 'demo'] })).status).toBe(204)
  expect((await asAlice.repos.issueCreateLabel('alice', 'tpl', { name: 'bug', color: '#ee0701', description: 'broken' })).status).toBe(201)
  expect((await asBob.orgs.orgCreate({ username: 'bobs-org' })).status).toBe(201)
})
afterAll(() => s.stop())

describe('generate from a template', () => {
  test('git content as one initial commit, topics and labels, for the caller', async () => {
    const r = await asBob.repos.generateRepo('alice', 'tpl', { owner: 'bob', name: 'made', git_content: true, topics: true, labels: true, private: true, description: 'mine' })
    expect(r.status).toBe(201)
    expect(r.data).toMatchObject({ full_name: 'bob/made', private: true, description: 'mine', empty: false, default_branch: 'main', topics: ['demo', 'starter'] })
    const gitDir = repoPath(s.dataDir, 'bob', 'made')
    const log = (await git(['log', '--format=%s|%an', 'refs/heads/main'], { gitDir })).trim().split('\n')
    expect(log).toEqual([`Initial commit|${bob.name}`])
    const tplTree = (await git(['rev-parse', 'refs/heads/main^{tree}'], { gitDir: repoPath(s.dataDir, 'alice', 'tpl') })).trim()
    expect((await git(['rev-parse', 'refs/heads/main^{tree}'], { gitDir })).trim()).toBe(tplTree)
    // None of the template's commits came along.
    const tplHead = (await git(['rev-parse', 'refs/heads/main'], { gitDir: repoPath(s.dataDir, 'alice', 'tpl') })).trim()
    expect((await git(['cat-file', '-t', tplHead], { gitDir }).catch(() => 'missing')).trim()).toBe('missing')
    expect((await asBob.repos.repoGetContents('bob', 'made', 'src/app.txt')).status).toBe(200)
    const labels = (await asBob.repos.issueListLabels('bob', 'made')).data
    expect(labels.map((l) => [l.name, l.color, l.description])).toEqual([['bug', 'ee0701', 'broken']])
  })

  test('protected branches: the rules with their settings; webhooks are never copied', async () => {
    expect((await asAlice.repos.repoCreateBranchProtection('alice', 'tpl', { rule_name: 'main', enable_status_check: true, status_check_contexts: ['ci/build'], required_approvals: 1, block_on_rejected_reviews: true })).status).toBe(201)
    expect((await asAlice.repos.repoCreateBranchProtection('alice', 'tpl', { rule_name: 'release/*', enable_push: false })).status).toBe(201)
    expect((await asAlice.repos.repoCreateHook('alice', 'tpl', { type: 'gitea', config: { url: 'http://127.0.0.1:9/hook', content_type: 'json', secret: 's3cret' }, active: true })).status).toBe(201)
    const r = await asBob.repos.generateRepo('alice', 'tpl', { owner: 'bob', name: 'guarded', git_content: true, protected_branch: true, webhooks: true })
    expect(r.status).toBe(201)
    const rules = (await asBob.repos.repoListBranchProtection('bob', 'guarded')).data
    expect(rules.map((x) => x.rule_name).sort()).toEqual(['main', 'release/*'])
    expect(rules.find((x) => x.rule_name === 'main')).toMatchObject({ enable_status_check: true, status_check_contexts: ['ci/build'], required_approvals: 1, block_on_rejected_reviews: true })
    expect(rules.find((x) => x.rule_name === 'release/*')).toMatchObject({ enable_push: false })
    expect((await asBob.repos.repoListHooks('bob', 'guarded')).data).toEqual([])
    // The rules hold: a push to the new repository's protected main is refused.
    expect(await statusOf(asBob.repos.repoCreateFile('bob', 'guarded', 'x.txt', { content: b64('x'), branch: 'main' }))).toBe(403)
    // Without the flag, none; the template keeps its own.
    expect((await asBob.repos.generateRepo('alice', 'tpl', { owner: 'bob', name: 'unguarded', git_content: true })).status).toBe(201)
    expect((await asBob.repos.repoListBranchProtection('bob', 'unguarded')).data).toEqual([])
    expect((await asAlice.repos.repoListBranchProtection('alice', 'tpl')).data).toHaveLength(2)
  })

  test('for an organisation the caller may create in; without git content the repository is empty', async () => {
    const r = await asBob.repos.generateRepo('alice', 'tpl', { owner: 'bobs-org', name: 'org-made', labels: true })
    expect(r.status).toBe(201)
    expect(r.data).toMatchObject({ full_name: 'bobs-org/org-made', empty: true, topics: [] })
    expect(r.data.permissions!.admin).toBe(true)
    expect(await statusOf(asAlice.repos.generateRepo('alice', 'tpl', { owner: 'bobs-org', name: 'x', git_content: true }))).toBe(403)
  })

  test("refusals: not a template 422, no item 422, someone else's name 404, a taken name 409/422, unreadable template 404", async () => {
    expect((await asAlice.user.createCurrentUserRepo({ name: 'plain' })).status).toBe(201)
    expect(await statusOf(asBob.repos.generateRepo('alice', 'plain', { owner: 'bob', name: 'p', git_content: true }))).toBe(422)
    expect(await statusOf(asBob.repos.generateRepo('alice', 'tpl', { owner: 'bob', name: 'p' }))).toBe(422)
    expect(await statusOf(asBob.repos.generateRepo('alice', 'tpl', { owner: 'alice', name: 'p', git_content: true }))).toBe(404)
    const taken = await statusOf(asBob.repos.generateRepo('alice', 'tpl', { owner: 'bob', name: 'made', git_content: true }))
    expect([409, 422]).toContain(taken)
    expect((await asAlice.user.createCurrentUserRepo({ name: 'secret-tpl', private: true })).status).toBe(201)
    expect(await statusOf(asBob.repos.generateRepo('alice', 'secret-tpl', { owner: 'bob', name: 's', git_content: true }))).toBe(404)
  })
})
