// runs in one half: postgresql
/**
 * The page caches on PostgreSQL, across processes: two `warren serve` processes on one database
 * (as behind a load balancer). A list answered by process B is kept by B (a change made behind
 * Warren's back, straight in the database, is not seen), and a write through process A empties
 * B's cache (B then answers what the database holds, that change included). When B's listening
 * connection is cut, B keeps nothing until it listens again, so it never answers from a cache
 * that may have missed a notification. The same holds for a repository B found by name (every
 * repository route's first lookup, kept while the database is unchanged) and a page of its
 * issue list: A's edits, a repository made private, a rename and a new issue reach B. Runs in every test run, whatever its own dialect:
 * the servers are processes of their own; PostgreSQL must be reachable, or this fails.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { apiCall, rootAuth, servedOnPostgres, type Served } from './process-helpers'
import { until } from './webhook-receiver'

let served: Awaited<ReturnType<typeof servedOnPostgres>>
let probe: SQL
let a: Served
let b: Served

const call = (server: Served, method: string, path: string, body?: unknown) => apiCall(server, rootAuth, method, path, body)
/** A GET with no credentials. */
const anonymous = (server: Served, path: string) => apiCall(server, '', 'GET', path)

/** The descriptions of root's repositories named like `q`, as B's search answers them, by name. */
async function searched(server: Served, q: string): Promise<Record<string, string>> {
  const res = await call(server, 'GET', `/repos/search?q=${q}&limit=50`)
  expect(res.status).toBe(200)
  return Object.fromEntries((res.body.data as { name: string; description: string }[]).map((r) => [r.name, r.description]))
}

/** Waits (60 s at most) until `check` answers something. */
const eventually = <T>(check: () => Promise<T | null | false | undefined>, what: string) => until(check, what, 600, 100)

/** Changes a description straight in the database: no Warren process is told. */
const behindTheBack = (name: string, description: string) =>
  probe.unsafe(`update repositories set description = $1 where lower_name = $2`, [description, name])

/**
 * Whether B is seen answering from its cache (`described`: what B answers now, a description, a
 * full name): a change made behind the back (`change`, to each round's value) goes unseen. Background work (the outbox's consumers) writes too,
 * and each such write empties the caches; so the change is made again, a few times, until B is
 * seen keeping its answer at least once.
 */
async function keptByB(described: () => Promise<string | undefined>, change: (value: string) => Promise<unknown>): Promise<boolean> {
  for (let round = 0; round < 50; round++) {
    await described()
    await change(`round ${round}`)
    if ((await described()) !== `round ${round}`) return true
    await Bun.sleep(200)
  }
  return false
}

/** Whether B is seen answering a search from its cache. */
const answersFromCache = (q: string, name: string) => keptByB(async () => (await searched(b, q))[name], (value) => behindTheBack(name, value))

beforeAll(async () => {
  served = await servedOnPostgres('warren_cache', 2)
  a = served.servers[0]!
  b = served.servers[1]!
  probe = new SQL(served.database.url, { max: 1 })
}, 240_000)

afterAll(async () => {
  await probe?.close()
  await served?.stop()
})

