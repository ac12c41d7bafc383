import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { count, eq } from 'drizzle-orm'
import { events, reviews } from '../src/db/schema'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { csrfIn, signInByForm } from './web-session'

/**
 * Blocking and pull request reviews (auth/blocking.ts): one blocked by a pull request's poster or
 * by the repository's owner reviews it no more (as they comment no more: repository
 * administrators excepted), pending or submitted, on the API and the web's review form; nobody
 * asks a review of one they block or who blocks them, nor of one who could not review the pull
 * request; withdrawing a request stays allowed; an unblock gives it all back. Each refusal is
 * 403 "user is blocked" and writes nothing.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, carol: TestUser, dave: TestUser
const as = (u: TestUser) => ({ token: u.token })
const R = '/repos/carol/shared'
const reviewCount = async () => (await s.deps.db.select({ n: count() }).from(reviews))[0]!.n
const requestEvents = async () => (await s.deps.db.select({ n: count() }).from(events).where(eq(events.kind, 'review.requested')))[0]!.n

/** A refusal as Gitea answers ErrBlockedUser, with nothing written. */
async function refused(call: () => Promise<{ status: number; body: any }>) {
  const [before, asked] = [await reviewCount(), await requestEvents()]
  const res = await call()
  expect(res.status).toBe(403)
  expect(res.body.message).toBe('user is blocked')
  expect(await reviewCount()).toBe(before)
  expect(await requestEvents()).toBe(asked)
}

const review = (u: TestUser, index: number, body: Record<string, unknown>) => s.post(`${R}/pulls/${index}/reviews`, body, as(u))
const ask = (u: TestUser, index: number, reviewers: string[]) => s.post(`${R}/pulls/${index}/requested_reviewers`, { reviewers }, as(u))
const unask = (u: TestUser, index: number, reviewers: string[]) => s.del(`${R}/pulls/${index}/requested_reviewers`, { reviewers }, as(u))
const requested = async (index: number) => ((await s.get(`${R}/pulls/${index}`, as(carol))).body.requested_reviewers as { login: string }[]).map((u) => u.login).sort()

beforeAll(async () => {
  s = await startTestServer()
  ;[alice, bob, carol, dave] = await Promise.all(['alice', 'bob', 'carol', 'dave'].map((name) => s.user(name)))
  expect((await s.post('/user/repos', { name: 'shared', auto_init: true }, as(carol))).status).toBe(201)
  for (const u of ['alice', 'bob']) expect((await s.put(`${R}/collaborators/${u}`, { permission: 'write' }, as(carol))).status).toBe(204)
  // #1 by alice, #2 by carol.
  for (const [u, branch] of [
    [alice, 'by-alice'],
    [carol, 'by-carol'],
  ] as const) {
    const file = await s.post(`${R}/contents/${branch}.txt`, { content: Buffer.from(`${branch}\n`).toString('base64'), new_branch: branch }, as(u))
    expect(file.status).toBe(201)
    expect((await s.post(`${R}/pulls`, { head: branch, base: 'main', title: `From ${branch}` }, as(u))).status).toBe(201)
  }
})
afterAll(() => s.stop())

