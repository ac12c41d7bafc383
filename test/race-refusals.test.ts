/**
 * What a race leaves a request with is a clear answer, never a 500: a reaction given and taken
 * back by many requests at once (each 200 or 201, the final state one row or none), and a write
 * naming a row deleted after it was read (a foreign key violation on either database: 404 in the
 * API's shape, nothing written). The deletions are made deterministic: a service called with a
 * repository row deleted beforehand, and a row deleted behind the server's back (another
 * connection, which does not move the server's change mark), so the server still finds it by name.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { join } from 'node:path'
import { and, count, eq } from 'drizzle-orm'
import { startTestServer, type ApiResponse, type TestServer, type TestUser } from './helpers'
import { logOutput } from './log-capture'
import { issues, labels, reactions, repositories, stars } from '../src/db/schema'
import { writeTransaction } from '../src/db/client'
import { referenceGone } from '../src/db/unavailable'
import { loadRepoContext } from '../src/auth/repo-context'
import { AccessMode } from '../src/auth/access'
import { ApiError } from '../src/lib/errors'
import { createIssue } from '../src/modules/issues/service'
import { createLabel } from '../src/modules/labels/service'

let s: TestServer
let owner: TestUser, fan: TestUser
const as = (u: TestUser) => ({ token: u.token })
const GONE = 'What this request refers to no longer exists (it was deleted meanwhile)'

beforeAll(async () => {
  s = await startTestServer()
  owner = await s.user('owner')
  fan = await s.user('fan')
})
afterAll(() => s.stop())

/** A new public repository of the owner; its id. */
async function newRepo(name: string): Promise<number> {
  const r = await s.post('/user/repos', { name }, as(owner))
  expect(r.status).toBe(201)
  return r.body.id
}

/** How many rows of `table` belong to repository `id`. */
const rowsOf = async (table: typeof issues | typeof labels | typeof stars, id: number) =>
  (await s.deps.db.select({ n: count() }).from(table).where(eq(table.repoId, id)))[0]!.n

/**
 * Deletes a repository row through a connection of the test's own, as the server's database
 * would (its foreign keys' cascades), but without moving the server's change mark: the server's
 * lookup by name still finds the repository, as a request that read it just before the deletion.
 */
async function deleteBehindServersBack(repoId: number): Promise<void> {
  const url = s.config.databaseUrl
  if (url) {
    const pg = new SQL(url, { max: 1 })
    await pg`delete from repositories where id = ${repoId}`
    await pg.close()
  } else {
    const sqlite = new Database(join(s.dataDir, 'warren.db'))
    sqlite.exec('PRAGMA busy_timeout = 5000')
    sqlite.exec('PRAGMA foreign_keys = ON')
    sqlite.run('delete from repositories where id = ?', [repoId])
    sqlite.close()
  }
}

describe('reactions given and taken back at once', () => {
  test('40 alternating adds and removes of an issue\'s and of a comment\'s reaction: each 200 or 201, the final state one row or none', async () => {
    await newRepo('moods')
    const issue = await s.post('/repos/owner/moods/issues', { title: 'feelings' }, as(owner))
    const comment = await s.post(`/repos/owner/moods/issues/${issue.body.number}/comments`, { body: 'first' }, as(owner))
    for (const path of [`/repos/owner/moods/issues/${issue.body.number}/reactions`, `/repos/owner/moods/issues/comments/${comment.body.id}/reactions`]) {
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => s.request(i % 2 ? 'DELETE' : 'POST', path, { ...as(fan), body: { content: 'heart' } })),
      )
      // Removals answer 200 (Gitea's), additions 201 or 200 (already given); never a 500.
      expect(answers.filter((r, i) => !(i % 2 ? [200] : [200, 201]).includes(r.status)).map((r) => `${r.status} ${r.text}`)).toEqual([])
      for (const r of answers.filter((_, i) => i % 2 === 0)) expect([r.body.user.login, r.body.content]).toEqual(['fan', 'heart'])
      // The list and the rows agree: the fan's heart once or not at all.
      const listed = (await s.get(path, as(fan))).body.filter((r: any) => r.user.login === 'fan' && r.content === 'heart')
      const stored = await s.deps.db
        .select()
        .from(reactions)
        .where(and(eq(reactions.issueId, issue.body.id), eq(reactions.userId, fan.user.id), eq(reactions.commentId, path.includes('comments') ? comment.body.id : 0)))
      expect(listed.length).toBe(stored.length)
      expect(stored.length).toBeLessThanOrEqual(1)
      // Then one more of each, alone: given (201, or 200 when it was there), taken back, none left.
      expect((await s.post(path, { content: 'heart' }, as(fan))).status).toBe(stored.length ? 200 : 201)
      expect((await s.del(path, { content: 'heart' }, as(fan))).status).toBe(200)
      expect((await s.get(path, as(fan))).body.filter((r: any) => r.user.login === 'fan')).toEqual([])
    }
  })
})

