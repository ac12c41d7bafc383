// runs in one half: postgresql
/**
 * The PostgreSQL schema derived from the SQLite one (src/db/pg-schema.ts): every table keeps its
 * columns, keys, indexes and references; the migrations drizzle-kit wrote in drizzle-pg/ are up to
 * date and apply to a fresh PostgreSQL schema; derived rows read back as the same JS values.
 * PostgreSQL must be reachable (it is on the development machine and in CI): this fails, not skips.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL as BunSQL } from 'bun'
import { Column, eq, getTableColumns, getTableName, is, sql, SQL, Table } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/bun-sql'
import * as sq from 'drizzle-orm/sqlite-core'
import * as pg from 'drizzle-orm/pg-core'
import { generateDrizzleJson, generateMigration } from 'drizzle-kit/api'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
// The SQLite tables themselves (src/db/schema/index.ts answers the PostgreSQL ones in a PostgreSQL run).
import * as sqliteSchema from '../src/db/schema/tables'
import { pgTables as derivedPgTables, pgTablesOf } from '../src/db/pg-schema'
import * as schemaExports from '../src/db/schema'
import { DIALECT } from '../src/db/dialect'
import { migrationsOfFolder } from '../src/db/migrations-macro'

const pgTables = derivedPgTables()

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test'
const pgDialect = new pg.PgDialect()

/** An SQL expression as text (both dialects quote names alike), to compare the two forms. */
const textOf = (expr: SQL) => pgDialect.sqlToQuery(expr).sql

/** Whether an expression still names a SQLite table or column (it should name only derived ones). */
function namesSqlite(expr: SQL): boolean {
  return expr.queryChunks.some((c) => is(c, sq.SQLiteColumn) || is(c, sq.SQLiteTable) || (is(c, SQL) && namesSqlite(c)))
}

/**
 * What must be equal between a SQLite table and its derived PostgreSQL table, as plain data. The
 * normalisations are the mapping's documented differences, nothing more:
 * - a custom PostgreSQL column (bytea, the Unix-time bigint) is compared by the JS type it reads;
 * - a Date default is kept by PostgreSQL as its stored number, compared after reading it back;
 * - SQLite's integer primary key without AUTOINCREMENT (a rowid alias) numbers rows when none is
 *   given; the derived bigint key does not (Warren's such keys are foreign keys, always given).
 */
function shapeOf(table: sq.SQLiteTable | pg.PgTable) {
  const onPg = is(table, pg.PgTable)
  const config = onPg ? pg.getTableConfig(table) : sq.getTableConfig(table as sq.SQLiteTable)
  const columns = Object.entries(getTableColumns(table) as Record<string, Column>).map(([key, c]) => {
    const rowidAlias = is(c, sq.SQLiteBaseInteger) && c.primary && !c.autoIncrement
    const customRead: Record<string, string> = { bytea: 'buffer', bigint: 'date' }
    return {
      key,
      name: c.name,
      dataType: c.dataType === 'custom' ? customRead[c.getSQLType()] : c.dataType,
      notNull: c.notNull,
      hasDefault: c.hasDefault && !rowidAlias,
      default: is(c.default, SQL) ? textOf(c.default) : onPg && c.default !== undefined ? c.mapFromDriverValue(c.default) : c.default,
      defaultFn: c.defaultFn,
      onUpdateFn: c.onUpdateFn,
      primary: c.primary,
      numbered: is(c, sq.SQLiteBaseInteger) ? c.autoIncrement : c.generatedIdentity?.type === 'byDefault',
      unique: c.isUnique ? c.uniqueName : null,
      enumValues: c.enumValues,
    }
  })
  const names = (cs: Column[]) => cs.map((c) => c.name)
  return {
    name: config.name,
    columns,
    primaryKeys: config.primaryKeys.map((k) => ({ name: k.getName(), columns: names(k.columns) })),
    uniques: config.uniqueConstraints.map((u) => ({ name: u.getName(), columns: names(u.columns) })),
    checks: config.checks.map((c) => ({ name: c.name, value: textOf(c.value) })),
    indexes: config.indexes.map(({ config: i }) => ({
      name: i.name,
      unique: i.unique,
      columns: i.columns.map((c) => (is(c, SQL) ? textOf(c) : (c as Column).name)),
      where: i.where ? textOf(i.where) : null,
    })),
    foreignKeys: config.foreignKeys.map((f) => {
      const r = f.reference()
      return {
        name: f.getName(),
        columns: names(r.columns),
        foreignTable: getTableName(r.foreignTable),
        foreignColumns: names(r.foreignColumns),
        onDelete: f.onDelete ?? 'no action',
        onUpdate: f.onUpdate ?? 'no action',
      }
    }),
  }
}

