/**
 * The PostgreSQL form of Warren's schema, derived mechanically from the one schema description
 * (the sqliteTable definitions in ./schema), so the two dialects can never drift apart: same table
 * names, column names, JS property keys and JS value types, same keys, indexes and references.
 * drizzle-kit reads the derived tables (through ./schema, in a PostgreSQL run) to write drizzle-pg/.
 *
 * Column mapping (SQLite → PostgreSQL), chosen so a row reads back as the same JS value:
 *   integer                     → bigint (mode number); an AUTOINCREMENT key → identity (by default)
 *   integer mode boolean        → boolean
 *   integer mode timestamp[_ms] → bigint holding the same seconds [milliseconds], read as a Date
 *   text (enum too)             → text;          text mode json → json
 *   real                        → double precision
 *   numeric (string/number/bigint modes) → numeric, same mode
 *   blob mode buffer            → bytea;  blob mode json → json;  blob mode bigint → numeric (bigint)
 * Any other kind of column, a generated column, a view or a relations() export is refused with an
 * error naming it, rather than guessed at.
 */
import { Column, is, getTableColumns, Relations, SQL, type SQLChunk } from 'drizzle-orm'
import * as sq from 'drizzle-orm/sqlite-core'
import * as pg from 'drizzle-orm/pg-core'
import * as sqliteSchema from './schema/tables'

/** The chainable part of a PostgreSQL column builder used here (every call returns the builder). */
interface PgBuilder {
  notNull(): PgBuilder
  default(value: unknown): PgBuilder
  $defaultFn(fn: () => unknown): PgBuilder
  $onUpdateFn(fn: () => unknown): PgBuilder
  primaryKey(): PgBuilder
  unique(name?: string): PgBuilder
}

/** PostgreSQL's byte string, read and written as a Buffer like SQLite's blob mode buffer. */
const bytea = pg.customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' })

/**
 * SQLite's integer mode timestamp keeps Unix seconds (timestamp_ms: milliseconds) and reads a Date;
 * on PostgreSQL the same number is kept in a bigint, so both databases hold identical values.
 */
function unixTime(name: string, mode: 'timestamp' | 'timestamp_ms'): PgBuilder {
  const scale = mode === 'timestamp' ? 1000 : 1
  const column = pg.customType<{ data: Date; driverData: number | string }>({
    dataType: () => 'bigint',
    toDriver: (date) => Math.floor(date.getTime() / scale),
    fromDriver: (value) => new Date(Number(value) * scale),
  })
  return column(name) as unknown as PgBuilder
}

/** The PostgreSQL column type of one SQLite column (before notNull, default and keys are added). */
function pgTypeOf(column: sq.SQLiteColumn, name: string, where: string): PgBuilder {
  let builder: unknown
  if (is(column, sq.SQLiteBoolean)) builder = pg.boolean(name)
  else if (is(column, sq.SQLiteTimestamp)) return unixTime(name, column.mode)
  else if (is(column, sq.SQLiteInteger)) {
    const int = pg.bigint(name, { mode: 'number' })
    // AUTOINCREMENT: the database numbers new rows and never reuses a number; an identity does both.
    builder = column.autoIncrement ? int.generatedByDefaultAsIdentity() : int
  } else if (is(column, sq.SQLiteTextJson) || is(column, sq.SQLiteBlobJson)) builder = pg.json(name)
  else if (is(column, sq.SQLiteText)) builder = pg.text(name, { enum: column.enumValues as [string, ...string[]] })
  else if (is(column, sq.SQLiteReal)) builder = pg.doublePrecision(name)
  else if (is(column, sq.SQLiteNumericNumber)) builder = pg.numeric(name, { mode: 'number' })
  else if (is(column, sq.SQLiteNumericBigInt) || is(column, sq.SQLiteBigInt)) builder = pg.numeric(name, { mode: 'bigint' })
  else if (is(column, sq.SQLiteNumeric)) builder = pg.numeric(name)
  else if (is(column, sq.SQLiteBlobBuffer)) builder = bytea(name)
  else throw new Error(`pg-schema: ${where} is a ${column.columnType} column, which has no PostgreSQL mapping yet`)
  return builder as PgBuilder
}

/** The full PostgreSQL column builder: type, then nullability, defaults, key and uniqueness as in SQLite. */
function pgColumnOf(column: sq.SQLiteColumn, where: string, translate: (expr: SQL) => SQL): PgBuilder {
  if (column.generated) throw new Error(`pg-schema: ${where} is a generated column, not derived yet`)
  // A column named after its key (no name given) stays so, so a casing option applies the same way.
  let builder = pgTypeOf(column, column.keyAsName ? '' : column.name, where)
  if (column.notNull) builder = builder.notNull()
  if (column.default !== undefined) {
    const value = column.default
    // An SQL default is rewritten column for column; a Date default is stored as its number, as in SQLite.
    builder = builder.default(is(value, SQL) ? translate(value) : value instanceof Date ? column.mapToDriverValue(value) : value)
  }
  if (column.defaultFn) builder = builder.$defaultFn(column.defaultFn)
  if (column.onUpdateFn) builder = builder.$onUpdateFn(column.onUpdateFn)
  if (column.primary) builder = builder.primaryKey()
  if (column.isUnique) builder = builder.unique(column.uniqueName)
  return builder
}

