import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { drizzle } from 'drizzle-orm/bun-sqlite'
import { migrate } from 'drizzle-orm/bun-sqlite/migrator'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { eq } from 'drizzle-orm'
import { openDatabase } from '../src/db/client'
import { DIALECT } from '../src/db/dialect'
import { repositories } from '../src/db/schema'
import { startTrackerWorld, type TrackerWorld } from './issue-fixtures'
import { queryCounter } from './query-counter'
import type { TestUser } from './helpers'

// Gitea (models/user NewGhostUser): deleting an account keeps its issues and comments, whose
// author is then shown as the "Ghost" user (id -1). Warren did refuse such deletions (422).

let w: TrackerWorld
let countQueries: ReturnType<typeof queryCounter>
let repo: { id: number; path: string }
let poster: TestUser
let root: TestUser
beforeAll(async () => {
  w = await startTrackerWorld()
  root = await w.s.user('root', { admin: true })
  poster = await w.s.user('casper')
  countQueries = queryCounter(w.s.deps.db)
  repo = await w.repo('haunted')
})
afterAll(() => w.s.stop())

const migrationsFolder = resolve(import.meta.dir, '../drizzle')


const expectGhost = (user: any) =>
  expect(user).toMatchObject({ id: -1, login: 'Ghost', username: 'Ghost', full_name: '', email: '', is_admin: false, followers_count: 0 })

