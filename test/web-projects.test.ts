import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { csrfIn, webVisitors } from './web-session'
import { contentMark } from './db-snapshot'
import { projectIssues, projects } from '../src/db/schema'

/**
 * Gitea 1.23's project boards on the web, over plain HTTP: a repository's and an owner's projects
 * made from the templates, columns added, edited, reordered, made default and deleted (their cards
 * moving to the default), cards moved by the page's form and by Gitea's JSON endpoint, an issue's
 * project set and cleared from its sidebar with its timeline events, the issue list's `?project=`,
 * who may see and change what, and bad input refused with nothing changed.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, carol: TestUser, dave: TestUser, eve: TestUser
let mark: () => Promise<string>
const { page, signIn, submit } = webVisitors(() => s.url, async () => '')
const html = async (path: string, who?: TestUser) => await (await page(path, who ? await signIn(who) : undefined)).text()
let issue1 = 0
let issue2 = 0
let pull3 = 0

const projectIdOf = (location: string | null) => Number(/\/projects\/(\d+)$/.exec(location ?? '')?.[1])
/** The titles of the board's columns, in order, each with the cards' titles in it. */
function boardOf(text: string): [string, string[]][] {
  const columns = [...text.matchAll(/<section class="board-column[^>]*>([\s\S]*?)<\/section>/g)].map((m) => m[1]!)
  return columns.map((c) => [/<h3 id="column-\d+">([^<]*)<\/h3>/.exec(c)![1]!, [...c.matchAll(/<li class="card"><a href="[^"]+">([^<]*) <span/g)].map((m) => m[1]!.trim())])
}
const columnIds = (text: string) => [...text.matchAll(/<h3 id="column-(\d+)">([^<]*)<\/h3>/g)].map((m) => ({ id: Number(m[1]), title: m[2]! }))

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  dave = await s.user('dave')
  eve = await s.user('eve')
  const as = (u: TestUser) => ({ token: u.token })
  expect((await s.post('/user/repos', { name: 'board', auto_init: true }, as(alice))).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'secret', private: true, auto_init: true }, as(alice))).status).toBe(201)
  expect((await s.put('/repos/alice/board/collaborators/bob', { permission: 'write' }, as(alice))).status).toBe(204)
  expect((await s.put('/repos/alice/board/collaborators/carol', { permission: 'read' }, as(alice))).status).toBe(204)
  expect((await s.put('/repos/alice/secret/collaborators/bob', { permission: 'write' }, as(alice))).status).toBe(204)
  issue1 = (await s.post('/repos/alice/board/issues', { title: 'First bug' }, as(alice))).body.id
  issue2 = (await s.post('/repos/alice/board/issues', { title: 'Second bug' }, as(alice))).body.id
  expect((await s.post('/repos/alice/board/contents/feature.txt', { content: Buffer.from('x').toString('base64'), new_branch: 'feature' }, as(alice))).status).toBe(201)
  expect((await s.post('/repos/alice/board/pulls', { title: 'A change', head: 'feature', base: 'main' }, as(alice))).status).toBe(201)
  // The sidebar's issue_ids are issue ids: a pull request's is its issue's.
  pull3 = (await s.get('/repos/alice/board/issues/3', as(alice))).body.id
  // An organisation: eve writes through a team, dave reads through one.
  expect((await s.post('/orgs', { username: 'acme' }, as(alice))).status).toBe(201)
  expect((await s.post('/orgs/acme/repos', { name: 'app', auto_init: true }, as(alice))).status).toBe(201)
  const writers = (await s.post('/orgs/acme/teams', { name: 'writers', permission: 'write', includes_all_repositories: true }, as(alice))).body.id
  const readers = (await s.post('/orgs/acme/teams', { name: 'readers', permission: 'read', includes_all_repositories: true }, as(alice))).body.id
  expect((await s.put(`/teams/${writers}/members/eve`, undefined, as(alice))).status).toBe(204)
  expect((await s.put(`/teams/${readers}/members/dave`, undefined, as(alice))).status).toBe(204)
  // Sessions made before any content mark is taken.
  for (const u of [alice, bob, carol, dave, eve]) await signIn(u)
})
afterAll(async () => {
  await s.stop()
})

