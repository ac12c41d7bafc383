import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, makeWorkRepo, refsOf, remoteUrl } from './git-fixture'
import { commitStatuses } from '../src/db/schema'
import { eventsOfRepo } from '../src/events/outbox'

let s: TestServer
let alice: TestUser
let reader: TestUser
let refs: Record<string, string>
let repoId: number
let work: string
const statusCount = async () => (await s.deps.db.select().from(commitStatuses)).length

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  reader = await s.user('reader')
  const r = await s.post('/user/repos', { name: 'ci' }, { token: alice.token })
  expect(r.status).toBe(201)
  repoId = r.body.id
  work = (await makeWorkRepo()).dir
  await gitOk(work, 'push', '-q', remoteUrl(s.url, 'alice/ci.git', 'alice', alice.password), 'master', 'dev', 'v1.0', 'v2.0')
  refs = await refsOf(work)
  expect((await s.put('/repos/alice/ci/collaborators/reader', { permission: 'read' }, { token: alice.token })).status).toBe(204)
})
afterAll(async () => {
  await s.stop()
  rmSync(work, { recursive: true, force: true })
})

const post = (sha: string, body: Record<string, unknown>, token = alice.token) => s.post(`/repos/alice/ci/statuses/${sha}`, body, { token })
const combined = (ref: string) => s.get(`/repos/alice/ci/commits/${ref}/status`, { token: alice.token })