describe('deleting a user who posted issues and comments', () => {
  let before: any[]
  let repoComments: any[]
  test('the admin deletes them (204); issues and comments stay, authored by the Ghost', async () => {
    const ownIssues: number[] = []
    for (const title of ['boo', 'rattle', 'clank']) {
      const r = await w.s.post(`${repo.path}/issues`, { title, body: `${title}!` }, { token: poster.token })
      expect(r.status).toBe(201)
      ownIssues.push(r.body.number)
    }
    const theirs = await w.s.post(`${repo.path}/issues`, { title: 'owner issue' }, { token: w.owner.token })
    expect(theirs.status).toBe(201)
    for (const [n, who, body] of [
      [ownIssues[0], poster, 'first'],
      [ownIssues[0], w.owner, 'answer'],
      [theirs.body.number, poster, 'me too'],
      [theirs.body.number, poster, 'and again'],
    ] as const) {
      const c = await w.s.post(`${repo.path}/issues/${n}/comments`, { body }, { token: who.token })
      expect(c.status).toBe(201)
    }
    before = (await w.s.get(`${repo.path}/issues?state=all&limit=50`, { token: w.owner.token })).body
    expect(before).toHaveLength(4)

    const del = await w.s.del('/admin/users/casper', undefined, { token: root.token })
    expect(del.status).toBe(204)
    expect((await w.s.get('/users/casper')).status).toBe(404)
    expect((await w.s.get('/user', { token: poster.token })).status).toBe(401)

    const after = await w.s.get(`${repo.path}/issues?state=all&limit=50`, { token: w.owner.token })
    expect(after.status).toBe(200)
    expect(after.headers.get('x-total-count')).toBe('4')
    expect(after.body.map((i: any) => [i.number, i.title, i.comments])).toEqual(before.map((i: any) => [i.number, i.title, i.comments]))
    for (const issue of after.body) {
      if (issue.title === 'owner issue') expect(issue.user.login).toBe('owner')
      else expectGhost(issue.user)
    }
    const one = await w.s.get(`${repo.path}/issues/${ownIssues[1]}`)
    expect(one.status).toBe(200)
    expectGhost(one.body.user)
    expect(one.body.body).toBe('rattle!')

    const onTheirs = await w.s.get(`${repo.path}/issues/${theirs.body.number}/comments`)
    expect(onTheirs.status).toBe(200)
    expect(onTheirs.body.map((c: any) => c.body)).toEqual(['me too', 'and again'])
    for (const c of onTheirs.body) expectGhost(c.user)
    repoComments = (await w.s.get(`${repo.path}/issues/comments`, { token: w.owner.token })).body
    expect(repoComments.map((c: any) => [c.body, c.user.login])).toEqual([
      ['first', 'Ghost'],
      ['answer', 'owner'],
      ['me too', 'Ghost'],
      ['and again', 'Ghost'],
    ])
    const repoRow = (await w.s.deps.db.select({ n: repositories.numIssues }).from(repositories).where(eq(repositories.id, repo.id)))[0]!
    expect(repoRow.n).toBe(4)
  })

  test('lists with Ghost authors still take a fixed number of queries', async () => {
    const small = await countQueries(() => w.s.get(`${repo.path}/issues?state=all&limit=1&page=4`, { token: w.owner.token }))
    // Pages no test read before: a page read again is answered from the page cache, with no query.
    const large = await countQueries(() => w.s.get(`${repo.path}/issues?state=all&limit=49`, { token: w.owner.token }))
    expect(large).toBe(small)
    const oneComment = await countQueries(() => w.s.get(`${repo.path}/issues/comments?before=${repoComments[0].updated_at}`, { token: w.owner.token }))
    const allComments = await countQueries(() => w.s.get(`${repo.path}/issues/comments`, { token: w.owner.token }))
    expect(allComments).toBe(oneComment)
  })

  test('filters do not stumble on Ghost authors', async () => {
    const byOwner = await w.s.get(`${repo.path}/issues?state=all&created_by=owner`)
    expect(byOwner.status).toBe(200)
    expect(byOwner.body.map((i: any) => i.title)).toEqual(['owner issue'])
    // The deleted name and "Ghost" name no account: 404, as any unknown user (Gitea).
    expect((await w.s.get(`${repo.path}/issues?state=all&created_by=casper`)).status).toBe(404)
    expect((await w.s.get(`${repo.path}/issues?state=all&created_by=Ghost`)).status).toBe(404)
    const searched = await w.s.get(`${repo.path}/issues?state=all&q=rattle`)
    expect(searched.status).toBe(200)
    expectGhost(searched.body[0].user)
  })

  test('repository admins still edit Ghost posts, which keep their Ghost author', async () => {
    const edited = await w.s.patch(`${repo.path}/issues/1`, { title: 'boo (edited)' }, { token: w.owner.token })
    expect(edited.status).toBe(201)
    expectGhost(edited.body.user)
    const comment = repoComments[0]
    const c = await w.s.patch(`${repo.path}/issues/comments/${comment.id}`, { body: 'first (edited)' }, { token: w.owner.token })
    expect(c.status).toBe(200)
    expectGhost(c.body.user)
  })

  test('the name can be registered again without inheriting the posts', async () => {
    const again = await w.s.post('/admin/users', { username: 'casper', email: 'casper2@example.com', password: 'secret-pass' }, { token: root.token })
    expect(again.status).toBe(201)
    expect(again.body.id).not.toBe(poster.user.id)
    const token = await w.s.post('/users/casper/tokens', { name: 't', scopes: ['all'] }, { basic: ['casper', 'secret-pass'] })
    expect(token.status).toBe(201)
    const list = await w.s.get(`${repo.path}/issues?state=all&limit=50`)
    expect(list.body.filter((i: any) => i.user.login === 'Ghost')).toHaveLength(3)
    expect(list.body.some((i: any) => i.user.login === 'casper')).toBe(false)
    const theirs = await w.s.get(`${repo.path}/issues?state=all&created_by=casper`)
    expect(theirs.status).toBe(200)
    expect(theirs.body).toEqual([])
    // Not the author of the old posts: no editing them (they are neither poster nor writer).
    expect((await w.s.patch(`${repo.path}/issues/2`, { title: 'mine?' }, { token: token.body.sha1 })).status).toBe(403)
    const c = await w.s.patch(`${repo.path}/issues/comments/${repoComments[2].id}`, { body: 'mine?' }, { token: token.body.sha1 })
    expect(c.status).toBe(403)
  })
})

