import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'
import { contentMark } from './db-snapshot'

/**
 * Per-unit team permissions (Gitea 1.23's units_map): what a member of a team may do in each unit
 * of the team's repositories is the team's mode for that unit (the best over their teams), on the
 * API, the pages, git over HTTP and the issue search across repositories alike; an admin team and
 * a team without per-unit settings are unaffected.
 */

let s: TestServer
let olga: TestUser // owner of "acme"
let tia: TestUser // triage: code read, issues write, pull requests write, wiki and releases none
let cody: TestUser // coders: code write, pull requests write, issues none
let adam: TestUser // admins: admin (its units_map does not restrict it)
let pat: TestUser // plain: write on every unit, no per-unit settings
let mark: () => Promise<string>
const { page, signIn } = webVisitors(() => s.url, () => mark())
const b64 = (text: string) => Buffer.from(text).toString('base64')
const asOlga = () => ({ token: olga.token })

async function team(name: string, body: Record<string, unknown>, member: TestUser): Promise<number> {
  const r = await s.post('/orgs/acme/teams', { name, includes_all_repositories: true, ...body }, asOlga())
  expect(r.status).toBe(201)
  expect((await s.put(`/teams/${r.body.id}/members/${member.name}`, undefined, asOlga())).status).toBe(204)
  return r.body.id
}

/** The answer of git's push (receive-pack) or fetch (upload-pack) advertisement for `who` over HTTP. */
const gitService = async (who: TestUser, service: 'git-receive-pack' | 'git-upload-pack', repo = 'app') =>
  (await fetch(`${s.url}/acme/${repo}.git/info/refs?service=${service}`, { headers: { authorization: who.basic } })).status

let triageId: number

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  olga = await s.user('olga')
  tia = await s.user('tia')
  cody = await s.user('cody')
  adam = await s.user('adam')
  pat = await s.user('pat')
  expect((await s.post('/orgs', { username: 'acme' }, asOlga())).status).toBe(201)
  expect((await s.post('/orgs/acme/repos', { name: 'app', private: true, auto_init: true }, asOlga())).status).toBe(201)
  expect((await s.post('/repos/acme/app/issues', { title: 'the bug' }, asOlga())).status).toBe(201)
  expect((await s.post('/repos/acme/app/branches', { new_branch_name: 'feature' }, asOlga())).status).toBe(201)
  expect((await s.post('/repos/acme/app/contents/f.txt', { content: b64('f\n'), branch: 'feature' }, asOlga())).status).toBe(201)
  expect((await s.post('/repos/acme/app/pulls', { head: 'feature', base: 'main', title: 'the feature' }, asOlga())).status).toBe(201)
  expect((await s.post('/repos/acme/app/wiki/new', { title: 'Home', content_base64: b64('# Home\n') }, asOlga())).status).toBe(201)
  expect((await s.post('/repos/acme/app/releases', { tag_name: 'v1', name: 'one' }, asOlga())).status).toBe(201)
  triageId = await team(
    'triage',
    { permission: 'write', units_map: { 'repo.code': 'read', 'repo.issues': 'write', 'repo.pulls': 'write', 'repo.wiki': 'none', 'repo.releases': 'none' } },
    tia,
  )
  await team('coders', { permission: 'write', units_map: { 'repo.code': 'write', 'repo.pulls': 'write', 'repo.issues': 'none', 'repo.wiki': 'write', 'repo.releases': 'write' } }, cody)
  await team('admins', { permission: 'admin', units_map: { 'repo.code': 'none', 'repo.issues': 'none' } }, adam)
  await team('plain', { permission: 'write' }, pat)
})
afterAll(() => s.stop())

describe('a team with code read and issues write', () => {
  test('its member opens and edits issues, the owner’s too, and labels them', async () => {
    const mine = await s.post('/repos/acme/app/issues', { title: 'from triage' }, { token: tia.token })
    expect(mine.status).toBe(201)
    const edited = await s.patch('/repos/acme/app/issues/1', { title: 'the bug, triaged' }, { token: tia.token })
    expect(edited.status).toBe(201)
    expect(edited.body.title).toBe('the bug, triaged')
    // Closing another's issue is a writer's act (Gitea's CanWriteIssuesOrPulls).
    expect((await s.patch('/repos/acme/app/issues/1', { state: 'closed' }, { token: tia.token })).body.state).toBe('closed')
    expect((await s.patch('/repos/acme/app/issues/1', { state: 'open' }, { token: tia.token })).status).toBe(201)
  })

  test('but may not push over HTTP (clone yes) nor merge, nor change the code through the API', async () => {
    expect(await gitService(tia, 'git-upload-pack')).toBe(200)
    expect(await gitService(tia, 'git-receive-pack')).toBe(403)
    const before = await mark()
    const merge = await s.post('/repos/acme/app/pulls/2/merge', { Do: 'merge' }, { token: tia.token })
    expect(merge.status).toBe(405)
    expect(merge.body.message).toBe('User not allowed to merge PR')
    expect((await s.post('/repos/acme/app/contents/g.txt', { content: b64('g\n') }, { token: tia.token })).status).toBe(403)
    expect((await s.post('/repos/acme/app/branches', { new_branch_name: 'mine' }, { token: tia.token })).status).toBe(403)
    expect(await mark()).toBe(before)
    // The Repository record's permissions are the code's (Gitea's AccessLevel).
    expect((await s.get('/repos/acme/app', { token: tia.token })).body.permissions).toEqual({ admin: false, push: false, pull: true })
  })

  test('wiki, releases, projects and packages at none answer 404 (API and pages), as for a repository it does not reach', async () => {
    const who = { token: tia.token }
    expect((await s.get('/repos/acme/app/wiki/pages', who)).status).toBe(404)
    expect((await s.get('/repos/acme/app/wiki/page/Home', who)).status).toBe(404)
    expect((await s.get('/repos/acme/app/releases', who)).status).toBe(404)
    expect((await s.get('/repos/acme/app/releases/tags/v1', who)).status).toBe(404)
    expect(await gitService(tia, 'git-upload-pack', 'app.wiki')).toBe(404)
    const cookie = await signIn(tia)
    expect((await page('/acme/app/wiki', cookie)).status).toBe(404)
    expect((await page('/acme/app/releases', cookie)).status).toBe(404)
    // The projects and packages units, not in its units_map: none.
    expect((await page('/acme/app/projects', cookie)).status).toBe(404)
    expect((await page('/acme/app/packages', cookie)).status).toBe(404)
    expect((await page('/acme/app/projects', await signIn(adam))).status).toBe(200)
    expect((await page('/acme/app/issues', cookie)).status).toBe(200)
    // No tab of the repository's pages leads to those 404s; an admin team's member sees them all.
    const home = await (await page('/acme/app', cookie)).text()
    for (const unit of ['wiki', 'releases', 'projects', 'packages']) expect(home).not.toContain(`href="/acme/app/${unit}"`)
    expect(home).toContain('href="/acme/app/activity"')
    const admins = await (await page('/acme/app', await signIn(adam))).text()
    for (const unit of ['releases', 'projects', 'packages']) expect(admins).toContain(`href="/acme/app/${unit}"`)
    expect((await page('/acme/app', cookie)).status).toBe(200)
  })
})