describe('commit statuses', () => {
  test('posting: 201 Status with per-commit index and creator, an event in the outbox', async () => {
    const sha = refs['refs/heads/dev']!
    const first = await post(sha, { state: 'pending', context: ' ci/build ', description: ' building ', target_url: 'https://ci.example/1' })
    expect(first.status).toBe(201)
    expect(first.body).toMatchObject({ id: 1, status: 'pending', context: 'ci/build', description: 'building', target_url: 'https://ci.example/1' })
    expect(first.body.creator.login).toBe('alice')
    expect(first.body.url).toBe(`${s.config.baseUrl}api/v1/repos/alice/ci/statuses/${sha}`)
    // A short id names the same commit; the index goes on per commit.
    const second = await post(sha.slice(0, 10), { state: 'success', context: 'ci/build' })
    expect(second.body.id).toBe(2)
    expect((await post(refs['refs/heads/master']!, { state: 'success' })).body.id).toBe(1)
    const events = (await eventsOfRepo(s.deps.db, repoId)).filter((e) => e.kind === 'status')
    expect(events.map((e) => [e.actorId, e.payload.sha, e.payload.state])).toEqual([
      [alice.user.id, sha, 'pending'],
      [alice.user.id, sha, 'success'],
      [alice.user.id, refs['refs/heads/master'], 'success'],
    ])
  })

  test('combined state over several contexts, and its transitions', async () => {
    // feature/slash was not pushed: use v2.0's commit (annotated tag, peeled) for a fresh commit.
    const sha = refs['refs/tags/v2.0^{}']!
    expect((await combined(sha)).body).toMatchObject({ state: '', total_count: 0, statuses: [] })
    await post(sha, { state: 'pending', context: 'build' })
    await post(sha, { state: 'pending', context: 'lint' })
    expect((await combined(sha)).body.state).toBe('pending')
    await post(sha, { state: 'success', context: 'build' })
    expect((await combined(sha)).body.state).toBe('pending')
    await post(sha, { state: 'success', context: 'lint' })
    let c = (await combined(sha)).body
    expect(c).toMatchObject({ state: 'success', sha, total_count: 2 })
    expect(c.statuses.map((x: any) => [x.context, x.status, x.id])).toEqual([
      ['lint', 'success', 4],
      ['build', 'success', 3],
    ])
    expect(c.repository.full_name).toBe('alice/ci')
    expect(c.url).toBe(`${s.config.baseUrl}api/v1/repos/alice/ci/commits/${sha}/status`)
    expect(c.commit_url).toBe(`${s.config.baseUrl}api/v1/repos/alice/ci/commits/${sha}`)
    await post(sha, { state: 'warning', context: 'docs' })
    expect((await combined(sha)).body.state).toBe('warning')
    await post(sha, { state: 'failure', context: 'test' })
    expect((await combined(sha)).body.state).toBe('failure')
    await post(sha, { state: 'error', context: 'deploy' })
    c = (await combined(sha)).body
    expect(c.state).toBe('error')
    expect(c.total_count).toBe(5)
    await post(sha, { state: 'success', context: 'deploy' })
    await post(sha, { state: 'success', context: 'test' })
    expect((await combined(sha)).body.state).toBe('warning')
    // Paged: the state still covers every context.
    const paged = await s.get(`/repos/alice/ci/commits/${sha}/status?limit=2`, { token: alice.token })
    expect(paged.body.statuses.length).toBe(2)
    expect(paged.body.total_count).toBe(5)
    expect(paged.body.state).toBe('warning')
    expect(paged.headers.get('x-total-count')).toBe('5')
  })

  test('branch, tag and commit id give the same answers; lists are newest first with sort and state filters', async () => {
    const sha = refs['refs/heads/master']!
    await post(sha, { state: 'failure', context: 'tests' })
    for (const ref of ['master', 'v1.0', sha, sha.slice(0, 8)]) {
      const c = await combined(ref)
      expect(c.status).toBe(200)
      expect(c.body).toMatchObject({ sha, state: 'failure', total_count: 2 })
      const list = await s.get(`/repos/alice/ci/commits/${ref}/statuses`, { token: reader.token })
      expect(list.status).toBe(200)
      expect(list.body.map((x: any) => x.id)).toEqual([2, 1])
    }
    const bySha = await s.get(`/repos/alice/ci/statuses/${sha}`, { token: alice.token })
    expect(bySha.body.map((x: any) => x.id)).toEqual([2, 1])
    expect(bySha.headers.get('x-total-count')).toBe('2')
    expect((await s.get(`/repos/alice/ci/statuses/${sha}?sort=leastindex`, { token: alice.token })).body.map((x: any) => x.id)).toEqual([1, 2])
    expect((await s.get(`/repos/alice/ci/statuses/${sha}?state=failure`, { token: alice.token })).body.map((x: any) => x.id)).toEqual([2])
    expect((await s.get(`/repos/alice/ci/statuses/${sha}?state=bogus`, { token: alice.token })).status).toBe(422)
    expect((await s.get(`/repos/alice/ci/statuses/${sha}?limit=1`, { token: alice.token })).body.length).toBe(1)
  })

  test('unknown commits and refs, bad states, readers and anonymous callers are refused; nothing changes', async () => {
    const sha = refs['refs/heads/master']!
    const before = await statusCount()
    const unknown = await post('0123456789abcdef0123456789abcdef01234567', { state: 'success' })
    expect(unknown.status).toBe(422)
    expect(unknown.body.message).toContain('No commit found')
    expect((await post('master', { state: 'success' })).status).toBe(422)
    expect((await post('--all', { state: 'success' })).status).toBe(422)
    expect((await post(sha, { state: 'done' })).status).toBe(422)
    expect((await post(sha, {})).status).toBe(422)
    expect((await post(sha, { state: 'success', context: 'x'.repeat(300) })).status).toBe(422)
    expect((await post(sha, { state: 'success' }, reader.token)).status).toBe(403)
    expect((await s.post(`/repos/alice/ci/statuses/${sha}`, { state: 'success' })).status).toBe(401)
    expect(await statusCount()).toBe(before)
    for (const ref of ['nope', '0123456789abcdef0123456789abcdef01234567', '--output=x']) {
      expect((await combined(ref)).status).toBe(404)
      expect((await s.get(`/repos/alice/ci/commits/${ref}/statuses`, { token: alice.token })).status).toBe(404)
    }
  })

  test("a repository's statuses go with it", async () => {
    const r = await s.post('/user/repos', { name: 'tmp' }, { token: alice.token })
    await gitOk(work, 'push', '-q', remoteUrl(s.url, 'alice/tmp.git', 'alice', alice.password), 'master')
    expect((await s.post(`/repos/alice/tmp/statuses/${refs['refs/heads/master']}`, { state: 'success' }, { token: alice.token })).status).toBe(201)
    const before = await statusCount()
    expect((await s.del('/repos/alice/tmp', undefined, { token: alice.token })).status).toBe(204)
    expect(await statusCount()).toBe(before - 1)
    expect(r.body.id).toBeGreaterThan(0)
  })
})
