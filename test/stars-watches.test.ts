import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { count, eq } from 'drizzle-orm'
import { giteaApi } from 'gitea-js'
import { repositories, stars, users, watches } from '../src/db/schema'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/** Stars and watches: the routes, their refusals, exact counters, privacy of the lists. */

let s: TestServer
let root: TestUser, alice: TestUser, bob: TestUser, carol: TestUser, dave: TestUser
const as = (u: TestUser) => ({ token: u.token })

const repoRow = async (name: string) => (await s.deps.db.select().from(repositories).where(eq(repositories.name, name)))[0]!
const starRows = async (repoId: number) => (await s.deps.db.select({ n: count() }).from(stars).where(eq(stars.repoId, repoId)))[0]!.n
const watchRows = async (repoId: number) => (await s.deps.db.select({ n: count() }).from(watches).where(eq(watches.repoId, repoId)))[0]!.n
const userRow = async (id: number) => (await s.deps.db.select().from(users).where(eq(users.id, id)))[0]!
/** Repositories by full name, users by login, sorted. */
const names = (list: { full_name?: string; login?: string; owner?: unknown }[]) => list.map((x) => (x.owner ? x.full_name : x.login)).sort()

beforeAll(async () => {
  s = await startTestServer()
  root = await s.user('root', { admin: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  dave = await s.user('dave')
  for (const [name, extra] of [
    ['pub', {}],
    ['priv', { private: true }],
    ['arch', {}],
  ] as const)
    expect((await s.post('/user/repos', { name, auto_init: true, ...extra }, as(alice))).status).toBe(201)
  expect((await s.put('/repos/alice/priv/collaborators/bob', { permission: 'read' }, as(alice))).status).toBe(204)
  expect((await s.patch('/repos/alice/arch', { archived: true }, as(alice))).status).toBe(200)
})
afterAll(() => s.stop())

describe('watching on creation', () => {
  test('the creator of a repository watches it, as Gitea', async () => {
    const repo = await s.get('/repos/alice/pub', as(alice))
    expect(repo.body.watchers_count).toBe(1)
    expect((await repoRow('pub')).numWatches).toBe(await watchRows((await repoRow('pub')).id))
    const subscribers = await s.get('/repos/alice/pub/subscribers')
    expect(subscribers.status).toBe(200)
    expect(names(subscribers.body)).toEqual(['alice'])
    expect(subscribers.headers.get('x-total-count')).toBe('1')
  })

  test('an organisation repository is watched by the member who created it, not the organisation', async () => {
    expect((await s.post('/orgs', { username: 'acme' }, as(alice))).status).toBe(201)
    expect((await s.post('/orgs/acme/repos', { name: 'tool' }, as(alice))).status).toBe(201)
    const subscribers = await s.get('/repos/acme/tool/subscribers')
    expect(names(subscribers.body)).toEqual(['alice'])
    expect((await s.get('/repos/acme/tool')).body.watchers_count).toBe(1)
  })
})

describe('stars', () => {
  test('starring: refusals (anonymous 401, hidden or unknown repository 404) change nothing', async () => {
    const before = (await repoRow('priv')).numStars
    expect((await s.put('/user/starred/alice/pub')).status).toBe(401)
    expect((await s.get('/user/starred/alice/pub')).status).toBe(401)
    expect((await s.del('/user/starred/alice/pub')).status).toBe(401)
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const hidden = await s.request(method, '/user/starred/alice/priv', as(carol))
      expect(hidden.status).toBe(404)
      expect(typeof hidden.body.message).toBe('string')
      expect((await s.request(method, '/user/starred/alice/nope', as(carol))).status).toBe(404)
      expect((await s.request(method, '/user/starred/nobody/pub', as(carol))).status).toBe(404)
    }
    expect((await repoRow('priv')).numStars).toBe(before)
    expect(await starRows((await repoRow('priv')).id)).toBe(0)
    // Lists of a hidden or unknown repository.
    expect((await s.get('/repos/alice/priv/stargazers', as(carol))).status).toBe(404)
    expect((await s.get('/repos/alice/priv/stargazers')).status).toBe(404)
    expect((await s.get('/repos/alice/nope/stargazers', as(carol))).status).toBe(404)
  })

  test('star, check, list, unstar (idempotent), with the counters', async () => {
    expect((await s.get('/user/starred/alice/pub', as(bob))).status).toBe(404)
    expect((await s.put('/user/starred/alice/pub', undefined, as(bob))).status).toBe(204)
    expect((await s.put('/user/starred/alice/pub', undefined, as(bob))).status).toBe(204)
    expect((await s.get('/user/starred/alice/pub', as(bob))).status).toBe(204)
    expect((await s.put('/user/starred/alice/priv', undefined, as(bob))).status).toBe(204)
    expect((await s.put('/user/starred/alice/pub', undefined, as(carol))).status).toBe(204)

    expect((await s.get('/repos/alice/pub')).body.stars_count).toBe(2)
    expect((await s.get('/users/bob', as(bob))).body.starred_repos_count).toBe(2)
    const gazers = await s.get('/repos/alice/pub/stargazers')
    expect(gazers.status).toBe(200)
    expect(names(gazers.body)).toEqual(['bob', 'carol'])
    expect(gazers.headers.get('x-total-count')).toBe('2')
    const paged = await s.get('/repos/alice/pub/stargazers?limit=1&page=2')
    expect(names(paged.body)).toEqual(['carol'])
    expect(paged.headers.get('link')).toContain('rel="first"')

    const mine = await s.get('/user/starred', as(bob))
    expect(mine.status).toBe(200)
    expect(names(mine.body)).toEqual(['alice/priv', 'alice/pub'])
    expect(mine.headers.get('x-total-count')).toBe('2')
    expect(mine.body.find((r: any) => r.name === 'pub').stars_count).toBe(2)

    expect((await s.del('/user/starred/alice/pub', undefined, as(carol))).status).toBe(204)
    expect((await s.del('/user/starred/alice/pub', undefined, as(carol))).status).toBe(204)
    expect((await s.get('/user/starred/alice/pub', as(carol))).status).toBe(404)
    expect((await s.get('/repos/alice/pub')).body.stars_count).toBe(1)
    expect((await userRow(carol.user.id)).numStars).toBe(0)
    expect((await repoRow('pub')).numStars).toBe(await starRows((await repoRow('pub')).id))
  })

  test("a user's starred list shows another caller only public repositories it may read (Gitea: private ones to the user alone); hidden users answer like unknown ones", async () => {
    expect((await s.get('/users/bob/starred')).status).toBe(401)
    const byCarol = await s.get('/users/bob/starred', as(carol))
    expect(byCarol.status).toBe(200)
    expect(names(byCarol.body)).toEqual(['alice/pub'])
    expect(byCarol.headers.get('x-total-count')).toBe('1')
    // Not even the repository's owner or a site admin learns what bob starred in private.
    expect(names((await s.get('/users/bob/starred', as(alice))).body)).toEqual(['alice/pub'])
    expect(names((await s.get('/users/bob/starred', as(root))).body)).toEqual(['alice/pub'])
    expect(names((await s.get('/users/bob/starred', as(bob))).body)).toEqual(['alice/priv', 'alice/pub'])

    const unknown = await s.get('/users/nobody/starred', as(carol))
    expect(unknown.status).toBe(404)
    await s.deps.db.update(users).set({ visibility: 'private' }).where(eq(users.id, dave.user.id))
    expect((await s.put('/user/starred/alice/pub', undefined, as(dave))).status).toBe(204)
    const hidden = await s.get('/users/dave/starred', as(carol))
    expect(hidden.status).toBe(404)
    expect(hidden.body.message).toBe(unknown.body.message.replace('nobody', 'dave'))
    expect(names((await s.get('/users/dave/starred', as(dave))).body)).toEqual(['alice/pub'])
    // Stargazers are users too: a private one is listed only to those who may see them.
    expect(names((await s.get('/repos/alice/pub/stargazers', as(carol))).body)).toEqual(['bob'])
    expect((await s.get('/repos/alice/pub/stargazers', as(carol))).headers.get('x-total-count')).toBe('1')
    expect(names((await s.get('/repos/alice/pub/stargazers', as(root))).body)).toEqual(['bob', 'dave'])
  })

  test('starring an archived repository works, as in Gitea', async () => {
    expect((await s.put('/user/starred/alice/arch', undefined, as(carol))).status).toBe(204)
    expect((await s.get('/repos/alice/arch')).body.stars_count).toBe(1)
    expect((await s.del('/user/starred/alice/arch', undefined, as(carol))).status).toBe(204)
    expect((await s.get('/repos/alice/arch')).body.stars_count).toBe(0)
  })

  test('paging parameters are bounded', async () => {
    expect((await s.get('/repos/alice/pub/stargazers?page=abc')).status).toBe(422)
    expect((await s.get('/user/starred?limit=x', as(bob))).status).toBe(422)
  })
})

describe('watches', () => {
  test('subscription: refusals', async () => {
    expect((await s.get('/repos/alice/pub/subscription')).status).toBe(401)
    expect((await s.put('/repos/alice/pub/subscription')).status).toBe(401)
    expect((await s.del('/repos/alice/pub/subscription')).status).toBe(401)
    for (const method of ['GET', 'PUT', 'DELETE']) {
      // A hidden repository answers 404 before an anonymous caller's 401.
      expect((await s.request(method, '/repos/alice/priv/subscription')).status).toBe(404)
      expect((await s.request(method, '/repos/alice/priv/subscription', as(carol))).status).toBe(404)
      expect((await s.request(method, '/repos/alice/nope/subscription', as(carol))).status).toBe(404)
    }
    expect(await watchRows((await repoRow('priv')).id)).toBe(1)
    expect((await s.get('/repos/alice/priv/subscribers', as(carol))).status).toBe(404)
    expect((await s.get('/repos/alice/nope/subscribers')).status).toBe(404)
  })

  test('watch, check (WatchInfo), list, unwatch', async () => {
    expect((await s.get('/repos/alice/pub/subscription', as(bob))).status).toBe(404)
    const put = await s.put('/repos/alice/pub/subscription', undefined, as(bob))
    expect(put.status).toBe(200)
    const created = (await s.get('/repos/alice/pub')).body.created_at
    expect(put.body).toEqual({
      subscribed: true,
      ignored: false,
      reason: null,
      created_at: created,
      url: `${s.url}/api/v1/repos/alice/pub/subscription`,
      repository_url: `${s.url}/api/v1/repos/alice/pub`,
    })
    expect((await s.put('/repos/alice/pub/subscription', undefined, as(bob))).status).toBe(200)
    const get = await s.get('/repos/alice/pub/subscription', as(bob))
    expect(get.status).toBe(200)
    expect(get.body).toEqual(put.body)
    expect((await s.get('/repos/alice/pub')).body.watchers_count).toBe(2)
    expect(names((await s.get('/repos/alice/pub/subscribers')).body)).toEqual(['alice', 'bob'])

    expect((await s.put('/repos/alice/priv/subscription', undefined, as(bob))).status).toBe(200)
    expect(names((await s.get('/user/subscriptions', as(bob))).body)).toEqual(['alice/priv', 'alice/pub'])
    expect((await s.get('/user/subscriptions')).status).toBe(401)
    expect((await s.get('/users/bob/subscriptions')).status).toBe(401)
    expect(names((await s.get('/users/bob/subscriptions', as(carol))).body)).toEqual(['alice/pub'])
    expect(names((await s.get('/users/bob/subscriptions', as(alice))).body)).toEqual(['alice/pub']) // another user's private watches stay theirs
    expect((await s.get('/users/dave/subscriptions', as(carol))).status).toBe(404)

    // Watching an archived repository works too.
    expect((await s.put('/repos/alice/arch/subscription', undefined, as(carol))).status).toBe(200)
    expect((await s.del('/repos/alice/arch/subscription', undefined, as(carol))).status).toBe(204)

    expect((await s.del('/repos/alice/pub/subscription', undefined, as(bob))).status).toBe(204)
    expect((await s.del('/repos/alice/pub/subscription', undefined, as(bob))).status).toBe(204)
    expect((await s.get('/repos/alice/pub/subscription', as(bob))).status).toBe(404)
    expect((await s.get('/repos/alice/pub')).body.watchers_count).toBe(1)
    for (const name of ['pub', 'priv', 'arch']) expect((await repoRow(name)).numWatches).toBe(await watchRows((await repoRow(name)).id))
  })

  test('a user who loses access stops seeing the repository in their lists', async () => {
    expect(names((await s.get('/user/starred', as(bob))).body)).toContain('alice/priv')
    expect((await s.del('/repos/alice/priv/collaborators/bob', undefined, as(alice))).status).toBe(204)
    expect(names((await s.get('/user/starred', as(bob))).body)).toEqual(['alice/pub'])
    expect(names((await s.get('/user/subscriptions', as(bob))).body)).toEqual([])
    expect((await s.get('/user/starred/alice/priv', as(bob))).status).toBe(404)
    // The rows stay (as in Gitea); access given back shows the repository again.
    expect((await s.put('/repos/alice/priv/collaborators/bob', { permission: 'read' }, as(alice))).status).toBe(204)
    expect(names((await s.get('/user/starred', as(bob))).body)).toEqual(['alice/priv', 'alice/pub'])
  })
})

describe('counters under concurrency', () => {
  test('50 users toggling stars and watches at once leave the counters exact', async () => {
    expect((await s.post('/user/repos', { name: 'busy' }, as(alice))).status).toBe(201)
    const crowd = await Promise.all(Array.from({ length: 50 }, (_, i) => s.user(`fan${i}`)))
    // Each user sends several toggles at once; even-numbered users end starred and watching.
    await Promise.all(
      crowd.map(async (u, i) => {
        const sequence = i % 2 === 0 ? ['PUT', 'DELETE', 'PUT', 'PUT'] : ['PUT', 'PUT', 'DELETE']
        const sent = sequence.flatMap((method) => [
          s.request(method, '/user/starred/alice/busy', as(u)),
          s.request(method, '/repos/alice/busy/subscription', as(u)),
        ])
        for (const r of await Promise.all(sent)) expect([200, 204]).toContain(r.status)
      }),
    )
    const busy = await repoRow('busy')
    expect(busy.numStars).toBe(await starRows(busy.id))
    expect(busy.numWatches).toBe(await watchRows(busy.id))
    const api = (await s.get('/repos/alice/busy')).body
    expect(api.stars_count).toBe(busy.numStars)
    expect(api.watchers_count).toBe(busy.numWatches)
    for (const u of crowd) {
      const starred = (await s.deps.db.select({ n: count() }).from(stars).where(eq(stars.userId, u.user.id)))[0]!.n
      expect((await userRow(u.user.id)).numStars).toBe(starred)
    }
    // Then a settled round: everyone stars, then everyone but alice unwatches, all at once.
    await Promise.all(crowd.map((u) => s.put('/user/starred/alice/busy', undefined, as(u))))
    await Promise.all(crowd.map((u) => s.del('/repos/alice/busy/subscription', undefined, as(u))))
    expect((await repoRow('busy')).numStars).toBe(50)
    expect(await starRows(busy.id)).toBe(50)
    expect((await repoRow('busy')).numWatches).toBe(1)
    expect((await s.get('/repos/alice/busy')).body.stars_count).toBe(50)
    expect((await s.get('/repos/alice/busy/stargazers?limit=50')).body.length).toBe(50)
  })
})

describe('deleting a repository', () => {
  test('its stars and watches go, the starrers\' counters follow, the lists still answer', async () => {
    expect((await s.post('/user/repos', { name: 'doomed' }, as(alice))).status).toBe(201)
    expect((await s.put('/user/starred/alice/doomed', undefined, as(carol))).status).toBe(204)
    expect((await s.put('/repos/alice/doomed/subscription', undefined, as(carol))).status).toBe(200)
    const id = (await repoRow('doomed')).id
    const before = (await userRow(carol.user.id)).numStars
    expect((await s.del('/repos/alice/doomed', undefined, as(alice))).status).toBe(204)
    expect(await starRows(id)).toBe(0)
    expect(await watchRows(id)).toBe(0)
    expect((await userRow(carol.user.id)).numStars).toBe(before - 1)
    const mine = await s.get('/user/starred', as(carol))
    expect(mine.status).toBe(200)
    expect(names(mine.body)).not.toContain('alice/doomed')
    expect((await s.get('/user/subscriptions', as(carol))).status).toBe(200)
    expect((await s.get('/user/starred/alice/doomed', as(carol))).status).toBe(404)
  })
})

describe('through gitea-js', () => {
  test('a real Gitea client stars, watches and lists', async () => {
    const client = giteaApi(s.url, { token: carol.token })
    expect((await client.user.userCurrentPutStar('alice', 'pub')).status).toBe(204)
    expect((await client.user.userCurrentCheckStarring('alice', 'pub')).status).toBe(204)
    const starred = await client.user.userCurrentListStarred()
    expect(starred.data.map((r) => r.full_name)).toContain('alice/pub')
    const gazers = await client.repos.repoListStargazers('alice', 'pub')
    expect(gazers.data.map((u) => u.login)).toContain('carol')
    const watch = await client.repos.userCurrentPutSubscription('alice', 'pub')
    expect(watch.status).toBe(200)
    expect(watch.data.subscribed).toBe(true)
    expect(watch.data.repository_url).toBe(`${s.url}/api/v1/repos/alice/pub`)
    expect((await client.repos.userCurrentCheckSubscription('alice', 'pub')).data.subscribed).toBe(true)
    expect((await client.users.userListSubscriptions('carol')).data.map((r) => r.full_name)).toContain('alice/pub')
    expect((await client.repos.userCurrentDeleteSubscription('alice', 'pub')).status).toBe(204)
    const notWatching = await client.repos.userCurrentCheckSubscription('alice', 'pub').catch((e) => e)
    expect(notWatching.status).toBe(404)
    expect((await client.user.userCurrentDeleteStar('alice', 'pub')).status).toBe(204)
    const notStarred = await client.user.userCurrentCheckStarring('alice', 'pub').catch((e) => e)
    expect(notStarred.status).toBe(404)
  })
})