describe('repository projects', () => {
  let kanban = 0
  test('writers create projects from the templates; the list counts them by state and finds them by title', async () => {
    const made = await submit(bob, '/alice/board/projects/new', { title: 'Kanban', content: 'Our **work**', template_type: '1', card_type: '0' })
    expect(made.status).toBe(303)
    kanban = projectIdOf(made.location)
    expect(made.location).toBe(`/alice/board/projects/${kanban}`)
    expect(boardOf(await html(made.location!, bob)).map((c) => c[0])).toEqual(['Backlog', 'To Do', 'In Progress', 'Done'])
    const triage = await submit(bob, '/alice/board/projects/new', { title: 'Triage', content: '', template_type: '2', card_type: '1' })
    expect(boardOf(await html(triage.location!, bob)).map((c) => c[0])).toEqual(['Backlog', 'Needs Triage', 'High Priority', 'Low Priority', 'Closed'])
    const bare = await submit(bob, '/alice/board/projects/new', { title: 'Bare', template_type: '0' })
    expect(boardOf(await html(bare.location!, bob))).toEqual([])
    expect(await html(bare.location!, bob)).toContain('This project has no columns yet.')

    // Closing one moves it to the closed tab.
    const closed = await submit(bob, `/alice/board/projects/${projectIdOf(bare.location)}/close`, {})
    expect(closed.location).toBe('/alice/board/projects?state=closed')
    const list = await html('/alice/board/projects', carol)
    expect(list).toContain('2 Open')
    expect(list).toContain('1 Closed')
    expect(list).toContain('>Kanban<')
    expect(list).not.toContain('>Bare<')
    expect(await html('/alice/board/projects?state=closed', carol)).toContain('>Bare<')
    const found = await html('/alice/board/projects?q=triag', carol)
    expect(found).toContain('>Triage<')
    expect(found).not.toContain('>Kanban<')
    // A reader sees no forms; the Projects tab is in the repository's nav.
    expect(list).not.toContain('/alice/board/projects/new')
    expect(list).toContain('href="/alice/board/projects" aria-current="page"')
    // Editing goes back to the board.
    const edit = await submit(bob, `/alice/board/projects/${kanban}/edit`, { title: 'Kanban board', content: 'Described', card_type: '0', redirect: 'project' })
    expect(edit.location).toBe(`/alice/board/projects/${kanban}?done=saved`)
    expect(await html(`/alice/board/projects/${kanban}`, carol)).toContain('Kanban board')
  })

  test('the sidebar sets and clears an issue\'s project, recorded in its timeline; cards move by form and by JSON', async () => {
    const set = await submit(bob, '/alice/board/issues/projects', { issue_ids: String(issue1), id: String(kanban) })
    expect(set.status).toBe(303)
    expect(set.location).toBe('/alice/board/issues/1')
    expect((await submit(bob, '/alice/board/pulls/projects', { issue_ids: String(pull3), id: String(kanban) })).status).toBe(303)
    let board = await html(`/alice/board/projects/${kanban}`, carol)
    expect(boardOf(board)).toEqual([
      ['Backlog', ['First bug', 'A change']],
      ['To Do', []],
      ['In Progress', []],
      ['Done', []],
    ])
    expect(board).toContain('href="/alice/board/issues/1"')
    expect(board).toContain('href="/alice/board/pulls/3"')
    const issuePage = await html('/alice/board/issues/1', carol)
    expect(issuePage).toContain(`<a href="/alice/board/projects/${kanban}">Kanban board</a>`)
    expect(issuePage).toContain('added this to the <strong>Kanban board</strong> project')
    // A reader is offered no project form.
    expect(issuePage).not.toContain('action="/alice/board/issues/projects"')
    expect(await html('/alice/board/issues/1', bob)).toContain('action="/alice/board/issues/projects"')

    // The card's form moves it to another column.
    const columns = columnIds(board)
    const progress = columns.find((c) => c.title === 'In Progress')!.id
    const moved = await submit(bob, `/alice/board/projects/${kanban}/card`, { issue_id: String(issue1), column_id: String(progress) })
    expect(moved.location).toBe(`/alice/board/projects/${kanban}`)
    board = await html(`/alice/board/projects/${kanban}`, bob)
    expect(boardOf(board)[2]).toEqual(['In Progress', ['First bug']])
    expect(await html('/alice/board/issues/1', carol)).toContain('moved this to <strong>In Progress</strong> in <strong>Kanban board</strong>')

    // Gitea's JSON endpoint, the token in X-Csrf-Token.
    const done = columns.find((c) => c.title === 'Done')!.id
    const cookie = await signIn(bob)
    const json = await fetch(`${s.url}/alice/board/projects/${kanban}/${done}/move`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', 'x-csrf-token': csrfIn(board)! },
      body: JSON.stringify({ issues: [{ issueID: pull3, sorting: 0 }, { issueID: issue1, sorting: 1 }] }),
    })
    expect(json.status).toBe(200)
    expect(await json.json()).toEqual({ ok: true })
    expect(boardOf(await html(`/alice/board/projects/${kanban}`, bob))[3]).toEqual(['Done', ['A change', 'First bug']])

    // The API's timeline tells the same, in Gitea's types.
    const timeline = (await s.get('/repos/alice/board/issues/1/timeline', { token: alice.token })).body as any[]
    expect(timeline.filter((c) => c.type === 'project').map((c) => [c.project_id, c.old_project_id])).toEqual([[kanban, 0]])
    expect(timeline.filter((c) => c.type === 'project_board').length).toBe(2)

    // Filters of the issue list.
    const filtered = await html(`/alice/board/issues?project=${kanban}`, carol)
    expect(filtered).toContain('First bug')
    expect(filtered).not.toContain('Second bug')
    const none = await html('/alice/board/issues?project=-1', carol)
    expect(none).toContain('Second bug')
    expect(none).not.toContain('First bug')

    // Cleared: out of the project, the timeline says so.
    expect((await submit(bob, '/alice/board/pulls/projects', { issue_ids: String(pull3), id: '0' })).location).toBe('/alice/board/pulls/3')
    expect(await html('/alice/board/pulls/3', carol)).toContain('removed this from the <strong>Kanban board</strong> project')
    expect(boardOf(await html(`/alice/board/projects/${kanban}`, bob))[3]).toEqual(['Done', ['First bug']])
  })

  test('columns: added, edited, reordered, made default; a deleted column\'s cards go to the default one', async () => {
    expect((await submit(bob, `/alice/board/projects/${kanban}`, { title: 'Review', color: '#00AABB' })).location).toBe(`/alice/board/projects/${kanban}`)
    let board = await html(`/alice/board/projects/${kanban}`, bob)
    const review = columnIds(board).find((c) => c.title === 'Review')!.id
    expect(board).toContain('border-top: 4px solid #00aabb')
    expect((await submit(bob, `/alice/board/projects/${kanban}/${review}/edit`, { title: 'Reviewing', color: '#112233' })).status).toBe(303)
    expect((await submit(bob, `/alice/board/projects/${kanban}/move`, { column_id: String(review), direction: 'left' })).status).toBe(303)
    board = await html(`/alice/board/projects/${kanban}`, bob)
    expect(boardOf(board).map((c) => c[0])).toEqual(['Backlog', 'To Do', 'In Progress', 'Reviewing', 'Done'])
    // Reviewing becomes the default; Done (holding First bug) is deleted: its card goes to Reviewing.
    const done = columnIds(board).find((c) => c.title === 'Done')!.id
    expect((await submit(bob, `/alice/board/projects/${kanban}/${review}/default`, {})).status).toBe(303)
    expect((await submit(bob, `/alice/board/projects/${kanban}/${done}/delete`, {})).status).toBe(303)
    board = await html(`/alice/board/projects/${kanban}`, bob)
    expect(boardOf(board)).toEqual([
      ['Backlog', []],
      ['To Do', []],
      ['In Progress', []],
      ['Reviewing', ['First bug']],
    ])
    // A new card goes to the default column.
    expect((await submit(bob, '/alice/board/issues/projects', { issue_ids: String(issue2), id: String(kanban) })).status).toBe(303)
    expect(boardOf(await html(`/alice/board/projects/${kanban}`, bob))[3]).toEqual(['Reviewing', ['First bug', 'Second bug']])
    // Gitea's drag-and-drop of columns: every column's place in one JSON request; then back.
    const order = columnIds(board)
    const reorder = (columns: { id: number }[]) =>
      fetch(`${s.url}/alice/board/projects/${kanban}/move`, {
        method: 'POST',
        headers: { cookie: bobCookie, 'content-type': 'application/json', 'x-csrf-token': csrfIn(board)! },
        body: JSON.stringify({ columns: columns.map((c, sorting) => ({ columnID: c.id, sorting })) }),
      })
    const bobCookie = await signIn(bob)
    expect((await reorder([...order].reverse())).status).toBe(200)
    expect(boardOf(await html(`/alice/board/projects/${kanban}`, bob)).map((c) => c[0])).toEqual(['Reviewing', 'In Progress', 'To Do', 'Backlog'])
    expect((await reorder(order)).status).toBe(200)
    expect(boardOf(await html(`/alice/board/projects/${kanban}`, bob)).map((c) => c[0])).toEqual(['Backlog', 'To Do', 'In Progress', 'Reviewing'])
  })

  test('bad input is refused with a clear status and changes nothing; readers, strangers and anonymous visitors may not change', async () => {
    const board = await html(`/alice/board/projects/${kanban}`, bob)
    const cols = columnIds(board)
    const reviewing = cols.find((c) => c.title === 'Reviewing')!.id
    const backlog = cols.find((c) => c.title === 'Backlog')!.id
    const before = await mark()
    expect((await submit(bob, '/alice/board/projects/new', { title: '', template_type: '1' })).status).toBe(422)
    const long = await submit(bob, '/alice/board/projects/new', { title: 'x'.repeat(101) })
    expect(long.status).toBe(422)
    expect(long.html).toContain('must be less than 100 characters')
    expect((await submit(bob, `/alice/board/projects/${kanban}`, { title: 'Bad', color: 'purple' })).status).toBe(422)
    expect((await submit(bob, `/alice/board/projects/${kanban}/${reviewing}/delete`, {})).status).toBe(422)
    expect((await submit(bob, `/alice/board/projects/${kanban}/card`, { issue_id: '999999', column_id: String(backlog) })).status).toBe(404)
    expect((await submit(bob, `/alice/board/projects/${kanban}/card`, { issue_id: String(issue1), column_id: '999999' })).status).toBe(404)
    expect((await submit(bob, `/alice/board/projects/${kanban}/move`, { column_id: String(backlog), direction: 'up' })).status).toBe(400)
    expect((await submit(bob, '/alice/board/projects/99999999999999999999/edit', { title: 'x' })).status).toBe(404)
    expect((await submit(bob, '/alice/board/issues/projects', { issue_ids: String(issue1), id: '999999' })).status).toBe(404)
    expect((await submit(bob, '/alice/board/issues/projects', { issue_ids: 'abc', id: String(kanban) })).status).toBe(400)
    // A project of another repository is not this one's.
    const other = projectIdOf((await submit(bob, '/alice/secret/projects/new', { title: 'Secret plan', template_type: '1' })).location)
    const afterOther = await mark()
    expect((await submit(bob, '/alice/board/issues/projects', { issue_ids: String(issue1), id: String(other) })).status).toBe(404)
    expect((await page(`/alice/board/projects/${other}`, await signIn(bob))).status).toBe(404)
    // Readers are refused (403), strangers of a private repository see nothing (404), anonymous visitors are asked to sign in.
    expect((await submit(carol, '/alice/board/projects/new', { title: 'Nope' })).status).toBe(403)
    expect((await submit(carol, `/alice/board/projects/${kanban}/card`, { issue_id: String(issue1), column_id: String(backlog) })).status).toBe(403)
    expect((await submit(carol, '/alice/board/issues/projects', { issue_ids: String(issue1), id: '0' })).status).toBe(403)
    expect((await submit(dave, '/alice/secret/projects/new', { title: 'Nope' })).status).toBe(404)
    expect((await page('/alice/secret/projects', await signIn(dave))).status).toBe(404)
    expect((await page(`/alice/secret/projects/${other}`)).status).toBe(404)
    expect((await page('/alice/board/projects/new')).status).toBe(303)
    expect((await page(`/alice/board/projects/${kanban}`)).status).toBe(200)
    // Without the CSRF token (form or header): refused.
    expect((await submit(bob, '/alice/board/projects/new', { title: 'csrf' }, { csrf: null })).status).toBe(403)
    const cookie = await signIn(bob)
    const json = await fetch(`${s.url}/alice/board/projects/${kanban}/${backlog}/move`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ issues: [{ issueID: issue1, sorting: 0 }] }),
    })
    expect(json.status).toBe(403)
    expect(await mark()).toBe(afterOther)
    expect(before).not.toBe(afterOther)
  })

  test('the projects unit off: its pages are 404 and its tab gone; deleting an issue or the repository removes its cards', async () => {
    expect((await s.patch('/repos/alice/board', { has_projects: false }, { token: alice.token })).status).toBe(200)
    expect((await page('/alice/board/projects', await signIn(bob))).status).toBe(404)
    expect(await html('/alice/board', bob)).not.toContain('href="/alice/board/projects"')
    expect((await submit(bob, '/alice/board/issues/projects', { issue_ids: String(issue1), id: '0' })).status).toBe(404)
    expect((await s.patch('/repos/alice/board', { has_projects: true }, { token: alice.token })).status).toBe(200)

    const cards = async () => (await s.deps.db.select().from(projectIssues).where(eq(projectIssues.projectId, kanban))).map((c) => c.issueId).sort()
    expect(await cards()).toEqual([issue1, issue2].sort())
    expect((await s.del('/repos/alice/board/issues/2', undefined, { token: alice.token })).status).toBe(204)
    expect(await cards()).toEqual([issue1])
    expect((await s.del('/repos/alice/board', undefined, { token: alice.token })).status).toBe(204)
    expect(await cards()).toEqual([])
    expect((await s.deps.db.select().from(projects).where(eq(projects.id, kanban))).length).toBe(0)
  })
})

