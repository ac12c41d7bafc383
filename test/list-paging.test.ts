import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { recordStatements } from './query-counter'

/**
 * A repository's comments and tracked times (and a user's times) are paged in SQL, page 1
 * of 30 when no page is asked for, with X-Total-Count from a COUNT and a Link header; the small
 * per-issue and per-repository collections stay whole unless a page is asked for, also in SQL.
 */

let s: TestServer
let owner: TestUser
let other: TestUser
const COMMENTS = 35
const TIMES = 33
let commentIds: number[] = []
let timeIds: number[] = []
/** SQL text of every statement run while recording (placeholders: `?` on SQLite, `$1` on PostgreSQL). */
let recorded: string[] | null = null

async function statementsOf(fn: () => Promise<unknown>): Promise<string[]> {
  recorded = []
  try {
    await fn()
    return recorded
  } finally {
    recorded = null
  }
}

const linkOf = (h: Headers) => h.get('link') ?? ''

/** Without a page: the first 30 of `ids`, their total, Links to page 2 and the last; page 2: the rest. */
async function expectDefaultPages(path: string, ids: number[]) {
  const first = await s.get(path)
  expect(first.status).toBe(200)
  expect(first.body.map((r: any) => r.id)).toEqual(ids.slice(0, 30))
  expect(first.headers.get('x-total-count')).toBe(String(ids.length))
  expect(linkOf(first.headers)).toContain('page=2&limit=30>; rel="next"')
  expect(linkOf(first.headers)).toContain('rel="last"')
  const second = await s.get(`${path}?page=2`)
  expect(second.body.map((r: any) => r.id)).toEqual(ids.slice(30))
}

beforeAll(async () => {
  s = await startTestServer()
  owner = await s.user('pager')
  other = await s.user('other')
  const auth = { token: owner.token }
  expect((await s.post('/user/repos', { name: 'busy' }, auth)).status).toBe(201)
  expect((await s.put('/repos/pager/busy/collaborators/other', { permission: 'write' }, auth)).status).toBe(204)
  for (const title of ['one', 'two']) expect((await s.post('/repos/pager/busy/issues', { title }, auth)).status).toBe(201)
  for (let i = 0; i < COMMENTS; i++) {
    const c = await s.post(`/repos/pager/busy/issues/${(i % 2) + 1}/comments`, { body: `comment ${i}` }, auth)
    expect(c.status).toBe(201)
    commentIds.push(c.body.id)
  }
  for (let i = 0; i < TIMES; i++) {
    const t = await s.post(`/repos/pager/busy/issues/${(i % 2) + 1}/times`, { time: 60 + i }, { token: (i % 3 === 0 ? other : owner).token })
    expect(t.status).toBe(200)
    timeIds.push(t.body.id)
  }
  recordStatements(s.deps.db, (sql) => recorded?.push(sql))
})
afterAll(() => s.stop())

