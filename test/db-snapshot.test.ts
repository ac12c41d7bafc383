import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { contentMark } from './db-snapshot'

/**
 * The instrument of every "the request changed nothing" check (test/db-snapshot.ts): the mark
 * stays still over reads and refusals and moves at every write, on SQLite (the serving
 * connection's count of changed rows) and on PostgreSQL (a trigger's count of changed rows).
 */

let s: TestServer
let alice: TestUser
let bob: TestUser
beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
})
afterAll(() => s.stop())

test('reads and refused writes leave the mark; each write, an insert, an update or a delete, moves it', async () => {
  const mark = contentMark(s.deps.db)
  let before = await mark()
  const still = async (what: string) => {
    const now = await mark()
    expect(`${what}: ${now}`).toBe(`${what}: ${before}`)
  }
  const moved = async (what: string) => {
    const now = await mark()
    expect(`${what}: ${now === before ? 'still' : 'moved'}`).toBe(`${what}: moved`)
    before = now
  }
  expect((await s.post('/user/repos', { name: 'kept', auto_init: true }, { token: alice.token })).status).toBe(201)
  await moved('a repository made')
  expect((await s.get('/repos/alice/kept', { token: alice.token })).status).toBe(200)
  expect((await s.get('/repos/alice/kept/issues', { token: bob.token })).status).toBe(200)
  await still('reads')
  expect((await s.patch('/repos/alice/kept', { description: 'not yours' }, { token: bob.token })).status).toBe(403)
  expect((await s.del('/repos/alice/kept', undefined, { token: bob.token })).status).toBe(403)
  await still('refused writes')
  expect((await s.patch('/repos/alice/kept', { description: 'changed' }, { token: alice.token })).status).toBe(200)
  await moved('an update')
  const issue = await s.post('/repos/alice/kept/issues', { title: 'one' }, { token: alice.token })
  expect(issue.status).toBe(201)
  await moved('an insert')
  expect((await s.del(`/repos/alice/kept/issues/${issue.body.number}`, undefined, { token: alice.token })).status).toBe(204)
  await moved('a delete')
  // A second mark on the same database counts the same changes.
  const again = contentMark(s.deps.db)
  const first = await again()
  expect(await again()).toBe(first)
})