describe('owner projects', () => {
  test('an organisation\'s members who write change its projects; readers see them; cards of its repositories', async () => {
    const made = await submit(eve, '/acme/-/projects/new', { title: 'Roadmap', template_type: '1' })
    expect(made.status).toBe(303)
    const id = projectIdOf(made.location)
    expect(made.location).toBe(`/acme/-/projects/${id}`)
    expect((await submit(dave, '/acme/-/projects/new', { title: 'Nope' })).status).toBe(403)
    expect((await submit(carol, '/acme/-/projects/new', { title: 'Nope' })).status).toBe(403)
    const list = await html('/acme/-/projects', carol)
    expect(list).toContain('>Roadmap<')
    expect(list).not.toContain('/acme/-/projects/new')
    expect(await html('/acme', carol)).toContain('href="/acme/-/projects"')

    // An issue of acme/app goes on the organisation's project from its sidebar.
    const issue = (await s.post('/repos/acme/app/issues', { title: 'Ship it' }, { token: alice.token })).body
    expect(await html('/acme/app/issues/1', eve)).toContain(`<option value="${id}">Roadmap</option>`)
    expect((await submit(eve, '/acme/app/issues/projects', { issue_ids: String(issue.id), id: String(id) })).status).toBe(303)
    const board = await html(`/acme/-/projects/${id}`, carol)
    expect(boardOf(board)[0]).toEqual(['Backlog', ['Ship it']])
    expect(board).toContain('href="/acme/app/issues/1"')
    expect(board).toContain('app#1')
    expect(await html('/acme/app/issues/1', carol)).toContain(`<a href="/acme/-/projects/${id}">Roadmap</a>`)
    // eve moves it by the form.
    const progress = columnIds(board).find((c) => c.title === 'In Progress')!.id
    expect((await submit(eve, `/acme/-/projects/${id}/card`, { issue_id: String(issue.id), column_id: String(progress) })).status).toBe(303)
    expect(boardOf(await html(`/acme/-/projects/${id}`, carol))[2]).toEqual(['In Progress', ['Ship it']])
  })

  test('a private repository\'s cards are hidden from those who may not read it', async () => {
    expect((await s.post('/orgs/acme/repos', { name: 'vault', private: true }, { token: alice.token })).status).toBe(201)
    const made = await submit(alice, '/acme/-/projects/new', { title: 'Mixed', template_type: '1' })
    const id = projectIdOf(made.location)
    const hidden = (await s.post('/repos/acme/vault/issues', { title: 'Hidden work' }, { token: alice.token })).body
    expect((await submit(alice, '/acme/vault/issues/projects', { issue_ids: String(hidden.id), id: String(id) })).status).toBe(303)
    expect(boardOf(await html(`/acme/-/projects/${id}`, eve))[0]).toEqual(['Backlog', ['Hidden work']])
    const outsider = await html(`/acme/-/projects/${id}`, carol)
    expect(boardOf(outsider)[0]).toEqual(['Backlog', []])
    expect(outsider).not.toContain('Hidden work')
    expect(await html('/acme/-/projects', carol)).toContain('0 open · 0 closed')
  })

  test('a repository transferred away leaves its old owner\'s boards (Gitea\'s transferOwnership)', async () => {
    expect((await s.post('/orgs/acme/repos', { name: 'moving', auto_init: true }, { token: alice.token })).status).toBe(201)
    const id = projectIdOf((await submit(eve, '/acme/-/projects/new', { title: 'Moving board', template_type: '1' })).location)
    const issue = (await s.post('/repos/acme/moving/issues', { title: 'Travelling card' }, { token: alice.token })).body
    expect((await submit(eve, '/acme/moving/issues/projects', { issue_ids: String(issue.id), id: String(id) })).status).toBe(303)
    expect(boardOf(await html(`/acme/-/projects/${id}`, eve))[0]).toEqual(['Backlog', ['Travelling card']])
    expect((await s.post('/repos/acme/moving/transfer', { new_owner: 'alice' }, { token: alice.token })).status).toBe(202)
    // alice/moving's issue is no card of acme's any more: not shown, not movable, its sidebar names no project.
    expect(await s.deps.db.select().from(projectIssues).where(eq(projectIssues.issueId, issue.id))).toEqual([])
    expect(boardOf(await html(`/acme/-/projects/${id}`, alice))[0]).toEqual(['Backlog', []])
    const progress = columnIds(await html(`/acme/-/projects/${id}`, eve)).find((c) => c.title === 'In Progress')!.id
    expect((await submit(eve, `/acme/-/projects/${id}/card`, { issue_id: String(issue.id), column_id: String(progress) })).status).toBe(404)
    expect(await html('/alice/moving/issues/1', alice)).not.toContain(`href="/acme/-/projects/${id}"`)
  })

  test('a person\'s projects are theirs alone to change', async () => {
    const made = await submit(alice, '/alice/-/projects/new', { title: 'Personal', template_type: '0' })
    expect(made.status).toBe(303)
    expect((await submit(bob, '/alice/-/projects/new', { title: 'Nope' })).status).toBe(404)
    expect((await page('/alice/-/projects/new', await signIn(bob))).status).toBe(404)
    expect(await html('/alice/-/projects', bob)).toContain('>Personal<')
    expect((await page('/nobody-here/-/projects')).status).toBe(404)
  })
})