/** Rewrites an SQL expression written against SQLite tables to name the derived PostgreSQL ones. */
function translateSql(expr: SQL, columnOf: (column: sq.SQLiteColumn) => pg.PgColumn, tableOf: (table: sq.SQLiteTable) => pg.PgTable): SQL {
  const chunks = expr.queryChunks.map((chunk): SQLChunk => {
    if (is(chunk, sq.SQLiteColumn)) return columnOf(chunk)
    if (is(chunk, sq.SQLiteTable)) return tableOf(chunk)
    if (is(chunk, SQL)) return translateSql(chunk, columnOf, tableOf)
    return chunk
  })
  return new SQL(chunks)
}

/**
 * The PostgreSQL tables equivalent to every sqliteTable among `sqliteSchema`'s values, under the
 * same keys; other plain values are passed through. Typed as the input on purpose: the queries are
 * written once against the SQLite tables' types, and the derived tables have the same names, keys
 * and JS value types, so they stand in for them when the database is PostgreSQL.
 *
 * All tables are built first, then their indexes, keys and references (pgTable's extra-config
 * callback runs only when a table's config is read), so a reference finds its derived table
 * whatever the order of the exports, a table referring to itself included.
 */
export function pgTablesOf<T extends Record<string, unknown>>(sqliteSchema: T): T {
  const tables = new Map<sq.SQLiteTable, pg.PgTable>()
  const columns = new Map<Column, pg.PgColumn>()
  const tableOf = (table: sq.SQLiteTable): pg.PgTable => {
    const derived = tables.get(table)
    if (!derived) throw new Error(`pg-schema: table ${sq.getTableConfig(table).name} is referred to but not part of the schema`)
    return derived
  }
  const columnOf = (column: sq.SQLiteColumn): pg.PgColumn => {
    tableOf(column.table)
    return columns.get(column)!
  }
  const translate = (expr: SQL) => translateSql(expr, columnOf, tableOf)

  const result: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(sqliteSchema)) {
    if (is(value, sq.SQLiteView) || is(value, Relations)) throw new Error(`pg-schema: export ${key} (a view or relations) is not derived yet`)
    if (!is(value, sq.SQLiteTable)) {
      result[key] = value
      continue
    }
    const config = sq.getTableConfig(value)
    const sqliteColumns = getTableColumns(value) as Record<string, sq.SQLiteColumn>
    const keyOf = new Map(Object.entries(sqliteColumns).map(([k, c]) => [c, k]))
    const builders = Object.fromEntries(
      Object.entries(sqliteColumns).map(([k, c]) => [k, pgColumnOf(c, `${config.name}.${c.name}`, translate)]),
    ) as unknown as Record<string, pg.PgColumnBuilderBase>

    const table = pg.pgTable(config.name, builders, (self) => {
      // The table's own columns are the callback's (pg indexes read their ordering options there).
      const own = (column: sq.SQLiteColumn) => (column.table === value ? self[keyOf.get(column)!]! : columnOf(column))
      const ownSql = (expr: SQL) => translateSql(expr, own as (c: sq.SQLiteColumn) => pg.PgColumn, tableOf)
      const indexPart = (part: sq.SQLiteColumn | SQL) => (is(part, SQL) ? ownSql(part) : own(part))
      return [
        ...config.indexes.map(({ config: index }) => {
          const on = (index.unique ? pg.uniqueIndex : pg.index)(index.name)
          const built = on.on(...(index.columns.map(indexPart) as [pg.IndexColumn, ...pg.IndexColumn[]]))
          return index.where ? built.where(ownSql(index.where)) : built
        }),
        ...config.primaryKeys.map((key) =>
          pg.primaryKey({ name: key.getName(), columns: key.columns.map(own) as [pg.PgColumn, ...pg.PgColumn[]] }),
        ),
        ...config.uniqueConstraints.map((unique) =>
          pg.unique(unique.getName()).on(...(unique.columns.map(own) as [pg.PgColumn, ...pg.PgColumn[]])),
        ),
        ...config.checks.map((check) => pg.check(check.name, ownSql(check.value))),
        ...config.foreignKeys.map((foreignKey) => {
          const reference = foreignKey.reference()
          let built = pg.foreignKey({
            name: foreignKey.getName(),
            columns: reference.columns.map(own) as [pg.PgColumn, ...pg.PgColumn[]],
            foreignColumns: reference.foreignColumns.map(columnOf) as [pg.PgColumn, ...pg.PgColumn[]],
          })
          if (foreignKey.onDelete) built = built.onDelete(foreignKey.onDelete)
          if (foreignKey.onUpdate) built = built.onUpdate(foreignKey.onUpdate)
          return built
        }),
      ]
    })
    const pgColumns = getTableColumns(table) as Record<string, pg.PgColumn>
    for (const [k, column] of Object.entries(sqliteColumns)) columns.set(column, pgColumns[k]!)
    tables.set(value, table)
    result[key] = table
  }
  // Resolve every reference now: a table referring outside the schema fails here, not later in a query.
  for (const table of tables.values()) pg.getTableConfig(table)
  return result as T
}

let derived: typeof sqliteSchema | undefined

/**
 * Warren's tables for PostgreSQL: the derived form of every table in ./schema, typed as the
 * SQLite tables they stand in for. Derived on first call, once (the same objects every time).
 * A process on SQLite never loads this module (./schema and ../db/sql.ts require it on PostgreSQL
 * only), nor drizzle's PostgreSQL builders with it.
 */
export const pgTables = (): typeof sqliteSchema => (derived ??= pgTablesOf(sqliteSchema))

/** drizzle's PostgreSQL query builder, for subqueries built apart from any database (../db/sql.ts). */
export const pgQueryBuilder = (): pg.QueryBuilder => new pg.QueryBuilder()
