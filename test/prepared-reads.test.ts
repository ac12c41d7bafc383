// runs in one half: sqlite
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQLiteDialect } from 'drizzle-orm/sqlite-core'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/**
 * The reads of an issue page, a comment list, a pull request's record, the repository home and the
 * issue lists are statements prepared once per connection: Drizzle building a statement anew took
 * longer than SQLite running it (a users or attachments read: 50-90 µs to build, 3-10 µs
 * prepared). Counted, not timed: the statements Drizzle turns into SQL while a warm page or list
 * is answered (the test server runs in this process; SQLite's dialect, so this half only).
 */
describe('hot reads are prepared, not built at each request', () => {
  let s: TestServer
  let alice: TestUser
  let built: string[] | null = null
  const dialect = SQLiteDialect.prototype as unknown as { sqlToQuery: (...args: unknown[]) => { sql: string } }
  const original = dialect.sqlToQuery
  beforeAll(async () => {
    s = await startTestServer()
    alice = await s.user('alice')
    const token = { token: alice.token }
    expect((await s.post('/user/repos', { name: 'talk', auto_init: true }, token)).status).toBe(201)
    expect((await s.post('/repos/alice/talk/issues', { title: 'Talk', body: 'The **body**.' }, token)).status).toBe(201)
    for (let i = 0; i < 3; i++) expect((await s.post('/repos/alice/talk/issues/1/comments', { body: `comment ${i}` }, token)).status).toBe(201)
    expect((await s.post('/repos/alice/talk/issues/1/reactions', { content: '+1' }, token)).status).toBe(201)
    const file = { content: Buffer.from('more\n').toString('base64'), message: 'More', branch: 'main', new_branch: 'feature' }
    expect((await s.post('/repos/alice/talk/contents/more.txt', file, token)).status).toBe(201)
    expect((await s.post('/repos/alice/talk/pulls', { head: 'feature', base: 'main', title: 'More' }, token)).status).toBe(201)
    dialect.sqlToQuery = function (this: unknown, ...args: unknown[]) {
      const query = original.apply(this, args)
      built?.push(query.sql)
      return query
    }
  })
  afterAll(async () => {
    dialect.sqlToQuery = original
    await s.stop()
  })

  /** The statements built while `ask` runs, after it ran once to warm every cache and statement. */
  async function builtWhile(ask: () => Promise<Response>): Promise<string[]> {
    expect((await ask()).status).toBe(200)
    built = []
    try {
      const res = await ask()
      expect(res.status).toBe(200)
      await res.arrayBuffer()
      return built
    } finally {
      built = null
    }
  }

  test('an issue page and a pull request page build none', async () => {
    for (const path of ['/alice/talk/issues/1', '/alice/talk/pulls/2'])
      expect(await builtWhile(() => fetch(`${s.url}${path}`, { headers: { accept: 'text/html' } }))).toEqual([])
  })

  test("a pull request through the API, the repository home page and a pull request's files page build none", async () => {
    const pull = await builtWhile(() => fetch(`${s.url}/api/v1/repos/alice/talk/pulls/2`, { headers: { authorization: `token ${alice.token}` } }))
    expect(pull).toEqual([])
    expect(await builtWhile(() => fetch(`${s.url}/alice/talk`, { headers: { accept: 'text/html' } }))).toEqual([])
    expect(await builtWhile(() => fetch(`${s.url}/alice/talk/pulls/2/files`, { headers: { accept: 'text/html' } }))).toEqual([])
  })

  test("the issue and pull request lists (their pinned items and filter menus too), and the API's label and milestone lists, build none", async () => {
    for (const path of ['/alice/talk/issues', '/alice/talk/pulls', '/alice/talk/issues?state=closed'])
      expect(await builtWhile(() => fetch(`${s.url}${path}`, { headers: { accept: 'text/html' } }))).toEqual([])
    for (const path of ['/repos/alice/talk/labels', '/repos/alice/talk/milestones?state=all', '/repos/alice/talk/milestones?name=v1'])
      expect(await builtWhile(() => fetch(`${s.url}/api/v1${path}`, { headers: { authorization: `token ${alice.token}` } }))).toEqual([])
  })

  test("a repository's releases, with either filter, and a release by its tag build none", async () => {
    const token = { token: alice.token }
    expect((await s.post('/repos/alice/talk/releases', { tag_name: 'v1.0.0', name: 'One', target_commitish: 'main' }, token)).status).toBe(201)
    for (const path of ['/repos/alice/talk/releases', '/repos/alice/talk/releases?draft=false&pre-release=false', '/repos/alice/talk/releases/tags/v1.0.0'])
      expect(await builtWhile(() => fetch(`${s.url}/api/v1${path}`, { headers: { authorization: `token ${alice.token}` } }))).toEqual([])
  })

  test("a commit's statuses and combined status build none", async () => {
    const token = { token: alice.token }
    const sha = (await s.get('/repos/alice/talk/branches/main', token)).body.commit.id as string
    expect((await s.post(`/repos/alice/talk/statuses/${sha}`, { state: 'success', context: 'ci' }, token)).status).toBe(201)
    for (const path of [`/repos/alice/talk/commits/${sha}/status`, `/repos/alice/talk/statuses/${sha}`, `/repos/alice/talk/statuses/${sha}?sort=oldest&state=success`])
      expect(await builtWhile(() => fetch(`${s.url}/api/v1${path}`, { headers: { authorization: `token ${alice.token}` } }))).toEqual([])
  })

  test('the issue search builds none', async () => {
    expect(await builtWhile(() => fetch(`${s.url}/api/v1/repos/issues/search`, { headers: { authorization: `token ${alice.token}` } }))).toEqual([])
  })

  test('the people lists (stargazers, collaborators, followers, organisations and their members) build none, for each kind of viewer', async () => {
    const bob = await s.user('bob')
    const token = { token: alice.token }
    expect((await s.put('/user/starred/alice/talk', {}, { token: bob.token })).status).toBe(204)
    expect((await s.put('/user/following/alice', {}, { token: bob.token })).status).toBe(204)
    expect((await s.put('/repos/alice/talk/collaborators/bob', { permission: 'read' }, token)).status).toBe(204)
    expect((await s.post('/orgs', { username: 'talkers' }, token)).status).toBe(201)
    const paths = ['/repos/alice/talk/stargazers', '/repos/alice/talk/collaborators', '/users/alice/followers', '/users/bob/following', '/users/alice/orgs', '/orgs/talkers/members', '/orgs/talkers/public_members']
    for (const who of [alice, bob, null])
      for (const path of paths) {
        // Collaborators, followers and an organisation's members are asked by someone signed in.
        if (!who && /\/(collaborators|followers|following|members)$/.test(path)) continue
        const headers: Record<string, string> = who ? { authorization: `token ${who.token}` } : {}
        expect([path, await builtWhile(() => fetch(`${s.url}/api/v1${path}`, { headers }))]).toEqual([path, []])
      }
  })

  test("a repository's topics, hooks and branch protections, and an issue's timeline, build none", async () => {
    const token = { token: alice.token }
    expect((await s.put('/repos/alice/talk/topics', { topics: ['talk', 'chat'] }, token)).status).toBe(204)
    const hook = { type: 'gitea', config: { url: 'http://127.0.0.1:9/hook', content_type: 'json' }, events: ['push'], active: false }
    expect((await s.post('/repos/alice/talk/hooks', hook, token)).status).toBe(201)
    expect((await s.post('/repos/alice/talk/branch_protections', { rule_name: 'main' }, token)).status).toBe(201)
    const paths = ['/repos/alice/talk/topics', '/repos/alice/talk/topics?page=1&limit=1', '/repos/alice/talk/hooks', '/repos/alice/talk/branch_protections', '/repos/alice/talk/issues/1/timeline', '/repos/alice/talk/issues/2/timeline?since=2000-01-01T00:00:00Z']
    for (const path of paths) expect([path, await builtWhile(() => fetch(`${s.url}/api/v1${path}`, { headers: { authorization: `token ${alice.token}` } }))]).toEqual([path, []])
  })

  test("an issue's comments through the API build none", async () => {
    const statements = await builtWhile(() => fetch(`${s.url}/api/v1/repos/alice/talk/issues/1/comments`, { headers: { authorization: `token ${alice.token}` } }))
    expect(statements).toEqual([])
  })
})
