/**
 * The totals the issue lists take from the repository's counters (open or closed issues, or pull
 * requests, and no other filter: the web's issue and pull request lists, `type=` on the API)
 * are the numbers of records the same list holds, through filing, closing, reopening, opening
 * pull requests, closing and merging them (bench/scale.ts found the count this replaced growing
 * with the repository's issues).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk } from './git-fixture'
import { commitOn, pushedRepo } from './pull-fixtures'

let s: TestServer
let alice: TestUser
const dirs: string[] = []

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  const { dir } = await pushedRepo(s, alice, 'proj', dirs)
  for (let i = 0; i < 4; i++) {
    await commitOn(dir, `topic-${i}`, { [`topic-${i}.txt`]: `${i}\n` }, `topic ${i}`, 'main')
    await gitOk(dir, 'push', '-q', 'origin', `topic-${i}`)
  }
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const auth = () => ({ token: alice.token })

/** For each type and state: the list's X-Total-Count, and the records the unfiltered list holds. */
async function totals() {
  const out: Record<string, [number, number]> = {}
  for (const type of ['issues', 'pulls'] as const) {
    const all = await s.get(`/repos/alice/proj/issues?state=all&type=${type}&limit=50`, auth())
    for (const state of ['open', 'closed'] as const) {
      const r = await s.get(`/repos/alice/proj/issues?state=${state}&type=${type}&limit=1`, auth())
      expect(r.status).toBe(200)
      out[`${type} ${state}`] = [Number(r.headers.get('x-total-count')), (all.body as { state: string }[]).filter((i) => i.state === state).length]
    }
  }
  return out
}

/** The open and closed counts the web's list of `kind` shows. */
async function webCounts(kind: 'issues' | 'pulls') {
  const res = await fetch(`${s.url}/alice/proj/${kind}`, { headers: { accept: 'text/html' } })
  const html = await res.text()
  expect(res.status).toBe(200)
  return [Number(/(\d+)\s*Open/.exec(html)?.[1]), Number(/(\d+)\s*Closed/.exec(html)?.[1])]
}

describe('list totals from the counters', () => {
  test('equal the records listed, through every change of state', async () => {
    const check = async (expected: Record<string, number>) => {
      const t = await totals()
      for (const [key, [total, listed]] of Object.entries(t)) {
        expect([key, total]).toEqual([key, listed])
        expect([key, total]).toEqual([key, expected[key]!])
      }
      const [issuesOpen, issuesClosed] = await webCounts('issues')
      const [pullsOpen, pullsClosed] = await webCounts('pulls')
      expect({ issuesOpen, issuesClosed, pullsOpen, pullsClosed }).toEqual({
        issuesOpen: expected['issues open']!,
        issuesClosed: expected['issues closed']!,
        pullsOpen: expected['pulls open']!,
        pullsClosed: expected['pulls closed']!,
      })
    }
    await check({ 'issues open': 0, 'issues closed': 0, 'pulls open': 0, 'pulls closed': 0 })
    for (let i = 0; i < 5; i++) expect((await s.post('/repos/alice/proj/issues', { title: `issue ${i}` }, auth())).status).toBe(201)
    for (let i = 0; i < 4; i++) expect((await s.post('/repos/alice/proj/pulls', { head: `topic-${i}`, base: 'main', title: `pull ${i}` }, auth())).status).toBe(201)
    await check({ 'issues open': 5, 'issues closed': 0, 'pulls open': 4, 'pulls closed': 0 })
    // Issues 1 and 2 closed, 2 reopened; pull request 6 (topic-0) closed, 7 (topic-1) merged.
    for (const index of [1, 2]) expect((await s.patch(`/repos/alice/proj/issues/${index}`, { state: 'closed' }, auth())).status).toBe(201)
    expect((await s.patch('/repos/alice/proj/issues/2', { state: 'open' }, auth())).status).toBe(201)
    expect((await s.patch('/repos/alice/proj/pulls/6', { state: 'closed' }, auth())).status).toBe(201)
    expect((await s.post('/repos/alice/proj/pulls/7/merge', { Do: 'merge' }, auth())).status).toBe(200)
    await check({ 'issues open': 4, 'issues closed': 1, 'pulls open': 2, 'pulls closed': 2 })
  })
})
