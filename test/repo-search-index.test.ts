/**
 * The repository search by name through SQLite's trigram index (drizzle/0019_repo_name_trigram.sql,
 * used for texts of three characters or more without LIKE's wildcards; bench/scale.ts found the
 * search reading every name): the same answers as a plain substring match, for texts the index
 * serves and those it does not, and the index follows creations, renames and deletions. On
 * PostgreSQL the same answers come through pg_trgm's index.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DIALECT } from '../src/db/dialect'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { sqlitePlanOf, statementRecorder } from './query-counter'

let s: TestServer
let alice: TestUser
let names: string[] = []

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  names = ['needle-one', 'Haystack', 'hay_needle', 'needl', 'my.needle.tool', 'nee', 'x_y', 'xay', 'Straw-Man', 'ALLCAPS-NEEDLE']
  for (const name of names) expect((await s.post('/user/repos', { name }, { token: alice.token })).status).toBe(201)
})
afterAll(() => s.stop())

/** Every name the search answers for `q` (all pages), in its order. */
async function found(q: string): Promise<string[]> {
  const out: string[] = []
  for (let page = 1; ; page++) {
    const r = await s.get(`/repos/search?q=${encodeURIComponent(q)}&limit=50&page=${page}`, { token: alice.token })
    expect(r.status).toBe(200)
    out.push(...(r.body.data as { name: string }[]).map((d) => d.name))
    expect(Number(r.headers.get('x-total-count'))).toBeGreaterThanOrEqual(out.length)
    if (r.body.data.length < 50) return out
  }
}
const expected = (q: string) =>
  names
    .filter((n) => n.toLowerCase().includes(q.trim().toLowerCase()))
    .sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0))

describe('repository search by name', () => {
  test('the same answers as a substring match, long texts and short, wildcards taken literally', async () => {
    for (const q of ['needle', 'NEEDLE', 'eedl', 'nee', 'ne', 'n', 'hay', 'y_n', '_', 'x_y', '%', 'a%y', 'needle-one', 'my.needle', 'nothing-like-it', '  needle  '])
      expect([q, await found(q)]).toEqual([q, expected(q)])
  })

  test('the index follows renames, deletions and new repositories', async () => {
    expect((await s.patch('/repos/alice/needle-one', { name: 'pin-one' }, { token: alice.token })).status).toBe(200)
    names = names.map((n) => (n === 'needle-one' ? 'pin-one' : n))
    expect((await s.del('/repos/alice/hay_needle', undefined, { token: alice.token })).status).toBe(204)
    names = names.filter((n) => n !== 'hay_needle')
    expect((await s.post('/user/repos', { name: 'second-needle' }, { token: alice.token })).status).toBe(201)
    names.push('second-needle')
    for (const q of ['needle', 'pin-one', 'pin', 'hay_needle', 'hay', 'second', 'one']) expect([q, await found(q)]).toEqual([q, expected(q)])
  })

  test.skipIf(DIALECT !== 'sqlite')("SQLite reads the repositories the trigram index or a topic names, not every ready one checked against them", async () => {
    // Without statistics SQLite took the list index's `status = ?` (every ready repository, 15 ms
    // at 100,000) over the ids the index found (repos/queries.ts prepareRepoPage's byIds).
    expect((await s.put('/repos/alice/Haystack/topics', { topics: ['straw'] }, { token: alice.token })).status).toBe(204)
    const sent = statementRecorder(s.deps.db)
    const reads = await sent.during(async () => {
      for (const auth of [{}, { token: alice.token }]) {
        expect((await s.get('/repos/search?q=needle&limit=3&page=2', auth)).status).toBe(200)
        const topic = await s.get('/repos/search?q=straw&topic=true', auth)
        expect(topic.body.data.map((r: { name: string }) => r.name)).toEqual(['Haystack'])
      }
    })
    const searches = reads.filter((text) => /from "repositories" where .*(repositories_name_trgm|"repo_topics")/.test(text))
    expect(searches.length).toBeGreaterThanOrEqual(4)
    for (const text of searches) {
      const plan = sqlitePlanOf(s.deps.db, text)
      expect([text, plan[0]]).toEqual([text, 'SEARCH repositories USING INTEGER PRIMARY KEY (rowid=?)'])
      expect([text, plan.filter((step) => /repositories_(list|name_order)_idx|^SCAN repositories /.test(step))]).toEqual([text, []])
    }
  })
})

describe('a search that tests every repository (the explore page)', () => {
  test.skipIf(DIALECT !== 'sqlite')("SQLite reads its page in the lists' order, stopping at the page's end, never every ready repository sorted", async () => {
    const sent = statementRecorder(s.deps.db)
    const reads = await sent.during(async () => {
      for (const auth of [{}, { token: alice.token }])
        for (const query of ['limit=3&page=2', 'mode=source&limit=3', 'mode=fork&limit=3', 'q=ne&limit=3'])
          expect([query, (await s.get(`/repos/search?${query}`, auth)).status]).toEqual([query, 200])
    })
    const pages = reads.filter((text) => /^select .* from "repositories" where "repositories"."id" in \(select/.test(text))
    expect(pages.length).toBeGreaterThanOrEqual(6)
    for (const text of pages) {
      const plan = sqlitePlanOf(s.deps.db, text)
      expect([text, plan.some((step) => step.includes('repositories_name_order_idx'))]).toEqual([text, true])
      // Only the page's own rows are put in order again (the outer read of their whole rows).
      expect([text, plan.filter((step) => step.includes('TEMP B-TREE')).length]).toEqual([text, 1])
    }
  })
})