describe('reviews and review requests between people who block each other', () => {
  let draft = 0
  test('before any block: bob is asked to review alice’s pull request and starts a pending review of it', async () => {
    expect((await ask(carol, 1, ['bob'])).status).toBe(201)
    const pending = await review(bob, 1, { body: 'draft' })
    expect(pending.status).toBe(200)
    expect(pending.body.state).toBe('PENDING')
    draft = pending.body.id
    expect((await s.put('/user/blocks/bob', undefined, as(alice))).status).toBe(204)
  })

  test('one the poster blocked cannot review their pull request: not submitted, not pending, not a pending one submitted later', async () => {
    await refused(() => review(bob, 1, { event: 'COMMENT', body: 'looks odd' }))
    await refused(() => review(bob, 1, { event: 'APPROVED', body: 'ok' }))
    await refused(() => review(bob, 1, { body: 'another draft', comments: [{ path: 'by-alice.txt', new_position: 1, body: 'here' }] }))
    await refused(() => s.post(`${R}/pulls/1/reviews/${draft}`, { event: 'COMMENT', body: 'now' }, as(bob)))
    // The pull request of another stays open to their review.
    expect((await review(bob, 2, { event: 'COMMENT', body: 'fine by me' })).status).toBe(200)
  })

  test('no review is asked of one who blocks the asker, nor by one who blocks the one asked, nor of one who could not review', async () => {
    await refused(() => ask(bob, 2, ['alice']))
    await refused(() => ask(alice, 2, ['bob']))
    // carol may withdraw the request made before the block, but not make it again: bob could not review alice's pull request.
    expect((await unask(carol, 1, ['bob'])).status).toBe(204)
    expect(await requested(1)).toEqual([])
    await refused(() => ask(carol, 1, ['bob']))
    // A request naming several people is refused whole: dave, named first, is not asked either.
    await refused(() => ask(carol, 1, ['dave', 'bob']))
    expect(await requested(1)).toEqual([])
    // Between others, requests go on.
    expect((await ask(carol, 2, ['alice'])).status).toBe(201)
    expect((await ask(alice, 1, ['carol'])).status).toBe(201)
  })

  test('an administrator of the repository reviews whatever its blocks, as they comment', async () => {
    expect((await s.put(`${R}/collaborators/bob`, { permission: 'admin' }, as(carol))).status).toBe(204)
    // Their pending review, refused before, is submitted now.
    const submitted = await s.post(`${R}/pulls/1/reviews/${draft}`, { event: 'COMMENT', body: 'as an administrator' }, as(bob))
    expect(submitted.status).toBe(200)
    expect(submitted.body.state).toBe('COMMENT')
    expect((await ask(carol, 1, ['bob'])).status).toBe(201)
    // But the block between asker and asked still holds.
    await refused(() => ask(alice, 2, ['bob']))
    expect((await s.put(`${R}/collaborators/bob`, { permission: 'write' }, as(carol))).status).toBe(204)
  })

  test("the repository owner's block: dave reviews nothing in carol's repository, and nobody asks him to", async () => {
    expect((await s.put('/user/blocks/dave', undefined, as(carol))).status).toBe(204)
    await refused(() => review(dave, 1, { event: 'COMMENT', body: 'hello' }))
    await refused(() => review(dave, 2, { event: 'COMMENT', body: 'hello' }))
    await refused(() => ask(alice, 1, ['dave']))
    expect((await s.del('/user/blocks/dave', undefined, as(carol))).status).toBe(204)
    expect((await review(dave, 2, { event: 'COMMENT', body: 'hello again' })).status).toBe(200)
  })

  test("the web's review form is refused the same way, with the reason, and writes nothing", async () => {
    const cookie = await signInByForm(s.url, bob)
    const page = await fetch(`${s.url}/carol/shared/pulls/1`, { headers: { accept: 'text/html', cookie } })
    expect(page.status).toBe(200)
    const csrf = csrfIn(await page.text())!
    const before = await reviewCount()
    const res = await fetch(`${s.url}/carol/shared/pulls/1/reviews`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, content: 'from the form', type: 'comment' }),
      redirect: 'manual',
    })
    expect(res.status).toBe(403)
    expect(await res.text()).toContain('user is blocked')
    expect(await reviewCount()).toBe(before)
  })

  test('an unblock gives it all back', async () => {
    expect((await s.del('/user/blocks/bob', undefined, as(alice))).status).toBe(204)
    const pending = await review(bob, 1, { body: 'draft again' })
    expect(pending.status).toBe(200)
    expect((await s.post(`${R}/pulls/1/reviews/${pending.body.id}`, { event: 'APPROVED', body: 'ok' }, as(bob))).status).toBe(200)
    expect((await ask(alice, 2, ['bob'])).status).toBe(201)
    expect((await ask(bob, 2, ['alice'])).status).toBe(201)
    expect(await requested(2)).toEqual(['alice', 'bob'])
  })
})

describe("an organisation's block: its teams and its repositories' forks", () => {
  const G = '/repos/guild/work'
  test('one the organisation blocks neither asks its team to review nor forks its repository (403, nothing written); others still do', async () => {
    expect((await s.post('/orgs', { username: 'guild' }, as(carol))).status).toBe(201)
    expect((await s.post('/orgs/guild/repos', { name: 'work', auto_init: true }, as(carol))).status).toBe(201)
    expect((await s.post('/orgs/guild/teams', { name: 'reviewers', permission: 'read', includes_all_repositories: true }, as(carol))).status).toBe(201)
    expect((await s.put(`${G}/collaborators/dave`, { permission: 'write' }, as(carol))).status).toBe(204)
    const file = await s.post(`${G}/contents/by-dave.txt`, { content: Buffer.from('dave\n').toString('base64'), new_branch: 'by-dave' }, as(dave))
    expect(file.status).toBe(201)
    expect((await s.post(`${G}/pulls`, { head: 'by-dave', base: 'main', title: 'From dave' }, as(dave))).status).toBe(201)
    expect((await s.put('/orgs/guild/blocks/dave', undefined, as(carol))).status).toBe(204)

    await refused(() => s.post(`${G}/pulls/1/requested_reviewers`, { team_reviewers: ['reviewers'] }, as(dave)))
    expect((await s.post(`${G}/pulls/1/requested_reviewers`, { team_reviewers: ['reviewers'] }, as(carol))).status).toBe(201)

    const fork = await s.post(`${G}/forks`, {}, as(dave))
    expect([fork.status, fork.body.message]).toEqual([403, 'user is blocked'])
    expect((await s.get('/repos/dave/work', as(dave))).status).toBe(404)
    expect((await s.post(`${G}/forks`, {}, as(bob))).status).toBe(202)
  })
})