describe("a repository's comments", () => {
  test('no page asked for: page 1 of 30, X-Total-Count of all, Link to the next and last pages', () =>
    expectDefaultPages('/repos/pager/busy/issues/comments', commentIds))

  test('page 2: the rest; limit above 50 is clamped; a page past the end is empty', async () => {
    const second = await s.get('/repos/pager/busy/issues/comments?page=2')
    expect(second.body.map((c: any) => c.id)).toEqual(commentIds.slice(30))
    expect(second.headers.get('x-total-count')).toBe(String(COMMENTS))
    const big = await s.get('/repos/pager/busy/issues/comments?limit=1000')
    expect(big.body.map((c: any) => c.id)).toEqual(commentIds)
    const small = await s.get('/repos/pager/busy/issues/comments?limit=4&page=3')
    expect(small.body.map((c: any) => c.id)).toEqual(commentIds.slice(8, 12))
    const past = await s.get('/repos/pager/busy/issues/comments?page=99')
    expect(past.body).toEqual([])
    expect(past.headers.get('x-total-count')).toBe(String(COMMENTS))
  })

  test('read with LIMIT/OFFSET and a COUNT, not every row', async () => {
    const sqls = await statementsOf(() => s.get('/repos/pager/busy/issues/comments?limit=5&page=2'))
    const reads = sqls.filter((q) => /from "comments"/i.test(q))
    expect(reads.some((q) => /limit (\?|\$\d+)/i.test(q) && /offset (\?|\$\d+)/i.test(q))).toBe(true)
    expect(reads.some((q) => /count\(/i.test(q))).toBe(true)
    expect(reads.filter((q) => !/limit|count\(/i.test(q))).toEqual([])
  })

  test("one issue's comments: whole without a page (as Gitea's ListIssueComments), paged in SQL with one", async () => {
    const mine = commentIds.filter((_, i) => i % 2 === 0)
    const whole = await s.get('/repos/pager/busy/issues/1/comments')
    expect(whole.body.map((c: any) => c.id)).toEqual(mine)
    expect(whole.headers.get('x-total-count')).toBe(String(mine.length))
    expect(whole.headers.get('link')).toBeNull()
    const paged = await s.get('/repos/pager/busy/issues/1/comments?limit=5&page=2')
    expect(paged.body.map((c: any) => c.id)).toEqual(mine.slice(5, 10))
    expect(paged.headers.get('x-total-count')).toBe(String(mine.length))
    const sqls = await statementsOf(() => s.get('/repos/pager/busy/issues/1/comments?limit=5'))
    expect(sqls.some((q) => /from "comments"/i.test(q) && /limit (\?|\$\d+)/i.test(q))).toBe(true)
  })
})

describe('tracked times', () => {
  test("a repository's times: page 1 of 30 when none is asked for, then the rest", () => expectDefaultPages('/repos/pager/busy/times', timeIds))

  test("a user's times in the repository and the signed-in user's times are paged the same way", async () => {
    const others = timeIds.filter((_, i) => i % 3 === 0)
    const byUser = await s.get('/repos/pager/busy/times/other?limit=4')
    expect(byUser.body.map((t: any) => t.id)).toEqual(others.slice(0, 4))
    expect(byUser.headers.get('x-total-count')).toBe(String(others.length))
    const mine = timeIds.filter((_, i) => i % 3 !== 0)
    const own = await s.get('/user/times', { token: owner.token })
    expect(own.body.map((t: any) => t.id)).toEqual(mine.slice(0, 30))
    expect(own.headers.get('x-total-count')).toBe(String(mine.length))
  })

  test('read with LIMIT/OFFSET and a COUNT', async () => {
    const sqls = await statementsOf(() => s.get('/repos/pager/busy/times'))
    const reads = sqls.filter((q) => /from "tracked_times"/i.test(q))
    expect(reads.some((q) => /limit (\?|\$\d+)/i.test(q))).toBe(true)
    expect(reads.some((q) => /count\(/i.test(q))).toBe(true)
  })

  test("one issue's times: whole without a page, a page with one", async () => {
    const issueTwo = timeIds.filter((_, i) => i % 2 === 1)
    const whole = await s.get('/repos/pager/busy/issues/2/times')
    expect(whole.body.map((t: any) => t.id)).toEqual(issueTwo)
    expect(whole.headers.get('x-total-count')).toBe(String(issueTwo.length))
    const paged = await s.get('/repos/pager/busy/issues/2/times?page=2&limit=10')
    expect(paged.body.map((t: any) => t.id)).toEqual(issueTwo.slice(10, 20))
  })
})

describe('labels and milestones: whole unless a page is asked for, in SQL either way', () => {
  test('labels', async () => {
    for (const name of ['c', 'a', 'b']) await s.post('/repos/pager/busy/labels', { name, color: '#123456' }, { token: owner.token })
    const whole = await s.get('/repos/pager/busy/labels')
    expect(whole.body.map((l: any) => l.name)).toEqual(['a', 'b', 'c'])
    expect(whole.headers.get('x-total-count')).toBe('3')
    const paged = await s.get('/repos/pager/busy/labels?limit=1&page=2')
    expect(paged.body.map((l: any) => l.name)).toEqual(['b'])
    expect(paged.headers.get('x-total-count')).toBe('3')
    expect(linkOf(paged.headers)).toContain('rel="prev"')
    const sqls = await statementsOf(() => s.get('/repos/pager/busy/labels?limit=1'))
    expect(sqls.some((q) => /from "labels"/i.test(q) && /limit (\?|\$\d+)/i.test(q))).toBe(true)
  })

  test('milestones', async () => {
    for (const title of ['m1', 'm2', 'm3']) await s.post('/repos/pager/busy/milestones', { title }, { token: owner.token })
    const whole = await s.get('/repos/pager/busy/milestones')
    expect(whole.body.map((m: any) => m.title)).toEqual(['m1', 'm2', 'm3'])
    expect(whole.headers.get('x-total-count')).toBe('3')
    const paged = await s.get('/repos/pager/busy/milestones?limit=2&page=2')
    expect(paged.body.map((m: any) => m.title)).toEqual(['m3'])
    expect(paged.headers.get('x-total-count')).toBe('3')
  })
})
