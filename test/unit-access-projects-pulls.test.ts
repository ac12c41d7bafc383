import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, unitTeam, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'
import { asc, eq } from 'drizzle-orm'
import { projectColumns } from '../src/db/schema'

/**
 * Per-unit access where a team gives a repository's code but not the unit a thing belongs to:
 * the cards of an organisation's project (an issue's by the issues unit, a pull request's by the
 * pull requests unit, not by the code), and updating a pull request's head branch on the
 * maintainer-edit path (the merge rule: write on the base's code, not on its pull requests).
 */

let s: TestServer
let alice: TestUser
const { page, signIn, submit } = webVisitors(() => s.url, async () => '')
const html = async (path: string, who: TestUser) => await (await page(path, await signIn(who))).text()
const as = (u: TestUser) => ({ token: u.token })
const b64 = (text: string) => Buffer.from(text).toString('base64')

/** The titles of the cards in the board's columns, column by column. */
const cardsOf = (text: string): string[][] =>
  [...text.matchAll(/<section class="board-column[^>]*>([\s\S]*?)<\/section>/g)].map((m) => [...m[1]!.matchAll(/<li class="card"><a href="[^"]+">([^<]*) <span/g)].map((c) => c[1]!.trim()))

/** A team of unitorg's over all its repositories giving `units`, with `members`. */
const team = (name: string, permission: string, units: Record<string, string>, members: TestUser[]) => unitTeam(s, alice, 'unitorg', name, units, members, permission)

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('unitalice')
  expect((await s.post('/orgs', { username: 'unitorg', visibility: 'private' }, as(alice))).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
})

describe("an organisation project's cards, by the issue's unit", () => {
  test("a member whose team gives the repository's code but not its issues nor pull requests sees none of its cards, nor counts them; one given the pull requests sees those only", async () => {
    const coder = await s.user('unitcoder')
    const pullReader = await s.user('unitpullreader')
    await team('code-only', 'read', { 'repo.code': 'read', 'repo.issues': 'none', 'repo.pulls': 'none', 'repo.projects': 'read' }, [coder])
    await team('pulls-only', 'read', { 'repo.code': 'read', 'repo.issues': 'none', 'repo.pulls': 'read', 'repo.projects': 'read' }, [pullReader])
    expect((await s.post('/orgs/unitorg/repos', { name: 'vault', private: true, auto_init: true }, as(alice))).status).toBe(201)
    const issue = (await s.post('/repos/unitorg/vault/issues', { title: 'Secret issue' }, as(alice))).body
    expect((await s.post('/repos/unitorg/vault/contents/feature.txt', { content: b64('x'), new_branch: 'feature' }, as(alice))).status).toBe(201)
    expect((await s.post('/repos/unitorg/vault/pulls', { title: 'Secret change', head: 'feature', base: 'main' }, as(alice))).status).toBe(201)
    expect((await s.patch('/repos/unitorg/vault/pulls/2', { state: 'closed' }, as(alice))).status).toBe(201)
    const pull = (await s.get('/repos/unitorg/vault/issues/2', as(alice))).body

    const made = await submit(alice, '/unitorg/-/projects/new', { title: 'Plans', template_type: '1' })
    expect(made.status).toBe(303)
    const board = made.location!
    expect((await submit(alice, '/unitorg/vault/issues/projects', { issue_ids: String(issue.id), id: board.split('/').at(-1)! })).status).toBe(303)
    expect((await submit(alice, '/unitorg/vault/pulls/projects', { issue_ids: String(pull.id), id: board.split('/').at(-1)! })).status).toBe(303)

    // The owner sees both cards and counts them.
    const full = await html(board, alice)
    expect(cardsOf(full)[0]).toEqual(['Secret issue', 'Secret change'])
    expect(full).toContain('1 open · 1 closed')
    expect(await html('/unitorg/-/projects', alice)).toContain('1 open · 1 closed')

    // The code reader reads the repository, not its issues nor its pull requests.
    expect((await s.get('/repos/unitorg/vault', as(coder))).status).toBe(200)
    expect((await s.get('/repos/unitorg/vault/issues/1', as(coder))).status).toBe(404)
    const hidden = await html(board, coder)
    expect(cardsOf(hidden)[0]).toEqual([])
    for (const leak of ['Secret issue', 'Secret change', '/unitorg/vault/issues/1', '/unitorg/vault/pulls/2']) expect(hidden).not.toContain(leak)
    expect(hidden).toContain('0 open · 0 closed')
    expect(await html('/unitorg/-/projects', coder)).toContain('0 open · 0 closed')

    // The pull requests' reader sees the pull request's card, not the issue's.
    const pulls = await html(board, pullReader)
    expect(cardsOf(pulls)[0]).toEqual(['Secret change'])
    expect(pulls).not.toContain('Secret issue')
    expect(pulls).toContain('0 open · 1 closed')
    expect(await html('/unitorg/-/projects', pullReader)).toContain('0 open · 1 closed')

    // A writer of the projects who may not read the issues cannot move a card: not on the board for them.
    const mover = await s.user('unitmover')
    await team('board-writers', 'read', { 'repo.code': 'read', 'repo.issues': 'none', 'repo.pulls': 'none', 'repo.projects': 'write' }, [mover])
    const columns = await s.deps.db.select().from(projectColumns).where(eq(projectColumns.projectId, Number(board.split('/').at(-1)))).orderBy(asc(projectColumns.sorting), asc(projectColumns.id))
    expect(columns.length).toBeGreaterThan(1)
    expect((await submit(mover, `${board}/card`, { issue_id: String(issue.id), column_id: String(columns.at(-1)!.id) })).status).toBe(404)
    expect(cardsOf(await html(board, alice))[0]).toEqual(['Secret issue', 'Secret change'])
    // The owner moves it.
    expect((await submit(alice, `${board}/card`, { issue_id: String(issue.id), column_id: String(columns.at(-1)!.id) })).status).toBe(303)
    expect(cardsOf(await html(board, alice))[0]).toEqual(['Secret change'])
  })
})

