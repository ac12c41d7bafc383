// runs in one half: postgresql
/**
 * The dialect-specific SQL of the db layer (src/db/sql.ts) and the raw-values reads
 * (valueRows + rowMapper, src/db/row-mapper.ts) give the same answers on both databases: each
 * helper is built for SQLite and for PostgreSQL explicitly (sqlFor, valueRowsFor) and run, with
 * the same rows, against a temporary SQLite database (opened as Warren opens it) and a fresh
 * PostgreSQL database holding the drizzle-pg migrations, read through drizzle-orm/bun-sql with
 * the derived tables. PostgreSQL must be reachable (it is on the development machine and in CI):
 * this fails, not skips.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL as BunSQL } from 'bun'
import { and, asc, count, eq, sql, type SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core'
import { drizzle } from 'drizzle-orm/bun-sql'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { closeDatabase, openDatabase, type Db } from '../src/db/client'
import type { Dialect } from '../src/db/dialect'
import { DIALECT } from '../src/db/dialect'
import * as sqliteTables from '../src/db/schema/tables'
import { pgTablesOf } from '../src/db/pg-schema'
import { rowMapper, valueRowsFor } from '../src/db/row-mapper'
import * as processSql from '../src/db/sql'
import { containsPattern, sqlFor } from '../src/db/sql'
import { freshPostgresDatabase, TEST_POSTGRES_URL } from './test-database'
import { dropInBackground } from './process-helpers'

const PG_ADMIN_URL = TEST_POSTGRES_URL

type Tables = typeof sqliteTables

/** One database under test: the same query builder API whichever the dialect (as the services see it). */
interface Target {
  db: Db
  t: Tables
  close: () => Promise<void>
}

