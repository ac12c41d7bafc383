import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { actionRunnerTokens, actionSecrets } from '../src/db/schema'
import { openSecret } from '../src/lib/secret-box'
import { createAccessToken } from '../src/modules/users/service'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/** Gitea Actions' secrets, variables and runner registration tokens at every holder's level. */

let s: TestServer
let alice: TestUser, bob: TestUser, root: TestUser
const as = (who: TestUser) => ({ token: who.token })

beforeAll(async () => {
  s = await startTestServer()
  root = await s.user('root', { admin: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
  expect((await s.post('/user/repos', { name: 'app' }, as(alice))).status).toBe(201)
  expect((await s.put('/repos/alice/app/collaborators/bob', { permission: 'admin' }, as(alice))).status).toBe(204)
  expect((await s.post('/orgs', { username: 'acme' }, as(alice))).status).toBe(201)
})
afterAll(() => s.stop())

describe('secrets', () => {
  test('put creates (201) then updates (204); the list shows names and times, never values; stored sealed; delete', async () => {
    const base = '/repos/alice/app/actions/secrets'
    expect((await s.put(`${base}/deploy_key`, { data: 'one' }, as(alice))).status).toBe(201)
    expect((await s.put(`${base}/DEPLOY_KEY`, { data: 'two' }, as(alice))).status).toBe(204)
    expect((await s.put(`${base}/OTHER`, { data: 'x' }, as(alice))).status).toBe(201)
    const list = await s.get(`${base}?limit=1`, as(alice))
    expect(list.status).toBe(200)
    expect(list.headers.get('x-total-count')).toBe('2')
    expect(list.body).toEqual([{ name: 'DEPLOY_KEY', created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }])
    const row = (await s.deps.db.select().from(actionSecrets)).find((r) => r.name === 'DEPLOY_KEY')!
    expect(row.dataSealed).not.toContain('two')
    expect(openSecret(s.deps.config.dataDir, row.dataSealed)).toBe('two')
    expect((await s.del(`${base}/other`, undefined, as(alice))).status).toBe(204)
    expect((await s.del(`${base}/OTHER`, undefined, as(alice))).status).toBe(404)
    // The organisation's and the user's own secrets are apart from the repository's.
    expect((await s.put('/orgs/acme/actions/secrets/DEPLOY_KEY', { data: 'o' }, as(alice))).status).toBe(201)
    expect((await s.get('/orgs/acme/actions/secrets', as(alice))).body.map((x: any) => x.name)).toEqual(['DEPLOY_KEY'])
    expect((await s.put('/user/actions/secrets/DEPLOY_KEY', { data: 'u' }, as(bob))).status).toBe(201)
    expect((await s.del('/user/actions/secrets/DEPLOY_KEY', undefined, as(bob))).status).toBe(204)
  })

  test("names as Gitea checks them (400), values bounded (422)", async () => {
    const base = '/repos/alice/app/actions/secrets'
    for (const bad of ['1ABC', 'GITEA_TOKEN', 'github_x', 'A-B', 'A'.repeat(256), '%C3%A9'])
      expect((await s.put(`${base}/${bad}`, { data: 'v' }, as(alice))).status).toBe(400)
    expect((await s.put(`${base}/OK`, { data: '' }, as(alice))).status).toBe(422)
    expect((await s.put(`${base}/OK`, { data: 'x'.repeat(65537) }, as(alice))).status).toBe(422)
    expect((await s.put(`${base}/OK`, {}, as(alice))).status).toBe(422)
    expect((await s.del(`${base}/GITEA_X`, undefined, as(alice))).status).toBe(400)
  })
})

describe('variables', () => {
  test('create (201, 409 again), get, list, update with rename, delete', async () => {
    const base = '/repos/alice/app/actions/variables'
    expect((await s.post(`${base}/region`, { value: 'eu\r\nwest' }, as(alice))).status).toBe(201)
    expect((await s.post(`${base}/REGION`, { value: 'x' }, as(alice))).status).toBe(409)
    const repoId = (await s.get('/repos/alice/app', as(alice))).body.id
    expect((await s.get(`${base}/Region`, as(alice))).body).toEqual({ owner_id: 0, repo_id: repoId, name: 'REGION', data: 'eu\nwest' })
    expect((await s.post(`${base}/ZONE`, { value: 'a' }, as(alice))).status).toBe(201)
    expect((await s.put(`${base}/REGION`, { name: 'zone', value: 'b' }, as(alice))).status).toBe(409)
    expect((await s.put(`${base}/REGION`, { name: 'AREA', value: 'b' }, as(alice))).status).toBe(204)
    expect((await s.put(`${base}/REGION`, { value: 'b' }, as(alice))).status).toBe(404)
    expect((await s.put(`${base}/AREA`, { name: 'GITHUB_X', value: 'b' }, as(alice))).status).toBe(400)
    const list = await s.get(base, as(alice))
    expect(list.headers.get('x-total-count')).toBe('2')
    expect(list.body.map((v: any) => [v.name, v.data])).toEqual([['AREA', 'b'], ['ZONE', 'a']])
    expect((await s.del(`${base}/ZONE`, undefined, as(alice))).status).toBe(204)
    expect((await s.get(`${base}/ZONE`, as(alice))).status).toBe(404)
    expect((await s.get(`${base}/9X`, as(alice))).status).toBe(400)
    expect((await s.post(`${base}/EMPTY`, { value: '' }, as(alice))).status).toBe(422)
  })

  test("an organisation's and a user's variables carry their owner's id", async () => {
    const org = (await s.get('/orgs/acme', as(alice))).body
    expect((await s.post('/orgs/acme/actions/variables/V', { value: 'o' }, as(alice))).status).toBe(201)
    expect((await s.get('/orgs/acme/actions/variables', as(alice))).body).toEqual([{ owner_id: org.id, repo_id: 0, name: 'V', data: 'o' }])
    expect((await s.post('/user/actions/variables/V', { value: 'u' }, as(bob))).status).toBe(201)
    expect((await s.get('/user/actions/variables/V', as(bob))).body).toEqual({ owner_id: bob.user.id, repo_id: 0, name: 'V', data: 'u' })
    // Each user sees only their own.
    expect((await s.get('/user/actions/variables/V', as(alice))).status).toBe(404)
  })
})

describe('values bounded as Gitea counts them', () => {
  test("a secret's in UTF-8 bytes, a variable's in characters: 400 past 65,536, nothing changed", async () => {
    const secrets = '/repos/alice/app/actions/secrets'
    // 'é' is two bytes and one UTF-16 unit: 32,768 fill the 65,536 bytes, one more is too long.
    expect((await s.put(`${secrets}/WIDE`, { data: 'é'.repeat(32768) }, as(alice))).status).toBe(201)
    const tooLong = await s.put(`${secrets}/WIDE`, { data: 'é'.repeat(32769) }, as(alice))
    expect(tooLong.status).toBe(400)
    expect(tooLong.body.message).toBe('data too long')
    expect((await s.put(`${secrets}/OTHER_WIDE`, { data: '€'.repeat(65536) }, as(alice))).status).toBe(400)
    const row = (await s.deps.db.select().from(actionSecrets)).find((r) => r.name === 'WIDE')!
    expect(openSecret(s.deps.config.dataDir, row.dataSealed)).toBe('é'.repeat(32768))
    expect((await s.get(secrets, as(alice))).body.map((x: any) => x.name)).not.toContain('OTHER_WIDE')

    // A variable counts characters (Gitea's utf8.RuneCountInString): 65,536 of four bytes (two
    // UTF-16 units each) are taken, one more is too long, on creation and on update.
    const variables = '/repos/alice/app/actions/variables'
    const full = '😀'.repeat(65536)
    expect((await s.post(`${variables}/EMOJI`, { value: full }, as(alice))).status).toBe(201)
    expect((await s.get(`${variables}/EMOJI`, as(alice))).body.data).toBe(full)
    // 65,537 characters in 131,072 UTF-16 units: within the schema's bound, past Gitea's.
    const over = `${'😀'.repeat(65535)}éé`
    expect((await s.post(`${variables}/MORE`, { value: over }, as(alice))).status).toBe(400)
    expect((await s.put(`${variables}/EMOJI`, { value: over }, as(alice))).status).toBe(400)
    expect((await s.put(`${variables}/EMOJI`, { value: '😀'.repeat(65537) }, as(alice))).status).toBe(422)
    expect((await s.get(`${variables}/EMOJI`, as(alice))).body.data).toBe(full)
    expect((await s.get(`${variables}/MORE`, as(alice))).status).toBe(404)
    expect((await s.del(`${variables}/EMOJI`, undefined, as(alice))).status).toBe(204)
  })
})

describe('what is not served', () => {
  test('no runner, task or workflow run: 404 in the API\'s error shape', async () => {
    for (const path of ['/repos/alice/app/actions/tasks', '/repos/alice/app/actions/runners', '/repos/alice/app/actions/runs', '/orgs/acme/actions/runners', '/admin/runners']) {
      const r = await s.get(path, as(root))
      expect([path, r.status]).toEqual([path, 404])
      expect(typeof r.body.message).toBe('string')
    }
  })
})

describe('runner registration tokens', () => {
  test('the same token until reset, one per holder; kept sealed', async () => {
    for (const path of ['/repos/alice/app/actions', '/orgs/acme/actions', '/user/actions', '/admin']) {
      const who = path === '/admin' ? root : alice
      const first = await s.get(`${path}/runners/registration-token`, as(who))
      expect(first.status).toBe(200)
      expect(first.body.token).toMatch(/^[0-9a-f]{40}$/)
      expect((await s.get(`${path}/runners/registration-token`, as(who))).body.token).toBe(first.body.token)
      const reset = await s.post(`${path}/runners/registration-token`, undefined, as(who))
      expect(reset.status).toBe(200)
      expect(reset.body.token).not.toBe(first.body.token)
      expect((await s.get(`${path}/runners/registration-token`, as(who))).body.token).toBe(reset.body.token)
    }
    const rows = await s.deps.db.select().from(actionRunnerTokens)
    expect(rows.map((r) => r.scope).sort()).toEqual(['global', `r${(await s.get('/repos/alice/app', as(alice))).body.id}`, `u${(await s.get('/orgs/acme', as(alice))).body.id}`, `u${alice.user.id}`].sort())
    expect(new Set(rows.map((r) => r.tokenHash)).size).toBe(4)
  })
})

describe('who may', () => {
  test('repository owners only (a repository admin is refused), organisation owners, site admins; token scopes', async () => {
    expect((await s.get('/repos/alice/app/actions/secrets', as(bob))).status).toBe(403)
    expect((await s.post('/repos/alice/app/actions/variables/B', { value: 'b' }, as(bob))).status).toBe(403)
    expect((await s.get('/repos/alice/app/actions/runners/registration-token', as(bob))).status).toBe(403)
    expect((await s.get('/repos/alice/app/actions/secrets')).status).toBe(401)
    expect((await s.put('/orgs/acme/actions/secrets/X', { data: 'b' }, as(bob))).status).toBe(403)
    expect((await s.get('/admin/runners/registration-token', as(alice))).status).toBe(403)
    expect((await s.get('/user/actions/variables')).status).toBe(401)
    // The site admin may act for a repository it does not own.
    expect((await s.get('/repos/alice/app/actions/variables', as(root))).status).toBe(200)
    const readOnly = (await createAccessToken(s.deps, alice.user.id, 'ro', ['read:repository', 'read:user'])).secret
    expect((await s.get('/repos/alice/app/actions/variables', { token: readOnly })).status).toBe(200)
    expect((await s.put('/repos/alice/app/actions/secrets/X', { data: 'x' }, { token: readOnly })).status).toBe(403)
    expect((await s.post('/user/actions/variables/X', { value: 'x' }, { token: readOnly })).status).toBe(403)
    expect((await s.get('/orgs/acme/actions/variables', { token: readOnly })).status).toBe(403)
  })

  test("a repository's settings go with it", async () => {
    expect((await s.post('/user/repos', { name: 'gone' }, as(alice))).status).toBe(201)
    expect((await s.put('/repos/alice/gone/actions/secrets/S', { data: 's' }, as(alice))).status).toBe(201)
    const before = (await s.deps.db.select().from(actionSecrets)).length
    expect((await s.del('/repos/alice/gone', undefined, as(alice))).status).toBe(204)
    expect((await s.deps.db.select().from(actionSecrets)).length).toBe(before - 1)
  })
})
