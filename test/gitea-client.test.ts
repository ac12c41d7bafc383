/**
 * A real Gitea client, unchanged, against Warren: gitea-js (generated from Gitea 1.23's own
 * swagger) drives a realistic session across every area Warren serves. Every call goes
 * through the client (it builds the paths, bodies and auth header itself, and parses JSON).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { giteaApi, type Api } from 'gitea-js'
import * as openpgp from 'openpgp'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, sh, tempDir } from './git-fixture'
import { empty, fails, ok } from './gitea-calls'

type Client = Api<unknown>

let s: TestServer
let admin: TestUser
let alice: TestUser
let bob: TestUser
let asAdmin: Client
let asAlice: Client
let asBob: Client
let anon: Client

const basicOf = (u: TestUser) => ({ headers: { Authorization: u.basic } })

beforeAll(async () => {
  s = await startTestServer()
  admin = await s.user('root', { admin: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
  asAdmin = giteaApi(s.url, { token: admin.token })
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  anon = giteaApi(s.url, {})
})
afterAll(() => s.stop())

describe('gitea-js against Warren', () => {
  test('version, current user, another user, user search', async () => {
    const v = await ok(anon.version.getVersion())
    expect(v.version).toMatch(/^\d+\.\d+\.\d+/)

    const me = await ok(asAlice.user.userGetCurrent())
    expect(me.login).toBe('alice')
    expect(me.email).toBe('alice@example.com')
    expect(me.id).toBe(alice.user.id)
    expect(me.is_admin).toBe(false)

    const other = await ok(asAlice.users.userGet('bob'))
    expect(other.login).toBe('bob')
    expect(other.id).toBe(bob.user.id)
    await fails(asAlice.users.userGet('nobody-here'), 404)
    await fails(anon.user.userGetCurrent(), 401)

    const found = await ok(asAlice.users.userSearch({ q: 'bo', limit: 10 }))
    expect(found.ok).toBe(true)
    expect(found.data!.map((u) => u.login)).toEqual(['bob'])
  })

  test('access tokens with Basic credentials: create, list, use, delete', async () => {
    // Basic credentials go on a client without a token (gitea-js' token header would take precedence)
    const created = await ok(anon.users.userCreateToken('alice', { name: 'ci', scopes: ['read:user'] }, basicOf(alice)), 201)
    expect(created.name).toBe('ci')
    expect(created.sha1).toMatch(/^[0-9a-f]{40}$/)
    expect(typeof created.id).toBe('number')
    expect(created.scopes).toEqual(['read:user'])

    const list = await ok(anon.users.userGetTokens('alice', {}, basicOf(alice)))
    expect(list.map((t) => t.name).sort()).toEqual(['ci', 'test'])
    expect(list.find((t) => t.name === 'ci')!.id).toBe(created.id!)

    const viaNew = giteaApi(s.url, { token: created.sha1! })
    expect((await ok(viaNew.user.userGetCurrent())).login).toBe('alice')

    // a token is not enough for the token routes
    await fails(asAlice.users.userGetTokens('alice'), 401)

    await empty(anon.users.userDeleteAccessToken('alice', String(created.id), basicOf(alice)))
    await fails(viaNew.user.userGetCurrent(), 401)
    await fails(anon.users.userDeleteAccessToken('alice', String(created.id), basicOf(alice)), 404)
  })

  test('e-mail addresses: add, list, delete', async () => {
    const added = await ok(asAlice.user.userAddEmail({ emails: ['alice.work@example.com', 'a2@example.com'] }), 201)
    expect(added.map((e) => e.email).sort()).toEqual(['a2@example.com', 'alice.work@example.com'])
    expect(added.every((e) => e.primary === false)).toBe(true)

    const list = await ok(asAlice.user.userListEmails())
    expect(list.map((e) => e.email).sort()).toEqual(['a2@example.com', 'alice.work@example.com', 'alice@example.com'])
    expect(list.find((e) => e.email === 'alice@example.com')!.primary).toBe(true)

    await fails(asBob.user.userAddEmail({ emails: ['a2@example.com'] }), 422)
    await empty(asAlice.user.userDeleteEmail({ emails: ['a2@example.com'] }))
    const after = await ok(asAlice.user.userListEmails())
    expect(after.map((e) => e.email).sort()).toEqual(['alice.work@example.com', 'alice@example.com'])
  })

  test('follow, check, list, unfollow', async () => {
    await empty(asAlice.user.userCurrentPutFollow('bob'))
    await empty(asAlice.user.userCurrentCheckFollowing('bob'))
    await empty(asAlice.users.userCheckFollowing('alice', 'bob'))
    expect((await ok(asAlice.users.userListFollowers('bob', { page: 1, limit: 10 }))).map((u) => u.login)).toEqual(['alice'])
    expect((await ok(asAlice.user.userCurrentListFollowing())).map((u) => u.login)).toEqual(['bob'])
    expect((await ok(asBob.user.userCurrentListFollowers())).map((u) => u.login)).toEqual(['alice'])
    expect((await ok(asBob.users.userListFollowing('alice'))).map((u) => u.login)).toEqual(['bob'])

    await empty(asAlice.user.userCurrentDeleteFollow('bob'))
    await fails(asAlice.user.userCurrentCheckFollowing('bob'), 404)
    expect(await ok(asBob.user.userCurrentListFollowers())).toEqual([])
  })

  test('SSH keys: add, list, get, delete', async () => {
    const dir = tempDir('warren-sshkey-')
    let key: string
    try {
      const r = await sh(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'alice@laptop', '-f', join(dir, 'id')], dir)
      key = r.code === 0 ? readFileSync(join(dir, 'id.pub'), 'utf8').trim() : 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGQYH3c8L3m8t4a0GMcE9+VbUD6tQ4fLxA8yNSPgNO8U alice@laptop'
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    const created = await ok(asAlice.user.userCurrentPostKey({ title: 'laptop', key }), 201)
    expect(created.title).toBe('laptop')
    expect(created.key).toBe(key) // Gitea keeps the comment
    expect(created.fingerprint).toMatch(/^SHA256:/)

    const mine = await ok(asAlice.user.userCurrentListKeys())
    expect(mine.map((k) => k.id)).toEqual([created.id!])
    expect((await ok(asAlice.user.userCurrentGetKey(created.id!))).fingerprint).toBe(created.fingerprint!)
    expect((await ok(asBob.users.userListKeys('alice'))).map((k) => k.fingerprint)).toEqual([created.fingerprint!])

    await fails(asAlice.user.userCurrentPostKey({ title: 'again', key }), 422)
    await fails(asAlice.user.userCurrentPostKey({ title: 'junk', key: 'ssh-ed25519 not-base64!' }), 422)
    await fails(asBob.user.userCurrentDeleteKey(created.id!), 403)
    await empty(asAlice.user.userCurrentDeleteKey(created.id!))
    expect(await ok(asAlice.user.userCurrentListKeys())).toEqual([])
  })

  test('admin: create, edit, list, delete a user', async () => {
    const carol = await ok(
      asAdmin.admin.adminCreateUser({ username: 'carol', email: 'carol@example.com', password: 'carol-secret-1', must_change_password: false, full_name: 'Carol C' }),
      201,
    )
    expect(carol.login).toBe('carol')
    expect(carol.full_name).toBe('Carol C')
    await fails(asAlice.admin.adminCreateUser({ username: 'dave', email: 'dave@example.com', password: 'dave-secret-1' }), 403)
    await fails(asAdmin.admin.adminCreateUser({ username: 'carol', email: 'other@example.com', password: 'x-secret-123' }), 422)

    const edited = await ok(
      asAdmin.admin.adminEditUser('carol', { login_name: 'carol', source_id: 0, full_name: 'Carol Cooper', website: 'https://carol.example', admin: true }),
    )
    expect(edited.full_name).toBe('Carol Cooper')
    expect(edited.website).toBe('https://carol.example')
    expect(edited.is_admin).toBe(true)

    const page = await asAdmin.admin.adminSearchUsers({ page: 1, limit: 2 })
    expect(page.status).toBe(200)
    expect(page.error).toBeNull()
    expect(page.data.length).toBe(2)
    expect(page.headers.get('x-total-count')).toBe('4')
    const all = await ok(asAdmin.admin.adminSearchUsers({ limit: 50 }))
    expect(all.map((u) => u.login).sort()).toEqual(['alice', 'bob', 'carol', 'root'])

    // the new user can sign in with Basic credentials through the client
    const asCarol = giteaApi(s.url, {})
    expect((await ok(asCarol.user.userGetCurrent({ headers: { Authorization: 'Basic ' + btoa('carol:carol-secret-1') } }))).login).toBe('carol')

    await empty(asAdmin.admin.adminDeleteUser('carol'))
    await fails(asAdmin.users.userGet('carol'), 404)
  })

  test('repositories: create with auto_init, get, edit, search, list, branches, raw, archive, editorconfig', async () => {
    const repo = await ok(
      asAlice.user.createCurrentUserRepo({ name: 'tools', description: 'Handy tools', auto_init: true, readme: 'Default', gitignores: 'Node', license: 'MIT' }),
      201,
    )
    expect(repo.full_name).toBe('alice/tools')
    expect(repo.owner!.login).toBe('alice')
    expect(repo.empty).toBe(false)
    const branch = repo.default_branch!
    expect(['main', 'master']).toContain(branch)
    expect(repo.clone_url).toBe(`${s.url}/alice/tools.git`)
    expect(repo.permissions).toEqual({ admin: true, push: true, pull: true })
    await fails(asAlice.user.createCurrentUserRepo({ name: 'tools' }), 409)
    await ok(asAlice.user.createCurrentUserRepo({ name: 'toolbox', description: 'More tools' }), 201)
    await ok(asAlice.user.createCurrentUserRepo({ name: 'diary', private: true }), 201)

    const got = await ok(asBob.repos.repoGet('alice', 'tools'))
    expect(got.id).toBe(repo.id!)
    expect(got.permissions).toEqual({ admin: false, push: false, pull: true })
    await fails(asBob.repos.repoGet('alice', 'diary'), 404)

    const edited = await ok(asAlice.repos.repoEdit('alice', 'tools', { description: 'Sharp tools', private: true }))
    expect(edited.description).toBe('Sharp tools')
    expect(edited.private).toBe(true)
    await fails(asBob.repos.repoGet('alice', 'tools'), 404)
    await fails(asBob.repos.repoEdit('alice', 'toolbox', { description: 'mine now' }), 403)
    await ok(asAlice.repos.repoEdit('alice', 'tools', { private: false }))

    const search = await asAlice.repos.repoSearch({ q: 'tool', limit: 1, page: 2 })
    expect(search.status).toBe(200)
    expect(search.error).toBeNull()
    expect(search.data.ok).toBe(true)
    expect(search.data.data!.map((r) => r.name)).toEqual(['tools'])
    expect(search.headers.get('x-total-count')).toBe('2')
    const anonSearch = await ok(anon.repos.repoSearch({ q: 'i' }))
    expect(anonSearch.data!.map((r) => r.name)).not.toContain('diary')

    expect((await ok(asAlice.users.userListRepos('alice'))).map((r) => r.name).sort()).toEqual(['diary', 'toolbox', 'tools'])
    expect((await ok(asBob.users.userListRepos('alice'))).map((r) => r.name).sort()).toEqual(['toolbox', 'tools'])
    expect((await ok(asAlice.user.userCurrentListRepos({ limit: 10 }))).map((r) => r.name).sort()).toEqual(['diary', 'toolbox', 'tools'])

    const branches = await ok(asAlice.repos.repoListBranches('alice', 'tools'))
    expect(branches.map((b) => b.name)).toEqual([branch])
    const main = await ok(asAlice.repos.repoGetBranch('alice', 'tools', branch))
    expect(main.name).toBe(branch)
    expect(main.commit!.id).toMatch(/^[0-9a-f]{40}$/)
    expect(main.commit!.message).toContain('Initial commit')
    await fails(asAlice.repos.repoGetBranch('alice', 'tools', 'nope'), 404)

    // raw files are not JSON: a client asks for text
    const readme = await asAlice.repos.repoGetRawFile('alice', 'tools', 'README.md', { ref: branch }, { format: 'text' })
    expect(readme.status).toBe(200)
    expect(readme.data as unknown as string).toContain('# tools')
    const license = await asAlice.repos.repoGetRawFile('alice', 'tools', 'LICENSE', {}, { format: 'text' })
    expect(license.data as unknown as string).toContain('MIT License')
    const ignore = await asAlice.repos.repoGetRawFile('alice', 'tools', `${branch}/.gitignore`, {}, { format: 'text' })
    expect(ignore.data as unknown as string).toContain('node_modules')
    await fails(asAlice.repos.repoGetRawFile('alice', 'tools', 'missing.txt'), 404)

    const zip = await asAlice.repos.repoGetArchive('alice', 'tools', `${branch}.zip`, { format: 'arrayBuffer' })
    expect(zip.status).toBe(200)
    const zipBytes = new Uint8Array(zip.data as unknown as ArrayBuffer)
    expect([zipBytes[0], zipBytes[1]]).toEqual([0x50, 0x4b])
    expect(zip.headers.get('content-disposition')).toContain(`tools-${branch}.zip`)
    const tgz = await asAlice.repos.repoGetArchive('alice', 'tools', `${branch}.tar.gz`, { format: 'arrayBuffer' })
    const tgzBytes = new Uint8Array(tgz.data as unknown as ArrayBuffer)
    expect([tgzBytes[0], tgzBytes[1]]).toEqual([0x1f, 0x8b])

    // .editorconfig pushed with the git CLI, then read through the API
    const work = tempDir('warren-gitea-js-')
    try {
      await gitOk(work, 'clone', '-q', remoteUrl(s.url, 'alice/tools.git', 'alice', alice.token), 'w')
      const wd = join(work, 'w')
      writeFileSync(join(wd, '.editorconfig'), 'root = true\n\n[*.ts]\nindent_style = space\nindent_size = 2\n')
      await gitOk(wd, 'add', '.editorconfig')
      await gitOk(wd, 'commit', '-q', '-m', 'editorconfig')
      await gitOk(wd, 'push', '-q', 'origin', branch)
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
    const ec = await ok(asAlice.repos.repoGetEditorConfig('alice', 'tools', 'src/app.ts'))
    expect(ec).toMatchObject({ indent_style: 'space', indent_size: '2' })
    await fails(asAlice.repos.repoGetEditorConfig('alice', 'tools', 'notes.md'), 404)
  })

  test('collaborators: add, check, list, remove', async () => {
    await empty(asAlice.repos.repoAddCollaborator('alice', 'toolbox', 'bob', { permission: 'write' }))
    await empty(asAlice.repos.repoCheckCollaborator('alice', 'toolbox', 'bob'))
    const list = await ok(asAlice.repos.repoListCollaborators('alice', 'toolbox'))
    expect(list.map((u) => u.login)).toEqual(['bob'])
    expect((await ok(asBob.repos.repoGet('alice', 'toolbox'))).permissions).toEqual({ admin: false, push: true, pull: true })
    await fails(asBob.repos.repoAddCollaborator('alice', 'toolbox', 'root', {}), 403)
    await fails(asAlice.repos.repoAddCollaborator('alice', 'toolbox', 'ghost', {}), 422)

    await empty(asAlice.repos.repoDeleteCollaborator('alice', 'toolbox', 'bob'))
    await fails(asAlice.repos.repoCheckCollaborator('alice', 'toolbox', 'bob'), 404)
    expect(await ok(asAlice.repos.repoListCollaborators('alice', 'toolbox'))).toEqual([])
  })

  test('organisations: create, edit, members, publicize, teams, org repositories', async () => {
    const org = await ok(asAlice.orgs.orgCreate({ username: 'acme', full_name: 'Acme Inc', visibility: 'public' }), 201)
    expect(org.name).toBe('acme')
    expect(org.username).toBe('acme')
    expect(org.full_name).toBe('Acme Inc')

    const edited = await ok(asAlice.orgs.orgEdit('acme', { description: 'We make everything', website: 'https://acme.example', location: 'Desert' }))
    expect(edited.description).toBe('We make everything')
    expect(edited.website).toBe('https://acme.example')
    expect(edited.location).toBe('Desert')
    await fails(asBob.orgs.orgEdit('acme', { description: 'hijacked' }), 403)
    expect((await ok(anon.orgs.orgGet('acme'))).description).toBe('We make everything')

    expect((await ok(asAlice.orgs.orgListMembers('acme'))).map((u) => u.login)).toEqual(['alice'])
    expect(await ok(anon.orgs.orgListMembers('acme'))).toEqual([])
    await empty(asAlice.orgs.orgPublicizeMember('acme', 'alice'))
    await empty(anon.orgs.orgIsPublicMember('acme', 'alice'))
    expect((await ok(anon.orgs.orgListPublicMembers('acme'))).map((u) => u.login)).toEqual(['alice'])
    await empty(asAlice.orgs.orgConcealMember('acme', 'alice'))
    await fails(anon.orgs.orgIsPublicMember('acme', 'alice'), 404)

    const repo = await ok(asAlice.orgs.createOrgRepo('acme', { name: 'rockets', description: 'Boom', private: true }), 201)
    expect(repo.full_name).toBe('acme/rockets')
    expect(repo.private).toBe(true)
    await fails(asBob.orgs.createOrgRepo('acme', { name: 'sneaky' }), 403)

    const team = await ok(
      asAlice.orgs.orgCreateTeam('acme', { name: 'engineers', description: 'Builders', permission: 'write', units: ['repo.code', 'repo.issues'] }),
      201,
    )
    expect(team.name).toBe('engineers')
    expect(team.permission).toBe('write')
    expect(team.organization?.name ?? 'acme').toBe('acme')
    await empty(asAlice.teams.orgAddTeamMember(team.id!, 'bob'))
    await empty(asAlice.teams.orgAddTeamRepository(team.id!, 'acme', 'rockets'))
    expect((await ok(asAlice.teams.orgListTeamMembers(team.id!))).map((u) => u.login)).toEqual(['bob'])
    expect((await ok(asBob.teams.orgListTeamRepos(team.id!))).map((r) => r.name)).toEqual(['rockets'])
    expect((await ok(asBob.teams.orgGetTeam(team.id!))).name).toBe('engineers')

    const teams = await ok(asAlice.orgs.orgListTeams('acme'))
    expect(teams.map((t) => t.name).sort()).toEqual(['Owners', 'engineers'])
    expect((await ok(asBob.user.userListTeams())).map((t) => t.name)).toEqual(['engineers'])
    expect((await ok(asBob.user.orgListCurrentUserOrgs())).map((o) => o.username)).toEqual(['acme'])

    // bob reaches the private repository through the team, with write access
    const viaTeam = await ok(asBob.repos.repoGet('acme', 'rockets'))
    expect(viaTeam.permissions).toEqual({ admin: false, push: true, pull: true })
    expect((await ok(asBob.orgs.orgListRepos('acme'))).map((r) => r.name)).toEqual(['rockets'])
    expect(await ok(anon.orgs.orgListRepos('acme'))).toEqual([])
    expect((await ok(asBob.orgs.orgListMembers('acme'))).map((u) => u.login).sort()).toEqual(['alice', 'bob'])
  })

  test('issues, comments, labels, milestones, tracked times', async () => {
    const [o, r] = ['alice', 'toolbox']
    await empty(asAlice.repos.repoAddCollaborator(o, r, 'bob', { permission: 'read' }))

    // labels CRUD
    const bug = await ok(asAlice.repos.issueCreateLabel(o, r, { name: 'bug', color: '#ee0701', description: 'Something is broken' }), 201)
    expect(bug).toMatchObject({ name: 'bug', color: 'ee0701', description: 'Something is broken' })
    const feat = await ok(asAlice.repos.issueCreateLabel(o, r, { name: 'feature', color: '84b6eb' }), 201)
    const junk = await ok(asAlice.repos.issueCreateLabel(o, r, { name: 'junk', color: '000000' }), 201)
    const editedLabel = await ok(asAlice.repos.issueEditLabel(o, r, feat.id!, { name: 'enhancement', color: '#00ff00' }))
    expect(editedLabel).toMatchObject({ id: feat.id, name: 'enhancement', color: '00ff00' })
    expect((await ok(asBob.repos.issueGetLabel(o, r, bug.id!))).name).toBe('bug')
    await fails(asBob.repos.issueCreateLabel(o, r, { name: 'nope', color: '000000' }), 403)
    await empty(asAlice.repos.issueDeleteLabel(o, r, junk.id!))
    expect((await ok(asBob.repos.issueListLabels(o, r))).map((l) => l.name)).toEqual(['bug', 'enhancement'])

    // milestones CRUD and state filter
    const v1 = await ok(asAlice.repos.issueCreateMilestone(o, r, { title: 'v1', description: 'First', due_on: '2030-01-01T00:00:00Z' }), 201)
    expect(v1).toMatchObject({ title: 'v1', description: 'First', state: 'open', open_issues: 0, closed_issues: 0 })
    expect(v1.due_on).toBe('2030-01-01T00:00:00Z')
    const v0 = await ok(asAlice.repos.issueCreateMilestone(o, r, { title: 'v0' }), 201)
    const closed = await ok(asAlice.repos.issueEditMilestone(o, r, String(v0.id), { state: 'closed' }))
    expect(closed.state).toBe('closed')
    expect(closed.closed_at).toBeTruthy()
    expect((await ok(asBob.repos.issueGetMilestonesList(o, r))).map((m) => m.title)).toEqual(['v1'])
    expect((await ok(asBob.repos.issueGetMilestonesList(o, r, { state: 'closed' }))).map((m) => m.title)).toEqual(['v0'])
    expect((await ok(asBob.repos.issueGetMilestonesList(o, r, { state: 'all' }))).map((m) => m.title).sort()).toEqual(['v0', 'v1'])
    expect((await ok(asBob.repos.issueGetMilestone(o, r, String(v1.id)))).title).toBe('v1')
    await empty(asAlice.repos.issueDeleteMilestone(o, r, String(v0.id)))
    await fails(asBob.repos.issueGetMilestone(o, r, String(v0.id)), 404)

    // issues
    const first = await ok(
      asBob.repos.issueCreateIssue(o, r, { title: 'Hammer is broken', body: 'It **snapped**.', labels: [bug.id!], milestone: v1.id }),
      201,
    )
    expect(first).toMatchObject({ number: 1, title: 'Hammer is broken', body: 'It **snapped**.', state: 'open' })
    expect(first.user!.login).toBe('bob')
    // as in Gitea, a poster without write access cannot set labels or a milestone: they are dropped
    expect(first.labels).toEqual([])
    expect(first.milestone ?? null).toBeNull()
    expect((await ok(asAlice.repos.issueAddLabel(o, r, 1, { labels: [bug.id!] }))).map((l) => l.name)).toEqual(['bug'])
    const planned = await ok(asAlice.repos.issueEditIssue(o, r, 1, { milestone: v1.id }), 201)
    expect(planned.milestone!.title).toBe('v1')
    expect(planned.labels!.map((l) => l.name)).toEqual(['bug'])
    const second = await ok(asAlice.repos.issueCreateIssue(o, r, { title: 'Add a saw', assignees: ['alice'] }), 201)
    expect(second.number).toBe(2)
    expect(second.assignees!.map((u) => u.login)).toEqual(['alice'])
    await fails(asAlice.repos.issueCreateIssue(o, r, { title: 'For a reader', assignees: ['bob'] }), 422) // readers cannot be assigned
    await ok(asAlice.repos.issueCreateIssue(o, r, { title: 'Paint the shed' }), 201)

    const page1 = await asBob.repos.issueListIssues(o, r, { state: 'open', page: 1, limit: 2 })
    expect(page1.status).toBe(200)
    expect(page1.error).toBeNull()
    expect(page1.data.map((i) => i.number)).toEqual([3, 2])
    expect(page1.headers.get('x-total-count')).toBe('3')
    expect((await ok(asBob.repos.issueListIssues(o, r, { state: 'open', page: 2, limit: 2 }))).map((i) => i.number)).toEqual([1])
    expect((await ok(asBob.repos.issueListIssues(o, r, { labels: 'bug' }))).map((i) => i.number)).toEqual([1])

    const closedIssue = await ok(asAlice.repos.issueEditIssue(o, r, 3, { state: 'closed', title: 'Paint the shed (done)' }), 201)
    expect(closedIssue).toMatchObject({ number: 3, state: 'closed', title: 'Paint the shed (done)' })
    expect(closedIssue.closed_at).toBeTruthy()
    expect((await ok(asBob.repos.issueListIssues(o, r, { state: 'closed' }))).map((i) => i.number)).toEqual([3])
    expect((await ok(asBob.repos.issueListIssues(o, r, { state: 'all' }))).map((i) => i.number)).toEqual([3, 2, 1])
    const got = await ok(asBob.repos.issueGetIssue(o, r, 1))
    expect(got.title).toBe('Hammer is broken')
    await fails(asBob.repos.issueGetIssue(o, r, 99), 404)
    expect((await ok(asBob.repos.issueGetMilestone(o, r, String(v1.id)))).open_issues).toBe(1)

    // comments
    const c1 = await ok(asAlice.repos.issueCreateComment(o, r, 1, { body: 'Have you tried glue?' }), 201)
    expect(c1.body).toBe('Have you tried glue?')
    expect(c1.user!.login).toBe('alice')
    const c2 = await ok(asBob.repos.issueCreateComment(o, r, 1, { body: 'Yes.' }), 201)
    const comments = await ok(asBob.repos.issueGetComments(o, r, 1))
    expect(comments.map((c) => c.body)).toEqual(['Have you tried glue?', 'Yes.'])
    const editedComment = await ok(asBob.repos.issueEditComment(o, r, c2.id!, { body: 'Yes, twice.' }))
    expect(editedComment.body).toBe('Yes, twice.')
    await fails(asBob.repos.issueEditComment(o, r, c1.id!, { body: 'not mine' }), 403)
    await empty(asAlice.repos.issueDeleteComment(o, r, c1.id!))
    expect((await ok(asBob.repos.issueGetComments(o, r, 1))).map((c) => c.body)).toEqual(['Yes, twice.'])
    expect((await ok(asBob.repos.issueGetIssue(o, r, 1))).comments).toBe(1)

    // issue labels: add, replace, remove, clear
    const added = await ok(asAlice.repos.issueAddLabel(o, r, 2, { labels: [bug.id!, feat.id!] }))
    expect(added.map((l) => l.name)).toEqual(['bug', 'enhancement'])
    const replaced = await ok(asAlice.repos.issueReplaceLabels(o, r, 2, { labels: [feat.id!] }))
    expect(replaced.map((l) => l.name)).toEqual(['enhancement'])
    expect((await ok(asBob.repos.issueGetLabels(o, r, 2))).map((l) => l.name)).toEqual(['enhancement'])
    await empty(asAlice.repos.issueRemoveLabel(o, r, 2, feat.id!))
    expect(await ok(asBob.repos.issueGetLabels(o, r, 2))).toEqual([])
    await ok(asAlice.repos.issueAddLabel(o, r, 2, { labels: [bug.id!] }))
    await empty(asAlice.repos.issueClearLabels(o, r, 2))
    expect(await ok(asBob.repos.issueGetLabels(o, r, 2))).toEqual([])
    await fails(asBob.repos.issueAddLabel(o, r, 2, { labels: [bug.id!] }), 403)

    // tracked times
    const t1 = await ok(asBob.repos.issueAddTime(o, r, 1, { time: 3600 }))
    expect(t1).toMatchObject({ time: 3600, issue_id: first.id, user_name: 'bob' })
    await ok(asAlice.repos.issueAddTime(o, r, 1, { time: 600 }))
    const times = await ok(asAlice.repos.issueTrackedTimes(o, r, 1))
    expect(times.map((t) => t.time!).sort((a, b) => a - b)).toEqual([600, 3600])
    const repoTimes = await ok(asAlice.repos.repoTrackedTimes(o, r))
    expect(repoTimes.length).toBe(2)
    expect((await ok(asBob.user.userCurrentTrackedTimes())).map((t) => t.time)).toEqual([3600])
  })

  test('markdown render (JSON and raw)', async () => {
    const html = await asAlice.markdown.renderMarkdown({ Text: '# Title\n\nSee #1', Mode: 'gfm', Context: `${s.url}/alice/toolbox` }, { format: 'text' })
    expect(html.status).toBe(200)
    expect(html.headers.get('content-type')).toContain('text/html')
    expect(html.data).toContain('<h1')
    expect(html.data).toContain('Title')
    expect(html.data).toContain('/alice/toolbox/issues/1')
    const raw = await anon.markdown.renderMarkdownRaw('*hello*' as never, { format: 'text', type: 'text/plain' as never })
    expect(raw.status).toBe(200)
    expect(raw.data).toContain('<em>hello</em>')
  })

  test('token scopes, token deletion by name, GPG keys', async () => {
    const scoped = await ok(anon.users.userCreateToken('bob', { name: 'scoped', scopes: ['write:repository', 'read:user'] }, basicOf(bob)), 201)
    expect(scoped.sha1).toMatch(/^[0-9a-f]{40}$/)
    expect(scoped.scopes).toEqual(['write:repository', 'read:user'])
    const viaScoped = giteaApi(s.url, { token: scoped.sha1! })
    expect((await ok(viaScoped.user.userGetCurrent())).login).toBe('bob')
    // Gitea accepts the token's name where its id is expected
    await fails(anon.users.userDeleteAccessToken('alice', 'scoped', basicOf(alice)), 404) // bob's name, alice's path
    await empty(anon.users.userDeleteAccessToken('bob', 'scoped', basicOf(bob)))
    await fails(viaScoped.user.userGetCurrent(), 401)
    await fails(anon.users.userDeleteAccessToken('bob', 'scoped', basicOf(bob)), 404)
    await ok(anon.users.userCreateToken('bob', { name: 'twin', scopes: ['read:user'] }, basicOf(bob)), 201)
    await ok(anon.users.userCreateToken('bob', { name: 'twin', scopes: ['read:user'] }, basicOf(bob)), 201)
    expect((await fails(anon.users.userDeleteAccessToken('bob', 'twin', basicOf(bob)), 422)).message).toContain("multiple matches for token name 'twin'")

    const { publicKey } = await openpgp.generateKey({ type: 'curve25519', userIDs: [{ name: 'Bob', email: 'bob@example.com' }], format: 'armored' })
    const gpg = await ok(asBob.user.userCurrentPostGpgKey({ armored_public_key: publicKey }), 201)
    expect(gpg.key_id).toMatch(/^[0-9A-F]{16}$/)
    expect(gpg.emails).toEqual([{ email: 'bob@example.com', verified: true }])
    expect((await ok(asBob.user.userCurrentListGpgKeys())).map((k) => k.id)).toEqual([gpg.id!])
    expect((await ok(asAlice.users.userListGpgKeys('bob'))).map((k) => k.key_id)).toEqual([gpg.key_id!])
    expect((await ok(asBob.user.userCurrentGetGpgKey(gpg.id!))).key_id).toBe(gpg.key_id!)
    await empty(asBob.user.userCurrentDeleteGpgKey(gpg.id!))
    expect(await ok(asBob.user.userCurrentListGpgKeys())).toEqual([])
  })

  test('more admin, org, team, repository and issue calls', async () => {
    // admin: orgs, repositories and keys on behalf of a user
    const org = await ok(asAdmin.admin.adminCreateOrg('bob', { username: 'bobcorp', full_name: 'Bob Corp' }), 201)
    expect(org.username).toBe('bobcorp')
    expect((await ok(asAdmin.admin.adminGetAllOrgs())).map((o) => o.username).sort()).toEqual(['acme', 'bobcorp'])
    expect((await ok(asAlice.users.orgListUserOrgs('bob'))).map((o) => o.username)).toEqual([])
    const repo = await ok(asAdmin.admin.adminCreateRepo('bob', { name: 'gadgets', private: true }), 201)
    expect(repo.full_name).toBe('bob/gadgets')
    expect((await ok(asBob.repositories.repoGetById(repo.id!))).full_name).toBe('bob/gadgets')
    await fails(asAlice.repositories.repoGetById(repo.id!), 404)
    const key = await ok(
      asAdmin.admin.adminCreatePublicKey('bob', { title: 'server', key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGQYH3c8L3m8t4a0GMcE9+VbUD6tQ4fLxA8yNSPgNO8U bob@server' }),
      201,
    )
    expect((await ok(asBob.user.userCurrentListKeys())).map((k) => k.id)).toEqual([key.id!])
    await empty(asAdmin.admin.adminDeleteUserPublicKey('bob', key.id!))
    expect(await ok(asBob.user.userCurrentListKeys())).toEqual([])
    await empty(asBob.repos.repoDelete('bob', 'gadgets'))
    await fails(asBob.repos.repoGet('bob', 'gadgets'), 404)

    // membership checks: a signed-in outsider is redirected to the public check, which fetch
    // follows; anonymous callers get 401 (Gitea 1.20+ requires a token here)
    await empty(asAlice.orgs.orgIsMember('acme', 'bob'))
    const erin = await s.user('erin')
    const asErin = giteaApi(s.url, { token: erin.token })
    await fails(asErin.orgs.orgIsMember('acme', 'bob'), 404)
    await empty(asAlice.orgs.orgPublicizeMember('acme', 'alice'))
    await empty(asErin.orgs.orgIsMember('acme', 'alice'))
    await fails(anon.orgs.orgIsMember('acme', 'bob'), 401)

    // teams: edit, member lookup, removal, deletion
    const teams = await ok(asAlice.orgs.orgListTeams('acme'))
    const team = teams.find((t) => t.name === 'engineers')!
    const edited = await ok(asAlice.teams.orgEditTeam(team.id!, { name: 'builders', description: 'They build', permission: 'read' }))
    expect(edited).toMatchObject({ id: team.id, name: 'builders', description: 'They build', permission: 'read' })
    expect((await ok(asAlice.teams.orgListTeamMember(team.id!, 'bob'))).login).toBe('bob')
    expect((await ok(asBob.repos.repoGet('acme', 'rockets'))).permissions).toEqual({ admin: false, push: false, pull: true })
    await empty(asAlice.teams.orgRemoveTeamRepository(team.id!, 'acme', 'rockets'))
    await fails(asBob.repos.repoGet('acme', 'rockets'), 404)
    await empty(asAlice.teams.orgRemoveTeamMember(team.id!, 'bob'))
    await fails(asAlice.teams.orgListTeamMember(team.id!, 'bob'), 404)
    await empty(asAlice.teams.orgDeleteTeam(team.id!))
    expect((await ok(asAlice.orgs.orgListTeams('acme'))).map((t) => t.name)).toEqual(['Owners'])
    await empty(asBob.orgs.orgDelete('bobcorp'))
    await fails(anon.orgs.orgGet('bobcorp'), 404)

    // issues: deadline, comments over the whole repository and through the deprecated paths
    const [o, r] = ['alice', 'toolbox']
    const deadline = await ok(asAlice.repos.issueEditIssueDeadline(o, r, 2, { due_date: '2031-05-01T00:00:00Z' }), 201)
    expect(deadline.due_date).toBe('2031-05-01T00:00:00Z')
    expect((await ok(asBob.repos.issueGetIssue(o, r, 2))).due_date).toBe('2031-05-01T00:00:00Z')
    const c = await ok(asAlice.repos.issueCreateComment(o, r, 2, { body: 'old style' }), 201)
    const viaOld = await ok(asAlice.repos.issueEditCommentDeprecated(o, r, 2, c.id!, { body: 'old style, edited' }))
    expect(viaOld.body).toBe('old style, edited')
    const all = await ok(asBob.repos.issueGetRepoComments(o, r, { limit: 10 }))
    expect(all.map((x) => x.body)).toEqual(['Yes, twice.', 'old style, edited'])
    expect(all[1]!.issue_url).toBe(`${s.url}/alice/toolbox/issues/2`) // Gitea sends the HTML URL here
    await empty(asAlice.repos.issueDeleteCommentDeprecated(o, r, 2, c.id!))
    expect((await ok(asBob.repos.issueGetRepoComments(o, r))).map((x) => x.body)).toEqual(['Yes, twice.'])
    expect((await ok(asAlice.repos.userTrackedTimes(o, r, 'bob'))).map((t) => t.time)).toEqual([3600])
  })
})