describe('page caches across processes on one PostgreSQL database', () => {
  test("B keeps its answer; a write through A empties B's cache", async () => {
    expect((await call(a, 'POST', '/user/repos', { name: 'kept-one', description: 'first' })).status).toBe(201)
    // B answers from its cache: a change made behind Warren's back goes unseen.
    expect(await answersFromCache('kept', 'kept-one')).toBe(true)
    const before = await searched(b, 'kept')
    expect(before['kept-two']).toBeUndefined()

    // A write through A: B's cache is emptied, B reads the database again (both changes).
    expect((await call(a, 'POST', '/user/repos', { name: 'kept-two', description: 'second' })).status).toBe(201)
    const after = await eventually(async () => {
      const now = await searched(b, 'kept')
      return now['kept-two'] ? now : null
    }, "B's cache emptied by A's write")
    expect(after['kept-two']).toBe('second')
    const behind = (await probe.unsafe(`select description from repositories where lower_name = 'kept-one'`))[0].description
    expect(after['kept-one']).toBe(behind)
  }, 240_000)

  test('B keeps nothing while its listening connection is cut, and caches again once it listens', async () => {
    expect((await call(a, 'POST', '/user/repos', { name: 'cut-one', description: 'before' })).status).toBe(201)
    await eventually(async () => (await searched(b, 'cut'))['cut-one'] === 'before' || null, 'B to see cut-one')
    const listeners = async () =>
      await probe.unsafe(`select pid from pg_stat_activity where datname = current_database() and application_name = 'warren' and query ilike 'listen%'`)
    // Both processes listen once a cache has asked (A answered no search yet: B's listener at least).
    await eventually(async () => (await listeners()).length >= 1 || null, 'a listening connection')
    await probe.unsafe(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = 'warren' and query ilike 'listen%'`)
    // A change behind the back, with no notification: B may have missed one while cut, so it
    // must not answer from what it held before.
    await behindTheBack('cut-one', 'while cut')
    await eventually(async () => (await searched(b, 'cut'))['cut-one'] === 'while cut' || null, 'B to read the database again')
    // Listening again (Bun's client reconnects), B caches again: a later change behind the back goes unseen for a while.
    await eventually(async () => (await listeners()).length >= 1 || null, 'B to listen again')
    expect(await answersFromCache('cut', 'cut-one')).toBe(true)
  }, 240_000)

  test('a repository B found by name is kept; an edit, a privacy change, a rename and a new issue through A reach B', async () => {
    expect((await call(a, 'POST', '/user/repos', { name: 'found-one', description: 'one' })).status).toBe(201)
    const description = async () => (await anonymous(b, '/repos/root/found-one')).body?.description as string | undefined
    await eventually(async () => (await description()) === 'one' || null, 'B to see found-one')
    expect(await keptByB(description, (value) => behindTheBack('found-one', value))).toBe(true)

    expect((await call(a, 'PATCH', '/repos/root/found-one', { description: 'two' })).status).toBe(200)
    await eventually(async () => (await description()) === 'two' || null, "B to see A's edit")

    expect((await call(a, 'PATCH', '/repos/root/found-one', { private: true })).status).toBe(200)
    await eventually(async () => (await anonymous(b, '/repos/root/found-one')).status === 404 || null, 'B to hide the repository made private')
    expect((await call(b, 'GET', '/repos/root/found-one')).body.private).toBe(true)

    expect((await call(a, 'PATCH', '/repos/root/found-one', { name: 'found-two' })).status).toBe(200)
    // The old name leads to the new one (a 307, which fetch follows).
    await eventually(async () => (await call(b, 'GET', '/repos/root/found-one')).body?.full_name === 'root/found-two' || null, 'B to lead the old name to the new')

    // A page of its issue list, kept by B: an issue filed through A is in it.
    const titles = async () => ((await call(b, 'GET', '/repos/root/found-two/issues?state=open')).body as { title: string }[]).map((i) => i.title)
    expect((await call(a, 'POST', '/repos/root/found-two/issues', { title: 'first' })).status).toBe(201)
    await eventually(async () => (await titles()).length === 1 || null, 'B to list the first issue')
    expect((await call(a, 'POST', '/repos/root/found-two/issues', { title: 'second' })).status).toBe(201)
    await eventually(async () => (await titles()).length === 2 || null, 'B to list the issue filed through A')
    expect(await titles()).toEqual(['second', 'first'])
  }, 240_000)

  test("a token B found is kept across A's comments, which change neither tokens nor users; a new token through A forgets it", async () => {
    expect((await call(a, 'POST', '/user/repos', { name: 'scoped' })).status).toBe(201)
    expect((await call(a, 'POST', '/repos/root/scoped/issues', { title: 'talk' })).status).toBe(201)
    const token = (await call(a, 'POST', '/users/root/tokens', { name: 'scoped-kept', scopes: ['all'] })).body.sha1 as string
    // The caller B answers for the token: its owner as found with it (the full name is changed behind the back).
    const fullName = async () => (await apiCall(b, `token ${token}`, 'GET', '/user')).body?.full_name as string | undefined
    const rename = (name: string) => probe.unsafe(`update users set full_name = $1 where lower_name = 'root'`, [name])
    expect(await keptByB(fullName, rename)).toBe(true)
    const kept = await fullName()
    const comments = async () => (await anonymous(b, '/repos/root/scoped/issues/1')).body?.comments as number | undefined
    expect(await comments()).toBe(0)
    // A comment through A: B hears of it (its issue, kept with no comment, is read again), and
    // still answers the token's owner as it found it (the comment wrote comments, issues and events only).
    expect((await call(a, 'POST', '/repos/root/scoped/issues/1/comments', { body: 'first' })).status).toBe(201)
    await eventually(async () => (await comments()) === 1 || null, "B to hear of A's comment")
    expect(await fullName()).toBe(kept)
    // A new token through A: B forgets the tokens it found and reads the owner as the database holds it.
    expect((await call(a, 'POST', '/users/root/tokens', { name: 'scoped-new', scopes: ['all'] })).status).toBe(201)
    await eventually(async () => (await fullName()) !== kept || null, "B to forget the tokens on A's new one")
  }, 240_000)
})
