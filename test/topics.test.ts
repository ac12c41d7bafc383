/**
 * Repository topics through gitea-js: the list, replacing, adding and removing one (repository
 * administrators only, names checked as Gitea checks them), the record's `topics`, the topic
 * search with its counts and paging, and the repository search by topic.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { contentMark } from './db-snapshot'

type Client = Api<unknown>
let s: TestServer
let alice: TestUser
let bob: TestUser
let asAlice: Client
let asBob: Client
let anon: Client
let mark: () => Promise<string>

async function ok<T>(call: Promise<{ status: number; data: T }>, status = 200): Promise<T> {
  const r = await call.catch((e) => e)
  expect(r.status).toBe(status)
  return r.data
}
async function fails(call: Promise<unknown>, status: number): Promise<any> {
  const r: any = await call.then(
    () => ({ status: 'succeeded' }),
    (e) => e,
  )
  expect(r.status).toBe(status)
  return r.error
}
const noContent = async (call: Promise<{ status: number }>) => expect((await call.catch((e) => e)).status).toBe(204)
const topicsOf = async (name: string) => (await ok(anon.repos.repoListTopics('alice', name))).topics

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  alice = await s.user('alice')
  bob = await s.user('bob')
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  anon = giteaApi(s.url, {})
  for (const name of ['one', 'two', 'hidden']) await ok(asAlice.user.createCurrentUserRepo({ name, private: name === 'hidden' }), 201)
  // bob may write to `one`, not administer it.
  expect((await s.put('/repos/alice/one/collaborators/bob', { permission: 'write' }, { token: alice.token })).status).toBe(204)
})
afterAll(() => s.stop())

describe('a repository\'s topics', () => {
  test('replace, add, remove: kept by name, shown in the record, sanitised as Gitea', async () => {
    await noContent(asAlice.repos.repoUpdateTopics('alice', 'one', { topics: [' Go ', 'web', 'go', '', 'api.v1'] }))
    expect(await topicsOf('one')).toEqual(['api.v1', 'go', 'web'])
    await noContent(asAlice.repos.repoAddTopic('alice', 'one', 'Zeta'))
    // Adding one already there changes nothing.
    await noContent(asAlice.repos.repoAddTopic('alice', 'one', 'zeta'))
    expect(await topicsOf('one')).toEqual(['api.v1', 'go', 'web', 'zeta'])
    await noContent(asAlice.repos.repoDeleteTopic('alice', 'one', 'web'))
    expect(await topicsOf('one')).toEqual(['api.v1', 'go', 'zeta'])
    await fails(asAlice.repos.repoDeleteTopic('alice', 'one', 'web'), 404)
    const record = await ok(anon.repos.repoGet('alice', 'one'))
    expect([...record.topics!].sort()).toEqual(['api.v1', 'go', 'zeta'])
    // Paged as any list.
    const page = await asAlice.repos.repoListTopics('alice', 'one', { page: 2, limit: 2 })
    expect(page.data.topics).toEqual(['zeta'])
    expect(page.headers.get('x-total-count')).toBe('3')
    expect(page.headers.get('link')).toContain('rel="first"')
  })

  test('invalid names are 422 listing them; more than 25 are refused; nothing changes', async () => {
    const before = await mark()
    const invalid = await fails(asAlice.repos.repoUpdateTopics('alice', 'one', { topics: ['ok', '-dash', 'Has Space', 'x'.repeat(36)] }), 422)
    expect(invalid.invalidTopics).toEqual(['-dash', 'has space', 'x'.repeat(36)])
    expect(invalid.message).toBe('Topic names are invalid')
    const many = Array.from({ length: 26 }, (_, i) => `t${i}`)
    const tooMany = await fails(asAlice.repos.repoUpdateTopics('alice', 'one', { topics: many }), 422)
    expect(tooMany.message).toContain('Exceeding maximum number of topics')
    const one = await fails(asAlice.repos.repoAddTopic('alice', 'one', '.dot'), 422)
    expect(one.invalidTopics).toEqual(['.dot'])
    expect(await mark()).toBe(before)

    await noContent(asAlice.repos.repoUpdateTopics('alice', 'two', { topics: many.slice(0, 25) }))
    await fails(asAlice.repos.repoAddTopic('alice', 'two', 'more'), 422)
    expect((await topicsOf("two"))?.length).toBe(25)
    await noContent(asAlice.repos.repoUpdateTopics('alice', 'two', { topics: ['go', 'cli'] }))
  })

  test('only administrators change topics; readers list them; hidden repositories are 404', async () => {
    const before = await mark()
    await fails(asBob.repos.repoUpdateTopics('alice', 'one', { topics: ['x'] }), 403)
    await fails(asBob.repos.repoAddTopic('alice', 'one', 'x'), 403)
    await fails(asBob.repos.repoDeleteTopic('alice', 'one', 'go'), 403)
    await fails(anon.repos.repoAddTopic('alice', 'one', 'x'), 401)
    await fails(asBob.repos.repoAddTopic('alice', 'hidden', 'x'), 404)
    await fails(anon.repos.repoListTopics('alice', 'hidden'), 404)
    expect(await mark()).toBe(before)
    expect(await topicsOf('one')).toEqual(['api.v1', 'go', 'zeta'])
  })
})

describe('topic search and repository search by topic', () => {
  test('counts repositories per topic, most used first, paged; a deleted repository leaves its topics', async () => {
    const found = await asAlice.topics.topicSearch({ q: '' })
    const all = found.data as unknown as { topics: { topic_name: string; repo_count: number; id: number; created: string; updated: string }[] }
    expect(all.topics[0]).toMatchObject({ topic_name: 'go', repo_count: 2 })
    expect(all.topics.map((t) => t.topic_name).sort()).toEqual(['api.v1', 'cli', 'go', 'zeta'])
    expect(found.headers.get('x-total-count')).toBe('4')
    const z = ((await asAlice.topics.topicSearch({ q: 'ZE' })).data as any).topics
    expect(z.map((t: any) => t.topic_name)).toEqual(['zeta'])
    expect(z[0].created).toMatch(/^\d{4}-\d\d-\d\dT/)
    const paged = await asAlice.topics.topicSearch({ q: '', page: 2, limit: 3 })
    expect((paged.data as any).topics.length).toBe(1)
    expect(paged.headers.get('link')).toContain('rel="prev"')

    const byTopic = await ok(anon.repos.repoSearch({ q: 'go', topic: true } as never))
    expect(byTopic.data!.map((r) => r.name)).toEqual(['one', 'two'])
    const either = await ok(anon.repos.repoSearch({ q: 'cli,zeta', topic: true } as never))
    expect(either.data!.map((r) => r.name)).toEqual(['one', 'two'])
    // Whole names only with topic=true; without it, q is part of the name.
    expect((await ok(anon.repos.repoSearch({ q: 'ze', topic: true } as never))).data).toEqual([])
    expect((await ok(anon.repos.repoSearch({ q: 'tw' }))).data!.map((r) => r.name)).toEqual(['two'])

    expect((await s.del('/repos/alice/two', undefined, { token: alice.token })).status).toBe(204)
    const after = ((await asAlice.topics.topicSearch({ q: '' })).data as any).topics
    expect(after.map((t: any) => [t.topic_name, t.repo_count]).sort()).toEqual([['api.v1', 1], ['go', 1], ['zeta', 1]])
  })
})
