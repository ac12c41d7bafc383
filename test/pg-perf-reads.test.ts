/**
 * The hot reads send nothing to the database once warm, while it is unchanged: a repository
 * found by name (every repository route's first lookup: GET /repos/{o}/{r}, the issue list) is
 * kept under the database's change mark (auth/repo-context.ts, db/page-cache.ts), as
 * tokens and users found by name are. Counted, never timed: a repeated GET /repos/{o}/{r} sends no statement (on SQLite
 * only the change mark's own `user_version` read), nor a page of the issue list read again (its
 * JSON text kept under the same mark, as pull request pages are). Any write is seen at the next
 * request (on PostgreSQL one made by another process too: test/pg-perf-cache.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { changeMarkOf, writeTransaction } from '../src/db/client'
import { users } from '../src/db/schema'
import { PageCache } from '../src/db/page-cache'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { statementRecorder } from './query-counter'

let s: TestServer
let owner: TestUser
let other: TestUser
let sent: ReturnType<typeof statementRecorder>

/** The change mark's own read on SQLite (a pragma, not a row read); PostgreSQL's mark sends nothing. */
const changeMarkRead = (text: string) => text.includes('pragma_user_version')

/** The statements (other than the change mark's) that `fn`'s requests send. */
async function statementsOf(fn: () => Promise<unknown>): Promise<string[]> {
  return (await sent.during(fn)).filter((text) => !changeMarkRead(text))
}

/** GETs `path` twice (warm), then answers the statements a third GET sends, and its answer. */
async function warmStatements(path: string, token?: string): Promise<{ statements: string[]; status: number; body: any }> {
  const auth = token ? { token } : {}
  for (let i = 0; i < 2; i++) expect((await s.get(path, auth)).status).toBe(200)
  let res!: Awaited<ReturnType<TestServer['get']>>
  const statements = await statementsOf(async () => (res = await s.get(path, auth)))
  return { statements, status: res.status, body: res.body }
}

beforeAll(async () => {
  s = await startTestServer()
  sent = statementRecorder(s.deps.db)
  owner = await s.user('reader')
  other = await s.user('visitor')
  expect((await s.post('/user/repos', { name: 'shelf', description: 'first' }, { token: owner.token })).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'ledger' }, { token: owner.token })).status).toBe(201)
  for (let i = 1; i <= 35; i++) expect((await s.post('/repos/reader/ledger/issues', { title: `Issue ${i}` }, { token: owner.token })).status).toBe(201)
}, 240_000)

afterAll(async () => {
  await s?.stop()
})

describe('warm reads send no statement', () => {
  test('GET /repos/{o}/{r}, anonymous and with a token, sends nothing once warm', async () => {
    const anonymous = await warmStatements('/repos/reader/shelf')
    expect(anonymous.body.full_name).toBe('reader/shelf')
    expect(anonymous.statements).toEqual([])
    const signed = await warmStatements('/repos/reader/shelf', owner.token)
    expect(signed.body.permissions.admin).toBe(true)
    expect(signed.statements).toEqual([])
    // Another signed-in user: their access is worked out from the kept rows, with their own grants read.
    const visitor = await warmStatements('/repos/reader/shelf', other.token)
    expect(visitor.body.permissions).toMatchObject({ admin: false, push: false, pull: true })
    expect(visitor.statements.every((text) => !/from "repositories"/.test(text))).toBe(true)
  }, 240_000)

  test('GET /users/{username} sends nothing once warm; a profile edited is seen at once', async () => {
    const warm = await warmStatements('/users/reader', other.token)
    expect(warm.body.login).toBe('reader')
    expect(warm.statements).toEqual([])
    expect((await s.patch('/user/settings', { full_name: 'Reader Renamed' }, { token: owner.token })).status).toBe(200)
    expect((await s.get('/users/reader', { token: other.token })).body.full_name).toBe('Reader Renamed')
  }, 240_000)

  test('a page of the issue list sends nothing once warm; another page, filter or viewer is made afresh', async () => {
    const { statements, body } = await warmStatements('/repos/reader/ledger/issues?state=open&page=2&limit=30')
    expect(body.map((i: { number: number }) => i.number)).toEqual([5, 4, 3, 2, 1])
    expect(statements).toEqual([])
    const first = await statementsOf(() => s.get('/repos/reader/ledger/issues?state=open&page=1&limit=30'))
    expect(first.some((text) => /from "issues"/.test(text))).toBe(true)
    const signed = await statementsOf(() => s.get('/repos/reader/ledger/issues?state=open&page=2&limit=30', { token: other.token }))
    expect(signed.some((text) => /from "issues"/.test(text))).toBe(true)
    // Whatever is made afresh, the repository is not looked up again.
    expect([...first, ...signed].filter((text) => /from "repositories"|"users"\."lower_name" = /.test(text))).toEqual([])
  }, 240_000)

  test('an issue filed, edited or labelled is in the next page read', async () => {
    const path = '/repos/reader/ledger/issues?state=open&limit=1'
    expect((await warmStatements(path)).body[0].title).toBe('Issue 35')
    const filed = await s.post('/repos/reader/ledger/issues', { title: 'Issue 36' }, { token: owner.token })
    expect(filed.status).toBe(201)
    const listed = await s.get(path)
    expect(listed.body[0].title).toBe('Issue 36')
    expect(listed.headers.get('x-total-count')).toBe('36')
    expect((await s.patch('/repos/reader/ledger/issues/36', { title: 'Issue 36, edited' }, { token: owner.token })).status).toBe(201)
    expect((await s.get(path)).body[0].title).toBe('Issue 36, edited')
    const label = await s.post('/repos/reader/ledger/labels', { name: 'urgent', color: '#ff0000' }, { token: owner.token })
    expect((await s.post('/repos/reader/ledger/issues/36/labels', { labels: [label.body.id] }, { token: owner.token })).status).toBe(200)
    expect((await s.get(path)).body[0].labels.map((l: { name: string }) => l.name)).toEqual(['urgent'])
    expect((await s.patch('/repos/reader/ledger/issues/36', { state: 'closed' }, { token: owner.token })).status).toBe(201)
    expect((await s.get(path)).body[0].title).toBe('Issue 35')
  }, 240_000)
})