describe('a row deleted while a write names it', () => {
  test('referenceGone: a foreign key violation of either database, beneath wrappers; not other constraint failures', () => {
    const wrapped = (cause: unknown) => Object.assign(new Error('Failed query'), { cause })
    expect(referenceGone(wrapped(Object.assign(new Error('FOREIGN KEY constraint failed'), { code: 'SQLITE_CONSTRAINT_FOREIGNKEY', errno: 787 })))).toBe(true)
    expect(referenceGone(wrapped(Object.assign(new Error('violates foreign key constraint'), { code: 'ERR_POSTGRES_SERVER_ERROR', errno: '23503' })))).toBe(true)
    expect(referenceGone(wrapped(Object.assign(new Error('NOT NULL constraint failed'), { code: 'SQLITE_CONSTRAINT_NOTNULL', errno: 1299 })))).toBe(false)
    expect(referenceGone(wrapped(Object.assign(new Error('duplicate key'), { code: 'ERR_POSTGRES_SERVER_ERROR', errno: '23505' })))).toBe(false)
    // A deletion refused by a row still referring to the deleted one: nothing is gone.
    const refusedDelete = Object.assign(new Error('Failed query: delete from "users" where "users"."id" = ?\nparams: 7'), {
      cause: Object.assign(new Error('FOREIGN KEY constraint failed'), { code: 'SQLITE_CONSTRAINT_FOREIGNKEY', errno: 787 }),
    })
    expect(referenceGone(refusedDelete)).toBe(false)
    expect(referenceGone(new Error('plain'))).toBe(false)
    expect(referenceGone(undefined)).toBe(false)
  })

  test('services given a repository deleted after it was read fail on its foreign key (the 404 of the API), writing nothing', async () => {
    const id = await newRepo('vanishing')
    const request = new Request(`${s.url}/api/v1/repos/owner/vanishing`, { headers: { authorization: `token ${owner.token}` } })
    const ctx = await loadRepoContext(s.deps, request, 'owner', 'vanishing', AccessMode.Write)
    await writeTransaction(s.deps.db, async () => {
      await s.deps.db.delete(repositories).where(eq(repositories.id, id))
    })
    // An issue's number: the counter's upsert fails on the foreign key (on SQLite too, not the
    // insert's NOT NULL on the number it then cannot read).
    const issueError = await createIssue(s.deps, ctx, owner.user, { title: 'too late' }).catch((e: unknown) => e)
    expect(issueError).not.toBeInstanceOf(ApiError)
    expect(referenceGone(issueError)).toBe(true)
    const labelError = await createLabel(s.deps, { repoId: id }, { name: 'late', color: '#00ff00' }).catch((e: unknown) => e)
    expect(referenceGone(labelError)).toBe(true)
    expect([await rowsOf(issues, id), await rowsOf(labels, id)]).toEqual([0, 0])
  })

  test('through the API: a new issue, label and star of a repository deleted meanwhile answer 404 in the API\'s shape, writing nothing', async () => {
    const id = await newRepo('doomed')
    // Found by name once, so the server holds it (a request that read it before the deletion).
    expect((await s.get('/repos/owner/doomed', as(owner))).status).toBe(200)
    await deleteBehindServersBack(id)
    const answers: ApiResponse[] = []
    const log = await logOutput(
      async () => {
        answers.push(await s.post('/repos/owner/doomed/issues', { title: 'too late' }, as(owner)))
        answers.push(await s.post('/repos/owner/doomed/labels', { name: 'late', color: '#00ff00' }, as(owner)))
        answers.push(await s.put('/user/starred/owner/doomed', undefined, as(fan)))
      },
      (out) => out.split('referenced row deleted meanwhile').length > 3,
    )
    for (const r of answers) {
      expect([r.status, r.body?.message]).toEqual([404, GONE])
      expect(typeof r.body.url).toBe('string')
    }
    // Logged as a warning, not as an internal error.
    expect(log.match(/WARN referenced row deleted meanwhile/g)?.length).toBe(3)
    expect(log).not.toContain('internal error')
    expect([await rowsOf(issues, id), await rowsOf(labels, id), await rowsOf(stars, id)]).toEqual([0, 0, 0])
  })
})
