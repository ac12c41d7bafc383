/**
 * GET /repos/issues/search (Gitea's SearchIssues), through gitea-js: only what the caller may read,
 * every filter Gitea takes, paging headers, Gitea's 400s for an unknown owner or team.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { giteaApi, type Api } from 'gitea-js'
import { startTrackerWorld, type TrackerWorld } from './issue-fixtures'
import { addTeam, makeOrg } from './access-fixtures'
import { issues } from '../src/db/schema'
import { createAccessToken } from '../src/modules/users/service'
import type { TestUser } from './helpers'
import { DIALECT } from '../src/db/dialect'
import { sqlitePlanOf, statementRecorder } from './query-counter'

type Client = Api<unknown>
type Query = Parameters<Client['repos']['issueSearchIssues']>[0]
let w: TrackerWorld
const api = (u?: TestUser): Client => giteaApi(w.s.url, u ? { token: u.token } : {})
const statusOf = async (call: Promise<{ status: number }>) => (await call.catch((e: { status: number }) => e)).status

/** The titles found, in order. */
async function titles(query: Query, as?: TestUser): Promise<string[]> {
  return (await api(as).repos.issueSearchIssues(query)).data.map((i) => i.title!)
}

let pubId: number

beforeAll(async () => {
  w = await startTrackerWorld()
  pubId = (await w.repo('pub')).id
  await w.repo('priv', { private: true })
  const { org } = await makeOrg(w.s, 'guild', w.owner)
  const hall = (await api(w.owner).orgs.createOrgRepo('guild', { name: 'hall' })).data
  await addTeam(w.s, org.id, 'smiths', 2, [w.writer], { repoIds: [hall.id!] })
  await api(w.outsider).user.createCurrentUserRepo({ name: 'mine' })

  const asOwner = api(w.owner)
  const bug = (await asOwner.repos.issueCreateLabel('owner', 'pub', { name: 'bug', color: 'ff0000' })).data
  const v1 = (await asOwner.repos.issueCreateMilestone('owner', 'pub', { title: 'v1' })).data
  // Filed oldest first: the search answers newest first.
  await api(w.writer).repos.issueCreateIssue('owner', 'pub', { title: 'Parser bug', labels: [bug.id!], assignees: ['writer'] })
  const feature = (await api(w.reader).repos.issueCreateIssue('owner', 'pub', { title: 'Feature' })).data
  await asOwner.repos.issueEditIssue('owner', 'pub', feature.number!, { state: 'closed' })
  await asOwner.repos.issueCreateIssue('owner', 'pub', { title: 'Planned', milestone: v1.id })
  await asOwner.repos.issueCreateIssue('owner', 'priv', { title: 'Secret crash', body: 'Could you look, @reader? Not @readers.' })
  await asOwner.repos.issueCreateIssue('owner', 'priv', { title: 'Other secret', body: 'ping @readers' })
  const hallIssue = (await asOwner.repos.issueCreateIssue('guild', 'hall', { title: 'Hall roof' })).data
  await api(w.writer).repos.issueCreateComment('guild', 'hall', hallIssue.number!, { body: 'The parser of the roof' })
  const pr = (await api(w.outsider).repos.issueCreateIssue('outsider', 'mine', { title: 'Mine as a pull' })).data
  // A pull request without branches: its issue row is what the search reads.
  await w.s.deps.db.update(issues).set({ isPull: true }).where(eq(issues.id, pr.id!))
})
afterAll(() => w.s.stop())