/** The SQL expressions of a derived table's indexes, checks and defaults. */
function expressionsOf(table: pg.PgTable): SQL[] {
  const config = pg.getTableConfig(table)
  return [
    ...config.indexes.flatMap(({ config: i }) => [...i.columns.filter((c): c is SQL => is(c, SQL)), ...(i.where ? [i.where] : [])]),
    ...config.checks.map((c) => c.value),
    ...config.columns.flatMap((c) => (is(c.default, SQL) ? [c.default] : [])),
  ]
}

/** Each derived table with the SQLite table it comes from. */
function pairsOf(sqlite: Record<string, unknown>, derived: Record<string, unknown>): [string, sq.SQLiteTable, pg.PgTable][] {
  return Object.entries(sqlite)
    .filter(([, v]) => is(v, sq.SQLiteTable))
    .map(([k, v]) => [k, v as sq.SQLiteTable, derived[k] as unknown as pg.PgTable])
}

// A made-up schema using what Warren's does not yet: it is declared child first, and the child's
// composite key refers to the parent built after it; the parent refers to itself.
const synChild = sq.sqliteTable(
  'syn_child',
  {
    parentId: sq.integer('parent_id').notNull(),
    parentCode: sq.text('parent_code').notNull(),
    kind: sq.text('kind', { enum: ['a', 'b'] }).notNull().default('a'),
    at: sq.integer('at', { mode: 'timestamp' }).notNull().default(new Date(5_000)),
    atMs: sq.integer('at_ms', { mode: 'timestamp_ms' }),
    score: sq.real('score').notNull().default(1.5),
    bytes: sq.blob('bytes', { mode: 'buffer' }),
    extra: sq.text('extra', { mode: 'json' }).$type<{ n: number }>(),
    big: sq.blob('big', { mode: 'bigint' }),
    amount: sq.numeric('amount'),
    stamp: sq.text('stamp').$defaultFn(() => 'made').$onUpdateFn(() => 'changed'),
    code: sq.text('code').unique(),
  },
  (t) => [
    sq.primaryKey({ columns: [t.parentId, t.parentCode] }),
    sq.foreignKey({ columns: [t.parentId, t.parentCode], foreignColumns: [synParent.id, synParent.code] }).onDelete('cascade').onUpdate('restrict'),
    sq.unique('syn_child_kind_score_uq').on(t.kind, t.score),
    sq.check('syn_child_score_ck', sql`${t.score} >= 0`),
    sq.index('syn_child_kind_idx').on(sql`lower(${t.kind})`, t.score).where(sql`${t.score} > 0`),
  ],
)
const synParent = sq.sqliteTable(
  'syn_parent',
  {
    id: sq.integer('id').primaryKey({ autoIncrement: true }),
    code: sq.text('code').notNull(),
    flag: sq.integer('flag', { mode: 'boolean' }).notNull().default(false),
    parentId: sq.integer('parent_id').references((): sq.AnySQLiteColumn => synParent.id, { onDelete: 'set null' }),
  },
  // A unique constraint, not a unique index: drizzle-kit creates indexes after the references, and
  // PostgreSQL (unlike SQLite) wants the referenced columns unique when the reference is made.
  (t) => [sq.unique('syn_parent_id_code_uq').on(t.id, t.code), sq.index('syn_parent_code_idx').on(t.code)],
)
const synthetic = { synChild, synParent, note: 'not a table' }
const derivedSynthetic = pgTablesOf(synthetic)

let client: BunSQL
const schemas: string[] = []

/**
 * Creates a fresh PostgreSQL schema and applies `statements` there. drizzle-kit writes references
 * as "public"."table" whatever the search path, so they are pointed at the new schema here.
 */
async function freshSchemaWith(statements: string[]): Promise<string> {
  const schema = `pgschema_test_${process.pid}_${schemas.length}_${Date.now()}`
  schemas.push(schema)
  await client.unsafe(`CREATE SCHEMA "${schema}"`)
  await client.begin(async (tx) => {
    await tx.unsafe(`SET LOCAL search_path TO "${schema}"`)
    for (const statement of statements) {
      if (statement.trim() !== '') await tx.unsafe(statement.replaceAll('"public".', `"${schema}".`))
    }
  })
  return schema
}

