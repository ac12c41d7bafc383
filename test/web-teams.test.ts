import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'
import { contentMark } from './db-snapshot'
import { eq } from 'drizzle-orm'
import { teams } from '../src/db/schema'

/**
 * An organisation's team settings over plain HTTP (`/org/{org}/teams/new`, a team's `/edit`,
 * `/delete`, `/repositories` and `/action/repo/{add|remove|addall|removeall}`): its owners' forms,
 * each change read back through the API, the service's refusals shown on the form with nothing
 * changed, the Owners team kept, a member who is not an owner refused (403) and a stranger kept
 * out of a private organisation (404).
 */

let s: TestServer
let olga: TestUser, mick: TestUser, sam: TestUser
let mark: () => Promise<string>
const { page, signIn, submit, expectCsrfRefused } = webVisitors(() => s.url, () => mark())
const asOlga = () => ({ token: olga.token })
const teamsOf = async (org: string) =>
  (await s.get(`/orgs/${org}/teams`, asOlga())).body as {
    id: number
    name: string
    description: string
    permission: string
    units: string[]
    units_map: Record<string, string>
    includes_all_repositories: boolean
    can_create_org_repo: boolean
  }[]
const teamNamed = async (org: string, name: string) => (await teamsOf(org)).find((t) => t.name === name)
const teamRepoNames = async (id: number) => ((await s.get(`/teams/${id}/repos`, asOlga())).body as { name: string }[]).map((r) => r.name).sort()
/** The team's count of the repositories given it, kept in step with them. */
const numRepos = async (id: number) => (await s.deps.db.select({ n: teams.numRepos }).from(teams).where(eq(teams.id, id)))[0]!.n
const newTeam = (fields: Record<string, string | string[]>) => ({ team_name: 'devs', description: 'Builders', repo_access: 'specific', permission: 'write', unit_1: '2', unit_2: '2', ...fields })

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  olga = await s.user('olga')
  mick = await s.user('mick')
  sam = await s.user('sam')
  expect((await s.post('/orgs', { username: 'crew' }, asOlga())).status).toBe(201)
  expect((await s.post('/orgs', { username: 'hidden', visibility: 'private' }, asOlga())).status).toBe(201)
  for (const name of ['alpha', 'beta']) expect((await s.post('/orgs/crew/repos', { name }, asOlga())).status).toBe(201)
  // mick is a member of crew (through a team), not an owner.
  const readers = await s.post('/orgs/crew/teams', { name: 'readers', permission: 'read' }, asOlga())
  expect(readers.status).toBe(201)
  expect((await s.put(`/teams/${readers.body.id}/members/mick`, undefined, asOlga())).status).toBe(204)
})
afterAll(() => s.stop())