describe('a write is seen at the next request', () => {
  // An edit and a repository made private: test/record-json.test.ts.
  test('a collaborator added, a rename, a deletion', async () => {
    expect((await s.patch('/repos/reader/shelf', { private: true }, { token: owner.token })).status).toBe(200)
    await warmStatements('/repos/reader/shelf', owner.token)
    expect((await s.get('/repos/reader/shelf', { token: other.token })).status).toBe(404)
    expect((await s.put(`/repos/reader/shelf/collaborators/${other.name}`, { permission: 'read' }, { token: owner.token })).status).toBe(204)
    expect((await s.get('/repos/reader/shelf', { token: other.token })).status).toBe(200)

    expect((await s.patch('/repos/reader/shelf', { name: 'bookcase' }, { token: owner.token })).status).toBe(200)
    const moved = await s.get('/repos/reader/shelf', { token: owner.token })
    expect(moved.status).toBe(307)
    expect(moved.headers.get('location')).toContain('/repos/reader/bookcase')
    expect((await s.get('/repos/reader/bookcase', { token: owner.token })).body.name).toBe('bookcase')

    expect((await s.del('/repos/reader/bookcase', undefined, { token: owner.token })).status).toBe(204)
    expect((await s.get('/repos/reader/bookcase', { token: owner.token })).status).toBe(404)
  }, 240_000)

  test('the owner renamed: the old name finds nothing, the new one the repository', async () => {
    const admin = await s.user('steward', { admin: true })
    const mover = await s.user('mover')
    expect((await s.post('/user/repos', { name: 'crate' }, { token: mover.token })).status).toBe(201)
    await warmStatements('/repos/mover/crate')
    await warmStatements('/users/mover')
    expect((await s.post('/admin/users/mover/rename', { new_username: 'carrier' }, { token: admin.token })).status).toBe(204)
    expect((await s.get('/repos/mover/crate')).status).toBe(404)
    expect((await s.get('/users/mover')).status).toBe(404)
    expect((await s.get('/users/carrier')).body.login).toBe('carrier')
    expect((await s.get('/repos/carrier/crate')).body.full_name).toBe('carrier/crate')
  }, 240_000)
})

describe('PageCache.getOrRead', () => {
  test('keeps what it read, bounded, and nothing read inside a write transaction', async () => {
    // Background work (the outbox's consumers) writes too, which forgets everything kept: the
    // round is tried again until no write landed during it.
    const changeMark = changeMarkOf(s.deps.db)
    let answers: (string | undefined)[] = []
    let size = 0
    for (let round = 0; round < 50; round++) {
      const kept = new PageCache<string>(s.deps.db, { maxCost: 2 })
      let reads = 0
      const read = async () => `value ${++reads}`
      const mark = changeMark()
      answers = [await kept.getOrRead('a', read), await kept.getOrRead('a', read), await kept.getOrRead('b', read), await kept.getOrRead('c', read)]
      size = kept.size
      // At most two: the oldest, a, left first. Nothing found is not kept.
      answers.push(await kept.getOrRead('a', read), await kept.getOrRead('none', async () => undefined), await kept.getOrRead('none', async () => 'found'))
      if (changeMark() === mark) break
      await Bun.sleep(100)
    }
    expect(answers).toEqual(['value 1', 'value 1', 'value 2', 'value 3', 'value 4', undefined, 'found'])
    expect(size).toBe(2)

    // Inside a write transaction the database is read, what is kept not given, nothing kept (a
    // transaction sees its own writes before the mark moves; a rollback does not move it).
    const kept = new PageCache<string>(s.deps.db, { maxCost: 2 })
    expect(await kept.getOrRead('a', async () => 'outside')).toBe('outside')
    await writeTransaction(s.deps.db, async () => {
      expect(await kept.getOrRead('a', async () => 'inside')).toBe('inside')
      expect(await kept.getOrRead('b', async () => 'inside once')).toBe('inside once')
      expect(await kept.getOrRead('b', async () => 'inside twice')).toBe('inside twice')
    })
  }, 240_000)

  test('getOrMake: a page whose reads a write landed during is not kept; nothing made inside a write transaction is', async () => {
    const pages = new PageCache<Promise<string>>(s.deps.db, { maxCost: 4 })
    // The write moves the mark (on SQLite this connection's changes, on PostgreSQL its commit):
    // the page is not handed out again.
    const made = pages.getOrMake('page', async () => {
      await writeTransaction(s.deps.db, async () => {
        await s.deps.db.update(users).set({ fullName: 'Reader' }).where(eq(users.id, owner.user.id))
      })
      return 'made before the write was seen'
    })
    expect(await made).toBe('made before the write was seen')
    expect(pages.get('page')).toBeUndefined()
    expect(pages.size).toBe(0)
    await writeTransaction(s.deps.db, async () => {
      expect(await pages.getOrMake('inside', async () => 'inside once')).toBe('inside once')
      expect(await pages.getOrMake('inside', async () => 'inside twice')).toBe('inside twice')
      expect(pages.size).toBe(0)
    })
  }, 240_000)
})