/** Warren's own SQLite database in a temporary data folder. */
function openSqlite(): Target {
  const dir = mkdtempSync(join(tmpdir(), 'warren-sqlfrag-'))
  const db = openDatabase(dir)
  return {
    db,
    t: sqliteTables,
    close: async () => {
      await closeDatabase(db)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** A fresh PostgreSQL database with the drizzle-pg migrations applied; dropped by close(). */
async function openPostgres(): Promise<Target> {
  const database = await freshPostgresDatabase(PG_ADMIN_URL, 'warren_sqlfrag')
  const client = new BunSQL({ url: database.url, max: 2 })
  const folder = join(import.meta.dir, '../drizzle-pg')
  for (const file of readdirSync(folder).filter((f) => f.endsWith('.sql')).sort())
    for (const statement of readFileSync(join(folder, file), 'utf8').split('--> statement-breakpoint'))
      if (statement.trim()) await client.unsafe(statement)
  const t = pgTablesOf(sqliteTables)
  // The services are typed against the SQLite tables and database; the derived tables stand in for them.
  const db = drizzle({ client, schema: t }) as unknown as Db
  return {
    db,
    t,
    close: async () => {
      await client.close()
      dropInBackground(database)
    },
  }
}

/** The rows every test reads, with their ids. */
async function insertFixture({ db, t }: Target) {
  const now = 1_700_000_000
  const person = (name: string, fullName: string) => ({ name, lowerName: name.toLowerCase(), fullName, createdUnix: now, updatedUnix: now })
  const [alice, bob, carol] = await db
    .insert(t.users)
    .values([person('Alice', 'Alice Liddell'), person('bob', 'Bob 100%_sure'), { ...person('carol', 'Carol'), isAdmin: true }])
    .returning()
  const [repo] = await db
    .insert(t.repositories)
    .values({ ownerId: alice!.id, ownerName: 'Alice', name: 'Repo', lowerName: 'repo', createdUnix: now, updatedUnix: now })
    .returning()
  await db.update(t.users).set({ numRepos: 1 }).where(eq(t.users.id, alice!.id))
  const issue = (index: number, title: string, isClosed: boolean, isPull: boolean) => ({
    repoId: repo!.id,
    index,
    posterId: alice!.id,
    title,
    content: index === 3 ? 'mentions PARSER in the body' : '',
    isClosed,
    isPull,
    createdUnix: now + index,
    updatedUnix: now + index,
  })
  const issues = await db
    .insert(t.issues)
    .values([
      issue(1, 'Fix the Parser', false, false),
      issue(2, 'parser: 50% done_now', true, false),
      issue(3, 'Other', false, true),
      issue(4, 'Merged one', true, true),
    ])
    .returning()
  const pull = (issueIndex: number, hasMerged: boolean) => ({
    issueId: issues[issueIndex - 1]!.id,
    index: issueIndex,
    baseRepoId: repo!.id,
    baseBranch: 'main',
    headRepoId: repo!.id,
    headBranch: `topic-${issueIndex}`,
    hasMerged,
  })
  await db.insert(t.pullRequests).values([pull(3, false), pull(4, true)])
  const label = (name: string) => ({ repoId: repo!.id, name, color: '#00aabb', createdUnix: now, updatedUnix: now })
  const [bug, feature, docs] = await db.insert(t.labels).values([label('bug'), label('feature'), label('docs')]).returning()
  const link = (issueIndex: number, labelId: number) => ({ issueId: issues[issueIndex - 1]!.id, labelId })
  await db.insert(t.issueLabels).values([link(1, bug!.id), link(1, feature!.id), link(2, bug!.id), link(3, docs!.id)])
  return { alice: alice!, bob: bob!, carol: carol!, repo: repo!, issues, bug: bug!, feature: feature!, docs: docs! }
}

const byId = (a: { id: number }, b: { id: number }) => a.id - b.id

/** The same checks, run on one dialect. */
function suiteFor(dialect: Dialect, open: () => Target | Promise<Target>) {
  describe(dialect, () => {
    const h = sqlFor(dialect)
    const readValues = valueRowsFor(dialect)
    let target: Target
    let f: Awaited<ReturnType<typeof insertFixture>>
    let db: Db
    let t: Tables
    /** Per-repository index numbers of the issues matching `where`, in order. */
    const issueIndexes = async (where: SQL | undefined) =>
      (await db.select({ index: t.issues.index }).from(t.issues).where(where).orderBy(asc(t.issues.index))).map((r) => r.index)

    beforeAll(async () => {
      target = await open()
      ;({ db, t } = target)
      f = await insertFixture(target)
    })
    afterAll(async () => await target?.close())

    test('inJsonList: integer and text columns, values given now', async () => {
      const ids = await db.select({ id: t.users.id }).from(t.users).where(h.inJsonList(t.users.id, [f.alice.id, f.carol.id, 999_999])).orderBy(asc(t.users.id))
      expect(ids.map((r) => r.id)).toEqual([f.alice.id, f.carol.id])
      const names = await db.select({ name: t.users.name }).from(t.users).where(h.inJsonList(t.users.lowerName, ['alice', 'bob', 'nobody'])).orderBy(asc(t.users.id))
      expect(names.map((r) => r.name)).toEqual(['Alice', 'bob'])
      expect(await db.select({ id: t.users.id }).from(t.users).where(h.inJsonList(t.users.id, []))).toEqual([])
      // A number in a text column's list is compared as text, not refused.
      expect(await db.select({ id: t.users.id }).from(t.users).where(h.inJsonList(t.users.lowerName, [1]))).toEqual([])
    })

    test('inJsonList: a placeholder of a prepared statement, bound to JSON text', async () => {
      const statement = db.select({ id: t.users.id }).from(t.users).where(h.inJsonList(t.users.id, 'ids')).orderBy(asc(t.users.id)).prepare()
      expect((await statement.execute({ ids: JSON.stringify([f.bob.id]) })).map((r) => r.id)).toEqual([f.bob.id])
      expect((await statement.execute({ ids: JSON.stringify([f.carol.id, f.alice.id]) })).map((r) => r.id)).toEqual([f.alice.id, f.carol.id])
      expect(await statement.execute({ ids: '[]' })).toEqual([])
    })

    test('everyJsonGroup: every group has one of its labels on the issue', async () => {
      const withLabels = (sets: number[][]) =>
        issueIndexes(
          h.everyJsonGroup(sets, (set) => sql`exists (select 1 from ${t.issueLabels} where ${t.issueLabels.issueId} = ${t.issues.id} and ${h.inJsonList(t.issueLabels.labelId, set)})`),
        )
      expect(await withLabels([[f.bug.id]])).toEqual([1, 2])
      expect(await withLabels([[f.bug.id], [f.feature.id]])).toEqual([1])
      expect(await withLabels([[f.feature.id, f.docs.id]])).toEqual([1, 3])
      expect(await withLabels([[f.bug.id], [f.docs.id]])).toEqual([])
      expect(await withLabels([[-1]])).toEqual([])
      expect(await withLabels([])).toEqual([1, 2, 3, 4])
    })

    test('everyJsonGroup and jsonElement: the groups bound to a placeholder of a prepared statement', async () => {
      const onEach = db
        .select({ index: t.issues.index })
        .from(t.issues)
        .where(h.everyJsonGroup('groups', (set) => sql`exists (select 1 from ${t.issueLabels} where ${t.issueLabels.issueId} = ${t.issues.id} and ${h.inJsonList(t.issueLabels.labelId, set)})`))
        .orderBy(asc(t.issues.index))
        .prepare()
      // Each of two groups' issues read by the group's element of the same JSON value.
      const inIndex = db
        .select({ index: t.issues.index })
        .from(t.issues)
        .where(
          and(
            ...[0, 1].map((i) => sql`${t.issues.id} in (select ${t.issueLabels.issueId} from ${t.issueLabels} where ${h.inJsonList(t.issueLabels.labelId, h.jsonElement('groups', i))})`),
          ),
        )
        .orderBy(asc(t.issues.index))
        .prepare()
      const indexes = async (statement: typeof onEach, groups: number[][]) => (await statement.execute({ groups: JSON.stringify(groups) })).map((r) => r.index)
      expect(await indexes(onEach, [[f.bug.id], [f.feature.id]])).toEqual([1])
      expect(await indexes(inIndex, [[f.bug.id], [f.feature.id]])).toEqual([1])
      expect(await indexes(onEach, [[f.feature.id, f.docs.id], [f.bug.id, f.docs.id]])).toEqual([1, 3])
      expect(await indexes(inIndex, [[f.feature.id, f.docs.id], [f.bug.id, f.docs.id]])).toEqual([1, 3])
      expect(await indexes(onEach, [[f.feature.id, f.docs.id], [f.bug.id]])).toEqual([1])
      expect(await indexes(inIndex, [[f.feature.id, f.docs.id], [f.bug.id]])).toEqual([1])
      expect(await indexes(onEach, [[-1]])).toEqual([])
      // An element past the end is NULL: a group of nothing.
      expect(await indexes(inIndex, [[f.bug.id]])).toEqual([])
    })

    test('greatestOf: a counter moved down stops at zero', async () => {
      const numRepos = async () => (await db.select({ n: t.users.numRepos }).from(t.users).where(eq(t.users.id, f.alice.id)))[0]!.n
      const down = () => db.update(t.users).set({ numRepos: h.greatestOf(sql`${t.users.numRepos} - 1`, 0) }).where(eq(t.users.id, f.alice.id))
      expect(await numRepos()).toBe(1)
      await down()
      expect(await numRepos()).toBe(0)
      await down()
      expect(await numRepos()).toBe(0)
      // With a bound step, as releases move their counter.
      await db.update(t.users).set({ numRepos: h.greatestOf(sql`${t.users.numRepos} + ${3}`, 0) }).where(eq(t.users.id, f.alice.id))
      expect(await numRepos()).toBe(3)
      await db.update(t.users).set({ numRepos: h.greatestOf(sql`${t.users.numRepos} + ${-5}`, 0) }).where(eq(t.users.id, f.alice.id))
      expect(await numRepos()).toBe(0)
    })

    test('containsText: a plain substring (no wildcards), case folded by lower() on both sides', async () => {
      const named = async (needle: string) =>
        (await db.select({ name: t.users.name }).from(t.users).where(h.containsText(sql`lower(${t.users.fullName})`, sql`lower(${needle})`)).orderBy(asc(t.users.id))).map(
          (r) => r.name,
        )
      expect(await named('LIDDELL')).toEqual(['Alice'])
      expect(await named('l')).toEqual(['Alice', 'carol'])
      expect(await named('100%_')).toEqual(['bob'])
      expect(await named('%')).toEqual(['bob'])
      expect(await named('e_l')).toEqual([])
      expect(await named('nobody')).toEqual([])
    })

    test('likeIgnoringCase with containsPattern: ASCII case ignored, wildcards of the text escaped', async () => {
      const titled = (text: string) => issueIndexes(h.likeIgnoringCase(t.issues.title, containsPattern(text)))
      expect(await titled('PARSER')).toEqual([1, 2])
      expect(await titled('50%')).toEqual([2])
      expect(await titled('_now')).toEqual([2])
      expect(await titled('x_t')).toEqual([]) // "Fix the" would match were `_` a wildcard
      expect(await titled('\\')).toEqual([])
      const either = (text: string) => {
        const pattern = containsPattern(text)
        return issueIndexes(sql`(${h.likeIgnoringCase(t.issues.title, pattern)} or ${h.likeIgnoringCase(t.issues.content, pattern)})`)
      }
      expect(await either('parser')).toEqual([1, 2, 3])
    })

    test('notIndexed: the column compared as itself, integers and texts', async () => {
      expect(await issueIndexes(eq(h.notIndexed(t.issues.repoId), f.repo.id))).toEqual([1, 2, 3, 4])
      expect(await issueIndexes(and(eq(h.notIndexed(t.issues.title), 'Other'), eq(h.notIndexed(t.issues.isPull), true)))).toEqual([3])
    })

    test('count() is a number', async () => {
      const n = (await db.select({ n: count() }).from(t.issues))[0]!.n
      expect(n).toBe(4)
      expect((await db.select({ n: count() }).from(t.issues).where(eq(t.issues.isPull, true)))[0]!.n).toBe(2)
    })

    test('jsonRecords: many rows updated by one prepared statement, integers, texts and booleans typed as their columns', async () => {
      const row = (name: string) => processSql.recordField('r', name)
      const rename = db
        .update(t.issues)
        .set({ title: row('title'), isLocked: row('locked'), numComments: row('comments') })
        .from(h.jsonRecords('rows', 'r', { id: t.issues.id, title: t.issues.title, locked: t.issues.isLocked, comments: t.issues.numComments }))
        .where(and(eq(t.issues.id, row('id')), eq(t.issues.isClosed, false)))
        .returning({ id: t.issues.id })
        .prepare()
      const rows = [
        { id: f.issues[0]!.id, title: 'Renamed "one" ☃', locked: true, comments: 7 },
        // Closed: the other condition keeps it as it was.
        { id: f.issues[1]!.id, title: 'not written', locked: true, comments: 1 },
        { id: f.issues[2]!.id, title: 'three', locked: false, comments: 0 },
      ]
      expect((await rename.execute({ rows: JSON.stringify(rows) })).map((r) => r.id).sort((a, b) => a - b)).toEqual([f.issues[0]!.id, f.issues[2]!.id])
      const now = await db.select({ title: t.issues.title, isLocked: t.issues.isLocked, numComments: t.issues.numComments }).from(t.issues).where(h.inJsonList(t.issues.id, rows.map((r) => r.id))).orderBy(asc(t.issues.id))
      expect(now).toEqual([
        { title: 'Renamed "one" ☃', isLocked: true, numComments: 7 },
        { title: 'parser: 50% done_now', isLocked: false, numComments: 0 },
        { title: 'three', isLocked: false, numComments: 0 },
      ])
      expect(await rename.execute({ rows: '[]' })).toEqual([])
      await rename.execute({ rows: JSON.stringify([{ id: f.issues[0]!.id, title: 'Fix the Parser', locked: false, comments: 0 }, { id: f.issues[2]!.id, title: 'Other', locked: false, comments: 0 }]) })
    })

    test('booleans: bound as JS booleans (placeholders too) and the FALSE keyword', async () => {
      const byState = db
        .select({ index: t.issues.index })
        .from(t.issues)
        .where(and(eq(t.issues.repoId, sql.placeholder('repo')), eq(t.issues.isClosed, sql.placeholder('closed'))))
        .orderBy(asc(t.issues.index))
        .prepare()
      expect((await byState.execute({ repo: f.repo.id, closed: true })).map((r) => r.index)).toEqual([2, 4])
      expect((await byState.execute({ repo: f.repo.id, closed: false })).map((r) => r.index)).toEqual([1, 3])
      // The pull queue's condition, written with the keyword.
      const open = await db
        .select({ issueId: t.pullRequests.issueId })
        .from(t.pullRequests)
        .where(sql`${t.pullRequests.hasMerged} = false and exists (select 1 from ${t.issues} where ${t.issues.id} = ${t.pullRequests.issueId} and ${t.issues.isClosed} = false)`)
      expect(open.map((r) => r.issueId)).toEqual([f.issues[2]!.id])
      // An insert whose boolean is a placeholder, and a counter bumped by an integer of its own.
      const insert = db
        .insert(t.issues)
        .values({ repoId: f.repo.id, index: sql.placeholder('index'), posterId: f.alice.id, title: 'inserted', isClosed: sql.placeholder('closed'), createdUnix: 1, updatedUnix: 1 })
        .returning()
        .prepare()
      const [inserted] = await insert.execute({ index: 5, closed: true })
      expect(inserted!.isClosed).toBe(true)
      const bump = db
        .update(t.repositories)
        .set({ numClosedIssues: sql`${t.repositories.numClosedIssues} + ${sql.placeholder('closedCount')}` })
        .where(eq(t.repositories.id, sql.placeholder('repo')))
        .prepare()
      await bump.execute({ repo: f.repo.id, closedCount: 1 })
      expect((await db.select({ n: t.repositories.numClosedIssues }).from(t.repositories).where(eq(t.repositories.id, f.repo.id)))[0]!.n).toBe(1)
      await db.delete(t.issues).where(eq(t.issues.id, inserted!.id))
    })

    test('valueRows + rowMapper read whole rows as Drizzle maps them, booleans decoded', async () => {
      const users = db.select().from(t.users).where(h.inJsonList(t.users.id, 'ids')).orderBy(asc(t.users.id)).prepare()
      const params = { ids: JSON.stringify([f.alice.id, f.bob.id, f.carol.id]) }
      const values = await readValues(users, params)
      expect(values.every((v) => Array.isArray(v))).toBe(true)
      const expected = (await users.execute(params)).sort(byId)
      expect(values.map((v) => rowMapper(t.users).map(v))).toEqual(expected)
      // The SQLite table's mapper (what the services hold) reads PostgreSQL's values alike.
      expect(values.map((v) => rowMapper(sqliteTables.users).map(v))).toEqual(expected)
      expect(expected.map((u) => u.isAdmin)).toEqual([false, false, true])
    })

    test('valueRows of a join: both tables in column order, one after the other', async () => {
      const issueRows = rowMapper<typeof sqliteTables.issues.$inferSelect>(t.issues)
      const pullRows = rowMapper<typeof sqliteTables.pullRequests.$inferSelect>(t.pullRequests)
      const joined = db
        .select()
        .from(t.issues)
        .innerJoin(t.pullRequests, eq(t.pullRequests.issueId, t.issues.id))
        .where(eq(t.issues.repoId, sql.placeholder('repo')))
        .orderBy(asc(t.issues.id))
        .prepare()
      const values = await readValues(joined, { repo: f.repo.id })
      expect(values.map((v) => v.length)).toEqual([issueRows.width + pullRows.width, issueRows.width + pullRows.width])
      const mapped = values.map((v) => ({ issue: issueRows.map(v), pull: pullRows.map(v, issueRows.width) }))
      const expected = (await joined.execute({ repo: f.repo.id })).map((r) => ({ issue: r.issues, pull: r.pull_requests }))
      expect(mapped).toEqual(expected)
      expect(mapped.map((r) => [r.issue.isClosed, r.pull.hasMerged])).toEqual([
        [false, false],
        [true, true],
      ])
    })
  })
}

suiteFor('sqlite', openSqlite)
suiteFor('postgres', openPostgres)

test("the exported helpers are the process's dialect's", () => {
  const forProcess = sqlFor(DIALECT)
  for (const name of ['inJsonList', 'everyJsonGroup', 'jsonElement', 'greatestOf', 'containsText', 'likeIgnoringCase', 'jsonRecords', 'inRowsOf', 'notIndexed'] as const)
    expect(processSql[name]).toBe(forProcess[name])
})

test('the two dialects spell the helpers differently, as intended', () => {
  const text = (dialect: Dialect, make: (h: processSql.DialectSql) => SQL) =>
    (dialect === 'postgres' ? new PgDialect() : new SQLiteSyncDialect()).sqlToQuery(make(sqlFor(dialect))).sql
  expect(text('sqlite', (h) => h.greatestOf(sql`1`, 0))).toContain('max(')
  expect(text('postgres', (h) => h.greatestOf(sql`1`, 0))).toContain('greatest(')
  expect(text('sqlite', (h) => h.containsText(sql`a`, 'b'))).toContain('instr(')
  expect(text('postgres', (h) => h.containsText(sql`a`, 'b'))).toContain('strpos(')
  expect(text('sqlite', (h) => h.likeIgnoringCase(sql`a`, 'b'))).toBe(`a LIKE ? ESCAPE '\\'`)
  expect(text('postgres', (h) => h.likeIgnoringCase(sql`a`, 'b'))).toBe(`a ILIKE $1 ESCAPE '\\'`)
  expect(text('sqlite', (h) => h.inJsonList(sqliteTables.users.id, 'ids'))).toContain('json_each(?)')
  expect(text('postgres', (h) => h.inJsonList(sqliteTables.users.id, 'ids'))).toContain('SELECT value::bigint FROM json_array_elements_text((($1)::text)::json)')
  expect(text('postgres', (h) => h.inJsonList(sqliteTables.users.lowerName, 'names'))).toContain('SELECT value::text FROM')
  expect(text('sqlite', (h) => h.notIndexed(sqliteTables.users.id))).toBe('+"users"."id"')
  expect(text('postgres', (h) => h.notIndexed(sqliteTables.users.id))).toBe('"users"."id"')
})
