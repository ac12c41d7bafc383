import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, unitTeam, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'

/**
 * An organisation's own units, by its teams' units_map as Gitea 1.23 reads them
 * (Organization.UnitPermission): its projects are changed by members whose team writes the
 * projects (an admin team, or one whose projects unit writes), not by a write team that gives the
 * projects nothing; its packages are published by write teams and by a read team whose packages
 * unit writes. A pull request is still found by its branches when the base's name is a number that
 * is also a plain issue's.
 */

let s: TestServer
let owner: TestUser
/** A write team that gives the projects and packages nothing. */
let writer: TestUser
/** A read team whose projects and packages units write. */
let unitWriter: TestUser
const { submit } = webVisitors(() => s.url, async () => '')
const as = (u: TestUser) => ({ token: u.token })

beforeAll(async () => {
  s = await startTestServer()
  owner = await s.user('uoowner')
  writer = await s.user('uowriter')
  unitWriter = await s.user('uounitwriter')
  expect((await s.post('/orgs', { username: 'uoorg' }, as(owner))).status).toBe(201)
  await unitTeam(s, owner, 'uoorg', 'writers', { 'repo.code': 'write', 'repo.issues': 'write', 'repo.pulls': 'write', 'repo.projects': 'none', 'repo.packages': 'none' }, [writer], 'write')
  await unitTeam(s, owner, 'uoorg', 'unitwriters', { 'repo.code': 'read', 'repo.issues': 'read', 'repo.pulls': 'read', 'repo.projects': 'write', 'repo.packages': 'write' }, [unitWriter])
})
afterAll(() => s.stop())

describe("an organisation's units, by its teams' units", () => {
  test('its projects: made by the owner and by a team writing the projects; not by a write team giving them nothing', async () => {
    expect((await submit(owner, '/uoorg/-/projects/new', { title: 'By the owner', template_type: '0' })).status).toBe(303)
    expect((await submit(unitWriter, '/uoorg/-/projects/new', { title: 'By a projects writer', template_type: '0' })).status).toBe(303)
    const refused = await submit(writer, '/uoorg/-/projects/new', { title: 'By a code writer', template_type: '0' })
    expect(refused.status).toBe(403)
  })

  test('its packages: published by a write team and by a read team whose packages unit writes', async () => {
    const put = (who: TestUser, version: string) =>
      fetch(`${s.url}/api/packages/uoorg/generic/tool/${version}/tool.bin`, { method: 'PUT', headers: { authorization: `token ${who.token}` }, body: `bytes ${version}` })
    expect((await put(writer, '1.0.0')).status).toBe(201)
    expect((await put(unitWriter, '1.0.1')).status).toBe(201)
    const outsider = await s.user('uooutsider')
    expect((await put(outsider, '1.0.2')).status).toBe(403)
  })
})

describe('a pull request by its branches', () => {
  test("a base branch named with digits that are also a plain issue's number is a branch, for a reader of the pull requests only", async () => {
    const reader = await s.user('uopullreader')
    await unitTeam(s, owner, 'uoorg', 'pullreaders', { 'repo.code': 'read', 'repo.issues': 'none', 'repo.pulls': 'read' }, [reader])
    expect((await s.post('/orgs/uoorg/repos', { name: 'numbers', private: true, auto_init: true }, as(owner))).status).toBe(201)
    expect((await s.post('/repos/uoorg/numbers/issues', { title: 'Plain issue' }, as(owner))).status).toBe(201)
    expect((await s.post('/repos/uoorg/numbers/branches', { new_branch_name: '1', old_branch_name: 'main' }, as(owner))).status).toBe(201)
    const file = { content: Buffer.from('x\n').toString('base64'), message: 'X', branch: '1', new_branch: 'feature' }
    expect((await s.post('/repos/uoorg/numbers/contents/x.txt', file, as(owner))).status).toBe(201)
    const pull = await s.post('/repos/uoorg/numbers/pulls', { head: 'feature', base: '1', title: 'Onto one' }, as(owner))
    expect(pull.status).toBe(201)
    const found = await s.get('/repos/uoorg/numbers/pulls/1/feature', as(reader))
    expect([found.status, found.body.number]).toEqual([200, pull.body.number])
  })
})
