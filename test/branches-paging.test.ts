import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import { refAnswerHits, refAnswersWeight } from '../src/git/ref-answers'

/**
 * A repository's branches grow without bound, so their list is always a page (Gitea's default
 * size when none is asked), read from git as it prints them, each head's message kept to 64 KiB:
 * the answer's size is bounded whatever the repository holds.
 */
let s: TestServer
let alice: TestUser
const dirs: string[] = []
const BRANCHES = 120
const HUGE_MESSAGE = 'm'.repeat(200 * 1024)

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  expect((await s.post('/user/repos', { name: 'many' }, { token: alice.token })).status).toBe(201)
  const dir = tempDir('warren-branches-')
  dirs.push(dir)
  await gitOk(dir, 'init', '-q', '-b', 'main')
  writeFileSync(join(dir, 'a.txt'), 'a\n')
  await gitOk(dir, 'add', '.')
  await gitOk(dir, '-c', 'user.name=A', '-c', 'user.email=a@example.com', 'commit', '-q', '-m', 'first')
  // One commit with a message far past the field bound, on its own branch.
  writeFileSync(join(dir, 'msg.txt'), HUGE_MESSAGE)
  await gitOk(dir, '-c', 'user.name=A', '-c', 'user.email=a@example.com', 'commit', '-q', '--allow-empty', '-F', 'msg.txt')
  await gitOk(dir, 'branch', 'huge')
  await gitOk(dir, 'reset', '-q', '--hard', 'HEAD~1')
  for (let i = 0; i < BRANCHES - 2; i++) await gitOk(dir, 'branch', `b${String(i).padStart(3, '0')}`)
  await gitOk(dir, 'push', '-q', remoteUrl(s.url, 'alice/many.git', 'alice', alice.token), '--all')
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('branch list', () => {
  test('without page or limit: the first page of Gitea\'s default size, with the total and the links', async () => {
    const r = await s.get('/repos/alice/many/branches', { token: alice.token })
    expect(r.status).toBe(200)
    expect(r.body.length).toBe(30)
    expect(r.headers.get('x-total-count')).toBe(String(BRANCHES))
    expect(r.headers.get('link')).toContain('rel="next"')
    expect(r.body[0].name).toBe('b000')
  })

  test('pages cover every branch once, in name order', async () => {
    const names: string[] = []
    for (let page = 1; page <= 3; page++) {
      const r = await s.get(`/repos/alice/many/branches?limit=50&page=${page}`, { token: alice.token })
      names.push(...r.body.map((b: { name: string }) => b.name))
    }
    expect(names.length).toBe(BRANCHES)
    expect(new Set(names).size).toBe(BRANCHES)
    expect(names).toEqual([...names].sort())
    expect(names).toContain('huge')
    expect(names).toContain('main')
  })

  test('a head\'s message is kept to 64 KiB in the list and in the single branch', async () => {
    const listed = (await s.get('/repos/alice/many/branches?limit=50&page=3', { token: alice.token })).body.find((b: { name: string }) => b.name === 'huge')
    expect(listed.commit.message.length).toBe(64 * 1024)
    expect(HUGE_MESSAGE.startsWith(listed.commit.message)).toBe(true)
    const one = await s.get('/repos/alice/many/branches/huge', { token: alice.token })
    expect(one.body.commit.message).toBe(listed.commit.message)
  })

  test('a page is served again without git while no ref moves; a moved ref shows at once', async () => {
    const first = await s.get('/repos/alice/many/branches?limit=5', { token: alice.token })
    const hits = refAnswerHits()
    const again = await s.get('/repos/alice/many/branches?limit=5', { token: alice.token })
    expect(refAnswerHits()).toBe(hits + 1)
    expect(again.body).toEqual(first.body)
    expect(again.headers.get('x-total-count')).toBe(String(BRANCHES))

    const created = await s.post('/repos/alice/many/branches', { new_branch_name: 'a-new', old_branch_name: 'main' }, { token: alice.token })
    expect(created.status).toBe(201)
    expect((await s.get('/repos/alice/many/branches/a-new', { token: alice.token })).body.name).toBe('a-new')
    const moved = await s.get('/repos/alice/many/branches?limit=5', { token: alice.token })
    expect(moved.body.map((b: { name: string }) => b.name)).toEqual(['a-new', 'b000', 'b001', 'b002', 'b003'])
    expect(moved.headers.get('x-total-count')).toBe(String(BRANCHES + 1))
    expect((await s.del('/repos/alice/many/branches/a-new', undefined, { token: alice.token })).status).toBe(204)
    const back = await s.get('/repos/alice/many/branches?limit=5', { token: alice.token })
    expect(back.body).toEqual(first.body)
    expect((await s.get('/repos/alice/many/branches/a-new', { token: alice.token })).status).toBe(404)
    // One branch too: kept while no ref moves.
    const one = await s.get('/repos/alice/many/branches/b001', { token: alice.token })
    const oneHits = refAnswerHits()
    expect((await s.get('/repos/alice/many/branches/b001', { token: alice.token })).body).toEqual(one.body)
    expect(refAnswerHits()).toBe(oneHits + 1)
    // Branches that do not exist are answers too (a 404 kept while no ref moves), each weighed, so that they leave in turn.
    const weight = refAnswersWeight()
    for (let i = 0; i < 20; i++) expect((await s.get(`/repos/alice/many/branches/none-${i}`, { token: alice.token })).status).toBe(404)
    // (the cache holds 8 MiB: from far below it, nothing left meanwhile)
    expect(weight).toBeLessThan(7 * 1024 * 1024)
    expect(refAnswersWeight()).toBeGreaterThanOrEqual(weight + 20 * 200)
  })
})