// Upgrading an old SQLite data folder: its migrations 0000-0002 and SQLite's table rebuild. A
// PostgreSQL database starts from its own migrations (drizzle-pg), which never had that step.
describe.skipIf(DIALECT === 'postgres')('upgrading a data folder made before posters stopped being foreign keys', () => {
  test('issues, comments, labels, assignees and times survive the table rebuild', () => {
    // A migrations folder holding only the migrations before 0003 (the journal cut there).
    const oldMigrations = mkdtempSync(join(tmpdir(), 'warren-old-migrations-'))
    const dataDir = mkdtempSync(join(tmpdir(), 'warren-old-data-'))
    try {
      const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta/_journal.json'), 'utf8'))
      journal.entries = journal.entries.filter((e: any) => e.idx < 3)
      mkdirSync(join(oldMigrations, 'meta'))
      writeFileSync(join(oldMigrations, 'meta/_journal.json'), JSON.stringify(journal))
      for (const e of journal.entries) copyFileSync(join(migrationsFolder, `${e.tag}.sql`), join(oldMigrations, `${e.tag}.sql`))
      // As the previous openDatabase did: foreign keys on, then migrate.
      const old = new Database(join(dataDir, 'warren.db'), { create: true, strict: true })
      old.exec('PRAGMA journal_mode = WAL')
      old.exec('PRAGMA foreign_keys = ON')
      migrate(drizzle({ client: old }), { migrationsFolder: oldMigrations })
      old.exec(`
        INSERT INTO users (id, name, lower_name, created_unix, updated_unix) VALUES (1, 'ann', 'ann', 1, 1), (2, 'bob', 'bob', 1, 1);
        INSERT INTO repositories (id, owner_id, owner_name, name, lower_name, created_unix, updated_unix) VALUES (1, 1, 'ann', 'r', 'r', 1, 1);
        INSERT INTO issues (id, repo_id, "index", poster_id, title, num_comments, created_unix, updated_unix) VALUES (7, 1, 1, 2, 'old bug', 1, 5, 5);
        INSERT INTO comments (id, poster_id, issue_id, repo_id, content, created_unix, updated_unix) VALUES (9, 2, 7, 1, 'old words', 6, 6);
        INSERT INTO labels (id, repo_id, name, color, created_unix, updated_unix) VALUES (3, 1, 'bug', '#ff0000', 1, 1);
        INSERT INTO issue_labels (issue_id, label_id) VALUES (7, 3);
        INSERT INTO issue_assignees (issue_id, assignee_id) VALUES (7, 1);
        INSERT INTO tracked_times (issue_id, repo_id, user_id, time, created_unix) VALUES (7, 1, 1, 60, 7);
      `)
      old.close()

      const db = openDatabase(dataDir)
      const c = db.$client
      expect(c.prepare('SELECT id, poster_id, title FROM issues').all()).toEqual([{ id: 7, poster_id: 2, title: 'old bug' }])
      expect(c.prepare('SELECT id, issue_id, content FROM comments').all()).toEqual([{ id: 9, issue_id: 7, content: 'old words' }])
      expect(c.prepare('SELECT count(*) AS n FROM issue_labels').get()).toEqual({ n: 1 })
      expect(c.prepare('SELECT count(*) AS n FROM issue_assignees').get()).toEqual({ n: 1 })
      expect(c.prepare('SELECT count(*) AS n FROM tracked_times').get()).toEqual({ n: 1 })
      const indexes = (c.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('issues', 'comments')").all() as any[]).map((r) => r.name)
      expect(indexes).toEqual(expect.arrayContaining(['issues_poster_idx', 'issues_repo_index_uq', 'issues_repo_state_idx', 'comments_issue_idx', 'comments_repo_idx']))
      expect(c.prepare("SELECT * FROM pragma_foreign_key_list('issues') WHERE \"from\" = 'poster_id'").all()).toEqual([])
      expect(c.prepare("SELECT * FROM pragma_foreign_key_list('comments') WHERE \"from\" = 'poster_id'").all()).toEqual([])
      // Foreign keys are enforced again, and the children still cascade from the rebuilt issues table.
      expect(c.prepare('PRAGMA foreign_keys').get()).toEqual({ foreign_keys: 1 })
      c.exec('DELETE FROM users WHERE id = 2')
      expect(c.prepare('SELECT count(*) AS n FROM issues').get()).toEqual({ n: 1 })
      c.exec('DELETE FROM issues WHERE id = 7')
      expect(c.prepare('SELECT count(*) AS n FROM comments').get()).toEqual({ n: 0 })
      expect(c.prepare('SELECT count(*) AS n FROM issue_labels').get()).toEqual({ n: 0 })
      c.close()
    } finally {
      rmSync(oldMigrations, { recursive: true, force: true })
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
