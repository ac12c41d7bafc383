/**
 * The caches' change mark (db/client.ts changeMarkOf) and what moves it. The webhook deliveries'
 * and outbox consumers' bookkeeping (a task's outcome, a payload row, a consumer's position, a
 * hook's last status), written by another connection as the webhook thread's is, leaves the
 * mark where it is, so the API keeps its tokens and repositories; any other write, by another
 * connection too (on PostgreSQL as another process would: its own pool, its own notifications),
 * moves it, and the next request answers what the database holds.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { eq, sql } from 'drizzle-orm'
import { applyMigrations, changeMarkOf, closeDatabase, movesChangeMark, writeTransaction, type Db } from '../src/db/client'
import { DIALECT } from '../src/db/dialect'
import { accessTokens, eventConsumers, hookPayloads, hooks, repositories, users } from '../src/db/schema'
import { tablesReachedFrom, tableWrittenBy } from '../src/db/change-scope'
import { openConfiguredDatabase } from '../src/deps'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { statementRecorder } from './query-counter'
import { until } from './webhook-receiver'

let s: TestServer
let owner: TestUser
let other: Db
let hookId: number
let sent: ReturnType<typeof statementRecorder>
const onPostgres = () => s.deps.db.$runtime.dialect === 'postgres'

/** The statements (but the change mark's own read) a GET of the repository sends, and its description. */
async function repoRead(): Promise<{ statements: string[]; description: string }> {
  let res!: Awaited<ReturnType<typeof s.get<{ description: string }>>>
  const statements = await sent.during(async () => (res = await s.get<{ description: string }>('/repos/keeper/vault', { token: owner.token })))
  expect(res.status).toBe(200)
  return { statements: statements.filter((text) => !text.includes('pragma_user_version')), description: res.body.description }
}

beforeAll(async () => {
  s = await startTestServer()
  sent = statementRecorder(s.deps.db)
  owner = await s.user('keeper')
  expect((await s.post('/user/repos', { name: 'vault', description: 'first' }, { token: owner.token })).status).toBe(201)
  const hook = await s.post('/repos/keeper/vault/hooks', { type: 'gitea', config: { url: 'http://127.0.0.1:9/', content_type: 'json' }, events: ['push'], active: false }, { token: owner.token })
  expect(hook.status).toBe(201)
  hookId = hook.body.id
  // A second connection to the same database, as the webhook thread's (on PostgreSQL: a pool, notifications and all, of its own).
  other = await openConfiguredDatabase(s.config)
}, 120_000)

afterAll(async () => {
  if (other) await closeDatabase(other)
  await s?.stop()
})

test('the bookkeeping writes are told from the others by their text', () => {
  expect(movesChangeMark('update "hooks" set "last_status" = "outcome"."status" from (select 1) as "outcome" where "hooks"."id" = "outcome"."id"')).toBe(false)
  expect(movesChangeMark('update "hooks" set "last_status" = ? where "hooks"."id" = ?')).toBe(false)
  expect(movesChangeMark('update "hooks" set "is_active" = ?, "last_status" = ? where "hooks"."id" = ?')).toBe(true)
  expect(movesChangeMark('update "hooks" set "last_status" = (select 1), "url" = ? where "hooks"."id" = ?')).toBe(true)
  expect(movesChangeMark('delete from "hooks" where "hooks"."id" = ?')).toBe(true)
  expect(movesChangeMark('insert into "hook_tasks" ("id") values (?)')).toBe(false)
  expect(movesChangeMark('update "event_consumers" set "done_id" = ? where "event_consumers"."name" = ?')).toBe(false)
  expect(movesChangeMark('delete from "hook_payloads" where "hook_payloads"."id" = ?')).toBe(false)
  // The mailer job's sending leaves the caches alone too.
  expect(movesChangeMark('delete from "mail_queue" where "mail_queue"."id" = ?')).toBe(false)
  expect(movesChangeMark('update "mail_queue" set "attempts" = ?, "last_error" = ?, "next_attempt_ms" = ? where "mail_queue"."id" = ?')).toBe(false)
  expect(movesChangeMark('update "mail_queue_x" set "x" = ?')).toBe(true)
  expect(movesChangeMark('update "hook_tasks_archive" set "x" = ?')).toBe(true)
  expect(movesChangeMark('insert into "events" ("kind") values (?)')).toBe(true)
  expect(movesChangeMark('select 1')).toBe(false)
})

test("the webhook thread's writes leave the API's caches; any other write empties them, from another connection too", async () => {
  const mark = changeMarkOf(s.deps.db)
  // On PostgreSQL the API listens (from its first cached read on): its mark then counts what it heard.
  await repoRead()
  const heard = () => (onPostgres() ? /^pg:(\d+)$/.exec(mark())?.[1] : mark())
  const before = await until(heard, 'the change listener')
  await repoRead()
  expect((await repoRead()).statements).toEqual([])

  // What the webhook thread writes, in transactions and outside one.
  await writeTransaction(other, async () => {
    const [payload] = await other.insert(hookPayloads).values({ text: '{}' } as never).returning({ id: hookPayloads.id })
    await other.delete(hookPayloads).where(eq(hookPayloads.id, payload!.id))
    await other.update(hooks).set({ lastStatus: 2 } as never).where(eq(hooks.id, hookId))
  })
  await other.insert(eventConsumers).values({ name: 'mark-test' } as never).onConflictDoNothing()
  await writeTransaction(other, () => other.update(eventConsumers).set({ doneId: 1 } as never).where(eq(eventConsumers.name, 'mark-test')))

  if (onPostgres()) {
    // Notifications reach the API in commit order: once one sent after these writes is heard, any they sent would have been too.
    const fence = new SQL(s.config.databaseUrl!, { max: 1 })
    try {
      await fence.unsafe(`select pg_notify('warren_changes', 'fence')`)
      await until(() => heard() !== before, 'the fence notification')
      expect(Number(heard())).toBe(Number(before) + 1)
    } finally {
      await fence.close()
    }
  } else {
    expect(heard()).toBe(before)
    expect((await repoRead()).statements).toEqual([])
  }

  // Any other write, outside a transaction and in one, is seen by the next request.
  await other.update(repositories).set({ description: 'second' } as never).where(eq(repositories.lowerName, 'vault'))
  await until(async () => (await repoRead()).description === 'second', 'the description written outside a transaction')
  await writeTransaction(other, () => other.update(repositories).set({ description: 'third' } as never).where(eq(repositories.lowerName, 'vault')))
  await until(async () => (await repoRead()).description === 'third', 'the description written in a transaction')
  // On SQLite at once (the mark is read from the database): no waiting.
  if (!onPostgres()) {
    await writeTransaction(other, () => other.update(repositories).set({ description: 'fourth' } as never).where(eq(repositories.lowerName, 'vault')))
    expect((await repoRead()).description).toBe('fourth')
  }
})

