/**
 * A private person's content (their profile README, packages and projects) follows the repository
 * half of the visibility rule, as in Gitea 1.23: personal ties (someone the person follows, someone
 * sharing an organisation with them) show the person's profile, not their content, which stays
 * theirs and the site administrators' (services/context/package.go determineAccessMode,
 * individualPermsChecker, FindUserProfileReadme's permission on `.profile`); 404 to the others, as
 * for an unknown owner. A private organisation's members keep its packages and projects.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'

let s: TestServer
let root: TestUser, pat: TestUser, vic: TestUser, wes: TestUser, mia: TestUser
let projectId = 0
const { page, signIn, submit } = webVisitors(
  () => s.url,
  async () => '',
)
const README_TEXT = 'Private corner of Pat'

/** A request to the generic registry. */
const registry = (method: string, path: string, who: TestUser | null, body?: BodyInit) =>
  fetch(`${s.url}/api/packages/${path}`, { method, headers: who ? { authorization: `token ${who.token}` } : {}, body })

beforeAll(async () => {
  s = await startTestServer()
  root = await s.user('root', { admin: true })
  pat = await s.user('pat')
  vic = await s.user('vic')
  wes = await s.user('wes')
  mia = await s.user('mia')
  const as = (u: TestUser) => ({ token: u.token })
  // Pat's public `.profile` with a README, a generic package and a project.
  expect((await s.post('/user/repos', { name: '.profile' }, as(pat))).status).toBe(201)
  expect((await s.post('/repos/pat/.profile/contents/README.md', { content: Buffer.from(`# ${README_TEXT}`).toString('base64') }, as(pat))).status).toBe(201)
  expect((await registry('PUT', 'pat/generic/tool/1/f', pat, 'tool bytes')).status).toBe(201)
  const made = await submit(pat, '/pat/-/projects/new', { title: 'Pat plans', template_type: '0' })
  expect(made.status).toBe(303)
  projectId = Number(/\/projects\/(\d+)$/.exec(made.location ?? '')?.[1])
  expect(projectId).toBeGreaterThan(0)
  // Pat follows vic; wes shares a (public) organisation with pat.
  expect((await s.put('/user/following/vic', undefined, as(pat))).status).toBe(204)
  expect((await s.post('/orgs', { username: 'club' }, as(wes))).status).toBe(201)
  const team = (await s.get('/orgs/club/teams', as(wes))).body.find((t: { name: string }) => t.name === 'Owners').id
  expect((await s.put(`/teams/${team}/members/pat`, undefined, as(wes))).status).toBe(204)
  // Pat goes private.
  expect((await s.patch('/admin/users/pat', { login_name: 'pat', source_id: 0, visibility: 'private' }, as(root))).status).toBe(200)
  // A private organisation with its own package and project, mia a member through a read team.
  expect((await s.post('/orgs', { username: 'hush', visibility: 'private' }, as(root))).status).toBe(201)
  const readers = (await s.post('/orgs/hush/teams', { name: 'readers', permission: 'read', includes_all_repositories: true }, as(root))).body.id
  expect((await s.put(`/teams/${readers}/members/mia`, undefined, as(root))).status).toBe(204)
  expect((await registry('PUT', 'hush/generic/kit/1/f', root, 'kit bytes')).status).toBe(201)
  expect((await submit(root, '/hush/-/projects/new', { title: 'Hush plans', template_type: '0' })).status).toBe(303)
  for (const u of [root, pat, vic, wes, mia]) await signIn(u)
})
afterAll(async () => {
  await s.stop()
})

describe("a private person's content is not shown through personal ties", () => {
  test('those with ties see the profile but not the profile README, nor links to the projects and packages', async () => {
    for (const viewer of [vic, wes]) {
      const profile = await page('/pat', await signIn(viewer))
      expect(profile.status).toBe(200)
      const text = await profile.text()
      expect(text).not.toContain(README_TEXT)
      expect(text).not.toContain('aria-label="Profile README"')
      expect(text).not.toContain('href="/pat/-/projects"')
      expect(text).not.toContain('href="/pat/-/packages"')
      // As the repository itself.
      expect((await page('/pat/.profile', await signIn(viewer))).status).toBe(404)
      expect((await s.get('/repos/pat/.profile', { token: viewer.token })).status).toBe(404)
    }
    for (const viewer of [pat, root]) {
      const text = await (await page('/pat', await signIn(viewer))).text()
      expect(text).toContain('href="/pat/-/projects"')
      expect(text).toContain('href="/pat/-/packages"')
      expect(text).toContain('aria-label="Profile README"')
      expect(text).toContain(README_TEXT)
    }
  })

  test('those with ties get 404 for the packages; the person and site admins read them', async () => {
    for (const viewer of [vic, wes]) {
      expect((await s.get('/packages/pat', { token: viewer.token })).status).toBe(404)
      expect((await s.get('/packages/pat/generic/tool/1', { token: viewer.token })).status).toBe(404)
      expect((await registry('GET', 'pat/generic/tool/1/f', viewer)).status).toBe(404)
      expect((await page('/pat/-/packages', await signIn(viewer))).status).toBe(404)
      // Still no write either: the same 404.
      expect((await registry('PUT', 'pat/generic/tool/2/f', viewer, 'x')).status).toBe(404)
    }
    expect((await s.get('/packages/pat')).status).toBe(404)
    expect((await registry('GET', 'pat/generic/tool/1/f', null)).status).toBe(404)
    for (const viewer of [pat, root]) {
      const listed = await s.get('/packages/pat', { token: viewer.token })
      expect(listed.status).toBe(200)
      expect(listed.body.map((p: { name: string }) => p.name)).toEqual(['tool'])
      const got = await registry('GET', 'pat/generic/tool/1/f', viewer)
      expect(got.status).toBe(200)
      expect(await got.text()).toBe('tool bytes')
      const web = await page('/pat/-/packages', await signIn(viewer))
      expect(web.status).toBe(200)
      expect(await web.text()).toContain('tool')
    }
  })

  test('those with ties get 404 for the projects; the person and site admins see them', async () => {
    for (const viewer of [vic, wes]) {
      expect((await page('/pat/-/projects', await signIn(viewer))).status).toBe(404)
      expect((await page(`/pat/-/projects/${projectId}`, await signIn(viewer))).status).toBe(404)
    }
    expect((await page('/pat/-/projects')).status).toBe(404)
    for (const viewer of [pat, root]) {
      const list = await page('/pat/-/projects', await signIn(viewer))
      expect(list.status).toBe(200)
      expect(await list.text()).toContain('Pat plans')
      expect((await page(`/pat/-/projects/${projectId}`, await signIn(viewer))).status).toBe(200)
    }
  })

  test("a private organisation's members keep its packages and projects; others get 404", async () => {
    expect((await s.get('/packages/hush', { token: mia.token })).status).toBe(200)
    expect(await (await registry('GET', 'hush/generic/kit/1/f', mia)).text()).toBe('kit bytes')
    expect((await page('/hush/-/packages', await signIn(mia))).status).toBe(200)
    const projects = await page('/hush/-/projects', await signIn(mia))
    expect(projects.status).toBe(200)
    expect(await projects.text()).toContain('Hush plans')
    expect((await s.get('/packages/hush', { token: vic.token })).status).toBe(404)
    expect((await registry('GET', 'hush/generic/kit/1/f', vic)).status).toBe(404)
    expect((await page('/hush/-/projects', await signIn(vic))).status).toBe(404)
  })
})
