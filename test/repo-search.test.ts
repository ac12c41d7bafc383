import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { addTeam, makeOrg } from './access-fixtures'
import { repositories, teamUsers, users } from '../src/db/schema'
import { closeDatabase } from '../src/db/client'
import { DIALECT } from '../src/db/dialect'
import { openConfiguredDatabase } from '../src/deps'
import { REPO_PAGE_CACHE_ROWS, RepoPageCache, resultCacheOf } from '../src/convert/repo-page-cache'
import { statementRecorder } from './query-counter'

let s: TestServer
let alice: TestUser
let bob: TestUser
let carol: TestUser
let admin: TestUser
let orgId: number

const names = (r: { body: any }) => r.body.data.map((x: any) => x.full_name)

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  admin = await s.user('root', { admin: true })
  for (const name of ['alpha', 'Beta', 'gamma-tool', 'delta_tool'])
    expect((await s.post('/user/repos', { name }, { token: alice.token })).status).toBe(201)
  await s.post('/user/repos', { name: 'hidden-tool', private: true }, { token: alice.token })
  await s.post('/user/repos', { name: 'bobs-tool' }, { token: bob.token })
  await s.post('/user/repos', { name: 'bobs-secret', private: true }, { token: bob.token })
  // alice collaborates on bob's private repository.
  expect((await s.put('/repos/bob/bobs-secret/collaborators/alice', { permission: 'read' }, { token: bob.token })).status).toBe(204)
  orgId = (await makeOrg(s, 'acme', carol)).org.id
  await s.post('/admin/users/acme/repos', { name: 'acme-tool' }, { token: admin.token })
  await s.post('/admin/users/acme/repos', { name: 'acme-private', private: true }, { token: admin.token })
  // A fork and a mirror, marked directly (forking and mirroring are other areas).
  await s.post('/user/repos', { name: 'forked' }, { token: carol.token })
  await s.post('/user/repos', { name: 'mirrored' }, { token: carol.token })
  await s.deps.db.update(repositories).set({ isFork: true }).where(eq(repositories.lowerName, 'forked'))
  await s.deps.db.update(repositories).set({ isMirror: true }).where(eq(repositories.lowerName, 'mirrored'))
})
afterAll(() => s.stop())