describe('issue search', () => {
  test('only what the caller may read, newest first, with paging headers', async () => {
    const publicOnes = ['Mine as a pull', 'Hall roof', 'Planned', 'Parser bug']
    expect(await titles({})).toEqual(publicOnes)
    expect(await titles({}, w.outsider)).toEqual(publicOnes)
    expect(await titles({}, w.reader)).toEqual(['Mine as a pull', 'Hall roof', 'Other secret', 'Secret crash', 'Planned', 'Parser bug'])
    const page = await api().repos.issueSearchIssues({ page: 2, limit: 3 })
    expect(page.data.map((i) => i.title)).toEqual(['Parser bug'])
    expect(page.headers.get('X-Total-Count')).toBe('4')
    expect(page.headers.get('Link')).toContain('rel="first"')
    const found = (await api().repos.issueSearchIssues({ limit: 1 })).data[0]!
    expect(found.repository?.full_name).toBe('outsider/mine')
    expect(found.pull_request).not.toBeNull()
  })

  test('state, labels, milestones, q (title, body and comments), type, since/before, priority_repo_id', async () => {
    expect(await titles({ state: 'closed' })).toEqual(['Feature'])
    expect((await titles({ state: 'all' })).length).toBe(5)
    expect(await titles({ labels: 'bug,nothing-named-so' })).toEqual(['Parser bug'])
    // Names no label has are discarded: none left, no filter (as Gitea).
    expect((await titles({ labels: 'nothing-named-so' })).length).toBe(4)
    expect(await titles({ milestones: 'v1' })).toEqual(['Planned'])
    expect(await titles({ q: 'PARSER' })).toEqual(['Hall roof', 'Parser bug'])
    expect(await titles({ q: 'crash' }, w.reader)).toEqual(['Secret crash'])
    expect(await titles({ q: 'crash' })).toEqual([])
    expect(await titles({ type: 'pulls' })).toEqual(['Mine as a pull'])
    expect((await titles({ type: 'issues' })).includes('Mine as a pull')).toBe(false)
    expect(await titles({ since: '2999-01-01T00:00:00Z' })).toEqual([])
    expect((await titles({ before: '2999-01-01T00:00:00Z' })).length).toBe(4)
    expect(await titles({ priority_repo_id: pubId })).toEqual(['Planned', 'Parser bug', 'Mine as a pull', 'Hall roof'])
    expect((await w.s.get('/repos/issues/search?since=yesterday')).status).toBe(422)
  })

  test("the caller's own: created, assigned, mentioned; review filters find nothing (Warren records no reviews)", async () => {
    expect(await titles({ created: true }, w.writer)).toEqual(['Parser bug'])
    expect(await titles({ state: 'all', created: true }, w.reader)).toEqual(['Feature'])
    expect(await titles({ assigned: true }, w.writer)).toEqual(['Parser bug'])
    expect(await titles({ mentioned: true }, w.reader)).toEqual(['Secret crash'])
    expect(await titles({ review_requested: true }, w.reader)).toEqual([])
    expect(await titles({ reviewed: true }, w.reader)).toEqual([])
    // Flags of an anonymous caller are ignored, as in Gitea.
    expect((await titles({ created: true })).length).toBe(4)
  })

  test('a search of one shape asked again with other values, by other people, finds what those ask (statements prepared per shape)', async () => {
    // Each pair is one shape (the same filters given, the same kind of caller) with other values.
    expect(await titles({ owner: 'guild' })).toEqual(['Hall roof'])
    expect(await titles({ owner: 'outsider' })).toEqual(['Mine as a pull'])
    expect(await titles({ q: 'parser' })).toEqual(['Hall roof', 'Parser bug'])
    expect(await titles({ q: 'roof' })).toEqual(['Hall roof'])
    expect(await titles({ q: 'pl' })).toEqual(['Planned'])
    expect(await titles({ q: 'ha' })).toEqual(['Hall roof'])
    expect(await titles({ created: true }, w.writer)).toEqual(['Parser bug'])
    expect(await titles({ created: true }, w.outsider)).toEqual(['Mine as a pull'])
    expect(await titles({ mentioned: true }, w.reader)).toEqual(['Secret crash'])
    expect(await titles({ mentioned: true }, w.writer)).toEqual([])
    expect(await titles({}, w.reader)).toContain('Secret crash')
    expect(await titles({}, w.outsider)).not.toContain('Secret crash')
    const hall = (await api(w.owner).repos.repoGet('guild', 'hall')).data
    expect((await titles({ priority_repo_id: pubId }))[0]).toBe('Planned')
    expect((await titles({ priority_repo_id: hall.id! }))[0]).toBe('Hall roof')
    expect(await titles({ state: 'closed' })).toEqual(['Feature'])
    expect(await titles({ state: 'open', type: 'pulls' })).toEqual(['Mine as a pull'])
    // A public-only token sees what anonymous callers see, and its own filters stay its own.
    const publicOnly = (await createAccessToken(w.s.deps, w.writer.user.id, 'po-search', ['public-only', 'read:issue'])).secret
    const asPublicOnly = giteaApi(w.s.url, { token: publicOnly })
    expect((await asPublicOnly.repos.issueSearchIssues({ created: true })).data.map((i) => i.title)).toEqual(['Parser bug'])
    expect((await asPublicOnly.repos.issueSearchIssues({ owner: 'owner' })).data.map((i) => i.title)).toEqual(['Planned', 'Parser bug'])
  })

  test.skipIf(DIALECT !== 'sqlite')('SQLite reads the page newest first from issues_created_idx, stopping at its end: never every visible issue sorted', async () => {
    const sent = statementRecorder(w.s.deps.db)
    const statements = await sent.during(async () => expect((await titles({ limit: 2 })).length).toBe(2))
    const page = statements.find((text) => text.startsWith('select "issues"') && text.includes('order by'))!
    const plan = sqlitePlanOf(w.s.deps.db, page).join('\n')
    expect(plan).toContain('SCAN issues USING INDEX issues_created_idx')
    expect(plan).not.toContain('TEMP B-TREE FOR ORDER BY')
  })

  test('owner and team; Gitea\'s 400s', async () => {
    expect(await titles({ owner: 'guild' })).toEqual(['Hall roof'])
    expect(await titles({ owner: 'owner' }, w.reader)).toEqual(['Other secret', 'Secret crash', 'Planned', 'Parser bug'])
    expect(await titles({ owner: 'guild', team: 'smiths' }, w.writer)).toEqual(['Hall roof'])
    expect(await statusOf(api(w.outsider).repos.issueSearchIssues({ owner: 'guild', team: 'smiths' }))).toBe(400)
    expect(await statusOf(api(w.writer).repos.issueSearchIssues({ owner: 'guild', team: 'nobody' }))).toBe(400)
    expect(await statusOf(api(w.writer).repos.issueSearchIssues({ team: 'smiths' }))).toBe(400)
    expect(await statusOf(api().repos.issueSearchIssues({ owner: 'nobody' }))).toBe(400)
  })

  test('a mention in a comment, in any case, in brackets or before punctuation; a longer name is not one', async () => {
    const pub = (await api(w.owner).repos.issueListIssues('owner', 'pub', { state: 'all' })).data
    const planned = pub.find((i) => i.title === 'Planned')!
    const feature = pub.find((i) => i.title === 'Feature')!
    await api(w.reader).repos.issueCreateComment('owner', 'pub', planned.number!, { body: 'Over to you (@WRITER).' })
    await api(w.reader).repos.issueCreateComment('owner', 'pub', feature.number!, { body: 'not @writers, nor mail@writer.example' })
    expect(await titles({ state: 'all', mentioned: true }, w.writer)).toEqual(['Planned'])
  })

  test('the total is the number of issues found, for every kind of caller and filter', async () => {
    const queries: Query[] = [{}, { state: 'all' }, { state: 'closed' }, { type: 'pulls', state: 'all' }, { type: 'issues' }, { owner: 'guild' }, { owner: 'owner', state: 'all' }, { labels: 'bug' }, { milestones: 'v1' }, { created: true }, { assigned: true, state: 'all' }, { mentioned: true, state: 'all' }, { q: 'parser' }, { q: 'se', state: 'all' }]
    for (const who of [undefined, w.reader, w.writer, w.outsider, w.owner])
      for (const query of queries) {
        const r = await api(who).repos.issueSearchIssues({ ...query, limit: 50 })
        expect([who?.name, query, r.headers.get('X-Total-Count')]).toEqual([who?.name, query, String(r.data.length)])
      }
  })

  test("the pages of one search share its count while nothing is written; a write, another caller or another filter counts again", async () => {
    const sent = statementRecorder(w.s.deps.db)
    const file = (title: string) => api(w.owner).repos.issueCreateIssue('owner', 'pub', { title })
    // Counts run and totals answered while `ask` runs.
    const counted = async (ask: () => Promise<{ headers: Headers }>) => {
      let total = ''
      const reads = await sent.during(async () => void (total = (await ask()).headers.get('X-Total-Count')!))
      return [reads.filter((text) => /^select (count\(\*\)|coalesce\(sum)/.test(text)).length, total]
    }
    const search = (page: number, as = w.reader, query: Query = {}) => () => api(as).repos.issueSearchIssues({ limit: 2, page, ...query })
    await file('Counted once')
    expect(await counted(search(1))).toEqual([1, '7'])
    expect(await counted(search(2))).toEqual([0, '7'])
    expect(await counted(search(3))).toEqual([0, '7'])
    expect(await counted(search(1, w.outsider))).toEqual([1, '5'])
    expect(await counted(search(1, w.reader, { state: 'closed' }))).toEqual([1, '1'])
    await file('Counted again')
    expect(await counted(search(2))).toEqual([1, '8'])
    expect(await counted(search(4))).toEqual([0, '8'])
  })
})