test('a write is known by the table it writes, whose changes reach those its foreign keys act on', () => {
  expect(tableWrittenBy('insert into "comments" ("id", "content") values (default, $1) returning "id"')).toBe('comments')
  expect(tableWrittenBy('update "issues" set "num_comments" = "issues"."num_comments" + 1 where "issues"."id" = $1')).toBe('issues')
  expect(tableWrittenBy('delete from "users" where "users"."id" = ?')).toBe('users')
  // A deleted user takes its tokens, collaborations and team memberships with it (its repositories go by the service, each a write of its own).
  expect(tablesReachedFrom('users')).toEqual(expect.arrayContaining(['users', 'access_tokens', 'collaborations', 'team_users']))
  // A deleted repository, its issues and their comments.
  expect(tablesReachedFrom('repositories')).toEqual(expect.arrayContaining(['repositories', 'issues', 'comments', 'collaborations']))
  // A comment's writes reach neither tokens nor users.
  for (const table of ['comments', 'issues', 'events']) for (const kept of ['users', 'access_tokens']) expect(tablesReachedFrom(table)).not.toContain(kept)
  // Anything else may have changed any table.
  for (const text of ['with gone as (delete from "users" returning "id") select 1', 'truncate "users"', 'insert into "no_such_table" values (1)', 'update "public"."users" set "name" = $1', 'alter table "users" add column "x" integer'])
    expect(tableWrittenBy(text)).toBeNull()
  expect(tablesReachedFrom('no_such_table')).toBeNull()
})

test.if(DIALECT === 'postgres')("a mark scoped to tables moves at this process's commits of those tables only, and of tables not known", async () => {
  const scoped = changeMarkOf(s.deps.db, [users, accessTokens])
  const every = changeMarkOf(s.deps.db)
  await until(() => !scoped().startsWith('pg:unheard:') && !every().startsWith('pg:unheard:'), 'the change listener')
  const [scopedBefore, everyBefore] = [scoped(), every()]
  await writeTransaction(s.deps.db, () => s.deps.db.update(repositories).set({ description: 'scoped' }).where(eq(repositories.lowerName, 'vault')))
  expect(every()).not.toBe(everyBefore)
  expect(scoped()).toBe(scopedBefore)
  await writeTransaction(s.deps.db, () => s.deps.db.update(users).set({ description: 'scoped' }).where(eq(users.lowerName, 'keeper')))
  const afterUsers = scoped()
  expect(afterUsers).not.toBe(scopedBefore)
  // A statement whose tables are not known moves every mark.
  const run = (query: ReturnType<typeof sql>) => (s.deps.db as unknown as { execute(q: unknown): Promise<unknown> }).execute(query)
  await writeTransaction(s.deps.db, () => run(sql`with kept as (select 1) update ${repositories} set description = 'unknown' where lower_name = 'vault'`))
  expect(scoped()).not.toBe(afterUsers)

  // Another process's notifications: the tables it lists wrote, a table this schema does not
  // know (a newer version's) or no list at all move every mark.
  const fence = new SQL(s.config.databaseUrl!, { max: 1 })
  try {
    const heard = async (payload: string) => {
      const before = every()
      await fence.unsafe(`select pg_notify('warren_changes', $1)`, [payload])
      await until(() => every() !== before, `the notification "${payload}"`)
    }
    let kept = scoped()
    await heard('another.process comments,issues,events')
    expect(scoped()).toBe(kept)
    for (const payload of ['another.process access_tokens', 'another.process events,a_newer_table', 'another.process']) {
      await heard(payload)
      expect(scoped()).not.toBe(kept)
      kept = scoped()
    }
  } finally {
    await fence.close()
  }
})

test.if(DIALECT === 'sqlite')("a migration that changes rows moves SQLite's mark, as Warren's write transactions do", async () => {
  await repoRead()
  const kept = await repoRead()
  expect(kept.statements).toEqual([])
  // Another connection (a newer Warren starting on the same file) applies a migration that rewrites the description.
  const upgrade = new Database(join(s.config.dataDir, 'warren.db'))
  try {
    upgrade.exec('PRAGMA busy_timeout = 5000')
    applyMigrations(upgrade, [{ sql: ["UPDATE repositories SET description = 'migrated' WHERE lower_name = 'vault'"], folderMillis: 9_000_000_000_000, hash: 'mark-test', bps: true }])
  } finally {
    upgrade.close()
  }
  // At once: the mark is read from the database.
  expect((await repoRead()).description).toBe('migrated')
})
