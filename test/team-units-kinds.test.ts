import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/**
 * Per-unit team permissions on the routes that serve issues and pull requests alike (Gitea's
 * CanReadIssuesOrPulls(issue.IsPull)): `/issues/{index}` of a pull request, its comments
 * (`/issues/{index}/comments`, `/issues/comments/{id}`), its timeline and reactions belong to the
 * pull requests unit; a team member with issues but no pull requests reads none of them, and one
 * with pull requests but no issues reads them there.
 */

let s: TestServer
let olga: TestUser
let ivy: TestUser // issues read, pull requests none
let pam: TestUser // pull requests read, issues none
const b64 = (text: string) => Buffer.from(text).toString('base64')
const asOlga = () => ({ token: olga.token })
let pullComment: number
let issueComment: number

async function team(name: string, unitsMap: Record<string, string>, member: TestUser) {
  const r = await s.post('/orgs/acme/teams', { name, includes_all_repositories: true, permission: 'read', units_map: unitsMap }, asOlga())
  expect(r.status).toBe(201)
  expect((await s.put(`/teams/${r.body.id}/members/${member.name}`, undefined, asOlga())).status).toBe(204)
}

beforeAll(async () => {
  s = await startTestServer()
  olga = await s.user('olga')
  ivy = await s.user('ivy')
  pam = await s.user('pam')
  expect((await s.post('/orgs', { username: 'acme' }, asOlga())).status).toBe(201)
  expect((await s.post('/orgs/acme/repos', { name: 'app', private: true, auto_init: true }, asOlga())).status).toBe(201)
  expect((await s.post('/repos/acme/app/issues', { title: 'the bug' }, asOlga())).status).toBe(201)
  expect((await s.post('/repos/acme/app/branches', { new_branch_name: 'feature' }, asOlga())).status).toBe(201)
  expect((await s.post('/repos/acme/app/contents/f.txt', { content: b64('f\n'), branch: 'feature' }, asOlga())).status).toBe(201)
  expect((await s.post('/repos/acme/app/pulls', { head: 'feature', base: 'main', title: 'the secret feature' }, asOlga())).status).toBe(201)
  issueComment = (await s.post('/repos/acme/app/issues/1/comments', { body: 'on the issue' }, asOlga())).body.id
  pullComment = (await s.post('/repos/acme/app/issues/2/comments', { body: 'secret review talk' }, asOlga())).body.id
  await team('issuers', { 'repo.code': 'read', 'repo.issues': 'read', 'repo.pulls': 'none' }, ivy)
  await team('pullers', { 'repo.code': 'read', 'repo.issues': 'none', 'repo.pulls': 'read' }, pam)
})
afterAll(() => s.stop())

describe('a member with issues but no pull requests', () => {
  test('reads the issue, not the pull request through the issues routes', async () => {
    const ivyT = { token: ivy.token }
    expect((await s.get('/repos/acme/app/issues/1', ivyT)).status).toBe(200)
    expect((await s.get('/repos/acme/app/issues/comments/' + issueComment, ivyT)).status).toBe(200)
    expect((await s.get('/repos/acme/app/pulls/2', ivyT)).status).toBe(404)
    expect((await s.get('/repos/acme/app/issues/2', ivyT)).status).toBe(404)
    expect((await s.get('/repos/acme/app/issues/2/comments', ivyT)).status).toBe(404)
    expect((await s.get('/repos/acme/app/issues/2/timeline', ivyT)).status).toBe(404)
    expect((await s.get('/repos/acme/app/issues/2/reactions', ivyT)).status).toBe(404)
    expect((await s.get('/repos/acme/app/issues/comments/' + pullComment, ivyT)).status).toBe(404)
    expect((await s.get(`/repos/acme/app/issues/comments/${pullComment}/reactions`, ivyT)).status).toBe(404)
    const all = await s.get('/repos/acme/app/issues?state=all&type=', ivyT)
    expect(all.body.map((i: any) => i.number)).toEqual([1])
    const comments = await s.get('/repos/acme/app/issues/comments', ivyT)
    expect(comments.body.map((c: any) => c.id)).toEqual([issueComment])
    expect((await s.post('/repos/acme/app/issues/2/comments', { body: 'me too' }, ivyT)).status).toBe(404)
  })
})

describe('a member with pull requests but no issues', () => {
  test('reads the pull request through the issues routes, not the issue', async () => {
    const pamT = { token: pam.token }
    expect((await s.get('/repos/acme/app/pulls/2', pamT)).status).toBe(200)
    expect((await s.get('/repos/acme/app/issues/2', pamT)).status).toBe(200)
    expect((await s.get('/repos/acme/app/issues/2/comments', pamT)).status).toBe(200)
    expect((await s.get('/repos/acme/app/issues/comments/' + pullComment, pamT)).status).toBe(200)
    expect((await s.get('/repos/acme/app/issues/1', pamT)).status).toBe(404)
    expect((await s.get('/repos/acme/app/issues/comments/' + issueComment, pamT)).status).toBe(404)
  })
})
