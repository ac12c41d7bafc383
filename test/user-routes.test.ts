/**
 * Gitea 1.23's user, organisation and team routes that gitea-js calls: the user's own settings,
 * through the client as it is.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { empty, fails, ok } from './gitea-calls'
import { createAccessToken } from '../src/modules/users/service'

type Client = Api<unknown>

let s: TestServer
let alice: TestUser
let bob: TestUser
let carol: TestUser
let asAlice: Client
let asBob: Client
let asCarol: Client
let anon: Client

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  asCarol = giteaApi(s.url, { token: carol.token })
  anon = giteaApi(s.url, {})
})
afterAll(() => s.stop())

describe('/user/settings', () => {
  test('GET shows the defaults; PATCH changes what it is given and keeps the rest', async () => {
    expect((await ok(asAlice.user.getUserSettings())) as Record<string, unknown>).toEqual({
      full_name: '',
      website: '',
      description: '',
      location: '',
      language: '',
      theme: '',
      diff_view_style: '',
      hide_email: false,
      hide_activity: false,
      // Warren's addition: Gitea's account page setting of which notifications are mailed.
      email_notifications_preference: 'enabled',
    })
    const wanted = {
      full_name: 'Alice Liddell',
      website: 'https://alice.example.com',
      description: 'down the hole',
      location: 'Oxford',
      language: 'en-GB',
      theme: 'gitea-dark',
      diff_view_style: 'split',
      hide_email: true,
      hide_activity: true,
      email_notifications_preference: 'onmention',
    }
    const changed = await ok(asAlice.user.updateUserSettings(wanted))
    expect(changed).toEqual(wanted)
    const partly = await ok(asAlice.user.updateUserSettings({ location: 'Wonderland', hide_activity: false }))
    expect(partly).toEqual({ ...changed, location: 'Wonderland', hide_activity: false })
    expect(await ok(asAlice.user.getUserSettings())).toEqual(partly)

    // The profile fields are the User record's: others see them, and the hidden address is hidden.
    const seen = await ok(asBob.users.userGet('alice'))
    expect(seen.full_name).toBe('Alice Liddell')
    expect(seen.location).toBe('Wonderland')
    expect(seen.email).not.toBe('alice@example.com')
    // Bob's settings are his own.
    expect((await ok(asBob.user.getUserSettings())).full_name).toBe('')
  })

  test('signed in only; bad values are 422 in the API error shape', async () => {
    await fails(anon.user.getUserSettings(), 401)
    await fails(anon.user.updateUserSettings({ full_name: 'x' }), 401)
    for (const body of [
      { website: 'javascript:alert(1)' },
      { location: 'x'.repeat(51) },
      { full_name: 'x'.repeat(101) },
      { description: 'x'.repeat(256) },
      { language: 'english-please' },
      { theme: 't'.repeat(31) },
      { diff_view_style: 'sideways' },
      { hide_email: 'yes' },
    ]) {
      const r = await s.patch('/user/settings', body, { token: bob.token })
      expect(r.status).toBe(422)
      expect(r.body).toMatchObject({ message: expect.any(String), url: expect.any(String) })
    }
    // Nothing of the refused changes was written.
    expect((await ok(asBob.user.getUserSettings())).diff_view_style).toBe('')
  })
})

describe('organisations and teams', () => {
  test('GET /orgs: the organisations the caller may see, paged, with X-Total-Count', async () => {
    await ok(asAlice.orgs.orgCreate({ username: 'open-org' }), 201)
    await ok(asAlice.orgs.orgCreate({ username: 'limited-org', visibility: 'limited' }), 201)
    await ok(asAlice.orgs.orgCreate({ username: 'secret-org', visibility: 'private' }), 201)
    const names = async (c: Client) => (await ok(c.orgs.orgGetAll())).map((o) => o.username)
    expect(await names(anon)).toEqual(['open-org'])
    expect(await names(asBob)).toEqual(['limited-org', 'open-org'])
    expect(await names(asAlice)).toEqual(['limited-org', 'open-org', 'secret-org'])
    const paged = await asAlice.orgs.orgGetAll({ page: 2, limit: 2 })
    expect(paged.data.map((o) => o.username)).toEqual(['secret-org'])
    expect(paged.headers.get('x-total-count')).toBe('3')
    expect((await s.get('/orgs?limit=abc')).status).toBe(422)
  })

  test('GET /orgs/{org}/teams/search: by name, and description unless include_desc=false; members only', async () => {
    await ok(asAlice.orgs.orgCreate({ username: 'search-org' }), 201)
    await ok(asAlice.orgs.orgCreateTeam('search-org', { name: 'backend', description: 'servers and databases', permission: 'write' }), 201)
    await ok(asAlice.orgs.orgCreateTeam('search-org', { name: 'frontend', description: 'pages', permission: 'read' }), 201)
    const search = async (q: string, include_desc?: boolean) => {
      const r = await ok(asAlice.orgs.teamSearch('search-org', { q, include_desc }))
      expect(r.ok).toBe(true)
      return r.data!.map((t) => t.name)
    }
    expect(await search('END')).toEqual(['backend', 'frontend'])
    expect(await search('database')).toEqual(['backend'])
    expect(await search('database', false)).toEqual([])
    expect(await search('')).toEqual(['backend', 'frontend', 'Owners'])
    const paged = await asAlice.orgs.teamSearch('search-org', { q: 'end', limit: 1, page: 2 })
    expect(paged.data.data!.map((t) => t.name)).toEqual(['frontend'])
    expect(paged.headers.get('x-total-count')).toBe('2')
    expect(paged.data.data![0]!.organization?.username).toBe('search-org')
    await fails(asBob.orgs.teamSearch('search-org', { q: 'end' }), 403)
    await fails(anon.orgs.teamSearch('search-org'), 401)
    expect((await s.get('/orgs/search-org/teams/search?include_desc=perhaps', { token: alice.token })).status).toBe(422)
  })

  test('/repos/{o}/{r}/teams: list, check, add and remove; repository admins of the organisation only', async () => {
    await ok(asAlice.orgs.orgCreate({ username: 'team-org' }), 201)
    const repo = await ok(asAlice.orgs.createOrgRepo('team-org', { name: 'app', private: true }), 201)
    const devs = await ok(asAlice.orgs.orgCreateTeam('team-org', { name: 'devs', permission: 'write', includes_all_repositories: false }), 201)
    await ok(asAlice.orgs.orgCreateTeam('team-org', { name: 'everyone', permission: 'read', includes_all_repositories: true }), 201)
    const admins = await ok(asAlice.orgs.orgCreateTeam('team-org', { name: 'admins', permission: 'admin', includes_all_repositories: true }), 201)
    await empty(asAlice.teams.orgAddTeamMember(devs.id!, 'bob'))
    await empty(asAlice.teams.orgAddTeamMember(admins.id!, 'carol'))
    const names = async (c: Client) => (await ok(c.repos.repoListTeams('team-org', repo.name!))).map((t) => t.name)

    expect(await names(asAlice)).toEqual(['admins', 'everyone', 'Owners'])
    await fails(asAlice.repos.repoCheckTeam('team-org', 'app', 'devs'), 404)
    await fails(asAlice.repos.repoCheckTeam('team-org', 'app', 'nobody'), 404)
    // Bob reads the private repository only once his team has it.
    await fails(asBob.repos.repoListTeams('team-org', 'app'), 404)
    await empty(asAlice.repos.repoAddTeam('team-org', 'app', 'devs'))
    expect(await names(asBob)).toEqual(['admins', 'devs', 'everyone', 'Owners'])
    const checked = await ok(asBob.repos.repoCheckTeam('team-org', 'app', 'DEVS'))
    expect(checked.name).toBe('devs')
    expect(checked.permission).toBe('write')
    expect(checked.organization?.username).toBe('team-org')
    // Nothing to change: 422; a team covering every repository cannot lose it here.
    await fails(asAlice.repos.repoAddTeam('team-org', 'app', 'devs'), 422)
    await fails(asAlice.repos.repoDeleteTeam('team-org', 'app', 'everyone'), 422)
    await fails(asAlice.repos.repoAddTeam('team-org', 'app', 'nobody'), 404)
    // A writer may not change teams; a repository admin who is no owner only when the
    // organisation lets repository admins change team access.
    await fails(asBob.repos.repoDeleteTeam('team-org', 'app', 'devs'), 403)
    await fails(asCarol.repos.repoDeleteTeam('team-org', 'app', 'devs'), 403)
    await ok(asAlice.orgs.orgEdit('team-org', { repo_admin_change_team_access: true }))
    await empty(asCarol.repos.repoDeleteTeam('team-org', 'app', 'devs'))
    await fails(asCarol.repos.repoDeleteTeam('team-org', 'app', 'devs'), 422)
    await fails(asBob.repos.repoListTeams('team-org', 'app'), 404)
    expect(await names(asCarol)).toEqual(['admins', 'everyone', 'Owners'])
    // The team's own list agrees.
    expect((await ok(asAlice.teams.orgListTeamRepos(devs.id!))).length).toBe(0)

    // A user's repository has no teams: 405, as Gitea.
    await ok(asAlice.user.createCurrentUserRepo({ name: 'mine' }), 201)
    await fails(asAlice.repos.repoListTeams('alice', 'mine'), 405)
    await fails(asAlice.repos.repoAddTeam('alice', 'mine', 'devs'), 405)
    // Anonymous callers: the private repository is hidden (404), a public one needs a token (401).
    await fails(anon.repos.repoListTeams('team-org', 'app'), 404)
    await ok(asAlice.orgs.createOrgRepo('team-org', { name: 'site' }), 201)
    await fails(anon.repos.repoListTeams('team-org', 'site'), 401)
  })
})

describe('GET /users/{username}/heatmap', () => {
  test('contributions in 15-minute buckets, only in repositories the caller may read; none when hidden', async () => {
    const dave = await s.user('dave')
    const admin = await s.user('root', { admin: true })
    const asDave = giteaApi(s.url, { token: dave.token })
    const asAdmin = giteaApi(s.url, { token: admin.token })
    await ok(asDave.user.createCurrentUserRepo({ name: 'open' }), 201)
    await ok(asDave.user.createCurrentUserRepo({ name: 'closed', private: true }), 201)
    for (const title of ['one', 'two']) await ok(asDave.repos.issueCreateIssue('dave', 'open', { title }), 201)
    await ok(asDave.repos.issueCreateIssue('dave', 'closed', { title: 'hidden' }), 201)
    // An edit is no contribution.
    await ok(asDave.repos.issueEditIssue('dave', 'open', 1, { title: 'one, edited' }), 201)

    const total = async (c: Client) => {
      // gitea-js types the answer as one record; Gitea (and Warren) answer a list of them.
      const buckets = (await ok(c.users.userGetHeatmapData('dave'))) as unknown as { timestamp: number; contributions: number }[]
      for (const b of buckets) {
        expect(b.timestamp % 900).toBe(0)
        expect(b.timestamp * 1000).toBeLessThanOrEqual(Date.now())
      }
      return buckets.reduce((n, b) => n + b.contributions, 0)
    }
    // Two repositories made and three issues opened; others see the public repository's three.
    expect(await total(asDave)).toBe(5)
    expect(await total(asAdmin)).toBe(5)
    expect(await total(asBob)).toBe(3)
    expect(await total(anon)).toBe(3)

    await ok(asDave.user.updateUserSettings({ hide_activity: true }))
    expect(await total(asBob)).toBe(0)
    expect(await total(anon)).toBe(0)
    expect(await total(asDave)).toBe(5)
    expect(await total(asAdmin)).toBe(5)
    // A site administrator's public-only token is no administrator's here, as in the feeds.
    const publicOnly = (await createAccessToken(s.deps, admin.user.id, 'po-heatmap', ['public-only', 'read:user'])).secret
    expect(await total(giteaApi(s.url, { token: publicOnly }))).toBe(0)
    await fails(anon.users.userGetHeatmapData('nobody-here'), 404)
  })
})

describe('POST /admin/users/{username}/rename', () => {
  test('site admins rename a user; their repositories follow, clones included; bad names are 422', async () => {
    const erin = await s.user('erin')
    const admin = await s.user('root2', { admin: true })
    const asErin = giteaApi(s.url, { token: erin.token })
    const asAdmin = giteaApi(s.url, { token: admin.token })
    await ok(asErin.user.createCurrentUserRepo({ name: 'notes', auto_init: true }), 201)

    await fails(asBob.admin.adminRenameUser('erin', { new_username: 'erin2' }), 403)
    await fails(anon.admin.adminRenameUser('erin', { new_username: 'erin2' }), 401)
    for (const bad of ['', 'a b', '-dash', 'bob', 'BOB', 'x'.repeat(41)])
      await fails(asAdmin.admin.adminRenameUser('erin', { new_username: bad }), 422)
    await fails(asAdmin.admin.adminRenameUser('nobody-here', { new_username: 'fresh' }), 404)

    await empty(asAdmin.admin.adminRenameUser('erin', { new_username: 'Erin.Renamed' }))
    expect((await ok(asErin.user.userGetCurrent())).login).toBe('Erin.Renamed')
    await fails(anon.users.userGet('erin'), 404)
    const repo = await ok(asErin.repos.repoGet('erin.renamed', 'notes'))
    expect(repo.full_name).toBe('Erin.Renamed/notes')
    expect(repo.owner?.login).toBe('Erin.Renamed')
    // The git folder moved with the name: the contents and a clone still read it.
    const readme = await ok(asErin.repos.repoGetContents('Erin.Renamed', 'notes', 'README.md'))
    expect(readme.type).toBe('file')
    const lsRemote = Bun.spawn(['git', 'ls-remote', `${s.url}/Erin.Renamed/notes.git`], { stdout: 'pipe', stderr: 'pipe' })
    const listed = await new Response(lsRemote.stdout).text()
    expect(await lsRemote.exited).toBe(0)
    expect(listed).toContain('refs/heads/')
    // A change of letter case only; the old name is free again.
    await empty(asAdmin.admin.adminRenameUser('erin.renamed', { new_username: 'erin.renamed' }))
    expect((await ok(asErin.user.userGetCurrent())).login).toBe('erin.renamed')
    expect((await ok(asErin.repos.repoGet('erin.renamed', 'notes'))).full_name).toBe('erin.renamed/notes')
    await ok(asAdmin.admin.adminCreateUser({ username: 'erin', email: 'new-erin@example.com', password: 'pw-new-erin' }), 201)
  })
})