/** A drizzle database on one connection whose search path is `schema`. */
async function dbIn(schema: string) {
  const conn = new BunSQL({ url: PG_URL, max: 1 })
  await conn.unsafe(`SET search_path TO "${schema}"`)
  return { db: drizzle({ client: conn }), close: () => conn.close() }
}

beforeAll(async () => {
  client = new BunSQL({ url: PG_URL, max: 2 })
  await client.unsafe('SELECT 1') // unreachable PostgreSQL fails the file here
})
afterAll(async () => {
  for (const schema of schemas) await client.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await client?.close()
})

describe("Warren's tables", () => {
  const pairs = pairsOf(sqliteSchema, pgTables)

  test('every SQLite table has its PostgreSQL form under the same key and name', () => {
    expect(pairs.length).toBeGreaterThan(30)
    for (const [key, sqlite, derived] of pairs) {
      expect(is(derived, pg.PgTable)).toBe(true)
      expect(getTableName(derived)).toBe(getTableName(sqlite))
      expect(Object.keys(getTableColumns(derived))).toEqual(Object.keys(getTableColumns(sqlite)))
      // Services (and drizzle-kit, for drizzle-pg/) read src/db/schema's named exports: none may be
      // missing, and they are this run's dialect's tables.
      expect((schemaExports as Record<string, unknown>)[key]).toBe(DIALECT === 'postgres' ? derived : sqlite)
    }
    const { allTables: _, ...named } = schemaExports
    expect(Object.keys(named).sort()).toEqual(pairs.map(([k]) => k).sort())
  })

  test('columns, keys, uniques, indexes and references are the same', () => {
    for (const [, sqlite, derived] of pairs) expect(shapeOf(derived)).toEqual(shapeOf(sqlite))
  })

  test('references point at the derived tables, expressions at derived columns', () => {
    const derivedTables = new Set<unknown>(pairs.map(([, , d]) => d))
    for (const [, , derived] of pairs) {
      for (const f of pg.getTableConfig(derived).foreignKeys) expect(derivedTables.has(f.reference().foreignTable)).toBe(true)
      for (const expr of expressionsOf(derived)) expect(namesSqlite(expr)).toBe(false)
    }
  })

  test('names fit PostgreSQL identifiers (63 bytes), which would otherwise be cut short', () => {
    for (const [, , derived] of pairs) {
      const config = pg.getTableConfig(derived)
      const names = [config.name, ...config.indexes.map((i) => i.config.name), ...config.foreignKeys.map((f) => f.getName())]
      for (const name of names) expect(Buffer.byteLength(name!)).toBeLessThanOrEqual(63)
    }
  })

  test('drizzle-pg/ is up to date with the schema (run scripts/db-generate.sh if not)', async () => {
    const meta = join(import.meta.dir, '../drizzle-pg/meta')
    const last = readdirSync(meta).filter((f) => f.endsWith('_snapshot.json')).sort().at(-1)!
    const snapshot = JSON.parse(readFileSync(join(meta, last), 'utf8'))
    expect(await generateMigration(snapshot, generateDrizzleJson(pgTables))).toEqual([])
  })

  test('the drizzle-pg migrations apply to a fresh schema, which then holds every table, index and key', async () => {
    const migrations = migrationsOfFolder('drizzle-pg')
    expect(migrations.length).toBeGreaterThan(0)
    const schema = await freshSchemaWith(migrations.flatMap((m) => m.sql))

    const columns = await client`SELECT table_name, column_name, is_nullable FROM information_schema.columns WHERE table_schema = ${schema}`
    const indexes = await client`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = ${schema}`
    const foreignKeys = await client`SELECT table_name, constraint_name FROM information_schema.table_constraints
      WHERE constraint_schema = ${schema} AND constraint_type = 'FOREIGN KEY'`
    for (const [, , derived] of pairs) {
      const config = pg.getTableConfig(derived)
      const inDb = (rows: Record<string, string>[]) => rows.filter((r) => (r.table_name ?? r.tablename) === config.name)
      expect(inDb(columns).map((c) => [c.column_name, c.is_nullable === 'NO']).sort()).toEqual(
        config.columns.map((c) => [c.name, c.notNull]).sort(),
      )
      const dbIndexes = new Map(inDb(indexes).map((i) => [i.indexname, i.indexdef!]))
      for (const { config: i } of config.indexes) expect(dbIndexes.get(i.name!)?.startsWith(i.unique ? 'CREATE UNIQUE' : 'CREATE INDEX')).toBe(true)
      expect(inDb(foreignKeys).map((f) => f.constraint_name).sort()).toEqual(config.foreignKeys.map((f) => f.getName()).sort())
    }
  })

  test('a derived row reads back with the JS types of the SQLite one', async () => {
    const schema = await freshSchemaWith(migrationsOfFolder('drizzle-pg').flatMap((m) => m.sql))
    const { db, close } = await dbIn(schema)
    try {
      // The derived tables are typed as the SQLite ones; this driver wants PostgreSQL types.
      const users = pgTables.users as unknown as pg.PgTable & typeof pgTables.users
      const [row] = await db.insert(users as any).values({ name: 'Ann', lowerName: 'ann', createdUnix: 1, updatedUnix: 2 }).returning()
      expect(row).toMatchObject({ id: 1, name: 'Ann', isActive: true, isAdmin: false, maxRepoCreation: -1, createdUnix: 1 })
      const again = db.insert(users as any).values({ name: 'Ann', lowerName: 'ann', createdUnix: 1, updatedUnix: 2 })
      const refused: Error = await again.then(() => new Error('inserted twice'), (e: Error) => e)
      expect(String((refused.cause as Error | undefined)?.message)).toMatch(/unique constraint "users_lower_name_uq"/)
    } finally {
      await close()
    }
  })
})