describe("updating a pull request on the maintainer-edit path, by the base's code unit", () => {
  test("a member whose team gives write on the pull requests but read on the code may not update a head branch the poster lets maintainers edit; a code writer may", async () => {
    const poster = await s.user('unitposter')
    const reviewer = await s.user('unitreviewer')
    const maintainer = await s.user('unitmaintainer')
    await team('reviewers', 'read', { 'repo.code': 'read', 'repo.issues': 'read', 'repo.pulls': 'write' }, [poster, reviewer])
    await team('maintainers', 'write', { 'repo.code': 'write', 'repo.issues': 'write', 'repo.pulls': 'write' }, [maintainer])
    expect((await s.post('/orgs/unitorg/repos', { name: 'app', private: true, auto_init: true }, as(alice))).status).toBe(201)
    // The poster's fork, with a branch of their own; main moves on after it.
    expect((await s.post('/repos/unitorg/app/forks', {}, as(poster))).status).toBe(202)
    expect((await s.post('/repos/unitposter/app/contents/fix.txt', { content: b64('fixed\n'), new_branch: 'fix' }, as(poster))).status).toBe(201)
    expect((await s.post('/repos/unitorg/app/contents/m.txt', { content: b64('m2\n') }, as(alice))).status).toBe(201)
    const pr = await s.post('/repos/unitorg/app/pulls', { title: 'Fix', head: 'unitposter:fix', base: 'main' }, as(poster))
    expect(pr.status).toBe(201)
    const edited = await s.patch(`/repos/unitorg/app/pulls/${pr.body.number}`, { allow_maintainer_edit: true }, as(poster))
    expect([edited.status, edited.body.allow_maintainer_edit]).toEqual([201, true])
    const tipOfFix = async () => (await s.get('/repos/unitposter/app/branches/fix', as(poster))).body.commit as { id: string; message: string }
    const before = await tipOfFix()

    // Neither the reviewer nor the maintainer may read the poster's private fork: only the maintainer-edit path is open.
    for (const who of [reviewer, maintainer]) expect((await s.get('/repos/unitposter/app', as(who))).status).toBe(404)
    const refused = await s.post(`/repos/unitorg/app/pulls/${pr.body.number}/update`, undefined, as(reviewer))
    expect(refused.status).toBe(403)
    expect((await tipOfFix()).id).toBe(before.id)

    const done = await s.post(`/repos/unitorg/app/pulls/${pr.body.number}/update`, undefined, as(maintainer))
    expect(done.status).toBe(200)
    const after = await tipOfFix()
    expect(after.id).not.toBe(before.id)
    expect(after.message.trim()).toBe("Merge branch 'main' into fix")
  })
})