describe('a team with issues none', () => {
  test('hides the repository’s issues from its members: API and pages 404', async () => {
    const who = { token: cody.token }
    for (const path of ['/repos/acme/app/issues', '/repos/acme/app/issues/1', '/repos/acme/app/issues/1/comments', '/repos/acme/app/issues/comments'])
      expect((await s.get(path, who)).status).toBe(404)
    expect((await s.post('/repos/acme/app/issues', { title: 'no' }, who)).status).toBe(404)
    const cookie = await signIn(cody)
    expect((await page('/acme/app/issues', cookie)).status).toBe(404)
    expect((await page('/acme/app/issues/1', cookie)).status).toBe(404)
    // Its pull requests, wiki and releases it reaches.
    expect((await s.get('/repos/acme/app/pulls/2', who)).status).toBe(200)
    expect((await page('/acme/app/pulls/2', cookie)).status).toBe(200)
    expect((await s.get('/repos/acme/app/wiki/pages', who)).status).toBe(200)
    expect((await s.get('/repos/acme/app/releases', who)).status).toBe(200)
  })

  test('and from the issue search across repositories, its pull requests still found', async () => {
    const found = async (who: TestUser, type: string) =>
      ((await s.get(`/repos/issues/search?type=${type}&state=all`, { token: who.token })).body as { title: string }[]).map((i) => i.title).sort()
    expect(await found(cody, 'issues')).toEqual([])
    expect(await found(cody, 'pulls')).toEqual(['the feature'])
    expect(await found(tia, 'issues')).toEqual(['from triage', 'the bug, triaged'])
    expect(await found(olga, 'issues')).toEqual(['from triage', 'the bug, triaged'])
  })

  test('its member pushes over HTTP and merges (code write)', async () => {
    expect(await gitService(cody, 'git-receive-pack')).toBe(200)
    expect(await gitService(cody, 'git-receive-pack', 'app.wiki')).toBe(200)
    const merged = await s.post('/repos/acme/app/pulls/2/merge', { Do: 'merge' }, { token: cody.token })
    expect(merged.status).toBe(200)
  })
})

describe('teams the units do not restrict', () => {
  test('an admin team reaches every unit whatever its units_map said', async () => {
    const who = { token: adam.token }
    for (const path of ['/repos/acme/app/issues/1', '/repos/acme/app/wiki/pages', '/repos/acme/app/releases', '/repos/acme/app/contents/README.md'])
      expect((await s.get(path, who)).status).toBe(200)
    expect(await gitService(adam, 'git-receive-pack')).toBe(200)
    expect((await s.get('/repos/acme/app', who)).body.permissions).toEqual({ admin: true, push: true, pull: true })
  })

  test('a team without per-unit settings keeps its one permission on every unit', async () => {
    const who = { token: pat.token }
    expect((await s.patch('/repos/acme/app/issues/1', { title: 'the bug' }, who)).status).toBe(201)
    expect((await s.get('/repos/acme/app/wiki/pages', who)).status).toBe(200)
    expect((await s.get('/repos/acme/app/releases', who)).status).toBe(200)
    expect(await gitService(pat, 'git-receive-pack')).toBe(200)
    expect((await s.get('/repos/acme/app', who)).body.permissions).toEqual({ admin: false, push: true, pull: true })
  })

  test('two teams: each unit takes the best of them', async () => {
    // tia also joins a team that reads the wiki: the wiki opens to her, the code stays read.
    await team('wiki-readers', { permission: 'read', units: ['repo.wiki'] }, tia)
    expect((await s.get('/repos/acme/app/wiki/pages', { token: tia.token })).status).toBe(200)
    expect((await s.get('/repos/acme/app/releases', { token: tia.token })).status).toBe(404)
    expect(await gitService(tia, 'git-receive-pack')).toBe(403)
    expect((await s.get(`/teams/${triageId}`, asOlga())).body.units_map).toMatchObject({ 'repo.code': 'read', 'repo.issues': 'write' })
  })
})
