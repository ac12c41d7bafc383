import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/**
 * Review requests of an organisation's teams (modules/reviews/requests.ts): a team may be asked
 * when its members read the repository's pull requests through it (Gitea's IsValidTeamReviewRequest):
 * it covers the repository (given it, given every repository, or the Owners team) and gives the pull
 * requests' unit (an admin team every unit; another by its own mode for the unit, access-mode.ts
 * teamUnitMode). Otherwise 422 "Reviewing team … can't read repo", nothing asked.
 */

let s: TestServer
let owner: TestUser
const as = (u: TestUser) => ({ token: u.token })
const R = '/repos/acme/app'
const ask = (teams: string[]) => s.post(`${R}/pulls/1/requested_reviewers`, { team_reviewers: teams }, as(owner))
const askedTeams = async () => ((await s.get(`${R}/pulls/1`, as(owner))).body.requested_reviewers_teams as { name: string }[]).map((t) => t.name).sort()

async function team(name: string, body: Record<string, unknown>, repo = true) {
  const made = await s.post('/orgs/acme/teams', { name, ...body }, as(owner))
  expect(made.status).toBe(201)
  if (repo && !body.includes_all_repositories) expect((await s.put(`/teams/${made.body.id}/repos/acme/app`, {}, as(owner))).status).toBe(204)
}

beforeAll(async () => {
  s = await startTestServer()
  owner = await s.user('owner')
  expect((await s.post('/orgs', { username: 'acme' }, as(owner))).status).toBe(201)
  expect((await s.post('/orgs/acme/repos', { name: 'app', auto_init: true }, as(owner))).status).toBe(201)
  expect((await s.post(`${R}/contents/f.txt`, { content: Buffer.from('f\n').toString('base64'), new_branch: 'topic' }, as(owner))).status).toBe(201)
  expect((await s.post(`${R}/pulls`, { head: 'topic', base: 'main', title: 'Topic' }, as(owner))).status).toBe(201)
  await team('readers', { permission: 'read', units_map: { 'repo.code': 'read', 'repo.pulls': 'read' } })
  await team('no-pulls', { permission: 'write', units_map: { 'repo.code': 'write', 'repo.issues': 'write' } })
  await team('admins', { permission: 'admin', units_map: { 'repo.code': 'none' } })
  await team('everything', { permission: 'read', includes_all_repositories: true, units_map: { 'repo.pulls': 'read' } })
  await team('elsewhere', { permission: 'write', units_map: { 'repo.pulls': 'write' } }, false)
})
afterAll(() => s.stop())

describe('a team is asked to review when it reads the pull requests', () => {
  test('a team given the repository and the pull requests’ unit, an admin team, a team of every repository', async () => {
    for (const name of ['readers', 'admins', 'everything']) expect((await ask([name])).status).toBe(201)
    expect(await askedTeams()).toEqual(['admins', 'everything', 'readers'])
  })

  test('a team without the pull requests’ unit, or not given the repository: 422, nothing asked', async () => {
    for (const name of ['no-pulls', 'elsewhere']) {
      const res = await ask([name])
      expect(res.status).toBe(422)
      expect(res.body.message).toBe(`Reviewing team ${name} can't read repo`)
    }
    expect(await askedTeams()).toEqual(['admins', 'everything', 'readers'])
  })
})