describe('team settings', () => {
  test('the forms are for owners: sign-in asked, 403 to members and to strangers of a public organisation, 404 to strangers of a private one', async () => {
    const res = await page('/org/crew/teams/new')
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/user/login?redirect_to=%2Forg%2Fcrew%2Fteams%2Fnew')
    expect((await page('/org/crew/teams/new', await signIn(mick))).status).toBe(403)
    expect((await page('/org/crew/teams/readers/edit', await signIn(mick))).status).toBe(403)
    expect((await page('/org/crew/teams/new', await signIn(sam))).status).toBe(403)
    for (const path of ['/org/hidden/teams/new', '/org/hidden/teams/owners/edit', '/org/hidden/teams/owners/repositories'])
      expect((await page(path, await signIn(sam))).status).toBe(404)
    expect((await page('/org/crew/teams/nope/edit', await signIn(olga))).status).toBe(404)
    const form = await (await page('/org/crew/teams/new', await signIn(olga))).text()
    for (const field of ['name="team_name"', 'name="description"', 'name="repo_access"', 'name="can_create_org_repo"', 'name="permission"', 'name="unit_1"'])
      expect(form).toContain(field)
    // The owner's teams list and team page link the forms; a member's do not.
    expect(await (await page('/org/crew/teams', await signIn(olga))).text()).toContain('href="/org/crew/teams/new"')
    expect(await (await page('/org/crew/teams', await signIn(mick))).text()).not.toContain('/teams/new')
    const teamPage = await (await page('/org/crew/teams/readers', await signIn(olga))).text()
    expect(teamPage).toContain('href="/org/crew/teams/readers/edit"')
    expect(teamPage).toContain('href="/org/crew/teams/readers/repositories"')

    // Every form refused to the member, the stranger of the private organisation too, nothing changed.
    const readers = (await teamNamed('crew', 'readers'))!
    const before = await mark()
    for (const [path, fields] of [
      ['/org/crew/teams/new', newTeam({})],
      ['/org/crew/teams/readers/edit', newTeam({ team_name: 'readers' })],
      ['/org/crew/teams/readers/delete', {}],
      ['/org/crew/teams/readers/action/repo/add', { repo_name: 'alpha' }],
      ['/org/crew/teams/readers/action/repo/remove', { repoid: '1' }],
      ['/org/crew/teams/readers/action/repo/addall', {}],
      ['/org/crew/teams/readers/action/repo/removeall', {}],
    ] as const) {
      const refused = await submit(mick, path, fields, { from: '/org/crew/teams' })
      expect(refused.status).toBe(403)
      expect(refused.html).toContain('You must be an owner of this organization')
    }
    expect((await submit(sam, '/org/hidden/teams/new', newTeam({}), { from: '/' })).status).toBe(404)
    expect((await submit(sam, '/org/hidden/teams/owners/delete', {}, { from: '/' })).status).toBe(404)
    expect(await mark()).toBe(before)
    expect(await teamRepoNames(readers.id)).toEqual([])
  })

  test('a new team: refused without the CSRF token, for a bad or taken name, without units; made as asked', async () => {
    const from = '/org/crew/teams/new'
    await expectCsrfRefused(olga, from, newTeam({}))
    const before = await mark()
    for (const [fields, message] of [
      [{ team_name: 'bad name!' }, 'must be valid alpha or numeric or dash(-_) or dot characters'],
      [{ team_name: 'x'.repeat(31) }, 'must be less than 30 characters'],
      [{ team_name: '' }, 'Required'],
      [{ team_name: 'Readers' }, 'team already exists'],
      [{ team_name: 'owners' }, 'team already exists'],
      [{ unit_1: '0', unit_2: '0' }, 'Allow access to at least one repository section.'],
      [{ permission: 'owner' }, 'must be one of read, write, admin'],
    ] as const) {
      const refused = await submit(olga, from, newTeam(fields), { from })
      expect(refused.status).toBe(422)
      expect(refused.html).toContain('role="alert"')
      expect(refused.html).toContain(message)
      // The form comes back with what was typed.
      expect(refused.html).toContain('value="Builders"')
    }
    expect(await mark()).toBe(before)

    const made = await submit(olga, from, newTeam({ can_create_org_repo: 'on' }), { from })
    expect(made.status).toBe(303)
    expect(made.location).toBe('/org/crew/teams/devs?done=team-created')
    const devs = (await teamNamed('crew', 'devs'))!
    expect(devs).toMatchObject({ description: 'Builders', permission: 'write', includes_all_repositories: false, can_create_org_repo: true })
    // Gitea's form: each unit's mode (`unit_{type}`: 0 none, 1 read, 2 write), those not sent none.
    expect(devs.units_map).toEqual({
      'repo.code': 'write',
      'repo.issues': 'write',
      'repo.ext_issues': 'none',
      'repo.wiki': 'none',
      'repo.pulls': 'none',
      'repo.releases': 'none',
      'repo.ext_wiki': 'none',
      'repo.projects': 'none',
      'repo.packages': 'none',
    })
    const teamPage = await (await page(made.location!, await signIn(olga))).text()
    expect(teamPage).toContain('The team was created.')
    expect(teamPage).toMatch(/<th scope="row">Issues<\/th><td>write<\/td>/)
    expect(teamPage).toMatch(/<th scope="row">Wiki<\/th><td>none<\/td>/)
    // The edit form shows each unit's choice; a permission below admin is the least unit mode above none.
    const form = await (await page('/org/crew/teams/devs/edit', await signIn(olga))).text()
    expect(form).toMatch(/name="unit_2" value="2"[^>]*checked/)
    expect(form).toMatch(/name="unit_5" value="0"[^>]*checked/)
    expect(form).not.toContain('name="unit_7" value="2"')
    const mixed = await submit(olga, '/org/crew/teams/devs/edit', newTeam({ unit_1: '1', unit_2: '2', unit_5: '1', can_create_org_repo: 'on' }), { from: '/org/crew/teams/devs/edit' })
    expect(mixed.status).toBe(303)
    const edited = (await teamNamed('crew', 'devs'))!
    expect(edited.permission).toBe('read')
    expect(edited.units_map).toMatchObject({ 'repo.code': 'read', 'repo.issues': 'write', 'repo.wiki': 'read', 'repo.pulls': 'none' })
  })

  test('a team edited (renamed, made admin of every repository); the Owners team keeps its name and permission and cannot be deleted', async () => {
    const devs = (await teamNamed('crew', 'devs'))!
    const edit = '/org/crew/teams/devs/edit'
    const form = await (await page(edit, await signIn(olga))).text()
    expect(form).toContain('value="devs"')
    expect(form).toContain('action="/org/crew/teams/devs/delete"')
    await expectCsrfRefused(olga, edit, newTeam({ team_name: 'makers' }))
    const before = await mark()
    const taken = await submit(olga, edit, newTeam({ team_name: 'readers' }), { from: edit })
    expect(taken.status).toBe(422)
    expect(taken.html).toContain('team already exists')
    expect(await mark()).toBe(before)

    const saved = await submit(olga, edit, newTeam({ team_name: 'makers', description: 'They make', permission: 'admin', repo_access: 'all' }), { from: edit })
    expect(saved.status).toBe(303)
    expect(saved.location).toBe('/org/crew/teams/makers?done=team-saved')
    const makers = (await s.get(`/teams/${devs.id}`, asOlga())).body
    expect(makers).toMatchObject({ name: 'makers', description: 'They make', permission: 'admin', includes_all_repositories: true, can_create_org_repo: false })
    expect(makers.units.length).toBe(9)
    expect(await teamRepoNames(devs.id)).toEqual(['alpha', 'beta'])

    // The Owners team: its name shown but not editable, no permission nor deletion offered.
    const ownersEdit = '/org/crew/teams/owners/edit'
    const ownersForm = await (await page(ownersEdit, await signIn(olga))).text()
    expect(ownersForm).toContain('disabled')
    expect(ownersForm).not.toContain('name="permission"')
    expect(ownersForm).not.toContain('/teams/owners/delete')
    const owners = (await teamNamed('crew', 'Owners'))!
    const unchanged = await mark()
    const renamed = await submit(olga, ownersEdit, { team_name: 'Bosses', description: 'x' }, { from: ownersEdit })
    expect(renamed.status).toBe(403)
    expect(renamed.html).toContain('The Owners team cannot be renamed')
    const deleted = await submit(olga, '/org/crew/teams/owners/delete', {}, { from: ownersEdit })
    expect(deleted.status).toBe(403)
    expect(deleted.html).toContain('cannot be deleted')
    expect(await mark()).toBe(unchanged)
    const described = await submit(olga, ownersEdit, { team_name: 'Owners', description: 'The bosses', permission: 'read' }, { from: ownersEdit })
    expect(described.status).toBe(303)
    expect((await s.get(`/teams/${owners.id}`, asOlga())).body).toMatchObject({ name: 'Owners', description: 'The bosses', permission: 'owner' })
  })

  test("a team's repositories: added by name, removed by id, all added, all removed, as the API sees them", async () => {
    const readers = (await teamNamed('crew', 'readers'))!
    const base = '/org/crew/teams/readers'
    const reposPage = `${base}/repositories`
    const alpha = (await s.get('/repos/crew/alpha', asOlga())).body
    // A member sees the list, without the forms.
    const mickSees = await (await page(reposPage, await signIn(mick))).text()
    expect(mickSees).toContain('No repositories.')
    expect(mickSees).not.toContain('action/repo/add')
    expect(await (await page(reposPage, await signIn(olga))).text()).toContain(`action="${base}/action/repo/add"`)

    await expectCsrfRefused(olga, `${base}/action/repo/add`, { repo_name: 'alpha' })
    const before = await mark()
    const missing = await submit(olga, `${base}/action/repo/add`, { repo_name: 'nope' }, { from: reposPage })
    expect(missing.status).toBe(404)
    expect(missing.html).toContain('repository does not exist')
    expect((await submit(olga, `${base}/action/repo/remove`, { repoid: '999999' }, { from: reposPage })).status).toBe(404)
    const notNumber = await submit(olga, `${base}/action/repo/remove`, { repoid: 'x' }, { from: reposPage })
    expect(notNumber.status).toBe(422)
    expect(notNumber.html).toContain('Choose a repository of the team.')
    expect(await mark()).toBe(before)

    const added = await submit(olga, `${base}/action/repo/add`, { repo_name: 'crew/alpha' }, { from: reposPage })
    expect(added.status).toBe(303)
    expect(added.location).toBe(`${reposPage}?done=team-repo-added`)
    expect(await teamRepoNames(readers.id)).toEqual(['alpha'])
    const listed = await (await page(reposPage, await signIn(olga))).text()
    expect(listed).toContain('href="/crew/alpha"')
    expect(listed).toContain(`name="repoid" value="${alpha.id}"`)

    await expectCsrfRefused(olga, `${base}/action/repo/remove`, { repoid: String(alpha.id) })
    expect((await submit(olga, `${base}/action/repo/remove`, { repoid: String(alpha.id) }, { from: reposPage })).location).toBe(`${reposPage}?done=team-repo-removed`)
    expect(await teamRepoNames(readers.id)).toEqual([])

    await expectCsrfRefused(olga, `${base}/action/repo/addall`, {})
    expect((await submit(olga, `${base}/action/repo/addall`, {}, { from: reposPage })).location).toBe(`${reposPage}?done=team-repos-added`)
    expect(await teamRepoNames(readers.id)).toEqual(['alpha', 'beta'])
    expect(await numRepos(readers.id)).toBe(2)
    // Adding all again changes nothing; the API's own addition agrees.
    const full = await mark()
    expect((await submit(olga, `${base}/action/repo/addall`, {}, { from: reposPage })).status).toBe(303)
    expect(await mark()).toBe(full)

    await expectCsrfRefused(olga, `${base}/action/repo/removeall`, {})
    expect((await submit(olga, `${base}/action/repo/removeall`, {}, { from: reposPage })).location).toBe(`${reposPage}?done=team-repos-removed`)
    expect(await teamRepoNames(readers.id)).toEqual([])
    expect(await numRepos(readers.id)).toBe(0)
    expect((await s.get(`/teams/${readers.id}`, asOlga())).status).toBe(200)
  })

  test('a team deleted: refused without the CSRF token, then gone for the API; its members stay in the organisation', async () => {
    const makers = (await teamNamed('crew', 'makers'))!
    expect((await s.put(`/teams/${makers.id}/members/sam`, undefined, asOlga())).status).toBe(204)
    await expectCsrfRefused(olga, '/org/crew/teams/makers/delete', {})
    const gone = await submit(olga, '/org/crew/teams/makers/delete', {}, { from: '/org/crew/teams/makers/edit' })
    expect(gone.status).toBe(303)
    expect(gone.location).toBe('/org/crew/teams?done=team-deleted')
    expect((await s.get(`/teams/${makers.id}`, asOlga())).status).toBe(404)
    expect((await s.get('/orgs/crew/members/sam', asOlga())).status).toBe(204)
    expect(await (await page(gone.location!, await signIn(olga))).text()).toContain('The team was deleted.')
  })
})