describe('GET /repos/search', () => {
  test('anonymous: public repositories only, sorted by name, ok/data shape', async () => {
    const r = await s.get('/repos/search?limit=50')
    expect(r.status).toBe(200)
    expect(r.body.ok).toBe(true)
    expect(names(r)).toEqual([
      'acme/acme-tool',
      'alice/alpha',
      'alice/Beta',
      'bob/bobs-tool',
      'alice/delta_tool',
      'carol/forked',
      'alice/gamma-tool',
      'carol/mirrored',
    ])
    expect(r.headers.get('x-total-count')).toBe('8')
    expect(r.body.data[0].permissions).toEqual({ admin: false, push: false, pull: true })
  })

  test('q: trimmed, case-insensitive substring of the name; LIKE wildcards are literal', async () => {
    expect(names(await s.get('/repos/search?q=%20TOOL%20'))).toEqual(['acme/acme-tool', 'bob/bobs-tool', 'alice/delta_tool', 'alice/gamma-tool'])
    expect(names(await s.get('/repos/search?q=beta'))).toEqual(['alice/Beta'])
    expect(names(await s.get('/repos/search?q=_'))).toEqual(['alice/delta_tool'])
    expect(names(await s.get('/repos/search?q=%25'))).toEqual([])
  })

  test('visibility: owner, collaborator, org owner, outsider and site admin', async () => {
    expect(names(await s.get('/repos/search?q=tool', { token: alice.token }))).toContain('alice/hidden-tool')
    expect(names(await s.get('/repos/search?q=tool', { token: bob.token }))).not.toContain('alice/hidden-tool')
    expect(names(await s.get('/repos/search?q=secret', { token: alice.token }))).toEqual(['bob/bobs-secret'])
    expect(names(await s.get('/repos/search?q=secret', { token: carol.token }))).toEqual([])
    expect(names(await s.get('/repos/search?q=private', { token: carol.token }))).toEqual(['acme/acme-private'])
    expect(names(await s.get('/repos/search?q=private', { token: bob.token }))).toEqual([])
    const all = await s.get('/repos/search?limit=50', { token: admin.token })
    expect(all.headers.get('x-total-count')).toBe('11')
    const mine = (await s.get('/repos/search?q=hidden', { token: alice.token })).body.data[0]
    expect(mine.permissions).toEqual({ admin: true, push: true, pull: true })
  })

  test('uid: owned or collaborated on; exclusive: owned only; org uid: its repositories', async () => {
    const a = alice.user.id
    expect(names(await s.get(`/repos/search?uid=${a}&limit=50`, { token: alice.token }))).toEqual([
      'alice/alpha',
      'alice/Beta',
      'bob/bobs-secret',
      'alice/delta_tool',
      'alice/gamma-tool',
      'alice/hidden-tool',
    ])
    expect(names(await s.get(`/repos/search?uid=${a}&exclusive=true&limit=50`, { token: alice.token }))).not.toContain('bob/bobs-secret')
    expect(names(await s.get(`/repos/search?uid=${a}&exclusive=1`, { token: alice.token })).length).toBe(5)
    // Another caller sees the same filter through their own visibility.
    expect(names(await s.get(`/repos/search?uid=${a}`))).toEqual(['alice/alpha', 'alice/Beta', 'alice/delta_tool', 'alice/gamma-tool'])
    expect(names(await s.get(`/repos/search?uid=${orgId}`, { token: carol.token }))).toEqual(['acme/acme-private', 'acme/acme-tool'])
    expect(names(await s.get(`/repos/search?uid=${orgId}`))).toEqual(['acme/acme-tool'])
    expect(names(await s.get('/repos/search?uid=999999'))).toEqual([])
  })

  test('mode: source, fork, mirror, collaborative; anything else 422', async () => {
    const src = names(await s.get('/repos/search?mode=source&limit=50'))
    expect(src).not.toContain('carol/forked')
    expect(src).not.toContain('carol/mirrored')
    expect(src.length).toBe(6)
    expect(names(await s.get('/repos/search?mode=fork'))).toEqual(['carol/forked'])
    expect(names(await s.get('/repos/search?mode=mirror'))).toEqual(['carol/mirrored'])
    expect(names(await s.get(`/repos/search?mode=collaborative&uid=${alice.user.id}`, { token: alice.token }))).toEqual(['bob/bobs-secret'])
    expect(names(await s.get(`/repos/search?mode=collaborative&uid=${alice.user.id}`))).toEqual([])
    const bad = await s.get('/repos/search?mode=weird')
    expect(bad.status).toBe(422)
    expect(bad.body.message).toBe('Invalid search mode: "weird"')
  })

  test('paging: default 10, clamp at 50, 1-based pages, X-Total-Count and Link', async () => {
    const first = await s.get('/repos/search?limit=3', { token: admin.token })
    expect(first.body.data.length).toBe(3)
    expect(first.headers.get('x-total-count')).toBe('11')
    const link = first.headers.get('link')!
    expect(link).toContain('page=2')
    expect(link).toContain('limit=3')
    expect(link).toContain('rel="next"')
    expect(link).toContain('rel="last"')
    expect(link).toContain('/api/v1/repos/search?')
    const last = await s.get('/repos/search?limit=3&page=4', { token: admin.token })
    expect(last.body.data.length).toBe(2)
    expect(last.headers.get('link')).toContain('rel="prev"')
    expect(last.headers.get('link')).not.toContain('rel="next"')
    const beyond = await s.get('/repos/search?limit=3&page=9', { token: admin.token })
    expect(beyond.body.data).toEqual([])
    expect(beyond.headers.get('x-total-count')).toBe('11')
    const pages = [1, 2, 3, 4].map((p) => s.get(`/repos/search?limit=3&page=${p}`, { token: admin.token }))
    const seen = (await Promise.all(pages)).flatMap((r) => names(r))
    expect(new Set(seen).size).toBe(11)
    expect((await s.get('/repos/search', { token: admin.token })).body.data.length).toBe(10)
    expect((await s.get('/repos/search?limit=500', { token: admin.token })).body.data.length).toBe(11)
    expect((await s.get('/repos/search?page=0', { token: admin.token })).body.data.length).toBe(10)
  })

  test('answers follow every write at once (the page cache is emptied by any change)', async () => {
    expect(names(await s.get('/repos/search?q=fresh'))).toEqual([])
    await s.post('/user/repos', { name: 'fresh-one' }, { token: bob.token })
    expect(names(await s.get('/repos/search?q=fresh'))).toEqual(['bob/fresh-one'])
    await s.patch('/repos/bob/fresh-one', { private: true }, { token: bob.token })
    expect(names(await s.get('/repos/search?q=fresh'))).toEqual([])
    expect(names(await s.get('/repos/search?q=fresh', { token: carol.token }))).toEqual([])
    await s.put('/repos/bob/fresh-one/collaborators/carol', {}, { token: bob.token })
    expect(names(await s.get('/repos/search?q=fresh', { token: carol.token }))).toEqual(['bob/fresh-one'])
    await s.del('/repos/bob/fresh-one', undefined, { token: bob.token })
    expect(names(await s.get('/repos/search?q=fresh', { token: bob.token }))).toEqual([])
  })

  test('a write by another connection (e.g. the CLI) is seen too', async () => {
    expect(names(await s.get('/repos/search?q=alpha'))).toEqual(['alice/alpha'])
    // A second connection to the same database (the same SQLite file, or the same PostgreSQL database).
    const other = await openConfiguredDatabase(s.config)
    try {
      await other.update(repositories).set({ isPrivate: true }).where(eq(repositories.lowerName, 'alpha'))
    } finally {
      await closeDatabase(other)
    }
    try {
      // SQLite sees it at the next read; a PostgreSQL server hears of it by a notification that
      // crosses another connection, so the answer may lag the write by that delivery.
      let seen = names(await s.get('/repos/search?q=alpha'))
      for (let waited = 0; seen.length && waited < 10_000; waited += 50) {
        await Bun.sleep(50)
        seen = names(await s.get('/repos/search?q=alpha'))
      }
      expect(seen).toEqual([])
    } finally {
      await s.deps.db.update(repositories).set({ isPrivate: false }).where(eq(repositories.lowerName, 'alpha'))
    }
    expect(names(await s.get('/repos/search?q=alpha'))).toEqual(['alice/alpha'])
  })

  test('permission changes made anywhere (team membership, admin flag) are never answered from the cache', async () => {
    const dora = await s.user('dora')
    const q = '/repos/search?q=acme-private'
    expect(names(await s.get(q, { token: dora.token }))).toEqual([])
    await addTeam(s, orgId, 'Everything', 1, [dora], { all: true })
    const seen = await s.get(q, { token: dora.token })
    expect(names(seen)).toEqual(['acme/acme-private'])
    expect(seen.body.data[0].permissions).toEqual({ admin: false, push: false, pull: true })
    await s.deps.db.delete(teamUsers).where(eq(teamUsers.uid, dora.user.id))
    expect(names(await s.get(q, { token: dora.token }))).toEqual([])
    await s.deps.db.update(users).set({ isAdmin: true }).where(eq(users.id, dora.user.id))
    expect(names(await s.get(q, { token: dora.token }))).toEqual(['acme/acme-private'])
    await s.deps.db.update(users).set({ isAdmin: false }).where(eq(users.id, dora.user.id))
    expect(names(await s.get(q, { token: dora.token }))).toEqual([])
  })

  test('each record of a page equals GET /repos/{o}/{r} for the same caller (shared owner records, memoised)', async () => {
    for (const who of [undefined, alice, carol, admin]) {
      const opts = who ? { token: who.token } : {}
      for (let round = 0; round < 2; round++) {
        const page = await s.get('/repos/search?limit=50', opts)
        expect(page.body.data.length).toBeGreaterThan(3)
        for (const record of page.body.data) expect(record).toEqual((await s.get(`/repos/${record.full_name}`, opts)).body)
      }
    }
  })

  test('records kept with a cached page follow writes to owners and permissions at once', async () => {
    const q = '/repos/search?q=bobs-tool'
    const before = (await s.get(q, { token: carol.token })).body.data[0]
    expect(before.owner.full_name).toBe('')
    expect(before.permissions).toEqual({ admin: false, push: false, pull: true })
    await s.deps.db.update(users).set({ fullName: 'Bob Builder' }).where(eq(users.id, bob.user.id))
    const renamed = (await s.get(q, { token: carol.token })).body.data[0]
    expect(renamed.owner.full_name).toBe('Bob Builder')
    expect((await s.get(q)).body.data[0].owner.full_name).toBe('Bob Builder')
    expect((await s.put('/repos/bob/bobs-tool/collaborators/carol', { permission: 'write' }, { token: bob.token })).status).toBe(204)
    expect((await s.get(q, { token: carol.token })).body.data[0].permissions).toEqual({ admin: false, push: true, pull: true })
    // Another caller's answer for the same page is their own.
    expect((await s.get(q, { token: alice.token })).body.data[0].permissions).toEqual({ admin: false, push: false, pull: true })
    expect((await s.get(q)).body.data[0].owner.email).toBe(`bob@${s.config.noReplyDomain}`)
    expect((await s.get(q, { token: bob.token })).body.data[0].owner.email).not.toBe(`bob@${s.config.noReplyDomain}`)
    expect((await s.del('/repos/bob/bobs-tool/collaborators/carol', undefined, { token: bob.token })).status).toBe(204)
    await s.deps.db.update(users).set({ fullName: '' }).where(eq(users.id, bob.user.id))
  })

  // The page cache keeps what it made while the database's change mark stands still, which it does
  // on SQLite between writes. On PostgreSQL the mark changes at every call by design (other
  // processes write too; src/db/client.ts changeMarkOf), so the cache never keeps anything there:
  // these two tests of what it keeps are SQLite's. The answers' freshness above is tested on both.
  test.skipIf(DIALECT === 'postgres')('recordsOf: made once per page given out and viewer, afresh after any write', async () => {
    const cache = new RepoPageCache(s.deps.db)
    const rows = await s.deps.db.select().from(repositories).limit(3)
    let made = 0
    const make = async () => (made++, [] as any[])
    cache.get('probe')
    cache.recordsOf(rows, 0, make)
    cache.recordsOf(rows, 0, make)
    expect(made).toBe(2) // not a page the cache gave out
    cache.set('page', { rows, total: rows.length })
    const first = cache.recordsOf(rows, 0, make)
    expect(cache.recordsOf(rows, 0, make)).toBe(first)
    cache.recordsOf(rows, alice.user.id, make)
    expect(made).toBe(4)
    await s.deps.db.update(users).set({ fullName: '' }).where(eq(users.id, alice.user.id))
    expect(cache.recordsOf(rows, 0, make)).not.toBe(first)
    expect(made).toBe(5)
  })

  test.skipIf(DIALECT === 'postgres')('the page cache holds a bounded number of rows (oldest pages leave first)', async () => {
    expect(REPO_PAGE_CACHE_ROWS).toBeLessThanOrEqual(5000)
    const rows = await s.deps.db.select().from(repositories).limit(30)
    expect(rows.length).toBeGreaterThan(10)
    const small = new RepoPageCache(s.deps.db, 100)
    small.get('probe')
    for (let i = 0; i < 20; i++) small.set(`k${i}`, { rows, total: rows.length })
    expect(small.size).toBeLessThanOrEqual(100)
    expect(small.get('k19')?.rows.length).toBe(rows.length)
    expect(small.get('k0')).toBeUndefined()
    small.set('huge', { rows: Array(101).fill(rows[0]), total: 101 })
    expect(small.get('huge')).toBeUndefined()
    // The server's own cache stays under its cap after many distinct pages.
    for (let page = 1; page <= 5; page++) await s.get(`/repos/search?limit=50&page=${page}`, { token: admin.token })
    expect(resultCacheOf(s.deps.db).size).toBeLessThanOrEqual(REPO_PAGE_CACHE_ROWS)
  })

  test('archived: true only those, false none of them, empty or absent all (as Renovate autodiscovers with archived=false)', async () => {
    expect((await s.patch('/repos/alice/alpha', { archived: true }, { token: alice.token })).status).toBe(200)
    try {
      const uid = `uid=${alice.user.id}&exclusive=true`
      expect(names(await s.get(`/repos/search?${uid}&archived=true`))).toEqual(['alice/alpha'])
      const live = await s.get(`/repos/search?${uid}&archived=false`)
      expect(names(live)).toEqual(['alice/Beta', 'alice/delta_tool', 'alice/gamma-tool'])
      expect(live.headers.get('x-total-count')).toBe('3')
      expect(names(await s.get(`/repos/search?${uid}&archived=`))).toContain('alice/alpha')
      expect(names(await s.get(`/repos/search?${uid}`))).toContain('alice/alpha')
      expect(names(await s.get('/repos/search?q=alpha&archived=0'))).toEqual([])
    } finally {
      expect((await s.patch('/repos/alice/alpha', { archived: false }, { token: alice.token })).status).toBe(200)
    }
  })

  test('bad parameters answer 422', async () => {
    for (const q of ['uid=abc', 'page=x', 'limit=ten', 'exclusive=maybe', 'archived=maybe'])
      expect((await s.get(`/repos/search?${q}`)).status).toBe(422)
  })

  test('the pages of a search that tests every repository (the explore page) share its count while nothing is written', async () => {
    const sent = statementRecorder(s.deps.db)
    const counted = async (path: string, token?: string) => {
      let total = ''
      const reads = await sent.during(async () => void (total = (await s.get(path, { token })).headers.get('x-total-count')!))
      return [reads.filter((text) => /^select count\(\*\) from "repositories"/.test(text)).length, total]
    }
    await s.post('/user/repos', { name: 'counted' }, { token: carol.token })
    const all = (await counted('/repos/search?limit=2&page=1'))[1]
    expect(Number(all)).toBeGreaterThan(4)
    expect(await counted('/repos/search?limit=2&page=2')).toEqual([0, all])
    expect(await counted('/repos/search?limit=3&page=3')).toEqual([0, all])
    // Another caller sees more (alice's private repositories): counted again.
    const alices = await counted('/repos/search?limit=2&page=2', alice.token)
    expect([alices[0], Number(alices[1]) > Number(all)]).toEqual([1, true])
    await s.post('/user/repos', { name: 'counted-again' }, { token: carol.token })
    expect(await counted('/repos/search?limit=2&page=2')).toEqual([1, String(Number(all) + 1)])
  })
})
