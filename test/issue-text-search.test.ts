/**
 * The issue searches by text through the trigram indexes (src/modules/issues/text-search.ts;
 * drizzle/0048 and 0055 on SQLite, drizzle-pg/0040 on PostgreSQL): a repository's issue list (`q`: titles
 * and descriptions) and the search across repositories (also plain comments) answer what a plain
 * substring match answers, for texts the index looks up and those it cannot (short ones), LIKE's
 * wildcards and FTS5's quotes taken literally; the indexes follow every edit and deletion; and
 * SQLite's plan asks the index instead of reading every issue (PostgreSQL's plans:
 * test/pg-perf-plans.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DIALECT } from '../src/db/dialect'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { sqlitePlanOf, statementRecorder } from './query-counter'
import { textSearchUsesIndex } from '../src/modules/issues/text-search'

let s: TestServer
let alice: TestUser
let bob: TestUser
/** The SQL the server runs, recorded while a test asks. */
let sent: ReturnType<typeof statementRecorder>

interface Model {
  index: number
  title: string
  body: string
  comments: Map<number, string>
}
/** What alice's repository holds, kept as the tests change it. */
const zoo: Model[] = []

beforeAll(async () => {
  s = await startTestServer()
  sent = statementRecorder(s.deps.db)
  alice = await s.user('alice')
  bob = await s.user('bob')
  expect((await s.post('/user/repos', { name: 'zoo' }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'den', private: true }, { token: bob.token })).status).toBe(201)
  const made: [string, string, string[]][] = [
    ['Zebra crossing', 'stripes', []],
    ['plain', 'a ZEBRA in the body', []],
    ['nothing', 'none', ['zebra seen in a comment', 'and another word']],
    ['100% done', 'under_score and "quoted" text', ['50% off']],
    ['Ünïcode Ärger', 'ß straße', []],
    ['ab', '', ['ab']],
  ]
  for (const [title, body, comments] of made) {
    const issue = await s.post('/repos/alice/zoo/issues', { title, body }, { token: alice.token })
    expect(issue.status).toBe(201)
    const model: Model = { index: issue.body.number, title, body, comments: new Map() }
    for (const text of comments) {
      const c = await s.post(`/repos/alice/zoo/issues/${model.index}/comments`, { body: text }, { token: alice.token })
      expect(c.status).toBe(201)
      model.comments.set(c.body.id, text)
    }
    zoo.push(model)
  }
  // Bob's private repository: never in alice's answers.
  expect((await s.post('/repos/bob/den/issues', { title: 'zebra private', body: 'zebra' }, { token: bob.token })).status).toBe(201)
})
afterAll(() => s.stop())

/** ASCII letters folded, as SQLite's LIKE does (PostgreSQL's ILIKE folds more: the texts below differ only in ASCII case). */
const holds = (text: string, q: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase()).includes(q.replace(/[A-Z]/g, (c) => c.toLowerCase()))

const QUERIES = ['zebra', 'ZEBRA', 'ebr', 'ze', 'z', 'zebra cross', '100%', '%', '_', 'under_score', '"quoted"', 'quot', '"', 'Ärger', 'straße', 'ß', 'ab', 'comment', '50% off', 'no such text']

async function repoSearch(q: string): Promise<number[]> {
  const r = await s.get(`/repos/alice/zoo/issues?state=all&type=issues&limit=50&q=${encodeURIComponent(q)}`, { token: alice.token })
  expect(r.status).toBe(200)
  expect(Number(r.headers.get('x-total-count'))).toBe(r.body.length)
  return (r.body as { number: number }[]).map((i) => i.number).sort((a, b) => a - b)
}

async function crossSearch(q: string): Promise<number[]> {
  const r = await s.get(`/repos/issues/search?state=all&limit=50&q=${encodeURIComponent(q)}`, { token: alice.token })
  expect(r.status).toBe(200)
  expect(Number(r.headers.get('x-total-count'))).toBe(r.body.length)
  for (const issue of r.body) expect(issue.repository.full_name).toBe('alice/zoo')
  return (r.body as { number: number }[]).map((i) => i.number).sort((a, b) => a - b)
}

const expectedRepo = (q: string) => zoo.filter((m) => holds(m.title, q) || holds(m.body, q)).map((m) => m.index)
const expectedCross = (q: string) => zoo.filter((m) => holds(m.title, q) || holds(m.body, q) || [...m.comments.values()].some((c) => holds(c, q))).map((m) => m.index)

async function expectAnswers(queries = QUERIES) {
  for (const q of queries) {
    expect([q, await repoSearch(q)]).toEqual([q, expectedRepo(q)])
    expect([q, await crossSearch(q)]).toEqual([q, expectedCross(q)])
  }
}