describe('the mapping, on a schema using every kind of column', () => {
  const pairs = pairsOf(synthetic, derivedSynthetic)

  test('tables are derived whatever their order; other values pass through', () => {
    expect(derivedSynthetic.note).toBe('not a table')
    for (const [, sqlite, derived] of pairs) expect(shapeOf(derived)).toEqual(shapeOf(sqlite))
    const child = pg.getTableConfig(derivedSynthetic.synChild as unknown as pg.PgTable)
    const parent = derivedSynthetic.synParent as unknown as pg.PgTable
    expect(child.foreignKeys[0]!.reference().foreignTable).toBe(parent)
    expect(pg.getTableConfig(parent).foreignKeys[0]!.reference().foreignTable).toBe(parent)
    for (const [, , derived] of pairs) for (const expr of expressionsOf(derived)) expect(namesSqlite(expr)).toBe(false)
  })

  test('views, relations, and references outside the schema are refused by name', () => {
    const view = sq.sqliteView('syn_view').as((qb) => qb.select().from(synParent))
    expect(() => pgTablesOf({ view })).toThrow(/view/)
    expect(() => pgTablesOf({ synChild })).toThrow(/syn_parent/)
  })

  test('its migration applies, and values read back as they were written', async () => {
    const statements = await generateMigration(generateDrizzleJson({}), generateDrizzleJson(derivedSynthetic))
    const schema = await freshSchemaWith(statements)
    const { db, close } = await dbIn(schema)
    try {
      const parent = derivedSynthetic.synParent as any
      const child = derivedSynthetic.synChild as any
      const [p] = await db.insert(parent).values({ code: 'x' }).returning()
      expect(p).toEqual({ id: 1, code: 'x', flag: false, parentId: null })
      const written = {
        parentId: 1,
        parentCode: 'x',
        atMs: new Date(1_234_567),
        bytes: Buffer.from([0, 1, 255]),
        extra: { n: 3 },
        big: 12345678901234567890n,
        amount: '1.25',
        code: 'c',
      }
      await db.insert(child).values(written)
      const [c] = await db.select().from(child)
      expect(c).toEqual({ ...written, kind: 'a', at: new Date(5_000), score: 1.5, stamp: 'made' })
      // The Unix-time column holds the same number SQLite would: seconds.
      const [raw] = await db.execute(sql`SELECT at, at_ms FROM syn_child`)
      expect(raw).toEqual({ at: '5', at_ms: '1234567' })
      await db.update(child).set({ kind: 'b' }).where(eq(child.code, 'c'))
      expect((await db.select().from(child))[0].stamp).toBe('changed')
    } finally {
      await close()
    }
  })
})
