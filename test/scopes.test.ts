import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { Database } from 'bun:sqlite'
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { drizzle as drizzleSqlite } from 'drizzle-orm/bun-sqlite'
import { migrate as migrateSqlite } from 'drizzle-orm/bun-sqlite/migrator'
import { drizzle as drizzlePostgres } from 'drizzle-orm/bun-sql'
import { migrate as migratePostgres } from 'drizzle-orm/bun-sql/migrator'
import { hashToken, newTokenSecret } from '../src/auth/secrets'
import { accessTokens } from '../src/db/schema'
import { DIALECT } from '../src/db/dialect'
import { createAccessToken } from '../src/modules/users/service'
import { contentMark } from './db-snapshot'
import { git, gitOk, remoteUrl, tempDir } from './git-fixture'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { freshPostgresDatabase } from './test-database'

/**
 * Scoped access tokens (Gitea 1.19+): what a token may do is limited by its scope, checked by the
 * request pipeline from each route's declared category (test/route-table.test.ts covers every
 * route); here the token record, the refusals at creation, real requests of each category, the
 * public-only limit, and git over HTTP.
 */

let s: TestServer
let root: TestUser, alice: TestUser, bob: TestUser
let mark: () => Promise<string>
const dirs: string[] = []

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  root = await s.user('root', { admin: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
  for (const [name, extra] of [
    ['pub', {}],
    ['priv', { private: true }],
  ] as const)
    expect((await s.post('/user/repos', { name, auto_init: true, ...extra }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/repos/alice/pub/issues', { title: 'one' }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/orgs', { username: 'acme' }, { token: alice.token })).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

let made = 0
/** A token of `who` with `scopes`, made through the service (the API's checks apply the same). */
const tokenOf = async (who: TestUser, scopes: string[]) => (await createAccessToken(s.deps, who.user.id, `t${++made}`, scopes)).secret

const scopeMessage = (required: string[], tokenScope: string) =>
  `token does not have at least one of required scope(s), required=[${required.join(' ')}], token scope=${tokenScope}`

describe('creating a token', () => {
  const basic = () => ({ basic: [alice.name, alice.password] as [string, string] })

  test('without a scope, or with an unknown one: 400 in Gitea words, nothing made', async () => {
    const before = await mark()
    const cases: [unknown, string][] = [
      [{ name: 'a' }, 'access token must have a scope'],
      [{ name: 'a', scopes: [] }, 'access token must have a scope'],
      [{ name: 'a', scopes: [''] }, 'access token must have a scope'],
      [{ name: 'a', scopes: ['read:nothing'] }, 'invalid access token scope provided: invalid access token scope: read:nothing'],
      [{ name: 'a', scopes: ['write:user', 'repo'] }, 'invalid access token scope provided: invalid access token scope: repo'],
      [{ name: 'a', scopes: ['read:user,admin'] }, 'invalid access token scope provided: invalid access token scope: admin'],
      [{ name: 'a', scopes: ['READ:USER'] }, 'invalid access token scope provided: invalid access token scope: READ:USER'],
    ]
    for (const [body, message] of cases) {
      const r = await s.post('/users/alice/tokens', body, basic())
      expect([r.status, r.body?.message]).toEqual([400, message])
      expect(typeof r.body.url).toBe('string')
    }
    expect(await mark()).toBe(before)
  })

  test('the scopes come back on the record, normalised as Gitea stores them, and on the list', async () => {
    const cases: [string[], string[]][] = [
      [['read:repository', 'write:repository', 'read:user'], ['write:repository', 'read:user']],
      [['read:user,write:issue'], ['write:issue', 'read:user']],
      [['all', 'public-only'], ['public-only', 'all']],
      [['all', 'read:user'], ['all']],
      [['write:activitypub', 'write:admin', 'write:misc', 'write:notification', 'write:organization', 'write:package', 'write:issue', 'write:repository', 'write:user'], ['all']],
      [['public-only'], ['public-only']],
    ]
    const ids: number[] = []
    for (const [scopes, normal] of cases) {
      const r = await s.post('/users/alice/tokens', { name: `n${ids.length}`, scopes }, basic())
      expect(r.status).toBe(201)
      expect(r.body.scopes).toEqual(normal)
      ids.push(r.body.id)
    }
    const list = await s.get('/users/alice/tokens?limit=50', basic())
    const byId = new Map(list.body.map((t: any) => [t.id, t.scopes]))
    expect(ids.map((id) => byId.get(id))).toEqual(cases.map(([, normal]) => normal))
    // The fixture's token was made by the service without a list: `all`.
    expect(list.body.find((t: any) => t.name === 'test').scopes).toEqual(['all'])
  })

  test('form fields: one scope or several', async () => {
    const form = (raw: string) => s.request('POST', '/users/alice/tokens', { ...basic(), raw, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect((await form('name=f1&scopes=read%3Auser')).body.scopes).toEqual(['read:user'])
    expect((await form('name=f2&scopes=read%3Auser&scopes=write%3Aissue')).body.scopes).toEqual(['write:issue', 'read:user'])
    expect((await form('name=f3')).status).toBe(400)
  })
})

describe('a token is limited to its scope', () => {
  test('a read:user token can neither create nor delete a repository (and changes nothing); it still reads the user', async () => {
    const token = await tokenOf(alice, ['read:user'])
    const before = await mark()
    const create = await s.post('/user/repos', { name: 'sneaky' }, { token })
    expect([create.status, create.body.message]).toEqual([403, scopeMessage(['write:user', 'write:repository'], 'read:user')])
    const del = await s.del('/repos/alice/pub', undefined, { token })
    expect([del.status, del.body.message]).toEqual([403, scopeMessage(['write:repository'], 'read:user')])
    expect(await mark()).toBe(before)
    expect((await s.get('/repos/alice/pub', { token: alice.token })).status).toBe(200)
    expect((await s.get('/user', { token })).body.login).toBe('alice')
  })

  // One real request per category and level: with the scope it works; one level or category short, 403.
  const table: { category: string; who: () => TestUser; read: [string, string]; write: [string, string, unknown, number] }[] = [
    { category: 'repository', who: () => alice, read: ['GET', '/repos/alice/pub'], write: ['PATCH', '/repos/alice/pub', { description: 'scoped' }, 200] },
    { category: 'issue', who: () => alice, read: ['GET', '/repos/alice/pub/issues'], write: ['POST', '/repos/alice/pub/issues', { title: 'scoped' }, 201] },
    { category: 'user', who: () => bob, read: ['GET', '/user/emails'], write: ['PUT', '/user/following/alice', undefined, 204] },
    { category: 'organization', who: () => alice, read: ['GET', '/orgs/acme'], write: ['PATCH', '/orgs/acme', { description: 'scoped' }, 200] },
    { category: 'admin', who: () => root, read: ['GET', '/admin/users'], write: ['POST', '/admin/users', { username: 'made', email: 'made@example.com', password: 'secret-pw' }, 201] },
  ]
  for (const { category, who, read, write } of table)
    test(`${category}: read:${category} reads and cannot write; write:${category} writes; another category does neither`, async () => {
      const reader = await tokenOf(who(), [`read:${category}`])
      const writer = await tokenOf(who(), [`write:${category}`])
      const other = await tokenOf(who(), [category === 'user' ? 'write:repository' : 'write:user'])
      const otherText = category === 'user' ? 'write:repository' : 'write:user'
      expect((await s.request(read[0], read[1], { token: reader })).status).toBe(200)
      const readOther = await s.request(read[0], read[1], { token: other })
      expect([readOther.status, readOther.body.message]).toEqual([403, scopeMessage([`read:${category}`], otherText)])
      const [method, path, body, status] = write
      const before = await mark()
      const short = await s.request(method, path, { token: reader, ...(body === undefined ? {} : { body }) })
      expect([short.status, short.body.message]).toEqual([403, scopeMessage([`write:${category}`], `read:${category}`)])
      const wrong = await s.request(method, path, { token: other, ...(body === undefined ? {} : { body }) })
      expect([wrong.status, wrong.body.message]).toEqual([403, scopeMessage([`write:${category}`], otherText)])
      expect(await mark()).toBe(before)
      expect((await s.request(method, path, { token: writer, ...(body === undefined ? {} : { body }) })).status).toBe(status)
    })

  test('a password is not limited by scopes; `all` (what older tokens became) opens everything', async () => {
    expect((await s.post('/user/repos', { name: 'by-password' }, { basic: [alice.name, alice.password] })).status).toBe(201)
    const all = await tokenOf(alice, ['all'])
    expect((await s.post('/user/repos', { name: 'by-all' }, { token: all })).status).toBe(201)
    expect((await s.del('/repos/alice/by-all', undefined, { token: all })).status).toBe(204)
  })

  test('the scope goes with the token under sudo, and in Basic credentials', async () => {
    const adminRead = await tokenOf(root, ['read:admin', 'read:user'])
    const r = await s.post('/user/repos', { name: 'as-alice' }, { token: adminRead, headers: { sudo: 'alice' } })
    expect([r.status, r.body.message]).toEqual([403, scopeMessage(['write:user', 'write:repository'], 'read:admin,read:user')])
    expect((await s.get('/user', { token: adminRead, headers: { sudo: 'alice' } })).body.login).toBe('alice')
    const token = await tokenOf(alice, ['read:user'])
    expect((await s.del('/repos/alice/pub', undefined, { basic: [token, ''] })).status).toBe(403)
    expect((await s.del('/repos/alice/pub', undefined, { basic: ['alice', token] })).status).toBe(403)
  })
})

describe('public-only', () => {
  test('hides private repositories from lists and refuses them by name; public ones work as usual', async () => {
    const token = await tokenOf(alice, ['public-only', 'write:repository', 'read:user', 'read:issue'])
    const priv = await s.get('/repos/alice/priv', { token })
    expect([priv.status, priv.body.message]).toEqual([403, 'token scope is limited to public repos'])
    expect((await s.get('/repos/alice/priv/issues', { token })).status).toBe(403)
    expect((await s.get('/repos/alice/pub', { token })).status).toBe(200)
    expect((await s.patch('/repos/alice/pub', { website: 'https://example.com' }, { token })).status).toBe(200)
    const names = (list: any) => list.body.map((r: any) => r.name).sort()
    expect(names(await s.get('/user/repos', { token }))).not.toContain('priv')
    expect(names(await s.get('/user/repos', { token }))).toContain('pub')
    expect(names(await s.get('/users/alice/repos', { token }))).not.toContain('priv')
    expect((await s.get('/repos/search?q=priv', { token })).body.data).toEqual([])
    // The same user without the limit sees it everywhere.
    expect(names(await s.get('/user/repos', { token: alice.token }))).toContain('priv')
    expect((await s.get('/repos/search?q=priv', { token: alice.token })).body.data).toHaveLength(1)
  })

  test('private organisations and users are hidden as from an anonymous caller', async () => {
    expect((await s.post('/orgs', { username: 'hush', visibility: 'private' }, { token: alice.token })).status).toBe(201)
    expect((await s.patch('/admin/users/bob', { login_name: 'bob', source_id: 0, visibility: 'private' }, { token: root.token })).status).toBe(200)
    const token = await tokenOf(alice, ['public-only', 'read:organization', 'read:user'])
    expect((await s.get('/orgs/hush', { token })).status).toBe(404)
    expect((await s.get('/orgs/hush', { token: alice.token })).status).toBe(200)
    const rootToken = await tokenOf(root, ['public-only', 'read:user'])
    expect((await s.get('/users/bob', { token: rootToken })).status).toBe(404)
    expect((await s.get('/users/search?q=bob', { token: rootToken })).body.data).toEqual([])
    expect((await s.get('/users/bob', { token: root.token })).status).toBe(200)
  })

  test("a site admin's public-only token sees no private repository either", async () => {
    const token = await tokenOf(root, ['public-only', 'read:repository'])
    expect((await s.get('/repos/alice/priv', { token })).status).toBe(403)
    expect((await s.get('/repos/search?q=priv', { token })).body.data).toEqual([])
    expect((await s.get('/repos/alice/pub', { token })).status).toBe(200)
  })
})

describe('git over HTTP', () => {
  test('read:repository clones and fetches but cannot push; write:repository pushes; public-only cannot clone a private repository', async () => {
    const reader = await tokenOf(alice, ['read:repository'])
    const writer = await tokenOf(alice, ['write:repository'])
    const userOnly = await tokenOf(alice, ['write:user'])
    const publicOnly = await tokenOf(alice, ['public-only', 'write:repository'])
    const dir = tempDir()
    dirs.push(dir)
    const url = (secret: string) => remoteUrl(s.url, 'alice/priv.git', 'alice', secret)
    await gitOk(dir, 'clone', url(reader), 'work')
    const work = join(dir, 'work')
    await gitOk(work, 'fetch', url(reader))
    const before = await gitOk(work, 'ls-remote', url(reader), 'refs/heads/main')
    writeFileSync(join(work, 'scoped.txt'), 'scoped\n')
    await gitOk(work, 'add', 'scoped.txt')
    await gitOk(work, 'commit', '-m', 'scoped')
    const refused = await git(work, 'push', url(reader), 'HEAD:main')
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('403')
    expect(await gitOk(work, 'ls-remote', url(reader), 'refs/heads/main')).toBe(before)
    // No repository scope at all: a private repository can be neither cloned nor pushed to.
    expect((await git(dir, 'clone', url(userOnly), 'nope')).stderr).toContain('403')
    expect((await git(dir, 'clone', url(publicOnly), 'nope2')).stderr).toContain('403')
    await gitOk(work, 'push', url(writer), 'HEAD:main')
    expect(await gitOk(work, 'ls-remote', url(reader), 'refs/heads/main')).not.toBe(before)
    // A public repository is cloned as anonymous clients may, whatever the token's scope (as Gitea).
    await gitOk(dir, 'clone', remoteUrl(s.url, 'alice/pub.git', 'alice', userOnly), 'pub')
  })

  test('the answer to a refused push says why, in the API error shape', async () => {
    const reader = await tokenOf(alice, ['read:repository'])
    const r = await fetch(`${s.url}/alice/priv.git/info/refs?service=git-receive-pack`, { headers: { authorization: 'Basic ' + btoa(`alice:${reader}`) } })
    const body = (await r.json()) as { message: string; url: string }
    expect([r.status, body.message, typeof body.url]).toEqual([403, scopeMessage(['write:repository'], 'read:repository'), 'string'])
  })
})

/** A copy of a migrations folder without the migration that gave tokens their scope. */
function migrationsBeforeScopes(folder: 'drizzle' | 'drizzle-pg'): string {
  const copy = tempDir('warren-old-migrations-')
  dirs.push(copy)
  cpSync(resolve(import.meta.dir, '..', folder), copy, { recursive: true })
  const journalFile = join(copy, 'meta', '_journal.json')
  const journal = JSON.parse(readFileSync(journalFile, 'utf8'))
  // The migrations up to the one that added scopes (drizzle applies those newer than the last one
  // applied, so the later ones must go too).
  const at = journal.entries.findIndex((e: { tag: string }) => e.tag.endsWith('_token_scopes'))
  journal.entries = journal.entries.slice(0, at)
  writeFileSync(journalFile, JSON.stringify(journal))
  return copy
}

describe('tokens made before scopes existed', () => {
  test('keep working as they did: the migration gives them `all`', async () => {
    const secret = newTokenSecret()
    const insertUser = `INSERT INTO users (name, lower_name, email, created_unix, updated_unix) VALUES ('old', 'old', 'old@example.com', 1, 1)`
    const insertToken = (userId: number) =>
      `INSERT INTO access_tokens (user_id, name, token_hash, token_last_eight, created_unix, updated_unix) VALUES (${userId}, 'old', '${hashToken(secret)}', '${secret.slice(-8)}', 1, 1)`
    let overrides: Record<string, unknown>
    let dropDatabase = async () => {}
    if (DIALECT === 'postgres') {
      const database = await freshPostgresDatabase(process.env.WARREN_DATABASE_URL!)
      dropDatabase = database.drop
      const client = new SQL(database.url, { max: 1 })
      await migratePostgres(drizzlePostgres({ client }), { migrationsFolder: migrationsBeforeScopes('drizzle-pg') })
      const [user] = await client.unsafe(`${insertUser} RETURNING id`)
      await client.unsafe(insertToken(user.id))
      await client.close()
      overrides = { databaseUrl: database.url }
    } else {
      const dataDir = tempDir('warren-old-data-')
      dirs.push(dataDir)
      mkdirSync(dataDir, { recursive: true })
      const sqlite = new Database(join(dataDir, 'warren.db'), { create: true })
      migrateSqlite(drizzleSqlite({ client: sqlite }), { migrationsFolder: migrationsBeforeScopes('drizzle') })
      const userId = Number(sqlite.run(insertUser).lastInsertRowid)
      sqlite.run(insertToken(userId))
      sqlite.close()
      overrides = { dataDir }
    }
    const upgraded = await startTestServer(overrides)
    try {
      expect((await upgraded.get('/user', { token: secret })).body.login).toBe('old')
      expect((await upgraded.post('/user/repos', { name: 'still-works' }, { token: secret })).status).toBe(201)
      expect((await upgraded.del('/repos/old/still-works', undefined, { token: secret })).status).toBe(204)
      const [row] = await upgraded.deps.db.select().from(accessTokens)
      expect(row!.scope).toBe('all')
    } finally {
      await upgraded.stop()
      await dropDatabase()
    }
  })
})