describe('issue search by text', () => {
  test('the same answers as a substring match: long texts and short, wildcards and quotes taken literally', async () => {
    await expectAnswers()
    // Sanity of the model: the searches do find things.
    expect(expectedCross('zebra').length).toBe(3)
    expect(expectedRepo('zebra').length).toBe(2)
  })

  test('the indexes follow edits of titles, descriptions and comments, and deletions', async () => {
    const [crossing, plain, nothing, percent] = zoo
    expect((await s.patch(`/repos/alice/zoo/issues/${crossing!.index}`, { title: 'Yak crossing' }, { token: alice.token })).status).toBe(201)
    crossing!.title = 'Yak crossing'
    expect((await s.patch(`/repos/alice/zoo/issues/${plain!.index}`, { body: 'a yak in the body' }, { token: alice.token })).status).toBe(201)
    plain!.body = 'a yak in the body'
    const [first, second] = [...nothing!.comments.keys()]
    expect((await s.patch(`/repos/alice/zoo/issues/comments/${first}`, { body: 'a yak seen in a comment' }, { token: alice.token })).status).toBe(200)
    nothing!.comments.set(first!, 'a yak seen in a comment')
    expect((await s.del(`/repos/alice/zoo/issues/comments/${second}`, undefined, { token: alice.token })).status).toBe(204)
    nothing!.comments.delete(second!)
    expect((await s.del(`/repos/alice/zoo/issues/${percent!.index}`, undefined, { token: alice.token })).status).toBe(204)
    zoo.splice(zoo.indexOf(percent!), 1)
    await expectAnswers(['zebra', 'yak', 'Yak crossing', 'another', '100%', 'quoted', '50% off', 'comment'])
    if (DIALECT === 'sqlite') {
      // The indexes hold the rows they index, row for row, and are whole.
      const sqlite = s.deps.db.$client as any
      const ids = (query: string) => (sqlite.query(query).all() as { id: number }[]).map((r) => r.id).sort((x, y) => x - y)
      expect(ids('SELECT rowid AS id FROM issues_text_trgm')).toEqual(ids('SELECT id FROM issues'))
      expect(ids('SELECT rowid AS id FROM comments_text_trgm')).toEqual(ids('SELECT id FROM comments WHERE type = 0'))
      for (const table of ['issues_text_trgm', 'comments_text_trgm']) {
        expect(() => sqlite.exec(`INSERT INTO ${table} (${table}) VALUES ('integrity-check')`)).not.toThrow()
        // Contentless with deletes (drizzle/0055): a row is forgotten without its text being split
        // into trigrams again (a deletion of megabytes of comments held the event loop for seconds).
        expect((sqlite.query(`SELECT sql FROM sqlite_master WHERE name = '${table}'`).get() as { sql: string }).sql).toContain("content='', contentless_delete=1")
      }
    }
  })

  test.skipIf(DIALECT !== 'sqlite')("SQLite asks the trigram indexes for the candidates, not every issue and comment", async () => {
    const statements = await sent.during(async () => {
      expect((await s.get('/repos/alice/zoo/issues?state=all&q=crossing', { token: alice.token })).status).toBe(200)
      expect((await s.get('/repos/issues/search?state=all&q=crossing', { token: alice.token })).status).toBe(200)
      // The caller's mentions: the texts holding `@alice` are their candidates.
      expect((await s.get('/repos/issues/search?state=all&mentioned=true', { token: alice.token })).status).toBe(200)
    })
    const searches = statements.filter((text) => text.includes('issues_text_trgm'))
    // Each list's count and page (the repository's list counts with its page), the mentions' count.
    expect(searches.length).toBeGreaterThanOrEqual(4)
    expect(searches.filter((text) => text.includes('replace(')).length).toBeGreaterThanOrEqual(1)
    for (const text of searches) {
      const plan = sqlitePlanOf(s.deps.db, text).join('\n')
      // The candidates drive: issues read by their ids, never a repository's issues (or every ready
      // repository's) checked one by one against the list.
      expect(plan).toMatch(/^SEARCH issues USING INTEGER PRIMARY KEY \(rowid=\?\)$/m)
      expect(plan).not.toMatch(/^SEARCH (issues|repositories) USING (COVERING )?INDEX/m)
      expect(plan).toMatch(/SCAN issues_text_trgm VIRTUAL TABLE/)
      expect(plan).not.toMatch(/^SCAN issues( |$)/m)
      expect(plan).not.toMatch(/^SCAN comments( |$)/m)
      if (text.includes('comments_text_trgm')) expect(plan).toMatch(/SCAN comments_text_trgm VIRTUAL TABLE/)
    }
    expect(searches.some((text) => text.includes('comments_text_trgm'))).toBe(true)
  })

  test('a NUL in the text: refused at the edge (422), and never handed to the index', async () => {
    for (const path of ['/repos/alice/zoo/issues?q=zeb%00ra', '/repos/issues/search?q=zeb%00ra']) expect((await s.get(path, { token: alice.token })).status).toBe(422)
    expect(textSearchUsesIndex(s.deps.db, 'zeb\0ra')).toBe(false)
    expect(textSearchUsesIndex(s.deps.db, 'zebra')).toBe(true)
  })

  test("a short text is searched without the index, with the same answers", async () => {
    const statements = await sent.during(async () => expect(await crossSearch('ya')).toEqual(expectedCross('ya')))
    expect(statements.some((text) => text.includes('_trgm'))).toBe(false)
  })
})
